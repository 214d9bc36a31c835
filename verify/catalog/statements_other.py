"""The statements of the other cited pages, one value at its words (judged in ``verify.checks.statements_other``):

* wmma's fragment tables (9.7.14.4.1): for each type, shape and matrix a row states (its cells spanning rows as the
  page prints them), the register count, the register type, and the elements per register (``wmma-registers``,
  ``wmma-register-type``, ``wmma-per-register``);
* block scaling for mma (9.7.14.3): Table 37's valid values of each selector component per ``.scale_vec_size``
  (``selector-values``);
* tcgen05's data-path layouts (9.7.16.10.5): each layout's M and its lane alignment (``datapath-m``,
  ``datapath-base``), from the table and from each layout's title;
* tcgen05's scale factor A ID (9.7.16.10.7.2): the values of SFA_ID each scale vector size allows (``sfa-ids``).
"""
from __future__ import annotations

import re

from .page_model import Section, Table, Text
from .statement_text import NUMBER, Sink, number

_TYPE = re.compile(r"^\.(\w+)(?:\s+or\s+\.(\w+))?$")


def read_wmma(sink: Sink, sec: Section) -> None:
    matrix_default = ""
    for b in sec.blocks:
        if isinstance(b, Text):
            m = re.search(r"\((A or B|C or D)\)", b.text)
            if m:
                matrix_default = m.group(1)
            continue
        if not isinstance(b, Table):
            continue
        typ = shape = matrix = frag = ""
        frag_at = (b.line, 1)
        for row in b.rows:
            line = row.line
            for c in row.cells:
                t = c.text.strip()
                if not t:
                    continue
                if re.fullmatch(r"\.m\d+n\d+k\d+", t):
                    shape = t[1:]
                elif _TYPE.match(t):
                    typ = t
                elif t in ("A", "B", "A or B", "C or D"):
                    matrix = t
                elif "vector expression" in t:
                    frag, frag_at = t, (c.line or line, c.col)
                else:
                    sink.add("wmma-registers", "wmma", None, (c.line or line, c.col), t, f"{t!r}: no cell of the table")
            if not frag or not typ:
                continue
            tm = _TYPE.match(typ)
            types = tuple(x for x in (tm.group(1), tm.group(2)) if x) if tm else ()
            mat = matrix or matrix_default
            ops = ("A", "B") if mat == "A or B" else ("C",) if mat == "C or D" else (mat,)
            for op in ops:
                subject = f"wmma:{shape or '*'}:{op}:{'_'.join(sorted(types))}"
                _fragment(sink, subject, frag, frag_at)


def _fragment(sink: Sink, subject: str, text: str, at: tuple[int, int]) -> None:
    line, col = at
    m = re.search(r"(?:of|containing)\s+(?:a\s+)?(" + NUMBER + r"|\S+)\s+\.(\w+)\s+registers?", text)
    if not m:
        sink.add("wmma-registers", subject, None, at, text, "the register count and type do not read")
        return
    n = number(m.group(1))
    sink.add("wmma-registers", subject, n, sink.at(line, col, text, m.start(1)), text,
             "" if n is not None else f"{m.group(1)!r} is no count")
    sink.add("wmma-register-type", subject, m.group(2), sink.at(line, col, text, m.start(2)), text)
    e = re.search(r"containing\s+(" + NUMBER + r"|\S+)\s+elements", text[m.end():])
    if e:
        k = number(e.group(1))
        sink.add("wmma-per-register", subject, k, sink.at(line, col, text, m.end() + e.start(1)), text,
                 "" if k is not None else f"{e.group(1)!r} is no count")


def read_block_scaling(sink: Sink, sec: Section) -> None:
    """Table 37: a row of four lists gives byte-id-a, thread-id-a, byte-id-b, thread-id-b; a row of two gives the
    byte selectors (the thread selectors' cells span the rows, as the page prints them)."""
    for b in sec.blocks:
        if not (isinstance(b, Table) and b.rows and any("byte-id-a" in c.text for c in b.rows[0].cells)):
            continue
        names = [c.text.strip() for c in b.rows[0].cells]
        for row in b.rows[1:]:
            cells = row.cells
            vm = re.search(r"scale_vec::(\d)X", cells[0].text.replace("\\", "")) if cells else None
            if not vm:
                continue
            values = list(cells[1:])
            comps = names if len(values) == len(names) else [n for n in names if n.startswith("byte")]
            for comp, c in zip(comps, values):
                t = c.text.strip()
                ok = re.fullmatch(r"\[\s*\d+(?:\s*,\s*\d+)*\s*\]|\d+", t)
                sink.add("selector-values", f"mma.block_scale:{vm.group(1)}X:{comp}",
                         frozenset(int(x) for x in re.findall(r"\d+", t)) if ok else None, (c.line or row.line, c.col), t,
                         "" if ok else f"{t!r}: no list of values")


def read_datapath(sink: Sink, sec: Section) -> None:
    title = sec.heading.title.replace("\uf0c1", "")
    tm = re.match(r"Layout\s+([A-G])\s+\(M\s*=\s*(\d+)", title)
    if tm:
        raw = sink.page.lines[sec.heading.line - 1] if 0 < sec.heading.line <= len(sink.page.lines) else ""
        k = raw.find("M =")
        sink.add("datapath-m", f"tcgen05.datapath.{tm.group(1)}", int(tm.group(2)), (sec.heading.line, k + 5 if k >= 0 else 1),
                 title)
    for b in sec.blocks:
        if isinstance(b, Text):
            m = re.search(r"Layout organization for M\s*=\s*(\d+)", b.text)
            if m and tm:
                sink.add("datapath-m", f"tcgen05.datapath.{tm.group(1)}", int(m.group(1)),
                         sink.at(b.line, b.col, b.text, m.start(1)), b.text)
        elif isinstance(b, Table) and b.header and b.header[0].strip() == "M":
            for row in b.rows:
                cells = row.cells
                if len(cells) < 7:
                    continue
                lm = re.search(r"Layout\s+([A-G])", cells[5].text)
                if not lm:
                    sink.add("datapath-m", "tcgen05.datapath", None, (row.line, cells[5].col), cells[5].text,
                             "the layout id does not read")
                    continue
                subject = f"tcgen05.datapath.{lm.group(1)}"
                mt = cells[0].text.strip()
                sink.add("datapath-m", subject, int(mt) if mt.isdigit() else None, (row.line, cells[0].col), mt,
                         "" if mt.isdigit() else f"{mt!r} is no M")
                bases = re.findall(r"\d+", cells[6].text)
                ok = re.fullmatch(r"\d+(?:\s+or\s+\d+)*", cells[6].text.strip())
                sink.add("datapath-base", subject, frozenset(int(x) for x in bases) if ok else None,
                         (row.line, cells[6].col), cells[6].text, "" if ok else "the alignment does not read")


def read_scale_factor_a(sink: Sink, sec: Section) -> None:
    title = sec.heading.title.replace("\uf0c1", "").replace("\\", "")
    vm = re.search(r"scale_vec::(\d)X", title)
    if not vm or "K=96" in title:
        return  # the K = 96 layouts (block32 / block16) are not in the reviewed record (docs/catalog.md)
    subject = f"tcgen05.mma.sfa:{vm.group(1)}X"
    for b in sec.blocks:
        if not isinstance(b, Text):
            continue
        t = b.text.replace("\\", "")
        for m in re.finditer(r"SFA_ID\*?\s+(?:is|values of|value must be)\s+((?:" + NUMBER + r")(?:\s*(?:,|and)\s*\d+)*)", t):
            for v in re.finditer(r"\d+", m.group(1)):
                sink.add("sfa-ids", subject, int(v.group()), sink.at(b.line, b.col, b.text, _offset(b.text, t, m.start(1) + v.start())),
                         b.text)


def _offset(raw: str, clean: str, k: int) -> int:
    """The offset in ``raw`` (with escapes) of character ``k`` of ``clean`` (``raw`` without backslashes)."""
    j = n = 0
    while j < len(raw) and n < k:
        if raw[j] != "\\":
            n += 1
        j += 1
    while j < len(raw) and raw[j] == "\\":
        j += 1
    return j


__all__ = ["read_block_scaling", "read_datapath", "read_scale_factor_a", "read_wmma"]
