"""Properties of layouts, each decided by both engines: per fragment (``fragment``), per
instruction (``instruction``), sparse ``mma.sp`` semantics (``sparse``); ``run`` checks a catalog."""
