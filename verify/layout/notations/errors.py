"""Errors, the common import result, and safe input reading shared by every notation importer.

Layout text arrives from users (command-line arguments, files, third-party headers), so every
importer answers bad input with one positioned ``NotationError`` — never a traceback, never a
``RecursionError``.  This module also holds the input steps all importers share: reading a file
(``read_source``: the one safe reader of ``verify.files``, as a ``NotationError``), decoding
bytes (non-UTF-8 is an error at the offending byte, a leading byte-order mark is dropped) and a
bounded, iterative JSON reader that remembers where each value was written (Python's ``json``
recurses without limit and forgets positions, so tables and Triton files could not point at the
entry that is wrong).  Documents that are plainly within its bounds are read by ``json`` itself, their
positions found only when asked for.
"""
from __future__ import annotations

import bisect
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify.files import BOM, read_bytes
from verify.formula import Formula

JsonValue = None | bool | int | float | str | list | dict

MAX_SOURCE_CHARS = 16 * 1024 * 1024   # 16 MiB: the largest CuTe header is ~1 MiB
MAX_JSON_DEPTH = 8                    # tables and Triton files need 3 levels
MAX_INT_DIGITS = 18                   # anything longer is no layout value (and int() on 10^6 digits is slow)


class NotationError(ValueError):
    """Bad layout text: ``source:line:col: error: message`` (line and column are 1-based)."""

    def __init__(self, message: str, line: int = 1, col: int = 1, source: str = "argument") -> None:
        self.message = message
        self.line = max(1, int(line))
        self.col = max(1, int(col))
        self.source = source
        super().__init__(self.one_line())

    def one_line(self) -> str:
        return f"{self.source}:{self.line}:{self.col}: error: {self.message}"

    def __reduce__(self):  # picklable, so worker processes can report bad input too
        return (type(self), (self.message, self.line, self.col, self.source))


@dataclass(frozen=True)
class TVImport:
    """One imported layout, in the form ``conform`` consumes.

    ``formula`` defines ``row`` and ``col`` over ``%laneid`` (the thread index, ``0 <= lane <
    threads``) and ``i`` (the element index, ``0 <= i < values``); outside that domain, or where
    the notation leaves a cell open, no case applies (``oracle.evaluate`` answers ``None``).
    ``extent`` is the operand tile as (rows, cols) in PTX orientation when the notation says it.
    """

    formula: Formula
    threads: int
    values: int
    text: str
    notation: str                      # "cute" | "triton" | "table"
    extent: tuple[int, int] | None = None
    operand: str | None = None
    params: tuple[str, ...] = ()  # the family parameters the text reads (index code over ``N``)
    built: object = None  # a Layout the notation built with the algebra (a TiledMMA): used as is


class NeedsMember(Exception):
    """A notation that states one size of layout was asked to read a family (``verify.checks.members.read_as``
    then reads it against each member)."""


class Positions:
    """Offset -> (line, col) for one text, in O(log lines) per lookup."""

    def __init__(self, text: str, line0: int = 1, col0: int = 1) -> None:
        self._starts = [0]
        find = text.find
        at = find("\n")
        while at >= 0:
            self._starts.append(at + 1)
            at = find("\n", at + 1)
        self._line0, self._col0 = line0, col0

    def at(self, offset: int) -> tuple[int, int]:
        k = bisect.bisect_right(self._starts, offset) - 1
        col = offset - self._starts[k] + 1
        if k == 0:
            col += self._col0 - 1
        return self._line0 + k, col


def _file_error(path: str, line: int, col: int, message: str) -> NotationError:
    return NotationError(message, line, col, path)


def read_source(path: str | os.PathLike[str], limit: int = MAX_SOURCE_CHARS) -> bytes:
    """A layout or header file (``-``: stdin) by the one safe reader: regular files only, at most ``limit``."""
    return read_bytes(path, limit, _file_error)


def decode_source(data: str | bytes, source: str = "argument", limit: int = MAX_SOURCE_CHARS) -> str:
    """Bytes -> text; non-UTF-8, NUL bytes and oversized input are positioned errors; a leading
    byte-order mark is dropped (positions are those of the text after it)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if len(raw) > limit:
            raise NotationError(f"input is {len(raw)} bytes (limit {limit})", 1, 1, source)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
            raise NotationError(f"input is not UTF-8 (byte 0x{raw[e.start]:02x})", line, col, source) from None
    elif isinstance(data, str):
        text = data[1:] if data.startswith(BOM) else data
        if len(text) > limit:
            raise NotationError(f"input is {len(text)} characters (limit {limit})", 1, 1, source)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:  # lone surrogates from a lenient decoder
            pos = Positions(text).at(e.start)
            raise NotationError("input is not valid Unicode (lone surrogate)", pos[0], pos[1], source) from None
    else:
        raise TypeError(f"expected str or bytes, got {type(data).__name__}")
    nul = text.find("\0")
    if nul >= 0:
        line, col = Positions(text).at(nul)
        raise NotationError("NUL character in input", line, col, source)
    return text


# ----------------------------------------------------------------------------- bounded JSON

@dataclass
class JsonDoc:
    """A parsed JSON document plus where each container and member value was written.

    The positions of a document read by ``load_json``'s fast path are found when first asked for (an error, or
    a reader that reports positions): the text is read again by the positional reader, whose tree has the
    same shape, and its offsets are carried over container by container."""

    value: JsonValue
    source: str
    # offsets into the text, made (line, col) only when an error asks (a table has ~10^5 members)
    _pos: Positions | None = field(default=None, repr=False)
    _where: dict[int, int] = field(default_factory=dict, repr=False)
    _members: dict[int, dict[object, int]] = field(default_factory=dict, repr=False)
    _keys: dict[int, dict[str, int]] = field(default_factory=dict, repr=False)
    _unread: tuple[str, int] | None = field(default=None, repr=False)  # (text, max_depth) not yet read for positions

    def _at(self, offset: int | None) -> tuple[int, int]:
        return (1, 1) if offset is None or self._pos is None else self._pos.at(offset)

    def _positions(self) -> None:
        if self._unread is None:
            return
        text, depth = self._unread
        self._unread = None
        slow = _load_json_positioned(text, self.source, depth)
        self._pos = slow._pos
        pairs: list[tuple[JsonValue, JsonValue]] = [(self.value, slow.value)]
        while pairs:  # the two trees have one shape: carry each container's offsets over by identity
            mine, theirs = pairs.pop()
            if not isinstance(mine, (list, dict)):
                continue
            tables: tuple[tuple[dict[int, Any], dict[int, Any]], ...] = (
                (self._where, slow._where), (self._members, slow._members), (self._keys, slow._keys))
            for store, other in tables:
                if id(theirs) in other:
                    store[id(mine)] = other[id(theirs)]
            if isinstance(mine, dict):
                pairs.extend(zip(mine.values(), theirs.values()))  # type: ignore[union-attr]
            else:
                pairs.extend(zip(mine, theirs))  # type: ignore[arg-type]

    def key_where(self, obj: dict, key: str) -> tuple[int, int]:
        """Position of the quoted key ``key`` of object ``obj`` (for unknown or repeated keys)."""
        self._positions()
        off = self._keys.get(id(obj), {}).get(key)
        return self._at(off) if off is not None else self.where(obj, key)

    def where(self, container: object, key: object = None) -> tuple[int, int]:
        """Position of ``container`` itself, or of its member ``key`` (a dict key or list index)."""
        self._positions()
        if key is not None:
            members = self._members.get(id(container), {})
            if key in members:
                return self._at(members[key])
        return self._at(self._where.get(id(container)))

    def error(self, message: str, container: object = None, key: object = None) -> NotationError:
        line, col = self.where(container, key) if container is not None else (1, 1)
        return NotationError(message, line, col, self.source)


_WS = " \t\r\n"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _NotPlain(ValueError):
    """What the fast path leaves to the positional reader (it decides, with a position)."""


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_BRACKET = np.zeros(256, np.int8)
_BRACKET[[ord("["), ord("{")]] = 1
_BRACKET[[ord("]"), ord("}")]] = -1
_DIGIT = np.zeros(256, bool)
_DIGIT[[ord(c) for c in "0123456789"]] = True
_NUMBER_CHAR = _DIGIT.copy()
_NUMBER_CHAR[[ord(c) for c in "-+.eE"]] = True


def _longest_run(mask: np.ndarray) -> int:
    if not mask.any():
        return 0
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
    return int((edges[1::2] - edges[0::2]).max())


def _plain(text: str, max_depth: int) -> bool:
    """No ``\\u`` escape of a surrogate, no number longer than the limits, brackets (outside strings) nested
    at most ``max_depth`` deep: exact for valid JSON; for anything else ``json`` or the positional reader
    decides."""
    if _SURROGATE_ESCAPE.search(text):
        return False
    bare = np.frombuffer(_STRING.sub("", text).encode("ascii", "replace"), np.uint8)
    if not bare.size:
        return True
    if _longest_run(_DIGIT[bare]) > MAX_INT_DIGITS or _longest_run(_NUMBER_CHAR[bare]) > 40:
        return False
    return int(np.cumsum(_BRACKET[bare], dtype=np.int32).max()) <= max_depth


def _pairs(items: list[tuple[str, JsonValue]]) -> dict:
    out = dict(items)
    if len(out) != len(items):
        raise _NotPlain("duplicate key")
    return out


def _constant(s: str) -> float:
    raise _NotPlain(f"{s} is not JSON")


def load_json(text: str, source: str = "argument", max_depth: int = MAX_JSON_DEPTH) -> JsonDoc:
    """Parse JSON with a depth bound; every error is a positioned ``NotationError``.

    Integers longer than ``MAX_INT_DIGITS`` digits, duplicate object keys, NaN/Infinity, lone surrogates and
    trailing text are rejected (``json`` would accept or mishandle them).  A document within the bounds is read
    by Python's ``json`` with hooks for those rules (a twentieth of the time), its positions found when first
    asked for (``JsonDoc.where``); anything the hooks or ``json`` refuse, and anything nested deeper than
    ``max_depth``, is read by the iterative positional reader, which gives the same values or the positioned
    error (``tests/test_notations.py`` holds the two to each other)."""
    if _plain(text, max_depth):
        try:
            value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
        except (ValueError, RecursionError):
            pass
        else:
            return JsonDoc(value, source, None, _unread=(text, max_depth))
    return _load_json_positioned(text, source, max_depth)


class _JsonText:
    """The text the positional JSON reader scans: its whitespace skipped and its scalars read from an offset, and
    its errors positioned (a ``NotationError`` at the offset's line and column, naming ``source``)."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.n = len(text)
        self.source = source
        self.pos = Positions(text)

    def err(self, message: str, at: int) -> NotationError:
        """The error ``message`` at offset ``at`` (the end of the text at most)."""
        line, col = self.pos.at(min(at, self.n))
        return NotationError(message, line, col, self.source)

    def skip_ws(self, at: int) -> int:
        """The first offset from ``at`` that is not JSON whitespace."""
        text, n = self.text, self.n
        while at < n and text[at] in _WS:
            at += 1
        return at

    def scalar(self, at: int) -> tuple[JsonValue, int]:
        """The string, literal or number at ``at`` and the offset after it."""
        text = self.text
        c = text[at]
        if c == '"':
            return self.string(at)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, at):
                return val, at + len(word)
        if c == "-" or "0" <= c <= "9":
            return self.number(at)
        raise self.err(f"unexpected character {c!r}", at)

    def number(self, at: int) -> tuple[JsonValue, int]:
        """The number at ``at`` (an int, or a float with a fraction or an exponent) and the offset after it."""
        text, n, err = self.text, self.n, self.err
        start = at
        if text[at] == "-":
            at += 1
        d0 = at
        while at < n and "0" <= text[at] <= "9":
            at += 1
        if at == d0:
            raise err("malformed number", start)
        if text[d0] == "0" and at - d0 > 1:
            raise err("number with a leading zero", start)
        is_float = False
        if at < n and text[at] == ".":
            is_float = True
            at += 1
            f0 = at
            while at < n and "0" <= text[at] <= "9":
                at += 1
            if at == f0:
                raise err("malformed number", start)
        if at < n and text[at] in "eE":
            is_float = True
            at += 1
            if at < n and text[at] in "+-":
                at += 1
            e0 = at
            while at < n and "0" <= text[at] <= "9":
                at += 1
            if at == e0:
                raise err("malformed number", start)
        s = text[start:at]
        if len(s) > 40 or (not is_float and at - d0 > MAX_INT_DIGITS):
            raise err(f"number {s[:20]}{'...' if len(s) > 20 else ''} is too large", start)
        return (float(s) if is_float else int(s)), at

    def string(self, at: int) -> tuple[str, int]:
        """The string at ``at`` (its escapes and surrogate pairs decoded) and the offset after its closing quote."""
        text, n, err = self.text, self.n, self.err
        start = at
        at += 1
        parts: list[str] = []
        while True:
            end = at
            while end < n and text[end] not in '"\\' and text[end] >= " ":
                end += 1
            parts.append(text[at:end])
            if end >= n:
                raise err("unterminated string", start)
            c = text[end]
            if c == '"':
                return "".join(parts), end + 1
            if c != "\\":
                raise err("control character in string", end)
            if end + 1 >= n:
                raise err("unterminated string", start)
            e = text[end + 1]
            if e in _ESCAPES:
                parts.append(_ESCAPES[e])
                at = end + 2
            elif e == "u":
                hexs = text[end + 2:end + 6]
                if len(hexs) != 4 or any(h not in "0123456789abcdefABCDEF" for h in hexs):
                    raise err("malformed \\u escape", end)
                code = int(hexs, 16)
                at = end + 6
                if 0xD800 <= code < 0xDC00 and text.startswith("\\u", at):  # a surrogate pair
                    low = text[at + 2:at + 6]
                    if len(low) == 4 and all(h in "0123456789abcdefABCDEF" for h in low) and \
                            0xDC00 <= int(low, 16) < 0xE000:
                        code = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)
                        at += 6
                if 0xD800 <= code < 0xE000:
                    raise err("lone surrogate in \\u escape", end)
                parts.append(chr(code))
            else:
                raise err(f"unknown escape \\{e}", end)


def _load_json_positioned(text: str, source: str = "argument", max_depth: int = MAX_JSON_DEPTH) -> JsonDoc:
    """The iterative reader with a depth bound that records where each value was written; every error is a
    positioned ``NotationError``."""
    src = _JsonText(text, source)
    doc = JsonDoc(None, source, src.pos)
    n = len(text)
    err, skip_ws, string = src.err, src.skip_ws, src.string

    # stack frames: [container, pending_key, offset where the container opened]
    stack: list[list] = []
    root_set = False
    root: JsonValue = None
    k = skip_ws(0)
    if k >= n:
        raise err("empty input", 0)
    while True:
        k = skip_ws(k)
        if k >= n:
            raise err("unexpected end of input" + (" (unclosed bracket)" if stack else ""), k)
        # read one value
        vstart = k
        c = text[k]
        if c in "[{":
            if len(stack) >= max_depth:
                raise err(f"nesting deeper than {max_depth} levels", k)
            container: JsonValue = [] if c == "[" else {}
            doc._where[id(container)] = k
            doc._members[id(container)] = {}
            k = skip_ws(k + 1)
            closer = "]" if c == "[" else "}"
            if k < n and text[k] == closer:
                value, k = container, k + 1
            else:
                stack.append([container, None, vstart])
                if c == "{":
                    k = _json_key(text, k, n, stack[-1], string, err, doc)
                continue
        else:
            value, k = src.scalar(k)
        # attach ``value`` to its parent, closing containers as long as they end
        while True:
            if not stack:
                if root_set:
                    raise err("unexpected text after the document", vstart)
                root, root_set = value, True
                k = skip_ws(k)
                if k < n:
                    raise err("unexpected text after the document", k)
                doc.value = root
                return doc
            frame = stack[-1]
            parent = frame[0]
            if isinstance(parent, list):
                doc._members[id(parent)][len(parent)] = vstart
                parent.append(value)
            else:
                key = frame[1]
                doc._members[id(parent)][key] = vstart
                parent[key] = value
            k = skip_ws(k)
            if k >= n:
                raise err("unexpected end of input (unclosed bracket)", k)
            closer = "]" if isinstance(parent, list) else "}"
            if text[k] == ",":
                k = skip_ws(k + 1)
                if isinstance(parent, dict):
                    k = _json_key(text, k, n, frame, string, err, doc)
                break
            if text[k] == closer:
                vstart = stack.pop()[2]
                value, k = parent, k + 1
                continue
            raise err(f"expected ',' or '{closer}', found {text[k]!r}", k)


def _json_key(text, k, n, frame, string, err, doc) -> int:
    """Read ``"key" :`` into ``frame``; duplicate keys are errors."""
    if k >= n or text[k] != '"':
        raise err("expected a quoted key", k)
    kstart = k
    key, k = string(k)
    if key in frame[0]:
        raise err(f"duplicate key {key!r}", kstart)
    doc._keys.setdefault(id(frame[0]), {})[key] = kstart
    while k < n and text[k] in _WS:
        k += 1
    if k >= n or text[k] != ":":
        raise err("expected ':' after the key", k)
    frame[1] = key
    return k + 1
