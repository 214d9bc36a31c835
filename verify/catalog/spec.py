"""Spec files: TOML text -> immutable ``Layout`` objects of the layout model.

A spec file transcribes one documentation section (docs/reference/spec-format.md).
Spec files are untrusted input: TOML is parsed by ``tomllib``, formulas by
``verify.formula``; nothing is evaluated.  Every problem becomes a ``SpecError``
naming file, line and column.
"""
from __future__ import annotations

import functools

import itertools
import re
import sys
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

from ..errors import SpecError
from ..files import strip_bom
from ..formula import BinOp, Formula, FormulaError, Num, Var, parse_formula, parse_lane_expression, walk
from ..layout.elements import MAX_ELEMENTS, parse_element_list, split_element_list
from ..layout.family import Extent, Param, concrete, extent_at
from ..layout.fragment_maps import FormulaFragment, UnspecifiedMap
from ..layout.ids import corrected_id, layout_id, section_tag
from ..layout.model import CHECK_NAMES, OPERANDS, Codomain, Domain, Layout, MapLayout, Spec, SyntaxFinding, section_key
from ..layout.records import Provenance, RegisterFacts, Shape, Source
from ..layout.sparse import SparseMap, build_model, is_range_formula
from ..layout.types import ELEMENT_BITS, REGISTER_BITS
from .spec_maps import _read_map_layout
from .spec_toml import (MAX_DIM, MAX_THREADS, Locator, _check_bindings, _expect, _extent, _formula, _int, _params,
                        _str, _unknown_keys, parse_toml, read_utf8)

INSTRUCTIONS = ("mma", "mma.sp", "wgmma", "wgmma.sp", "ldmatrix", "stmatrix", "movmatrix", "wmma", "tcgen05.ld",
                "tcgen05.st", "mma.block_scale", "tcgen05.mma")
VARIANTS = ("row", "col", "trans", "1x", "2x", "4x")  # m8n8k4 major-ness; ldmatrix/stmatrix ``.trans``; scale_vec

__all__ = ["CHECK_NAMES", "ELEMENT_BITS", "REGISTER_BITS", "SpecError", "load_spec_file", "load_spec_text",
           "load_specs", "parse_element_list", "read_utf8", "spec_files", "split_element_list"]


# ----------------------------------------------------------------------------- loading


_SOURCE_KEYS = {"document", "version", "section", "title", "anchor", "seed", "page"}
_INSTRUCTION_KEYS = {"name", "shape", "threads", "groups", "group", "arch", "note", "params"}
_FRAGMENT_KEYS = {"id", "operand", "types", "variant", "registers", "register_type",
                  "elements_per_register", "elements", "element_bits", "figure", "doc_line",
                  "formula", "expect", "erratum", "corrected", "derived", "note", "sparse",
                  "rows", "cols", "layout", "replication", "partial", "dims"}
_CORRECTION_KEYS = {"formula", "registers", "elements_per_register", "elements", "register_type",
                   "expect"}


def _operand_dims(operand: str, shape: Shape) -> tuple[Extent, Extent]:
    """rows x cols of an operand (a dimension that is a parameter is that parameter's variable)."""
    dims = {"A": (shape.m, shape.k), "B": (shape.k, shape.n)}.get(operand, (shape.m, shape.n))
    if shape.k is None:  # a shape with no K (ldmatrix .m8n8, movmatrix, tcgen05 .32x32b): M x N
        dims = (shape.m, shape.n)
    return tuple(Var(x) if isinstance(x, str) else x for x in dims)  # type: ignore[return-value]


@dataclass(frozen=True)
class _Header:
    """What ``[source]`` and ``[instruction]`` say, shared by every fragment of the file."""

    instruction: str
    shape: Shape
    threads: int
    groups: int
    group: Formula | None
    arch: str
    source: dict[str, str]  # Source fields but file and line
    tag: str  # the section's qualifier, for ids
    params: tuple[Param, ...] = ()  # a family's parameter (wgmma N)


def load_spec_text(text: str, path: str = "<string>") -> Spec:
    """Load one spec from TOML text; raises ``SpecError`` on any bad input.

    A pure function of (text, path) whose result is immutable, so it is memoised: a proof script or a
    test suite that loads the catalog many times parses each file once (bad input is never cached)."""
    return _load_spec_text(text, path)


@functools.lru_cache(maxsize=512)
def _load_spec_text(text: str, path: str) -> Spec:
    text = strip_bom(text)  # positions are those after a byte-order mark
    loc = Locator(path, text)
    data = parse_toml(path, text)
    _unknown_keys(loc, data, {"schema", "source", "instruction", "fragment", "layout"}, "spec", None)
    schema = data.get("schema", 1)
    if schema != 1:
        raise loc.error(*loc.key("schema"), f"unsupported schema {schema!r} (this tool reads 1)")
    src, ins, frags, maps = data.get("source"), data.get("instruction"), data.get("fragment"), data.get("layout")
    if not isinstance(src, dict):
        raise loc.error(1, 1, "missing table [source]")
    if maps is not None and (not isinstance(maps, list) or not maps):
        raise loc.error(*loc.key("layout"), "'layout' must be [[layout]] tables")
    if not isinstance(ins, dict) and not (maps and frags is None):
        raise loc.error(1, 1, "missing table [instruction]")
    if frags is not None or not maps:
        if not isinstance(frags, list) or not frags:
            raise loc.error(1, 1, "missing [[fragment]] entries")
    layouts: tuple[Layout, ...] = ()
    syntax: tuple[SyntaxFinding, ...] = ()
    if isinstance(ins, dict):
        spec = read_fragments(loc, src, ins, frags or ())
        instruction, shape, source, layouts, syntax = (spec.instruction, spec.shape, spec.source, spec.layouts,
                                                       spec.syntax_findings)
    else:
        _unknown_keys(loc, src, _SOURCE_KEYS, "[source]", None)
        instruction, shape = "", Shape(0, 0, 0, "-")
        source = Source(file=path, line=1, **_source_fields(loc, src))
    map_layouts: list[MapLayout] = []
    if maps:
        mloc = Locator(path, text, "layout")
        for k, table in enumerate(maps):
            map_layouts += _read_map_layout(mloc, k, table, source, instruction, src)
    return Spec(path=path, source=source, instruction=instruction, shape=shape, layouts=layouts,
                syntax_findings=syntax, maps=tuple(map_layouts))


def read_fragments(loc: Locator, src: Mapping[str, Any], ins: Mapping[str, Any], frags: Any) -> Spec:
    """The spec of the tables ``[source]``, ``[instruction]`` and ``[[fragment]]``: read from a spec file's
    TOML, or given directly by an ingested doc section (``verify.catalog.pages.page_spec``); ``loc`` says
    where each thing is (``SpecError`` on any bad input, as ``loc`` reports it)."""
    try:
        head = _read_header(loc, src, ins)
    except SpecError as e:
        raise loc.in_header(e) from None
    layouts: list[Layout] = []
    syntax: list[SyntaxFinding] = []
    for k, frag in enumerate(frags):
        try:
            lays, found = _read_fragment(loc, k, frag, head, src)
        except SpecError as e:
            raise loc.in_fragment(k, e) from None
        layouts += lays
        syntax += found
    return Spec(path=loc.path, source=Source(file=loc.path, line=1, **head.source), instruction=head.instruction,
                shape=head.shape, layouts=tuple(layouts), syntax_findings=tuple(syntax))


def _source_fields(loc: Locator, src: Mapping[str, Any]) -> dict[str, str]:
    """``[source]`` as the fields of a ``Source`` (but file and line)."""
    return dict(document=_str(loc, src, "document", None, "PTX ISA"), version=str(src.get("version", "")),
                section=_str(loc, src, "section", None), title=_str(loc, src, "title", None, ""),
                anchor=_str(loc, src, "anchor", None, ""), seed=_str(loc, src, "seed", None, ""))


def _read_header(loc: Locator, src: Mapping[str, Any], ins: Mapping[str, Any]) -> _Header:
    _unknown_keys(loc, src, _SOURCE_KEYS, "[source]", None)
    _unknown_keys(loc, ins, _INSTRUCTION_KEYS, "[instruction]", None)
    iname = _str(loc, ins, "name", None)
    if iname not in INSTRUCTIONS:
        raise loc.error(*loc.key("name"), f"unknown instruction {iname!r}")
    shape_text = _str(loc, ins, "shape", None)
    shape = Shape.parse(shape_text)
    if shape is None:
        raise loc.error(*loc.key("shape"), f"bad shape {shape_text!r} (expected mMnNkK, e.g. m16n8k16)")
    params = _params(loc, ins["params"]) if "params" in ins else ()
    for dim, v in (("M", shape.m), ("N", shape.n), ("K", shape.k)):
        if v is None:  # ldmatrix/stmatrix/movmatrix .m8n8, tcgen05 .32x32b: no K
            continue
        if isinstance(v, str):
            if v not in {p.name for p in params}:
                raise loc.error(*loc.key("shape"), f"shape {shape_text!r}: {v} is not a parameter of [instruction.params]")
            continue
        if not 1 <= v <= MAX_DIM:
            raise loc.error(*loc.key("shape"), f"shape {shape_text!r}: {dim} = {v} is out of range (1..{MAX_DIM})")
    threads = _int(loc, ins, "threads", None, 1, MAX_THREADS, default=32)
    groups = _int(loc, ins, "groups", None, 1, threads, default=1)
    if threads % groups:
        raise loc.error(*loc.key("groups"), f"groups = {groups} does not divide threads = {threads}")
    group: Formula | None = None
    if groups > 1:
        gtext = _str(loc, ins, "group", None)
        try:
            group = parse_lane_expression(gtext, "group")
        except FormulaError as e:
            line, col = loc.key("group")
            raise loc.error(line, col, e.message) from None
    arch = _str(loc, ins, "arch", None, default="")
    source = _source_fields(loc, src)
    return _Header(iname, shape, threads, groups, group, arch, source, section_tag(source["title"]), params)


@dataclass(frozen=True)
class _FragmentKeys:
    """One ``[[fragment]]``'s keys, checked: what its doc layout and its correction are built from."""

    operand: str
    types: list[str]
    variant: str | None
    names: tuple[str, ...]  # the family's parameter names
    registers: Extent
    register_type: str
    epr: int
    elements_text: str | None
    element_bits: int | None
    kind: str  # "formula" or "unspecified"
    formula_text: str
    replication: int
    partial: bool
    dims: list[str]
    rows: Extent
    cols: Extent
    prefix: str
    expect: Mapping[str, str]
    erratum: str
    derived: str
    sparse: Any
    corrected: dict[str, Any] | None
    lid: str
    source: Source


def _fragment_keys(loc: Locator, k: int, frag: Any, head: _Header, src: Mapping[str, Any]) -> _FragmentKeys:
    """A ``[[fragment]]``'s keys read and checked, in the order their errors are reported."""
    if not isinstance(frag, dict):
        raise loc.error(*loc.line_of_offset(loc.fragment_start(k)), "[[fragment]] must be a table")
    _unknown_keys(loc, frag, _FRAGMENT_KEYS, "[[fragment]]", k)
    operand, types, variant = _operand_types_variant(loc, k, frag)
    names = tuple(p.name for p in head.params)
    registers = _extent(loc, frag, "registers", k, 1, 256, 0, names)
    if registers == 0:
        _int(loc, frag, "registers", k, 1, 256)  # missing: the usual error
    register_type = _str(loc, frag, "register_type", k)
    if register_type not in REGISTER_BITS:
        raise loc.error(*loc.key("register_type", k), f"unknown register type {register_type!r}")
    epr = _int(loc, frag, "elements_per_register", k, 1, 64)
    elements_text = frag.get("elements")
    if elements_text is not None and not isinstance(elements_text, str):
        raise loc.error(*loc.key("elements", k), "'elements' must be a string (the doc's list)")
    element_bits = frag.get("element_bits")
    if element_bits is not None:
        element_bits = _int(loc, frag, "element_bits", k, 1, 64)
    else:  # packing needs each type's width: an unknown name is bad input here, not an engine error later
        for t in types:
            if t not in ELEMENT_BITS:
                line, col = loc.value(f'"{t}"', k, "types")  # the quoted name: not a match inside another word
                raise loc.error(line, col + 1 if loc.line_text(line)[col - 1:col] == '"' else col,
                                f"unknown element type {t!r} (known: {', '.join(sorted(ELEMENT_BITS))}; or give "
                                "element_bits)")
    kind = _str(loc, frag, "layout", k, "formula")
    if kind not in ("formula", "unspecified"):
        raise loc.error(*loc.key("layout", k), f"'layout' must be \"formula\" or \"unspecified\", got {kind!r}")
    if kind == "unspecified":
        if "formula" in frag:
            raise loc.error(*loc.key("formula", k), "an unspecified layout has no formula")
        formula_text = ""
    else:
        formula_text = _str(loc, frag, "formula", k)
    replication = _int(loc, frag, "replication", k, 1, 1024, default=1)
    if replication > 1 and kind != "unspecified":
        raise loc.error(*loc.key("replication", k), "'replication' is for unspecified layouts (wmma); a formula "
                                                     "states its own cells")
    partial = frag.get("partial", False)
    if not isinstance(partial, bool):
        raise loc.error(*loc.key("partial", k), "'partial' must be true or false")
    dims = frag.get("dims", ["row", "col"])
    if (not isinstance(dims, list) or len(dims) != 2
            or not all(isinstance(x, str) and re.fullmatch(r"[a-z][a-z ]{0,23}", x) for x in dims)):
        raise loc.error(*loc.key("dims", k), "'dims' must name the two axes, e.g. [\"lane\", \"column\"]")
    doc_line = _int(loc, frag, "doc_line", k, 0, 10**7, default=0)
    rows, cols = _operand_dims(operand, head.shape)
    rows = _extent(loc, frag, "rows", k, 1, MAX_DIM, rows, names)
    cols = _extent(loc, frag, "cols", k, 1, MAX_DIM, cols, names)
    expect = _expect(loc, frag.get("expect", {}), k, "expect")
    erratum = frag.get("erratum", "")
    if not isinstance(erratum, str):
        raise loc.error(*loc.key("erratum", k), "'erratum' must be a string explaining the doc's mistake")
    derived = _str(loc, frag, "derived", k, "")
    sparse = frag.get("sparse", {})
    if not isinstance(sparse, dict):
        raise loc.error(*loc.key("sparse", k), "'sparse' must be a table")
    sparse = _sparse(loc, sparse, k)
    corrected = frag.get("corrected")
    if corrected is not None:
        if not isinstance(corrected, dict):
            raise loc.error(*loc.key("corrected", k), "'corrected' must be a table")
        _unknown_keys(loc, corrected, _CORRECTION_KEYS, "[fragment.corrected]", k)
        if not erratum:
            raise loc.error(*loc.key("corrected", k), "a [fragment.corrected] needs an 'erratum' explanation")
    lid = _fragment_id(loc, k, frag, head, operand, types, variant)
    source = Source(file=_str(loc, src, "page", None, loc.path), line=doc_line, **head.source)
    return _FragmentKeys(operand, types, variant, names, registers, register_type, epr, elements_text, element_bits,
                         kind, formula_text, replication, partial, dims, rows, cols, operand.lower(), expect, erratum,
                         derived, sparse, corrected, lid, source)


def _check_family_sizes(loc: Locator, k: int, family: tuple[Param, ...], n: Extent, rows: Extent) -> None:
    """Every member of a family holds a positive number of elements per thread, within the limits."""
    for values in itertools.product(*(p.values for p in family)):
        env = dict(zip((p.name for p in family), values))
        size = extent_at(n, env) * max(extent_at(rows, env), 1)
        if not 0 < extent_at(n, env) <= MAX_ELEMENTS or size > MAX_DIM * MAX_DIM:
            where = ", ".join(f"{a} = {b}" for a, b in env.items())
            raise loc.error(*loc.key("registers", k), f"{where}: {extent_at(n, env)} "
                                                      f"elements per thread (limit {MAX_ELEMENTS})")


def _fragment_layout(loc: Locator, k: int, frag: Mapping[str, Any], head: _Header, f: _FragmentKeys,
                     fields: Mapping[str, Any], lid: str, corrects: str, expect: Mapping[str, str],
                     formula: Formula, ftext: str) -> Layout:
    """The layout of a fragment's keys, overridden by ``fields`` (a correction's), with ``formula`` as its map."""
    e_text = fields.get("elements", f.elements_text)
    regs = fields.get("registers", f.registers)
    per = fields.get("elements_per_register", f.epr)
    rows, cols = f.rows, f.cols
    family = _family(head.params, formula, regs, rows, cols, e_text)
    if family:
        _check_bindings(loc, k, e_text, f.names)
        elist = None  # per instance (a template such as "d0, ..., dX where X = N/2 - 1")
        n: Extent = regs * per if isinstance(regs, int) else regs if per == 1 else BinOp("*", regs, Num(per))
        _check_family_sizes(loc, k, family, n, rows)
    else:
        elist = parse_element_list(e_text) if isinstance(e_text, str) else None
        regs, rows_, cols_ = (extent_at(x, {}) if not isinstance(x, int) else x for x in (regs, rows, cols))
        n = len(elist) if elist else regs * per
        if n > MAX_ELEMENTS:
            raise loc.error(*loc.key("registers", k), f"{n} elements per thread is too many (limit {MAX_ELEMENTS})")
    lmap: Any
    if f.kind == "unspecified":
        lmap = UnspecifiedMap()
    elif is_range_formula(formula):
        lmap = SparseMap(formula, dict(f.sparse), build_model(f.sparse, f.types, head.shape, concrete(rows),
                                                              head.threads),
                         concrete(n))  # (a sparse fragment is no family)
    else:
        lmap = FormulaFragment(formula)
    return Layout(
        id=lid, instruction=head.instruction, shape=head.shape, operand=f.operand, types=tuple(f.types),
        variant=f.variant, domain=Domain(head.threads, n, head.groups, head.group, family, f.replication),
        codomain=Codomain(rows if family else rows_, cols if family else cols_, (f.dims[0], f.dims[1])),
        map=lmap, regs=RegisterFacts(regs, fields.get("register_type", f.register_type), per, elist, e_text,
                                     f.element_bits),
        provenance=Provenance(f.source, loc.spec_path(k), loc.formula_at(k, ftext)[0] if ftext else 0, ftext,
                              loc.text_map(k) if ftext else (), f.erratum, f.derived,
                              _str(loc, frag, "figure", k, ""), head.arch),
        expect=dict(expect), corrects=corrects, partial=f.partial)


def _correction(loc: Locator, k: int, frag: Mapping[str, Any], head: _Header, f: _FragmentKeys,
                corrected: Mapping[str, Any]) -> Layout:
    """The layout a ``[fragment.corrected]`` table states: the doc layout with its keys replaced."""
    ctext = corrected.get("formula", f.formula_text)
    if not isinstance(ctext, str):
        raise loc.error(*loc.key("formula", k), "corrected 'formula' must be a string")
    if f.kind == "unspecified" and "formula" in corrected:
        raise loc.error(*loc.key("formula", k), "an unspecified layout has no formula")
    cformula = (Formula((), f.prefix) if f.kind == "unspecified"
                else _formula(loc, ctext, f.prefix, k, "formula", f.names))
    corrected = dict(corrected)
    if "registers" in corrected:
        corrected["registers"] = _extent(loc, corrected, "registers", k, 1, 256, 0, f.names)
    if "elements_per_register" in corrected:
        _int(loc, corrected, "elements_per_register", k, 1, 64)
    cexpect = _expect(loc, corrected.get("expect", {}), k, "expect")
    return _fragment_layout(loc, k, frag, head, f, corrected, corrected_id(f.lid), f.lid, cexpect, cformula, ctext)


def _read_fragment(loc: Locator, k: int, frag: Any, head: _Header,
                   src: Mapping[str, Any]) -> tuple[list[Layout], list[SyntaxFinding]]:
    """One ``[[fragment]]``: the doc's layout (when its formula parses) and its correction (if any)."""
    f = _fragment_keys(loc, k, frag, head, src)
    corrected, expect, lid = f.corrected, f.expect, f.lid
    layouts: list[Layout] = []
    syntax: list[SyntaxFinding] = []
    doc_formula: Formula | None = None
    try:
        # an unspecified layout has no formula: an empty one stands in (its map is UnspecifiedMap)
        doc_formula = (Formula((), f.prefix) if f.kind == "unspecified"
                       else parse_formula(f.formula_text, f.prefix, f.names))
    except FormulaError as e:
        if corrected is None or "formula" not in corrected or expect.get("syntax") != "refuted":
            _formula(loc, f.formula_text, f.prefix, k, "formula", f.names)  # raises with position
        syntax.append(SyntaxFinding(lid, e.message, *loc.syntax_at(k, f.formula_text, e.line, e.col), "refuted"))
    if doc_formula is not None:
        if expect.get("syntax") == "refuted":
            raise loc.error(*loc.key("expect", k), "expect.syntax = \"refuted\" but the doc formula parses")
        layouts.append(_fragment_layout(loc, k, frag, head, f, {}, lid, "",
                                        {c: s for c, s in expect.items() if c != "syntax"},
                                        doc_formula, f.formula_text))
    if corrected is not None:
        fix = _correction(loc, k, frag, head, f, corrected)
        layouts = [dataclasses.replace(x, correction=fix) for x in layouts] + [fix]  # the doc layout holds it
    return layouts, syntax


def _operand_types_variant(loc: Locator, k: int, frag: Mapping[str, Any]) -> tuple[str, list[str], str | None]:
    operand = _str(loc, frag, "operand", k)
    if operand not in OPERANDS:
        raise loc.error(*loc.key("operand", k), f"operand must be one of {', '.join(OPERANDS)}, got {operand!r}")
    types = frag.get("types")
    if not isinstance(types, list) or not types or not all(isinstance(t, str) and re.fullmatch(r"[a-z0-9x]+", t) for t in types):
        raise loc.error(*loc.key("types", k), "'types' must be a non-empty list of PTX type names such as \"f16\"")
    variant = frag.get("variant")
    if variant is not None and variant not in VARIANTS:
        raise loc.error(*loc.key("variant", k), "'variant' must be one of " + ", ".join(f'"{v}"' for v in VARIANTS))
    return operand, types, variant


def _fragment_id(loc: Locator, k: int, frag: Mapping[str, Any], head: _Header, operand: str, types: list[str],
                 variant: str | None) -> str:
    """The id of fragment k's doc layout (its correction's is ``corrected_id`` of it)."""
    lid = layout_id(head.instruction, str(head.shape), operand, types, variant, head.tag)
    if "id" in frag:
        # a fragment of a doc section has the grammar's id (verify/layout/ids.py), wherever it comes from;
        # a layout of one's own (no section number) may be named freely
        if not isinstance(frag["id"], str) or not re.fullmatch(r"[A-Za-z0-9_.+\-]+", frag["id"]):
            raise loc.error(*loc.key("id", k), f"bad layout id {frag['id']!r}")
        if frag["id"] != lid and re.fullmatch(r"\d+(\.\d+)+", head.source["section"]):
            raise loc.error(*loc.key("id", k), f"id {frag['id']!r} does not follow the id grammar: this fragment "
                                               f"of section {head.source['section']} is {lid!r}")
        lid = frag["id"]
    return lid


def fragment_ids(path: str | Path) -> frozenset[str]:
    """The ids of the doc layouts of a spec file's ``[[fragment]]`` tables, read without building them (no
    formula is parsed): which reviewed specs a doc page's layouts concern (``verify.catalog.pages``).  A file
    this cannot read is read in full, where its error is reported."""
    return _fragment_ids(read_utf8(path), str(path))


@functools.lru_cache(maxsize=512)
def _fragment_ids(text: str, path: str) -> frozenset[str]:
    text = strip_bom(text)
    loc = Locator(path, text)
    data = parse_toml(path, text)
    src, ins, frags = data.get("source"), data.get("instruction"), data.get("fragment")
    if not isinstance(src, dict) or not isinstance(ins, dict) or not isinstance(frags, list):
        return frozenset()
    head = _read_header(loc, src, ins)
    return frozenset(_fragment_id(loc, k, frag, head, *_operand_types_variant(loc, k, frag))
                     for k, frag in enumerate(frags) if isinstance(frag, dict))


def layout_ids(path: str | Path) -> frozenset[str]:
    """The ids a spec file defines, read without building them (no formula is parsed): its fragments' doc layouts
    (``fragment_ids``; a correction's id is its doc layout's with ``@corrected``) and its ``[[layout]]`` tables."""
    text = read_utf8(path)
    return _fragment_ids(text, str(path)) | _map_ids(text, str(path))


@functools.lru_cache(maxsize=512)
def _map_ids(text: str, path: str) -> frozenset[str]:
    tables = parse_toml(path, strip_bom(text)).get("layout")
    return frozenset(t["id"] for t in tables if isinstance(t, dict) and isinstance(t.get("id"), str)) \
        if isinstance(tables, list) else frozenset()


def holding(paths: list[str | Path], layout_id: str) -> list[Path] | None:
    """The one spec file under ``paths`` that defines ``layout_id`` (or the doc layout it corrects), read by ids
    only; None when no file or several do, or a file cannot be read so: then every file must be loaded (which
    reports the error, the duplicate, or the layouts an id matches in part)."""
    from ..layout.ids import given_doc_id
    want = given_doc_id(layout_id)
    try:
        found = [p for p in spec_files(paths) if want in layout_ids(p)]
    except (SpecError, OSError, ValueError):
        return None
    return found if len(found) == 1 else None


def _family(params: tuple[Param, ...], formula: Formula, *parts: Any) -> tuple[Param, ...]:
    """The parameters a fragment depends on (its formula, counts, extents or element list): a layout
    that does not mention the parameter (wgmma's A is 64 x K whatever N is) is a plain layout."""
    used = {n.name for d in formula.definitions for n in walk(d) if isinstance(n, Var)}
    for x in parts:
        if isinstance(x, str):
            used |= set(re.findall(r"\b([A-Z][A-Za-z0-9_]*)\b", x))
        elif x is not None and not isinstance(x, int):
            used |= {n.name for n in walk(x) if isinstance(n, Var)}
    return tuple(p for p in params if p.name in used)


# Sparse A (mma.sp): the [fragment.sparse] table.  Fields the doc text states: kept, chunk,
# index_bits, fields, valid or invalid, ordered, selectors, selector.  ``metadata`` (which lane and nibble
# holds the indices of which (row, chunk)) is shown only in the doc's figures: a spec that gives
# it must say where it comes from in ``metadata_derived``.  See docs/sparse.md.
_SPARSE_INT_KEYS = {"kept": (1, 64), "chunk": (1, 128), "index_bits": (2, 4), "fields": (1, 32),
                    "canonical": (0, 2**32 - 1)}
_SPARSE_LIST_KEYS = {"valid": (0, 15), "invalid": (0, 15), "ordered": (0, 15), "selectors": (0, 3)}
_SPARSE_STR_KEYS = {"selector", "metadata", "metadata_derived", "note"}


def _sparse(loc: Locator, table: Mapping[str, Any], k: int) -> dict[str, Any]:
    """Validate the sparse table; parse its formulas (kept as ``selector_formula``/``metadata_formula``)."""
    out: dict[str, Any] = {}
    for key, v in table.items():
        if key in _SPARSE_INT_KEYS:
            lo, hi = _SPARSE_INT_KEYS[key]
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise loc.error(*loc.key(key, k), f"sparse '{key}' must be an integer in {lo}..{hi}, got {v!r}")
        elif key in _SPARSE_LIST_KEYS:
            lo, hi = _SPARSE_LIST_KEYS[key]
            if (not isinstance(v, list) or not v or len(set(map(repr, v))) != len(v)
                    or not all(isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi for x in v)):
                raise loc.error(*loc.key(key, k), f"sparse '{key}' must be a non-empty list of distinct "
                                                  f"integers in {lo}..{hi}")
        elif key in _SPARSE_STR_KEYS:
            if not isinstance(v, str):
                raise loc.error(*loc.key(key, k), f"sparse '{key}' must be a string")
        else:
            allowed = sorted(set(_SPARSE_INT_KEYS) | set(_SPARSE_LIST_KEYS) | _SPARSE_STR_KEYS)
            raise loc.error(*loc.key(key, k), f"unknown field '{key}' in sparse (fields: {', '.join(allowed)})")
        out[key] = v
    if ("kept" in out) != ("chunk" in out):
        raise loc.error(*loc.key("sparse", k), "sparse needs both 'kept' and 'chunk'")
    if "kept" in out and out["kept"] > out["chunk"]:
        raise loc.error(*loc.key("kept", k), f"sparse kept = {out['kept']} exceeds chunk = {out['chunk']}")
    if "valid" in out and "invalid" in out:
        raise loc.error(*loc.key("invalid", k), "sparse gives both 'valid' and 'invalid'; give the one the doc states")
    if "index_bits" in out and out["index_bits"] not in (2, 4):
        raise loc.error(*loc.key("index_bits", k), "sparse 'index_bits' must be 2 or 4")
    if "metadata" in out and not out.get("metadata_derived"):
        raise loc.error(*loc.key("metadata", k), "a sparse 'metadata' layout needs 'metadata_derived' "
                                                 "(its provenance: the doc states it only in figures)")
    if "selector" in out:
        try:
            out["selector_formula"] = parse_lane_expression(out["selector"], "selector")
        except FormulaError as e:
            line, col = loc.value(out["selector"], k, "selector")
            raise loc.error(line, col + e.col - 1, e.message) from None
    if "metadata" in out:
        out["metadata_formula"] = _formula(loc, out["metadata"], "e", k, "metadata")
    return out


def load_spec_file(path: str | Path) -> Spec:
    return load_spec_text(read_utf8(path), str(path))


def spec_files(paths: list[str | Path]) -> list[Path]:
    """Expand directories into their ``*.toml`` files, sorted for determinism."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(p.rglob("*.toml")))
        elif p.exists():
            out.append(p)
        else:
            raise SpecError(str(p), 1, 1, "no such file or directory")
    return out


def load_specs(paths: list[str | Path]) -> list[Spec]:
    """Load every spec under ``paths``, in doc-section order; layout ids must be unique."""
    specs = sorted((load_spec_file(p) for p in spec_files(paths)),
                   key=lambda s: (section_key(s.source.section), s.path))
    seen: dict[str, str] = {}
    for s in specs:
        for lay in s.all_layouts:
            if lay.id in seen:
                raise SpecError(s.path, 1, 1, f"layout id {lay.id!r} is also defined in {seen[lay.id]}")
            seen[lay.id] = s.path
    return specs


# ----------------------------------------------------------------------------- [[layout]]: maps with no register facts


