"""Where layouts come from: spec files (``spec``) and the PTX documentation pages themselves
(``docpage`` reads a page, ``ingest`` turns its fragment sections into spec texts with the errata
of the text, ``pages`` loads and writes them)."""
