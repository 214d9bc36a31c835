"""The command line, ``ptx-verify``: argument parsing and output only; the work is in ``verify.api``."""
from .main import main

__all__ = ["main"]
