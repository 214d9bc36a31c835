"""``[[layout]]`` tables of a spec file: maps with no register facts (shared-memory layouts, swizzles, Tensor
Memory and storage layouts, block tiles) read into ``MapLayout``s: named input and output dimensions, the
formula over them, the checks that apply, expectations and the reviewed correction.
"""
from __future__ import annotations

import dataclasses

import re
import sys
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

from ..formula import Formula, FormulaError
from ..formula.index import parse_index
from ..layout.family import Param
from ..layout.ids import corrected_id
from ..layout.model import MAP_CHECKS, MAP_KINDS, MapLayout
from ..layout.records import Provenance, Source
from .spec_toml import (MAX_DIM, Locator, _int, _params, _str, _unknown_keys, _extent)


_MAP_KEYS = {"id", "kind", "instruction", "inputs", "outputs", "params", "formula", "checks", "expect", "unit",
             "derived", "erratum", "corrected", "doc_line", "note", "arch"}


_MAP_CORRECTION_KEYS = {"formula", "expect", "params", "outputs"}


_DIM_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _dims(loc: Locator, table: Mapping[str, Any], key: str, k: int, params: tuple[str, ...]) -> tuple[Any, ...]:
    """``inputs = { row = 8, col = "8 * T" }``: named dimensions in order, sizes integers or expressions over
    the parameters."""
    from ..layout.dims import Dim
    v = table.get(key)
    if not isinstance(v, dict) or not v:
        raise loc.error(*(loc.key(key, k) if key in table else loc.line_of_offset(loc.fragment_start(k))),
                        f"'{key}' must be a table of NAME = size (for example {{ row = 8, col = 64 }})")
    out = []
    for name, size in v.items():
        if not _DIM_NAME.fullmatch(name):
            raise loc.error(*loc.key(key, k), f"dimension name {name!r}: lower-case letters, digits and '_'")
        ext = _extent(loc, v, name, k, 1, MAX_DIM * MAX_DIM, 0, params)
        if isinstance(size, str) and not params:
            raise loc.error(*loc.value(size, k, key), f"'{key}.{name}': a size is an integer (expressions need params)")
        out.append(Dim(name, ext))
    return tuple(out)


def _read_map_layout(loc: Locator, k: int, table: Any, source: Source, instruction: str,
                     src: Mapping[str, Any]) -> list[MapLayout]:
    """One ``[[layout]]``: a map with no register facts (and its correction, if any)."""
    from ..layout.named import FormulaMap as NamedFormulaMap
    if not isinstance(table, dict):
        raise loc.error(*loc.line_of_offset(loc.fragment_start(k)), "[[layout]] must be a table")
    _unknown_keys(loc, table, _MAP_KEYS, "[[layout]]", k)
    lid = _str(loc, table, "id", k)
    if not re.fullmatch(r"[A-Za-z0-9_.+\-]+", lid):  # (no "@": a correction's id is its doc layout's, suffixed)
        raise loc.error(*loc.key("id", k), f"bad layout id {lid!r}")
    kind = _str(loc, table, "kind", k, "map")
    if kind not in MAP_KINDS:
        raise loc.error(*loc.key("kind", k), f"kind must be one of {', '.join(MAP_KINDS)}, got {kind!r}")
    params = _params(loc, table["params"]) if "params" in table else ()
    names = tuple(p.name for p in params)
    inputs = _dims(loc, table, "inputs", k, names)
    outputs = _dims(loc, table, "outputs", k, names)
    from ..layout.dims import unique
    try:
        unique(inputs, "inputs")
        unique(outputs, "outputs")
    except ValueError as e:
        raise loc.error(*loc.key("inputs", k), str(e)) from None
    clash = {d.name for d in inputs} & {d.name for d in outputs}
    if clash:
        raise loc.error(*loc.key("outputs", k), f"{', '.join(sorted(clash))} is both an input and an output "
                                                "(name the output apart, e.g. src_row -> row)")
    checks = table.get("checks", list(MAP_CHECKS))
    if not isinstance(checks, list) or not checks or any(c not in MAP_CHECKS for c in checks):
        raise loc.error(*loc.key("checks", k), f"'checks' lists some of {', '.join(MAP_CHECKS)}")
    unit = _str(loc, table, "unit", k, "")
    if unit not in ("", "bytes", "elements"):
        raise loc.error(*loc.key("unit", k), f"unit is 'bytes' or 'elements', got {unit!r}")
    doc_line = _int(loc, table, "doc_line", k, 1, 10**7, default=1)
    text = _str(loc, table, "formula", k)
    coordinates = tuple(d.name for d in inputs if d.name != "i")
    required = tuple(d.name for d in outputs)

    def parse(ftext: str) -> Formula:  # code someone wrote over named inputs: the index-code grammar
        try:
            return parse_index(ftext, "x", coordinates, required, names)
        except FormulaError as e:
            base_line, base_col = loc.value(ftext, k, "formula")
            raise loc.error(base_line + e.line - 1, e.col + (base_col - 1 if e.line == 1 else 0), e.message) from None

    def make(ftext: str, mid: str, corrects: str, expect: Mapping[str, str],
             values: tuple[Param, ...] = params, outs: tuple[Any, ...] = outputs) -> MapLayout:
        lmap = NamedFormulaMap(parse(ftext), inputs, outs, params=values)
        prov = Provenance(dataclasses.replace(source, line=doc_line, file=_str(loc, src, "page", None, loc.path)),
                          loc.path, loc.value(ftext, k, "formula")[0], ftext, erratum=_str(loc, table, "erratum", k, ""),
                          derived=_str(loc, table, "derived", k, ""), arch=_str(loc, table, "arch", k, ""))
        return MapLayout(id=mid, kind=kind, map=lmap, provenance=prov, expect=dict(expect), checks=tuple(checks),
                         instruction=_str(loc, table, "instruction", k, instruction), unit=unit, corrects=corrects,
                         note=_str(loc, table, "note", k, ""))

    expect = _map_expect(loc, table.get("expect", {}), k, checks)
    out = [make(text, lid, "", expect)]
    corrected = table.get("corrected")
    if corrected is not None:
        if not isinstance(corrected, dict):
            raise loc.error(*loc.key("corrected", k), "[layout.corrected] must be a table")
        _unknown_keys(loc, corrected, _MAP_CORRECTION_KEYS, "[layout.corrected]", k)
        if not out[0].provenance.erratum:
            raise loc.error(*loc.key("corrected", k), "a [layout.corrected] needs an 'erratum' explanation")
        ctext = corrected.get("formula", text)
        if not isinstance(ctext, str):
            raise loc.error(*loc.key("formula", k), "corrected 'formula' must be a string")
        cparams = params
        if "params" in corrected:  # a correction that narrows a family (the values the doc's layout holds for)
            cparams = _params(loc, corrected["params"])
            if [p.name for p in cparams] != list(names):
                raise loc.error(*loc.key("corrected", k), "[layout.corrected] params must name the layout's "
                                                          f"parameters ({', '.join(names) or 'none'}), in order")
        couts = outputs
        if "outputs" in corrected:  # a correction whose layout spans another box (the same output names)
            couts = _dims(loc, corrected, "outputs", k, names)
            if [d.name for d in couts] != list(required):
                raise loc.error(*loc.key("corrected", k), "[layout.corrected] outputs must name the layout's "
                                                          f"outputs ({', '.join(required)}), in order")
        fix = make(ctext, corrected_id(lid), lid, _map_expect(loc, corrected.get("expect", {}), k, checks), cparams,
                   couts)
        out = [dataclasses.replace(out[0], correction=fix), fix]  # the doc layout holds its correction
    return out


def _map_expect(loc: Locator, table: Any, k: int, checks: list[str]) -> dict[str, str]:
    if not isinstance(table, dict):
        raise loc.error(*loc.key("expect", k), "'expect' must be a table of check = status")
    for check, status in table.items():
        if check not in checks:
            raise loc.error(*loc.value(check, k, "expect"), f"unknown check {check!r} in expect (checks: {', '.join(checks)})")
        if status not in ("proved", "refuted"):
            raise loc.error(*loc.value(check, k, "expect"), f"expected status must be \"proved\" or \"refuted\", got {status!r}")
    return dict(table)
