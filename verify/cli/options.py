"""Option values checked where they are read: a bad value is one line and exit 2, never a crash
or a silent default (``--timeout nan``, ``--jobs 0``, ``--max-delta -5`` are all refused)."""
from __future__ import annotations

import argparse
import math
import re
import sys
from typing import NoReturn

from ..errors import UsageError

MAX_SECONDS = 24 * 3600.0
TIMEOUT_HELP = "time budget of each check in seconds, all its Z3 queries together (default 10)"
JOBS_HELP = "worker processes for the layout checks (default: CPUs, at most 4)"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (``ptx-verify check: error: ...``), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        """argparse's, but an option no parser knows is the chosen command's error: ``ptx-verify banks: error:
        unrecognized arguments: --tyep (did you mean --type?) (see ptx-verify banks --help)``, not the top-level
        parser's, whose help does not list the command's options."""
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            sub = self._chosen(ns)
            (sub or self).error(f"unrecognized arguments: {' '.join(extras)}"
                                + _did_you_mean(extras, sub or self))
        return ns

    def _chosen(self, ns: argparse.Namespace) -> "argparse.ArgumentParser | None":
        """The subcommand's parser the namespace names (None without subcommands)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices.get(getattr(ns, action.dest, None) or "")
        return None


def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of ``parser``'s subcommand ``name`` (``KeyError``: no such subcommand)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise KeyError(name)


def _did_you_mean(extras: list[str], parser: argparse.ArgumentParser) -> str:
    """`` (did you mean --type?)`` for the first unknown option close to one the parser knows."""
    import difflib
    known = [s for s in parser._option_string_actions if s.startswith("--")]
    for word in extras:
        if word.startswith("--"):
            close = difflib.get_close_matches(word.partition("=")[0], known, n=1, cutoff=0.75)
            if close:
                return f" (did you mean {close[0]}?)"
    return ""


def seconds(text: str) -> float:
    """A time limit: a finite number of seconds, more than 0 and at most a day."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(v) or v <= 0 or v > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds > 0 and <= {MAX_SECONDS:g}")
    return v


def release(text: str) -> str:
    """A PTX ISA release, ``MAJOR.MINOR`` (``9.0``, ``9.1``)."""
    if not re.fullmatch(r"\d{1,2}\.\d{1,2}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a PTX ISA release (MAJOR.MINOR, e.g. 9.1)")
    return text


def _integer(text: str, lo: int, hi: int, what: str) -> int:
    try:
        v = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not lo <= v <= hi:
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return v


def jobs(text: str) -> int:
    """Worker processes: 1 or more (at most 64)."""
    return _integer(text, 1, 64, "a number of worker processes from 1 to 64")


def nonnegative(text: str) -> int:
    return _integer(text, 0, 1 << 20, "a whole number >= 0")


def max_delta(text: str) -> int:
    """``report --max-delta``: the largest change of one constant the fix search tries."""
    from ..checks.fixes import MAX_DELTA_LIMIT
    return _integer(text, 0, MAX_DELTA_LIMIT, f"a whole number from 0 to {MAX_DELTA_LIMIT}")


class Terminated(BaseException):
    """``SIGTERM`` (or ``SIGHUP``) arrived: unwind like Ctrl-C, so workers are stopped and nothing is half-written."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_STOPPING: list[int] = []  # not empty once a signal asked the run to stop


def _interrupt(signum: int, frame: object) -> None:
    _STOPPING.append(signum)
    raise KeyboardInterrupt


def _terminate(signum: int, frame: object) -> None:
    _STOPPING.append(signum)
    raise Terminated(signum)


def _unraisable(hook):
    def quiet(info):
        if not _STOPPING:  # while stopping, objects torn down half-built by the signal may complain: not news
            hook(info)
    return quiet


def handle_signals() -> None:
    """A command-line run: Ctrl-C raises ``KeyboardInterrupt`` (exit 130), ``SIGTERM``/``SIGHUP``
    ``Terminated`` (exit 128 + the signal's number); what objects half-built by the interrupted code print
    while they are torn down is not shown.  A signal the caller ignores (``nohup``) stays ignored."""
    import signal
    if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt)
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _terminate)
    if not getattr(sys.unraisablehook, "ptx_verify", False):
        sys.unraisablehook = _unraisable(sys.unraisablehook)
        sys.unraisablehook.ptx_verify = True  # type: ignore[attr-defined]


def quiet_sigpipe() -> None:
    """``ptx-verify ... | head`` ends quietly, like other command-line tools."""
    import signal
    if hasattr(signal, "SIGPIPE") and sys.platform != "win32":
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def params(items: list[str], flag: str = "--param") -> dict[str, int]:
    """``--param`` values (``flag``: ``--from-param``, ``--to-param``): ``["N=24"]`` -> ``{"N": 24}`` (bad values
    and a name given twice are usage errors).  Every command reads ``--param`` here; what a name binds is
    ``verify.layout.params``'s rule."""
    out: dict[str, int] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name:
            raise UsageError(f"{flag} {item!r}: write NAME=VALUE, e.g. N=24")
        if not value.isascii() or not value.isdigit():
            raise UsageError(f"{flag} {item!r}: the value is not a whole number in decimal digits (e.g. {name}=24)")
        if len(value.lstrip("0")) > 9:
            raise UsageError(f"{flag} {name}={value[:12]}{'...' if len(value) > 12 else ''}: the value is too large "
                             "(a parameter value has at most 9 digits)")
        if name in out:
            raise UsageError(f"{flag} {name} is given twice")
        out[name] = int(value)
    return out


def block(text: str) -> tuple[int, int]:
    """``--block 128x256`` -> (128, 256): rows x cols, each 1..4096 (argparse type)."""
    import argparse
    rows, x, cols = text.strip().lower().partition("x")
    if not x or not rows.isdigit() or not cols.isdigit() or len(rows) > 5 or len(cols) > 5 \
            or not (1 <= int(rows) <= 4096 and 1 <= int(cols) <= 4096):
        raise argparse.ArgumentTypeError(f"{text!r}: write ROWSxCOLS, e.g. 128x256 (each 1..4096)")
    return int(rows), int(cols)


def xor_masks(text: str) -> tuple[int, ...]:
    """``--xor 1,2`` -> (1, 2): shfl.xor lane masks, each 1..31, at most 5 (argparse type)."""
    parts = [p.strip() for p in text.split(",")]
    if not 1 <= len(parts) <= 5 or not all(p.isascii() and p.isdigit() and len(p) <= 2 and 1 <= int(p) <= 31
                                           for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: write the shfl.xor lane masks, e.g. 1,2 (each 1 to 31)")
    return tuple(int(p) for p in parts)


PARAM_HELP = ("a family's parameter value, e.g. --param N=24; repeat for several. Without it a family is answered "
              "for every member (or the member the given layout's extent fixes)")


def tile(text: str | None) -> tuple[int, int] | None:
    """``--tile 64x64`` (rows x cols, each 1..4096), or None; a bad one is a one-line usage error."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d{1,5})\s*x\s*(\d{1,5})\s*", text)
    if not m or not (0 < int(m.group(1)) <= 4096 and 0 < int(m.group(2)) <= 4096):
        raise UsageError(f"--tile {text!r}: write ROWSxCOLS, each 1 to 4096 (e.g. 64x64)")
    return int(m.group(1)), int(m.group(2))


def shared_address(text: str) -> int:
    """``--base 0x400``: a shared-memory address (below 2^18); a bad one is a one-line usage error."""
    try:
        v = int(text, 0)
    except ValueError:
        raise UsageError(f"--base {text!r} is not a number (e.g. 0x400)") from None
    if not 0 <= v < 1 << 18:
        raise UsageError(f"--base {text}: a shared-memory address is below 2^18")
    return v
