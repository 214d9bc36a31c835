"""Results rendered for people and tools: terminal text (``text``), JSON (``json``), the layout
table (``table``), reports (``report``) and pictures (``svg``)."""
