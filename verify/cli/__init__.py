"""The command line, ``ptx-verify``: argument parsing and output only; the work is in ``verify.api``.

``main(argv)`` with a list runs in process (tests, scripts) and returns the exit code.  ``main()`` is a
command-line run that owns the process: signals are handled before the imports (a Ctrl-C while the
modules load is one line too), and it ends with ``os._exit`` once the output is flushed, so a signal
that arrives after the work is done cannot turn the exit code into a kill (CPython re-raises a
Ctrl-C at exit that once went through ``exec``-ed code, such as a dataclass's generated methods, even
when it was handled).
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Sequence

from . import options


def main(argv: Sequence[str] | None = None) -> int:
    if argv is not None:
        from .main import main as run  # noqa: PLC0415
        return run(argv)
    options.handle_signals()  # before the heavy imports
    try:
        from .main import main as run  # noqa: PLC0415 - the heavy imports, under the signal handlers
        code = run(None)
    except KeyboardInterrupt:
        print("ptx-verify: interrupted", file=sys.stderr)
        code = 130
    except options.Terminated as e:
        print(f"ptx-verify: terminated by signal {e.signum}", file=sys.stderr)
        code = 128 + e.signum
    return _exit(code)


def _exit(code: int) -> int:
    """The work is done: late signals are ignored, the output is flushed, and the process ends with ``code``."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_IGN)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``| head``): nothing more to say
            pass
    os._exit(code)


__all__ = ["main"]
