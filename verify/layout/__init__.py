"""The layout model (``model``) and its implementations: formula layouts (``formula``), sparse A
(``sparse``); the doc's register vocabulary (``types``, ``elements``)."""
