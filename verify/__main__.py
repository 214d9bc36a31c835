"""``python -m verify`` is ``ptx-verify``."""
import os
import signal
import sys


def _interrupted_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C before the command line is loaded: nothing has started, so nothing to clean up."""
    os.write(2, b"ptx-verify: interrupted\n")
    os._exit(130)


if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # an ignored Ctrl-C (a background job) stays ignored
    signal.signal(signal.SIGINT, _interrupted_while_loading)  # until ``main`` installs its own handling

from .cli import main  # noqa: E402

sys.exit(main())
