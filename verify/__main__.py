"""``python -m verify`` and the console script ``ptx-verify``: a command-line run that owns the process.

Signals are handled from the first line, before the heavy imports (a Ctrl-C while the modules load is
one line too, and nothing has started that needs cleaning up); once ``verify.cli.main`` is loaded it
installs its own handling (``KeyboardInterrupt`` / ``Terminated``: workers stopped, partial outputs
removed, exit 130 / 128 + signal).  The run ends with ``os._exit`` once the output is flushed and late
signals are ignored: CPython kills itself with SIGINT at exit when a Ctrl-C once went through
``exec``-ed code (a dataclass's generated methods), even when it was handled, and a signal that comes
after the work is done must not turn its exit code into a kill.
"""
from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C before the command line is loaded: nothing has started, so there is nothing to clean up."""
    os.write(2, b"ptx-verify: interrupted\n")
    os._exit(130)


def main() -> None:
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # an ignored Ctrl-C (a background job) stays so
        signal.signal(signal.SIGINT, _interrupted_while_loading)  # until the CLI installs its own handling
    # numpy's bundled OpenBLAS starts a thread per core as it loads, and they spin: two thirds of numpy's import
    # (0.22 -> 0.07 s CPU here), in a program whose arrays are integers (only the simulated block-scale device
    # multiplies floats, small matrices).  A command-line run owns its process; a value already set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .cli import main as run, options
    options.handle_signals()
    try:
        code = run()
    except SystemExit as e:  # argparse: --help, --version, a usage error (its message is printed already)
        if isinstance(e.code, int) or e.code is None:
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # outside the work (which answers it itself): nothing to clean up
        print("ptx-verify: interrupted", file=sys.stderr)
        code = 130
    except options.Terminated as e:
        print(f"ptx-verify: terminated by signal {e.signum}", file=sys.stderr)
        code = 128 + e.signum
    _exit(code)


def _exit(code: int) -> None:
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


if __name__ == "__main__":
    main()
