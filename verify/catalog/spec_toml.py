"""Reading a spec file's TOML as untrusted input: ``tomllib`` for the text, a ``Locator`` that maps keys and
values back to file positions, and the typed readers of one key (integers and strings in their ranges, formulas
by the formula grammar, parameters, extents, expectations), each failing with a ``SpecError`` at the key's line
and column.  ``verify.catalog.spec`` reads ``[[fragment]]`` tables with them, ``verify.catalog.spec_maps``
``[[layout]]`` tables.
"""
from __future__ import annotations


import re
import sys
from pathlib import Path
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..errors import SpecError
from ..files import MAX_NESTING, nesting_error, read_text
from ..formula import Formula, FormulaError, Var, parse_expression, parse_formula, walk
from ..layout.elements import list_and_bindings
from ..layout.family import Extent, Param, extent_at
from ..layout.model import (CHECK_NAMES)


MAX_DIM = 4096


MAX_THREADS = 1024


MAX_BINDINGS = 4096  # parameter combinations of one family


class Locator:
    """Maps TOML keys and string values back to lines of the raw file."""

    def __init__(self, path: str, text: str, table: str = "fragment") -> None:
        self.path = path
        self.text = text
        self.lines = text.split("\n")
        self.frag_offsets = [m.start() for m in re.finditer(rf"(?m)^\s*\[\[{table}\]\]", text)]

    def line_of_offset(self, off: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, off) + 1
        col = off - (self.text.rfind("\n", 0, off) + 1) + 1
        return line, col

    def fragment_start(self, k: int) -> int:
        return self.frag_offsets[k] if k < len(self.frag_offsets) else 0

    def fragment_end(self, k: int) -> int:
        return self.frag_offsets[k + 1] if k + 1 < len(self.frag_offsets) else len(self.text)

    def key(self, key: str, k: int | None = None) -> tuple[int, int]:
        start = self.fragment_start(k) if k is not None else 0
        end = self.fragment_end(k) if k is not None else len(self.text)
        m = re.compile(rf"(?m)^[ \t]*{re.escape(key)}[ \t]*=").search(self.text, start, end)
        if m:
            return self.line_of_offset(m.start() + len(m.group()) - len(m.group().lstrip()))
        return self.line_of_offset(start)

    def value(self, value: str, k: int, key: str) -> tuple[int, int]:
        """Line/column of the first character of a string value inside fragment k."""
        start, end = self.fragment_start(k), self.fragment_end(k)
        off = self.text.find(value, start, end)
        if off < 0:
            return self.key(key, k)
        return self.line_of_offset(off)

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def error(self, line: int, col: int, message: str) -> SpecError:
        return SpecError(self.path, line, col, message, self.line_text(line))

    # Where a fragment's formula is: in this file (a spec file), or on a doc page (a subclass for ingested
    # sections, ``verify.catalog.pages``), so that a layout carries the positions of its text from the start.

    def spec_path(self, k: int) -> str:
        """The file fragment k's layouts are read from."""
        return self.path

    def text_map(self, k: int) -> tuple[tuple[int, int], ...]:
        """(line, column) in ``spec_path`` of each line of fragment k's formula; () when it is
        ``formula_line`` on, line by line (a spec file)."""
        return ()

    def formula_at(self, k: int, ftext: str, line: int = 1, col: int = 1) -> tuple[int, int]:
        """(line, column) in ``spec_path`` of a position (line, col) in fragment k's formula text ``ftext``."""
        base_line, base_col = self.value(ftext, k, "formula")
        return base_line + line - 1, col + (base_col - 1 if line == 1 else 0)

    def syntax_at(self, k: int, ftext: str, line: int, col: int) -> tuple[int, int]:
        """Where a syntax error at (line, col) of fragment k's doc formula ``ftext`` is reported."""
        return self.formula_at(k, ftext, line, col)

    def in_header(self, e: SpecError) -> SpecError:
        """A bad ``[source]`` or ``[instruction]``, as reported (a spec file: where it is)."""
        return e

    def in_fragment(self, k: int, e: SpecError) -> SpecError:
        """A bad fragment k, as reported (a spec file: where it is)."""
        return e


def read_utf8(path: str | Path, error: type[SpecError] | None = None) -> str:
    """A file's text by the one safe reader (``verify.files``): regular files only, bounded, a leading
    byte-order mark dropped; unreadable files and non-UTF-8 bytes are bad input at a position."""
    return read_text(path, error=error or SpecError)


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def parse_toml(path: str, text: str) -> dict[str, Any]:
    deep = nesting_error(text, "toml")
    if deep is not None:  # tomllib recurses per level: refuse before it does
        raise SpecError(path, *deep, f"TOML: arrays or tables nested deeper than {MAX_NESTING} levels")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _TOML_POS.search(msg)
        line, col = (int(m[1]), int(m[2])) if m else (1, 1)
        raise SpecError(path, line, col, "TOML: " + _TOML_POS.sub("", msg).strip()) from None


def _int(loc: Locator, table: Mapping[str, Any], key: str, k: int | None, lo: int, hi: int,
         default: int | None = None) -> int:
    if key not in table:
        if default is not None:
            return default
        line, col = loc.key("[[fragment]]", None) if k is None else loc.line_of_offset(loc.fragment_start(k))
        raise loc.error(line, col, f"missing field '{key}'")
    v = table[key]
    if not isinstance(v, int) or isinstance(v, bool):
        raise loc.error(*loc.key(key, k), f"'{key}' must be an integer, got {type(v).__name__}")
    if v < lo or v > hi:
        raise loc.error(*loc.key(key, k), f"'{key}' = {v} is out of range ({lo}..{hi})")
    return v


def _str(loc: Locator, table: Mapping[str, Any], key: str, k: int | None,
         default: str | None = None) -> str:
    if key not in table:
        if default is not None:
            return default
        line, col = loc.line_of_offset(loc.fragment_start(k)) if k is not None else (1, 1)
        where = "fragment" if k is not None else "spec"
        raise loc.error(line, col, f"missing field '{key}' in {where}")
    v = table[key]
    if not isinstance(v, str):
        raise loc.error(*loc.key(key, k), f"'{key}' must be a string, got {type(v).__name__}")
    return v


def _unknown_keys(loc: Locator, table: Mapping[str, Any], allowed: set[str], where: str,
                  k: int | None) -> None:
    for key in table:
        if key not in allowed:
            raise loc.error(*loc.key(key, k), f"unknown field '{key}' in {where}")


def _formula(loc: Locator, text: str, prefix: str, k: int, key: str, params: tuple[str, ...] = ()) -> Formula:
    """Parse a fragment formula; errors are re-based onto the spec file's lines."""
    try:
        return parse_formula(text, prefix, params)
    except FormulaError as e:
        base_line, base_col = loc.value(text, k, key)
        line = base_line + e.line - 1
        col = e.col + (base_col - 1 if e.line == 1 else 0)
        raise loc.error(line, col, e.message) from None


def _params(loc: Locator, table: Any) -> tuple[Param, ...]:
    """``[instruction.params]``: ``N = { from = 8, to = 256, step = 8 }`` or ``N = [8, 16, 24, ...]``."""
    if not isinstance(table, dict):
        raise loc.error(*loc.key("params"), "'params' must be a table: NAME = { from, to, step } or a list")
    out = []
    for name, spec in table.items():
        at = loc.key(name)
        if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", name):
            raise loc.error(*at, f"parameter name {name!r} must start with a capital letter (N, NUM)")
        if isinstance(spec, dict):
            extra = set(spec) - {"from", "to", "step"}
            if extra or not all(isinstance(spec.get(x), int) and not isinstance(spec.get(x), bool)
                                for x in ("from", "to", "step")):
                raise loc.error(*at, f"parameter {name}: give integers from, to and step")
            lo, hi, step = spec["from"], spec["to"], spec["step"]
            if step < 1 or lo < 0 or hi < lo or hi > MAX_DIM:
                raise loc.error(*at, f"parameter {name}: need 0 <= from <= to <= {MAX_DIM} and step >= 1")
            values = tuple(range(lo, hi + 1, step))
        elif isinstance(spec, list) and spec:
            if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_DIM for v in spec):
                raise loc.error(*at, f"parameter {name}: values must be integers in 0..{MAX_DIM}")
            if list(spec) != sorted(set(spec)):
                raise loc.error(*at, f"parameter {name}: values must be distinct and ascending")
            values = tuple(spec)
        else:
            raise loc.error(*at, f"parameter {name}: give {{ from, to, step }} or a non-empty list")
        out.append(Param(name, values))
    combos = 1
    for p in out:
        combos *= len(p.values)
    if combos > MAX_BINDINGS:  # every combination is an instance, checked one by one by the enumeration
        raise loc.error(*loc.key("params"), f"{combos} parameter combinations (limit {MAX_BINDINGS})")
    return tuple(out)


def _extent(loc: Locator, table: Mapping[str, Any], key: str, k: int, lo: int, hi: int, default: Extent,
            params: tuple[str, ...]) -> Extent:
    """An integer field, or (in a family) an expression over the parameters such as ``"N/4"``."""
    v = table.get(key, default)
    if isinstance(v, str) and params:
        try:
            e = parse_expression(v, params)
        except FormulaError as err:
            line, col = loc.value(v, k, key)
            raise loc.error(line, col + err.col - 1, f"'{key}': {err.message}") from None
        return e if any(isinstance(n, Var) for n in walk(e)) else extent_at(e, {})
    if key not in table:
        return default
    return _int(loc, table, key, k, lo, hi)


def _check_bindings(loc: Locator, k: int, text: Any, names: tuple[str, ...]) -> None:
    """The ``where X = N/2 - 4 ...`` of a family's element list parses (positioned error otherwise)."""
    if not isinstance(text, str):
        return
    for name, expr, offset in list_and_bindings(text)[1]:
        try:
            parse_expression(expr, names)
        except FormulaError as err:
            line, col = loc.value(text, k, "elements")
            raise loc.error(line, col + offset + err.col - 1, f"element list, {name}: {err.message}") from None


def _expect(loc: Locator, table: Any, k: int, key: str) -> dict[str, str]:
    if not isinstance(table, dict):
        raise loc.error(*loc.key(key, k), f"'{key}' must be a table of check = status")
    out: dict[str, str] = {}
    for check, status in table.items():
        if check not in CHECK_NAMES + ("syntax",):
            raise loc.error(*loc.key(check, k), f"unknown check {check!r} in expect (checks: {', '.join(CHECK_NAMES)}, syntax)")
        if status not in ("proved", "refuted"):
            raise loc.error(*loc.key(check, k), f"expected status must be \"proved\" or \"refuted\", got {status!r}")
        out[check] = status
    return out
