"""ptx-layout-verify: a formal verifier for NVIDIA PTX warp-level matrix fragment layouts.

The data flows one way, and the subpackages are that flow (docs/architecture.md):
``formula`` (text -> AST) -> ``engines`` (the AST evaluated: enumeration and Z3) -> ``layout`` (the
layout model and its notations) -> ``catalog`` (spec files, doc pages) and ``checks`` (properties,
two engines each) -> ``results`` -> ``hardware`` / ``outputs`` (text, JSON, reports) -> ``api`` -> ``cli``.
"""
__version__ = "0.2.0"
