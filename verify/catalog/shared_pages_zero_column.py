"""The tcgen05 zero-column mask descriptor page of 9.1 (9.7.16.4.3): Table 45 read into the map ``bit -> position``
and the sub-masks' coverage table into ``(sub, bit) -> column`` per M (the ids of ``specs/tcgen05.zero_column.toml``,
which judges them), and the four worked examples read and judged against the model (``layout.zero_column``) in
the reading Table 45's words give the spans and in the examples' own: a worked example the examples' reading does
not give is a finding at its output line; Table 45's words that no example follows, a finding at the Skip Span's
description with the first example bit they give otherwise (both engines)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..formula.index import parse_index
from ..formula.parser import parse_expression
from ..layout.dims import Dim
from ..layout.family import Param
from ..layout.named import FormulaMap
from ..checks import maps
from ..layout.zero_column import (COVERAGE_N, FIELDS, SUB_MASKS, ZeroColumnMask, shown_map, sub_mask_bit,
                                  sub_mask_map)
from .page_model import Table, Text
from .shared_page_context import TC_ZERO_COLUMN, PageContext, Where, add_map, finding, report_unread, table_cells
_RANGE = re.compile(r"(\d{1,2})(?:-(\d{1,2}))?$")
_NAME = (("sc", r"Start Count (\d)"), ("fs", r"First Span (\d)"), ("reserved", r"Reserved"),
         ("non_zero_mask", r"Non-Zero Mask"), ("skip_span", r"Skip Span"), ("use_span", r"Use Span"),
         ("shift", r"Column Shift"))
_ZEROS = re.compile(r"\b0s\b|zeros?\b|0 values?", re.I)
_OUTPUT = re.compile(r"Output\s+(?:zero-column mask:\s*(0x0)|mas[a-z](\d):\s*0b\s*(?:…|\.\.\.)?\s*([01 ]+))")


def _field_name(text: str) -> str:
    for name, rx in _NAME:
        m = re.search(rx, text, re.I)
        if m:
            return name + (m.group(1) if m.groups() else "")
    return ""


def read_tcgen05_zero_column(ctx: PageContext) -> None:
    sec, page = ctx.pages[TC_ZERO_COLUMN]
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    t45 = next((t for t in tables if t.header and t.header[0].rstrip().endswith("Bits") and len(t.header) >= 4), None)
    if t45 is None:
        report_unread(ctx, TC_ZERO_COLUMN, "the table of the descriptor's fields (headed 'Bits | Size (bits) | Field Name | ...')")
        return
    rows = []   # (lo, bits, name, description, line, columns)
    for r in t45.rows:      # a description spans its group's rows: the rows below print none (no filling)
        texts, cols, line = [c.text.strip() for c in r.cells], [c.col for c in r.cells], r.line
        m = _RANGE.match(texts[0]) if texts else None
        if not m or len(texts) < 3 or not texts[1].isdigit():
            continue
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        rows.append((lo, hi - lo + 1, _field_name(texts[2]), texts[3] if len(texts) > 3 else "", line, cols))
    names = [r[2] for r in rows]
    model = [f.name for f in FIELDS]
    if names == model:
        from ..layout.descriptor import fields_formula, fields_map
        ranges = [(r[0], r[1]) for r in rows]
        add_map(ctx, "tcgen05.zero_column.fields", TC_ZERO_COLUMN, t45.line, fields_map(ranges), fields_formula(ranges),
                "tcgen05", "Table 45: " + "; ".join(f"{n} bits {r[0]}-{r[0] + r[1] - 1}" for n, r in zip(names, rows)),
                kind="map", unit="")
    else:
        ctx.findings.append(finding(
            "descriptor-format", Where(page.path, t45.line, 1, t45.header[0]),
            f"the table's fields ({', '.join(n or '?' for n in names)}) are not the zero-column mask descriptor's "
            f"({', '.join(model)})", {"page": names, "model": model}, sec.number))
    _coverage(ctx, tables)
    spans = {r[2]: r for r in rows if r[2] in ("skip_span", "use_span")}
    if len(spans) == 2:
        _examples(ctx, spans)


def _coverage(ctx: PageContext, tables: list[Table]) -> None:
    """The coverage table (``Sub-mask | M``, then a row of Ms): each M's sub-masks' first columns as the map
    ``(sub, bit) -> column``, bit counting the N / s columns of a sub-mask."""
    t = next((t for t in tables if t.header and t.header[0].strip() == "Sub-mask"), None)
    if t is None or not t.rows:
        return
    ms = [int(c.text) for c in t.rows[0].cells if c.text.strip().isdigit()]
    starts: dict[int, list[str]] = {m: [] for m in ms}
    for texts, _, _ in table_cells(t, 1 + len(ms))[1:]:
        for m, cell in zip(ms, texts[1:]):
            r = re.match(r"Columns\s*\[\s*(.+?)\s*,", cell)
            if r:
                starts[m].append(r.group(1))
    for m, firsts in starts.items():
        s = len(firsts)
        if m not in SUB_MASKS or not s:
            continue
        cases = "\n".join(f"{'first =' if k == 0 else '       '} {e} if sub == {k}" for k, e in enumerate(firsts))
        text = f"{cases}\ncolumn = first + bit\n"
        width = parse_expression("N" if s == 1 else f"N / {s}", ("N",))
        fm = FormulaMap(parse_index(text, "x", ("sub", "bit"), ("column",), ("N",)),
                        (Dim("sub", s), Dim("bit", width)), (Dim("column", parse_expression("N", ("N",))),),
                        params=(Param("N", COVERAGE_N),))
        add_map(ctx, f"tcgen05.zero_column.coverage.m{m}", TC_ZERO_COLUMN, t.rows[1].line, fm, text, "tcgen05",
                f"the sub-masks' coverage for M = {m}: " + ", ".join(f"mask{k} from column {e}" for k, e in enumerate(firsts)),
                checks=("in_range", "injective", "surjective"), kind="map", unit="")


def _braces(cell: str) -> tuple[int, int, int, int] | None:
    """``{sc3, sc2, sc1, sc0}`` as the page writes it (``-`` for a count the M does not use: 0), in sub-mask order."""
    vals = re.findall(r"-|\d+", cell)
    if len(vals) != 4:
        return None
    v = [0 if x == "-" else int(x) for x in vals][::-1]
    return (v[0], v[1], v[2], v[3])


def _examples(ctx: PageContext, spans: dict[str, tuple]) -> None:
    sec, page = ctx.pages[TC_ZERO_COLUMN]
    blocks = sec.blocks
    # the reading Table 45's words give: the skip span counting the columns of 0s (the examples'), or of B's
    table_reading = "examples" if _ZEROS.search(spans["skip_span"][3]) and not _ZEROS.search(spans["use_span"][3]) \
        else "table"
    first_seen = None   # the first example bit where the table's reading differs
    for k, b in enumerate(blocks):
        ex = re.match(r"(?:\d+\.\s*)?Example\s+(\d+):\s*M\s*=\s*(\d+)", b.text) if isinstance(b, Text) else None
        if ex is None or int(ex.group(2)) not in SUB_MASKS:
            continue
        number, m = int(ex.group(1)), int(ex.group(2))
        table = next((t for t in blocks[k + 1:k + 4] if isinstance(t, Table)), None)
        if table is None or not table.rows or len(table.rows[0].cells) < 6:
            continue
        cells = [c.text for c in table.rows[0].cells]
        sc, fs = _braces(cells[0]), _braces(cells[1])
        if sc is None or fs is None or not all(c.strip().isdigit() for c in cells[2:6]):
            continue
        d = ZeroColumnMask(sc, fs, int(cells[2]), int(cells[3]), int(cells[4]), int(cells[5]))
        for out in blocks[k + 1:]:
            if not isinstance(out, Text):
                continue
            if re.match(r"(?:\d+\.\s*)?Example\s+\d+", out.text):
                break
            o = _OUTPUT.search(out.text)
            if o is None:
                continue
            subs = [(i, (0,) * 8) for i in range(SUB_MASKS[m])] if o.group(1) else \
                [(int(o.group(2)), tuple(int(c) for c in reversed(o.group(3).replace(" ", ""))))]
            for i, shown in subs:
                if i >= SUB_MASKS[m]:
                    continue
                ours = _first_difference(d, i, shown, "examples")
                col = out.text.find("0b") + 1 if "0b" in out.text else out.text.find("0x") + 1
                if ours is not None:
                    ctx.findings.append(finding(
                        "zero-column-example", Where(page.path, out.line, max(col, 1), out.text),
                        f"example {number} (M = {m}): mask{i} bit {ours.bit} is {ours.page} on the page, but "
                        f"the descriptor ({_text(d)}) gives {ours.rule}",
                        {"example": number, "mask": i, "bit": ours.bit, "page": ours.page, "model": ours.rule,
                         "engines": dict(ours.engines)}, sec.number))
                elif table_reading == "table" and first_seen is None:
                    theirs = _first_difference(d, i, shown, "table")
                    if theirs is not None:
                        first_seen = (number, m, i, theirs, out.line, d)
    if first_seen is not None:
        number, m, i, diff, line, d = first_seen
        skip, use = spans["skip_span"], spans["use_span"]
        ones, zeros = d.use_span + 1, d.skip_span + 1
        ctx.findings.append(finding(
            "zero-column-spans", Where(page.path, skip[4], skip[5][3] if len(skip[5]) > 3 else 1, skip[3]),
            f"Table 45 gives the Skip Span as '{skip[3]}' (line {skip[4]}) and the Use Span as '{use[3]}' "
            f"(line {use[4]}), but the worked examples take them the other way round: in example {number} "
            f"(M = {m}, skip span {d.skip_span}, use span {d.use_span}), the table's words give runs of 0s (B used) "
            f"{zeros} long and of 1s (0s used) {ones} long, so mask{i} bit {diff.bit} is {diff.rule}; the page "
            f"shows {diff.page} (line {line})",
            {"example": number, "mask": i, "bit": diff.bit, "table": diff.rule, "page": diff.page, "line": line,
             "engines": dict(diff.engines)}, sec.number))


@dataclass(frozen=True)
class _Difference:
    """The lowest bit of a sub-mask where the bits a page shows (``page``) and a reading's rule (``rule``) differ,
    and the two engines' verdicts that found it."""
    bit: int
    page: int
    rule: int
    engines: Mapping[str, str]


def _first_difference(d: ZeroColumnMask, i: int, shown: tuple[int, ...], reading: str) -> _Difference | None:
    """Sub-mask ``i`` of ``d`` in ``reading`` against the bits the page shows, judged by the one decider
    (``checks.maps.same``: both engines, the first bit where they differ; ``maps.Undecided`` where the engines do
    not settle it); ``None`` where they agree."""
    r = maps.same(shown_map(shown), sub_mask_map(d, i, len(shown), reading), names_=("the page", "the descriptor"))
    w = maps.settled(r)
    if w is None:
        return None
    j = dict(w.point)["j"]  # type: ignore[attr-defined]
    return _Difference(j, shown[j], sub_mask_bit(d, i, j, reading), dict(r.engines))


def _text(d: ZeroColumnMask) -> str:
    return (f"start counts {list(d.start_counts)}, first spans {list(d.first_spans)}, non-zero mask "
            f"{d.non_zero_mask}, skip span {d.skip_span}, use span {d.use_span}")
