"""The statements of the register-fragment sections whose layouts the pages show only as figures: wgmma
(9.7.15.5.1.1.x), sparse wgmma (9.7.15.6.2.x) and tcgen05.ld/st (9.7.16.2.3.1.x).

What such a section states is read here, one value at its words (``verify.layout.statements``), never judged:

* the shape the section is about, wherever it is named (its title, its prose, the figure captions): ``shape``;
* the operand of each bullet ("Multiplicand A in registers", "Accumulator D") and of each caption: ``operand``;
  the header of each fragment table (``.atype`` / ``.dtype``): ``type-header``;
* each table row: the layout it states (instruction, shape, operand, types: ``layout``, at the type cell), its
  register count (``registers``: the expression, ``four`` or ``N/4``), register type (``register-type``),
  elements per register or in all (``elements-per-register``, ``elements-total``), the element types it names
  (``element-types``), the matrix (``matrix``), the element list with its ``X = N/2 - 4`` names (``elements``)
  and the values of N (``params``), sparse rows' non-zero elements per chunk (``sparse-chunk``);
* tcgen05: the lanes a warp accesses and the bits per lane (``tmem-lanes``, ``tmem-bits``);
* sparse wgmma: the metadata register (``metadata``: register bits, vectors, bits per vector).
"""
from __future__ import annotations

import dataclasses
import re
from ..layout.ids import layout_id
from .page_model import Caption, Section, Table, Text
from .statement_text import NUMBER, Sink, number

_TYPE = re.compile(r"\.([a-z][a-z0-9]*)")
_HEADER_OPERAND = {"atype": "A", "btype": "B", "ctype": "C", "dtype": "D"}


def section_subject(sec: Section) -> str:
    """What a section-level statement is about: the section, by its anchor (else its title)."""
    return "section:" + (sec.heading.anchor or sec.heading.title)


def _shape_in(title: str) -> re.Match[str] | None:
    return re.search(r"\b(m\d+nNk\d+|m\d+n\d+k\d+)\b", title)


def read_fragment_section(sink: Sink, sec: Section, instruction: str, sparse: bool = False) -> None:
    """The statements of one wgmma / sparse wgmma fragment section (module docstring)."""
    title = sec.heading.title.replace("\uf0c1", "")
    m = _shape_in(title)
    subject = section_subject(sec)
    shape = m.group(1) if m else ""
    if m:
        sink.add("shape", subject, shape, _title_pos(sink, sec, m.group(1)), title)
    else:
        sink.add("shape", subject, None, (sec.heading.line, 1), title, "the title names no shape")
    operand = ""
    last_lid: list[str] = []  # the layout of the last table row read (a row the export broke out of its table continues it)
    pending: list[tuple[str, tuple[int, int], str, str]] = []  # an operand bullet whose next blocks say where it is

    def flush(where: str) -> None:
        for op, pos, words, unread in pending:
            sink.add("operand", subject, (op, where), pos, words, unread)
        pending.clear()

    for b in sec.blocks:
        if isinstance(b, Text):
            em = re.search(r"executing\s+(?:sparse\s+)?(?:wgmma\.mma_async\.)?(\S+)\s+will compute an MMA operation of shape\s+"
                           r"\.?(\S+?)\s", b.text)
            if em:
                for g in (1, 2):
                    word = em.group(g)
                    sink.add("shape", subject, word, sink.at(b.line, b.col, b.text, em.start(g)), b.text,
                             "" if re.fullmatch(r"m\d+nNk\d+|m\d+n\d+k\d+", word) else f"{word!r} is no shape")
            om = re.match(r"(Multiplicand|Accumulator|Matrix)\s+(\S+?)(?:,|:|\s|$)", b.text)
            if om and b.bullet:
                flush("registers")
                op = om.group(2)
                operand = {"C/D": "D", "C": "C", "D": "D", "A": "A", "B": "B"}.get(op, op)
                pending.append((operand, sink.at(b.line, b.col, b.text, om.start(2)), b.text,
                                "" if op in ("A", "B", "C", "D", "C/D") else f"{op!r} names no operand"))
                if "shared memory" in b.text.lower():
                    flush("shared")
                    operand = ""
                elif re.search(r"(?:in|from) registers", b.text):
                    flush("registers")
            elif pending and re.search(r"shared memory", b.text, re.I):
                flush("shared")
                operand = ""
            elif pending and re.search(r"are the same as in case of", b.text):
                flush("reference")
                operand = ""
            if sparse and re.search(r"Metadata operand", b.text):
                flush("registers")
                _metadata(sink, subject, b)
            if operand and last_lid:
                _continued(sink, b, instruction, shape, operand, sparse, last_lid)
        elif isinstance(b, Caption):
            text = b.text.replace("\uf0c1", "")
            for sm in re.finditer(r"\.(m\d+nNk\d+|m\d+n\d+k\d+)\b", text):
                sink.add("shape", subject, sm.group(1), sink.at(b.line, 1, text, sm.start(1)), text)
            cm = re.search(r"(?:for|of)\s+(?:the\s+)?(?:accumulator\s+)?matrix\s+(\w+)", text, re.I)
            if cm:
                sink.add("operand", subject, (cm.group(1), "figure"), sink.at(b.line, 1, text, cm.start(1)), text)
        elif isinstance(b, Table) and operand:
            flush("registers")
            last_lid[:] = [_table(sink, sec, b, instruction, shape, operand, sparse)]
    flush("registers")


def _title_pos(sink: Sink, sec: Section, word: str) -> tuple[int, int]:
    raw = sink.page.lines[sec.heading.line - 1] if 0 < sec.heading.line <= len(sink.page.lines) else ""
    k = raw.find(word)
    return (sec.heading.line, k + 1 if k >= 0 else 1)


def _types(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_TYPE.findall(text)))


def _table(sink: Sink, sec: Section, table: Table, instruction: str, shape: str, operand: str, sparse: bool) -> str:
    head = table.header[0].strip().lstrip(".") if table.header else ""
    if head:
        sink.add("type-header", f"operand:{operand}", head, (table.line, 1), table.header[0],
                 "" if head in _HEADER_OPERAND else f"the header {table.header[0]!r} names no operand's types")
    lid = ""
    for row in table.rows:
        cells = row.cells
        if not cells or not cells[0].text.strip():
            continue
        tcell = cells[0]
        types = _types(tcell.text)
        line = tcell.line or row.line
        if not types:
            if re.search(r"vector expression", " ".join(c.text for c in cells)):  # a fragment row with no type
                sink.add("layout", "", None, (line, tcell.col), tcell.text, "the type cell names no type")
            continue  # a row the export made of a line of the cell above (a dash line, a sentence)
        lid = layout_id(instruction, shape, operand, types)
        sink.add("layout", lid, lid, (line, tcell.col), tcell.text)
        for cell in cells[1:]:
            cline = cell.line or row.line
            _fragment_words(sink, lid, cell.text, cline, cell.col, operand, sparse)
            _element_words(sink, lid, cell.text, cline, cell.col, operand)
    return lid


def _continued(sink: Sink, b: Text, instruction: str, shape: str, operand: str, sparse: bool, last: list[str]) -> None:
    """Lines of a table the 9.1 export broke out of it: a set of N continued (``= 16*i where i = {...}``), or a row
    (``.f32 | A vector expression ...``)."""
    m = re.match(r"`?\s*=\s*(\d+)\s*\*\s*i\s+where\s+i\s*=\s*\{([^}]*)\}", b.text)
    if m:
        for k in range(len(sink.out) - 1, -1, -1):
            st = sink.out[k]
            if st.kind == "params" and st.subject == last[0]:
                try:
                    more = {int(m.group(1)) * v for v in expand_set(m.group(2))}
                    sink.out[k] = dataclasses.replace(st, value=frozenset(st.value | more) if st.value else None)
                except ValueError as e:
                    sink.out[k] = dataclasses.replace(st, value=None, unread=str(e))
                break
        return
    from .page_model import clean_inline
    n = b.line
    lid = ""
    while 0 < n <= len(sink.page.lines) and sink.page.lines[n - 1].strip():
        raw = sink.page.lines[n - 1]
        parts = raw.split("|")
        types = _types(clean_inline(parts[0])[0]) if len(parts) >= 2 else ()
        if not types or not re.fullmatch(r"[`.\w/ ]+", parts[0].strip()):
            break
        lid = layout_id(instruction, shape, operand, types)
        sink.add("layout", lid, lid, (n, len(parts[0]) - len(parts[0].lstrip()) + 1), parts[0])
        col = len(parts[0]) + 2
        for part in parts[1:]:
            text = clean_inline(part)[0]
            start = col + len(part) - len(part.lstrip())
            _fragment_words(sink, lid, text, n, start, operand, sparse)
            _element_words(sink, lid, text, n, start, operand)
            col += len(part) + 1
        n += 1
    if not lid:
        return
    last[:] = [lid]


_REGS = re.compile(r"containing\s+(\S+(?:\s+two)?)(?:\s+number\s+of)?\s+\.(\w+)\s+registers?", re.I)
_EACH = re.compile(r"each\s+register\s+containing\s+(.*?)\s+(non-zero\s+)?(\.\w.*?)\s*elements?\b", re.I)
_TOTAL = re.compile(r"registers?,?\s+containing\s+(.*?)\s+(?:non-zero\s+)?(\.\w.*?)\s*elements?\b", re.I)
_OUT_OF = re.compile(r"out\s+of\s+(" + NUMBER + r")\s+consecutive", re.I)
_MATRIX = re.compile(r"from\s+matrix\s+(\w+)", re.I)


def _fragment_words(sink: Sink, lid: str, text: str, line: int, col: int, operand: str, sparse: bool) -> None:
    m = _REGS.search(text)
    if not m:
        if re.search(r"vector expression", text):
            sink.add("registers", lid, None, (line, col), text, "the register count and type do not read")
        return
    count = m.group(1)
    value = str(number(count)) if number(count) is not None else count
    ok = number(count) is not None or re.fullmatch(r"[A-Za-z0-9_/*+() -]+", count) is not None
    sink.add("registers", lid, value, sink.at(line, col, text, m.start(1)), text, "" if ok else f"{count!r} is no count")
    sink.add("register-type", lid, m.group(2).lower(), sink.at(line, col, text, m.start(2)), text)
    rest_at = m.end()
    e = _EACH.search(text, rest_at)
    t = _TOTAL.search(text, m.start()) if e is None else None
    for found, kind, tgroup in ((e, "elements-per-register", 3), (t, "elements-total", 2)):
        if found is None:
            continue
        n = number(found.group(1))
        sink.add(kind, lid, n, sink.at(line, col, text, found.start(1)), text,
                 "" if n is not None else f"{found.group(1)!r} is no number")
        types = _types(found.group(tgroup))
        sink.add("element-types", lid, frozenset(types), sink.at(line, col, text, found.start(tgroup)), text,
                 "" if types else "the elements' type does not read")
    if sparse:
        o = _OUT_OF.search(text)
        if o:
            n = number(o.group(1))
            said = et.group(1) if (et := e or t) else ""
            kept = number(said) if said else None
            sink.add("sparse-chunk", lid, (kept, n, e is not None), sink.at(line, col, text, o.start(1)), text,
                     "" if n is not None and kept is not None else f"{o.group(1)!r} is no number")
    mm = _MATRIX.search(text)
    if mm:
        sink.add("matrix", lid, mm.group(1), sink.at(line, col, text, mm.start(1)), text)


_NSET = re.compile(r"(?:\bN\s*=\s*|=\s*)(\d+)\s*\*\s*i\s+where\s+i\s*=\s*\{([^}]*)\}")


def _element_words(sink: Sink, lid: str, text: str, line: int, col: int, operand: str) -> None:
    prefix = {"D": "d", "C": "c"}.get(operand, operand.lower())
    lm = re.search(rf"\b{prefix}0\b", text)
    if lm:
        end = len(text)
        cut = re.search(r"\s+(?:N\s*=|`?N`?\s+depends|Mapping\b)", text[lm.start():])
        if cut:
            end = lm.start() + cut.start()
        body = " ".join(text[lm.start():end].split())
        sink.add("elements", lid, body, sink.at(line, col, text, lm.start()), text)
    elif re.search(r"\b[a-z]\d+\b", text) and not re.search(r"Elements|vector expression", text):
        sink.add("elements", lid, None, (line, col), text, "the element list names no element of this operand")
    found = list(_NSET.finditer(text))
    if found:
        values: set[int] = set()
        unread = ""
        for nm in found:
            try:
                values |= {int(nm.group(1)) * v for v in expand_set(nm.group(2))}
            except ValueError as e:
                unread = str(e)
        starts = [nm.start(1) for nm in found]
        if not re.search(r"\bN\s*=", text[: found[0].start(1)]):
            unread = unread or "the set is not of N"
        sink.add("params", lid, frozenset(values), sink.at(line, col, text, starts[0]), text, unread)


def expand_set(body: str) -> list[int]:
    """``1, 2, ... , 32`` -> 1 .. 32: an ellipsis continues the step of the two values before it to the value after
    it.  ``ValueError`` when the words are no such set."""
    items = [x.strip() for x in body.split(",")]
    out: list[int] = []
    for k, it in enumerate(items):
        if it in ("...", "…"):
            if len(out) < 2 or k + 1 >= len(items) or not items[k + 1].isdigit():
                raise ValueError(f"an ellipsis with no run around it in {{{body}}}")
            step, end = out[-1] - out[-2], int(items[k + 1])
            if step <= 0 or (end - out[-1]) % step or end - out[-1] > 1 << 12:
                raise ValueError(f"the run before the ellipsis in {{{body}}} does not reach {end}")
            out.extend(range(out[-1] + step, end, step))
        elif it.isdigit() and len(it) < 6:
            out.append(int(it))
        else:
            raise ValueError(f"{it!r} is not a number")
    return out


def _metadata(sink: Sink, subject: str, b: Text) -> None:
    m = re.search(r"a\s+\.(\w+)\s+register\s+containing\s+(" + NUMBER + r")\s+(\d+)-bit\s+vectors", b.text)
    if not m:
        sink.add("metadata-register", subject, None, (b.line, b.col), b.text, "the metadata register does not read")
        return
    sink.add("metadata-register", subject, m.group(1), sink.at(b.line, b.col, b.text, m.start(1)), b.text)
    sink.add("metadata-vectors", subject, number(m.group(2)), sink.at(b.line, b.col, b.text, m.start(2)), b.text,
             "" if number(m.group(2)) is not None else f"{m.group(2)!r} is no number")
    im = re.search(r"storing the (index|indices) of\s+(?:(" + NUMBER + r")\s+)?(?:a\s+)?non-zero elements?\s+of a\s+(\d+)-wide chunk",
                   b.text)
    n = number(im.group(2)) if im and im.group(2) else 1
    value = (int(m.group(3)), n, int(im.group(3))) if im else None
    sink.add("metadata-bits", subject, value, sink.at(b.line, b.col, b.text, m.start(3)), b.text,
             "" if im else "what the vectors store does not read")
    if im:
        for g in (2, 3):
            if im.group(g):
                sink.add("metadata-bits", subject, value, sink.at(b.line, b.col, b.text, im.start(g)), b.text)


def read_tmem_section(sink: Sink, sec: Section) -> None:
    """A tcgen05 'Matrix fragments for shape .LxBb' section: its shape (title, prose, caption), the table row's
    register words, and 'will access L lanes ... each of the lane (B * .num)-bits'."""
    title = sec.heading.title.replace("\uf0c1", "")
    subject = section_subject(sec)
    m = re.search(r"\.(\d+x\d+b(?:x2)?)", title)
    shape = m.group(1) if m else ""
    if m:
        sink.add("shape", subject, shape, _title_pos(sink, sec, m.group(1)), title)
    for b in sec.blocks:
        if isinstance(b, Text):
            for sm in re.finditer(r"\.(\d+x\d+b(?:x2)?)\b", b.text):
                sink.add("shape", subject, sm.group(1), sink.at(b.line, b.col, b.text, sm.start(1)), b.text)
            for im in re.finditer(r"(\w+)\{([^}]*)\}\.\d+x\d+b", b.text):
                sink.add("tmem-instruction", subject, (im.group(1), frozenset(x.strip(". ") for x in im.group(2).split(","))),
                         sink.at(b.line, b.col, b.text, im.start(1)), b.text)
            lm = re.search(r"access\s+(\d+)\s+lanes", b.text)
            if lm:
                sink.add("tmem-lanes", subject, int(lm.group(1)), sink.at(b.line, b.col, b.text, lm.start(1)), b.text)
            bm = re.search(r"\((\d+)\s*\\?\*\s*\.num\)-bits", b.text)
            if bm:
                sink.add("tmem-bits", subject, int(bm.group(1)), sink.at(b.line, b.col, b.text, bm.start(1)), b.text)
        elif isinstance(b, Caption):
            text = b.text.replace("\uf0c1", "")
            for sm in re.finditer(r"\.(\d+x\d+b(?:x2)?)\b", text):
                sink.add("shape", subject, sm.group(1), sink.at(b.line, 1, text, sm.start(1)), text)
        elif isinstance(b, Table) and shape:
            for row in b.rows:
                for cell in row.cells:
                    rm = re.search(r"containing\s+(\S+)\s+number\s+of\s+\.(\w+)\s+registers", cell.text)
                    if rm:
                        line = cell.line or row.line
                        sink.add("tmem-registers", subject, rm.group(1).lstrip("."),
                                 sink.at(line, cell.col, cell.text, rm.start(1)), cell.text)
                        sink.add("tmem-register-type", subject, rm.group(2),
                                 sink.at(line, cell.col, cell.text, rm.start(2)), cell.text)


__all__ = ["expand_set", "read_fragment_section", "read_tmem_section", "section_subject"]
