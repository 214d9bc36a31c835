"""Files in and out: the one safe reader of every input path, and the checks of every output path.

Every file a user names is read here (spec files, doc pages, notation files and ``-`` for stdin,
CuTe headers, baselines, observations):

* only a regular file (or stdin) is read: a directory, a FIFO, a device (``/dev/zero``) or a socket
  is refused at once, with one positioned error, before anything is opened for reading (and the
  file is opened non-blocking and checked again, so a FIFO swapped in meanwhile cannot block);
* never more than the size limit plus one byte is read, so an endless input cannot grow the process;
* a leading UTF-8 byte-order mark is dropped; positions are those of the text after it (line 1,
  column 1 is its first character), and non-UTF-8 bytes are an error at their line and column.

``nesting_error`` bounds the bracket nesting of TOML and JSON text before it reaches a recursive
parser (``tomllib``, ``json``), which would otherwise die with ``RecursionError``.

Outputs: ``check_writable_file`` / ``check_writable_dir`` refuse an output path that cannot be
written before any work is done, and ``OutputError`` is the one line (naming the user's path, never a
temporary name) for whatever the write itself meets; the CLI prints it and exits 2.
"""
from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import Callable, Union

from .errors import SpecError, UsageError

MAX_INPUT_BYTES = 16 * 1024 * 1024  # 16 MiB: the largest input in use (a CuTe header) is ~1 MiB
MAX_NESTING = 64  # brackets inside one another in TOML or JSON (specs use 3, check JSON 6)
BOM = "\ufeff"
STDIN = "-"
STDIN_NAME = "<stdin>"

PathLike = Union[str, "os.PathLike[str]"]
ErrorFactory = Callable[[str, int, int, str], Exception]  # (path, line, col, message) -> the error to raise


class OutputError(UsageError):
    """An output that cannot be written: ``cannot write PATH: reason`` (exit 2, nothing written)."""


# ----------------------------------------------------------------------------- reading

def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _os_reason(e: OSError) -> str:
    return (e.strerror or type(e).__name__).lower() if not isinstance(e, PermissionError) else "permission denied"


def _read_at_most(read: Callable[[int], bytes], limit: int) -> bytes:
    """At most ``limit + 1`` bytes (one more than allowed, to tell "too large" from "just fits")."""
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        chunk = read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _too_large(name: str, limit: int, error: ErrorFactory) -> Exception:
    return error(name, 1, 1, f"input is larger than the limit of {limit} bytes")


def read_bytes(path: PathLike, limit: int = MAX_INPUT_BYTES, error: ErrorFactory = SpecError) -> bytes:
    """The bytes of a regular file (``-``: stdin), at most ``limit``; anything else is ``error(path, 1, 1, msg)``."""
    name = os.fspath(path)
    if name == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise error(STDIN_NAME, 1, 1, "no standard input to read")
        data = _read_at_most(stream.read, limit)
        if len(data) > limit:
            raise _too_large(STDIN_NAME, limit, error)
        return data
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise error(name, 1, 1, "no such file or directory") from None
    except OSError as e:
        raise error(name, 1, 1, f"cannot read: {_os_reason(e)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(name, 1, 1, f"is {_kind(st.st_mode)}, not a file that can be read")
    if st.st_size > limit:
        raise _too_large(name, limit, error)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except OSError as e:
        raise error(name, 1, 1, f"cannot read: {_os_reason(e)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the two looks
            raise error(name, 1, 1, f"is {_kind(st.st_mode)}, not a file that can be read")
        try:
            data = _read_at_most(lambda n: os.read(fd, n), limit)
        except OSError as e:
            raise error(name, 1, 1, f"cannot read: {_os_reason(e)}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _too_large(name, limit, error)
    return data


def decode(data: bytes, name: str, error: ErrorFactory = SpecError) -> str:
    """UTF-8 bytes -> text without a leading byte-order mark; a bad byte is an error at its line and column."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        head = data[: e.start]
        raise error(name, head.count(b"\n") + 1, e.start - (head.rfind(b"\n") + 1) + 1,
                    f"byte 0x{data[e.start]:02x} is not valid UTF-8") from None


def read_text(path: PathLike, limit: int = MAX_INPUT_BYTES, error: ErrorFactory = SpecError) -> str:
    """A text file (``-``: stdin) read by ``read_bytes`` and decoded by ``decode``."""
    name = os.fspath(path)
    return decode(read_bytes(name, limit, error), STDIN_NAME if name == STDIN else name, error)


def strip_bom(text: str) -> str:
    """Text given as a string (an argument, a file read elsewhere) without a leading byte-order mark."""
    return text[1:] if text.startswith(BOM) else text


# ----------------------------------------------------------------------------- nesting

_INTERESTING = {"toml": re.compile(r"""[\[\]{}"'#]"""), "json": re.compile(r'[\[\]{}"]')}


def _string_end(text: str, start: int, quote: str, escapes: bool, multiline: bool) -> int:
    """The offset just after the string that opens at ``start`` (its opening quote(s) included), or -1
    when it does not end (the parser will say so).  Each character is looked at a bounded number of times."""
    k = start + len(quote)
    while True:
        end = text.find(quote, k)
        if end < 0 or (not multiline and text.find("\n", k, end) >= 0):
            return -1
        if not escapes:
            return end + len(quote)
        slashes = 0
        j = end - 1
        while j >= k and text[j] == "\\":
            slashes += 1
            j -= 1
        if slashes % 2 == 0:
            return end + len(quote)
        k = end + 1


def nesting_error(text: str, syntax: str, limit: int = MAX_NESTING) -> tuple[int, int] | None:
    """(line, column) of the first bracket nested deeper than ``limit`` in TOML or JSON text, or ``None``.

    Strings and (TOML) comments are skipped, so brackets inside them do not count; the scan is linear in
    the text and stops at a string that does not end (its parser reports that).
    """
    if text.count("[") + text.count("{") <= limit:  # cannot nest deeper: no scan
        return None
    rx = _INTERESTING[syntax]
    depth = 0
    k = 0
    while True:
        m = rx.search(text, k)
        if m is None:
            return None
        at, c = m.start(), m.group()
        if c in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
            k = at + 1
        elif c in "]}":
            depth = max(0, depth - 1)
            k = at + 1
        elif c == "#":
            nl = text.find("\n", at)
            if nl < 0:
                return None
            k = nl + 1
        else:
            triple = syntax == "toml" and text.startswith(c * 3, at)
            k = _string_end(text, at, c * 3 if triple else c, escapes=c == '"', multiline=triple)
            if k < 0:
                return None


def parse_json(text: str, name: str, error: ErrorFactory = SpecError) -> object:
    """JSON text -> value, nesting bounded first; every error is ``error(name, line, col, msg)``."""
    import json  # noqa: PLC0415
    deep = nesting_error(text, "json")
    if deep is not None:
        raise error(name, *deep, f"JSON: arrays or objects nested deeper than {MAX_NESTING} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(name, e.lineno, e.colno, f"not valid JSON: {e.msg}") from None
    except RecursionError:  # pragma: no cover - the nesting bound comes first
        raise error(name, 1, 1, "JSON: nested too deeply") from None


def read_json(path: PathLike, limit: int = MAX_INPUT_BYTES, error: ErrorFactory = SpecError) -> object:
    """A JSON file (``-``: stdin) by the safe reader, its nesting bounded before ``json`` parses it."""
    name = os.fspath(path)
    return parse_json(read_text(name, limit, error), STDIN_NAME if name == STDIN else name, error)


# ----------------------------------------------------------------------------- writing

def _writable_dir(d: Path, shown: str) -> None:
    """``d`` (the directory an output goes in, or the nearest existing ancestor of one to be made) is writable."""
    probe = d
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise OutputError(f"cannot write {shown}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {shown}: permission denied (directory {probe})")


def check_writable_file(path: PathLike) -> Path:
    """Refuse, before any work, a file output that cannot be written; returns the directory it goes in."""
    shown = os.fspath(path)
    p = Path(shown)
    if p.is_dir():
        raise OutputError(f"cannot write {shown}: is a directory")
    if p.exists() and not p.is_file():
        raise OutputError(f"cannot write {shown}: is {_kind(p.stat().st_mode)}")
    parent = p.absolute().parent
    if not parent.is_dir():
        raise OutputError(f"cannot write {shown}: no directory {parent}")
    _writable_dir(parent, shown)
    return parent


def check_writable_dir(path: PathLike) -> None:
    """Refuse, before any work, an output directory that cannot be made or replaced."""
    shown = os.fspath(path)
    p = Path(shown)
    if p.exists() and not p.is_dir():
        raise OutputError(f"cannot write {shown}: exists and is not a directory")
    _writable_dir(p.absolute().parent, shown)


def output_error(path: PathLike, e: OSError) -> OutputError:
    """What an ``OSError`` met while writing ``path`` says, naming ``path`` (never a temporary file)."""
    return OutputError(f"cannot write {os.fspath(path)}: {_os_reason(e)}")


__all__ = ["MAX_INPUT_BYTES", "MAX_NESTING", "OutputError", "check_writable_dir", "check_writable_file", "decode",
           "nesting_error", "output_error", "parse_json", "read_bytes", "read_json", "read_text", "strip_bom"]
