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
temporary name) for whatever the write itself meets; the CLI prints it and exits 2.  No command replaces a
file it did not make: ``check_output_dir`` / ``check_output_file`` (the one rule every writing command applies,
with an ``Owns`` that says what the command writes) refuse an output directory that holds anything else, and
an output file that exists and is not one the command wrote.
"""
from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
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
    import json
    deep = nesting_error(text, "json")
    if deep is not None:
        raise error(name, *deep, f"JSON: arrays or objects nested deeper than {MAX_NESTING} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(name, e.lineno, e.colno, f"not valid JSON: {e.msg}") from None
    except RecursionError:  # pragma: no cover - the nesting bound comes first
        raise error(name, 1, 1, "JSON: nested too deeply") from None


def json_text(value: object, limit: int = 40) -> str:
    """A value read from JSON as JSON writes it, for messages (``true``, ``null``, ``"x"``, ``[1, 2]``: never
    Python's ``True``/``None``/``'x'``), cut at ``limit`` characters."""
    import json
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # not a JSON value (an API caller's object): as Python shows it
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


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
    if _read_only(probe):
        raise OutputError(f"cannot write {shown}: read-only file system (directory {probe})")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {shown}: permission denied (directory {probe})")


def _read_only(d: Path) -> bool:
    """``d`` is on a file system mounted read-only (which ``os.access`` reports as a plain refusal)."""
    flag = getattr(os, "ST_RDONLY", 0)
    try:
        return bool(flag and os.statvfs(d).f_flag & flag)
    except (OSError, AttributeError):  # no statvfs here (Windows), or the directory went away: access decides
        return False


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


# ----------------------------------------------------------------------------- what a command owns

_HEAD = 1024  # the bytes of a file read to see whether a command wrote it


@dataclass(frozen=True)
class Owns:
    """What one command writes, so that it never replaces a file it did not make.

    ``what`` names the command (``a report``, ```probe```); ``files`` are (name pattern, mark) pairs: a file is the
    command's when its name matches a pattern (``fnmatch``, case-sensitive) and its first kilobyte holds that
    pattern's mark (the header every such file of the command carries; a mark that starts with ``^`` must begin the
    file), or when it is empty; ``dirs`` are the names of sub-directories the command writes, each its own when
    every entry in it is."""

    what: str
    files: tuple[tuple[str, str], ...]
    dirs: tuple[str, ...] = ()

    def owns(self, p: Path, any_name: bool = False) -> bool:
        """``p`` is this command's: a file it wrote (``any_name``: under whatever name, as an output file the user
        names), or one of its directories holding nothing else (a link is never its own)."""
        name = p.name
        try:
            if p.is_symlink():
                return False
            if p.is_dir():
                return name in self.dirs and all(self.owns(q) for q in p.iterdir())
            if not p.is_file():
                return False
            marks = [mark for pattern, mark in self.files if any_name or fnmatchcase(name, pattern)]
            if not marks:
                return False
            with open(p, "rb") as fh:
                head = fh.read(_HEAD).decode("utf-8", "replace")
        except OSError:
            return False
        return not head or any(head.lstrip("\ufeff").startswith(mark[1:]) if mark.startswith("^") else mark in head
                               for mark in marks)


def check_output_dir(path: PathLike, owns: Owns) -> None:
    """Refuse, before any work, an output directory that cannot be made or written, or that holds an entry the
    command does not write (``owns``): the command would replace or mix with a file it did not make."""
    check_writable_dir(path)
    p = Path(os.fspath(path))
    if not p.is_dir():
        return
    try:
        foreign = sorted(q.name for q in p.iterdir() if not owns.owns(q))
    except OSError as e:
        raise output_error(path, e) from None
    if foreign:
        raise OutputError(f"{os.fspath(path)} holds files {owns.what} does not write ({', '.join(foreign[:3])}"
                          f"{', ...' if len(foreign) > 3 else ''}); choose an empty or new directory")


def check_output_file(path: PathLike, owns: Owns) -> Path:
    """``check_writable_file``, and refuse a file that exists and is not one the command wrote (``owns``, under
    any name: the user names an output file); returns the directory it goes in."""
    parent = check_writable_file(path)
    p = Path(os.fspath(path))
    if p.exists() and not owns.owns(p, any_name=True):
        raise OutputError(f"cannot write {os.fspath(path)}: it exists and is not {owns.what} ptx-verify wrote; "
                          "remove it or choose another name")
    return parent


def output_error(path: PathLike, e: OSError) -> OutputError:
    """What an ``OSError`` met while writing ``path`` says, naming ``path`` (never a temporary file)."""
    return OutputError(f"cannot write {os.fspath(path)}: {_os_reason(e)}")


__all__ = ["MAX_INPUT_BYTES", "MAX_NESTING", "OutputError", "Owns", "check_output_dir", "check_output_file",
           "check_writable_dir", "check_writable_file", "decode",
           "json_text", "nesting_error", "output_error", "parse_json", "read_bytes", "read_json", "read_text", "strip_bom"]
