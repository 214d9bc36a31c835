"""The statements of the shared-memory and Tensor Memory packing pages, one value at its words (issue 41).

Read here, judged in ``verify.checks.statements_shared``:

* the packing formats (9.7.16.10.4.x): which operand, kind and memory a section is about (``packing-context``),
  whether D's sub-word elements are packed (``packed``), the bits of a Tensor Memory word (``word-bits``), an
  element's and a container's bits (``element-bits``, ``container-bits``), elements per word or container
  (``elements-per-word``, ``per-container``), where an unpacked element sits (``word-position``), the types that
  need a packing format (``packed-types``), each figure's format and type (``format-bits``, ``format-type``);
* Table 52 (9.7.16.10.3): each row's sizes, major-ness and allowed modes (``valid-modes``);
* Table 38 / Table 53: each swizzle atom's shape in 128-bit units (``atom``); the non-transposed and transposed
  major-ness of A and B (``transpose-major``); the unit and factor of the atoms (``atom-unit-bits``,
  ``atom-factor``) and the worked atom size (``atom-example``); the atom each figure shows (``figure-atom``);
* the wgmma page's LBO / SBO definitions (``stride-definition``, ``definition-tile``, ``definition-assumed``),
  its worked examples (``example-id``, ``example-canonical``, ``example-param``, ``example-encoding``), the matrix
  descriptor's fields and codes (``descriptor-word``, ``descriptor-field``, ``descriptor-code``,
  ``descriptor-encode``) and the base offset (``pattern-boundary``, ``base-offset-formula``).
"""
from __future__ import annotations

import re
from typing import Any

from ..layout.descriptor import stride_roles
from .page_model import Block, Caption, Code, Section, Table, Text
from .shared_page_context import table_cells, major_of_words, mode_of_words
from .shared_pages_wgmma import definition_rows
from .shared_symbolic import SymError, canonical_family, parse_symbolic
from .statement_text import NUMBER, Sink, number

SIZE_INDEX = {4: 0, 6: 1, 8: 2, 16: 3, 32: 4}
_MODE_WORDS_RX = r"(?:All swizzling modes|All except .*|Only .*)"


# ----------------------------------------------------------------------------- packing (9.7.16.10.4.x)

def read_packing(sink: Sink, sec: Section) -> None:
    title = sec.heading.title.replace("\uf0c1", "")
    ops = re.search(r"for matrix\s+(\w)(?:\s+and\s+(\w))?", title)
    kinds = re.findall(r"\.kind::(\w+)", title)
    memory = "tmem" if re.search(r"Tensor Memory", title, re.I) else "smem" if re.search(r"Shared Memory", title, re.I) else ""
    operands = tuple(x for x in (ops.group(1), ops.group(2)) if x) if ops else ()
    ctx = f"packing:{','.join(operands)}:{','.join(kinds)}:{memory}"
    raw = sink.page.lines[sec.heading.line - 1] if 0 < sec.heading.line <= len(sink.page.lines) else ""
    if ops:
        sink.add("packing-context", ctx, (operands, tuple(kinds), memory),
                 (sec.heading.line, max(raw.find("matrix " + operands[0]), 0) + 8), title)
        for k in kinds:
            sink.add("packing-context", ctx, (operands, tuple(kinds), memory),
                     (sec.heading.line, max(raw.find(k), 0) + 1), title)
    pending: list[int] = []
    pending_at: tuple[int, int] = (0, 0)
    for b in sec.blocks:
        if isinstance(b, Text):
            _packing_text(sink, b, ctx, operands, kinds)
            fm = re.match(r"(\d+)-bit packing format(?:\s+as shown in Figure\s+(\d+))?", b.text)
            if fm:
                if fm.group(2):
                    sink.add("format-bits", f"figure:{fm.group(2)}", int(fm.group(1)), sink.at(b.line, b.col, b.text, 0),
                             b.text)
                    pending = []
                else:
                    pending = [int(fm.group(1))]
                    pending_at = sink.at(b.line, b.col, b.text, 0)
            tm = re.match(r"Type\s+(\w+)\s+as shown in Figure\s+(\d+)", b.text)
            if tm:
                sink.add("format-type", f"figure:{tm.group(2)}", (ctx, tm.group(1).lower()),
                         sink.at(b.line, b.col, b.text, tm.start(1)), b.text)
                if pending:
                    sink.add("format-bits", f"figure:{tm.group(2)}", pending[0], pending_at, b.text)
        elif isinstance(b, Caption):
            text = b.text.replace("\uf0c1", "")
            cm = re.match(r"Figure\s+(\d+)\s+(\d+)-bit packing format(?:\s+with type\s+(\w+))?", text)
            if cm:
                sink.add("format-bits", f"figure:{cm.group(1)}", int(cm.group(2)), sink.at(b.line, 1, text, cm.start(2)), text)
                if cm.group(3):
                    sink.add("format-type", f"figure:{cm.group(1)}", (ctx, cm.group(3).lower()),
                             sink.at(b.line, 1, text, cm.start(3)), text)


def _packing_text(sink: Sink, b: Text, ctx: str, operands: tuple[str, ...], kinds: list[str]) -> None:
    t = b.text

    def add(kind: str, subject: str, value: Any, offset: int, unread: str = "") -> None:
        sink.add(kind, subject, value, sink.at(b.line, b.col, t, offset), t, unread)

    m = re.search(r"sub-word elements of matrix\s+(\w)\s+are expected\s+(not\s+)?to be packed within a\s+(\d+)-bit Tensor "
                  r"Memory word", t)
    if m:
        add("packing-operand", ctx, m.group(1), m.start(1))
        add("packed", f"{ctx}:{m.group(1)}", not m.group(2), m.start(2) if m.group(2) else m.start(0))
        add("word-bits", ctx, int(m.group(3)), m.start(3))
    m = re.search(r"if the type of elements of the matrix\s+(\w)\s+is\s+(\d+)\s+bits then a Tensor Memory word\s+would "
                  r"contain\s+(" + NUMBER + r")\s+(\d+)-bit element in its\s+(\w+)\s+(\d+)\s+bits", t)
    if m:
        subj = f"{ctx}:{m.group(1)}:{m.group(2)}"
        add("packing-operand", ctx, m.group(1), m.start(1))
        add("packing-element-bits", subj, int(m.group(2)), m.start(2))
        n = number(m.group(3))
        add("elements-per-word", subj, n, m.start(3), "" if n else f"{m.group(3)!r} is no number")
        add("packing-element-bits", subj, int(m.group(4)), m.start(4))
        add("word-position", subj, (m.group(5), int(m.group(6))), m.start(5))
        add("word-position", subj, (m.group(5), int(m.group(6))), m.start(6))
    m = re.search(r"The\s+(\d+)-bit and\s+(\d+)-bit floating point types have different packing format", t)
    if m:
        for g in (1, 2):
            add("packed-types", "tcgen05.packing", frozenset({int(m.group(1)), int(m.group(2))}), m.start(g))
    m = re.search(r"The individual\s+(\d+)-bit and the\s+(\d+)-bit floating point type elements must be packed in an\s+"
                  r"(\d+)-bit container", t)
    if m:
        for g in (1, 2):
            add("packed-types", ctx, frozenset({int(m.group(1)), int(m.group(2))}), m.start(g))
        add("packing-container-bits", ctx, int(m.group(3)), m.start(3))
    m = re.search(r"The\s+(\d+)-bit containers must be contiguously packed in a\s+(\d+)-bit Tensor", t)
    if m:
        add("packing-container-bits", ctx, int(m.group(1)), m.start(1))
        add("word-bits", ctx, int(m.group(2)), m.start(2))
    m = re.search(r"if the type of elements of the matrix\s+(\w)\s+is\s+(\d+)\s+bits then\s+(" + NUMBER + r")\s+consecutive\s+"
                  r"(\w)\s+elements should be packed in one\s+(\d+)-bit Tensor Memory word", t)
    if m:
        add("packing-operand", ctx, m.group(1), m.start(1))
        add("packing-operand", ctx, m.group(4), m.start(4))
        add("packing-element-bits", ctx, int(m.group(2)), m.start(2))
        n = number(m.group(3))
        add("elements-per-word", ctx, n, m.start(3), "" if n else f"{m.group(3)!r} is no number")
        add("word-bits", ctx, int(m.group(5)), m.start(5))
    m = re.search(r"(" + NUMBER + r")\s+(\d+)-bit floating point type elements must be packed in an\s+(\d+)-bit container in "
                  r"Tensor memory as\s+shown in Figure\s+\d+\s+for\s+(\w+)", t, re.I)
    if m:
        n = number(m.group(1))
        add("per-container", ctx, (n, int(m.group(2)), int(m.group(3))), m.start(1), "" if n else f"{m.group(1)!r}?")
        add("per-container", ctx, (n, int(m.group(2)), int(m.group(3))), m.start(2), "" if n else f"{m.group(1)!r}?")
        add("packing-container-bits", ctx, int(m.group(3)), m.start(3))
        add("kind-named", ctx, m.group(4), m.start(4))
    m = re.search(r"The packing format for\s+(\d+)-bit floating point elements in shared memory is to pack\s+(" + NUMBER
                  + r")\s+(\d+)-bit\s+elements in a\s+(\d+)-bit container, with\s+(\w+)\s+padding", t)
    if m:
        n = number(m.group(2))
        value = (n, int(m.group(3)), int(m.group(4)), m.group(5) == "no")
        for g in (1, 2, 3, 4, 5):
            add("smem-packing", ctx, value if int(m.group(1)) == int(m.group(3)) else None, m.start(g),
                "" if int(m.group(1)) == int(m.group(3)) else f"{m.group(1)}-bit elements packed as {m.group(3)}-bit ones")
        add("packed-types", ctx, frozenset({int(m.group(1))}), m.start(1))
    m = re.search(r"The\s+(\d+)-bit and\s+(\d+)-bit floating point elements in shared memory must be contiguously packed", t)
    if m:
        for g in (1, 2):
            add("packed-types", ctx, frozenset({int(m.group(1)), int(m.group(2))}), m.start(g))


# ----------------------------------------------------------------------------- Table 52

def read_valid(sink: Sink, sec: Section) -> None:
    table = next((b for b in sec.blocks if isinstance(b, Table)), None)
    if table is None:
        return
    prev: list[str] = []
    prev_at: list[tuple[int, int]] = []
    for row in table.rows:
        texts = [c.text.replace("\\*", "*").strip() for c in row.cells]
        at = [(c.line or row.line, c.col) for c in row.cells]
        if len(texts) == 2 and len(prev) == 4:  # a row under cells that span two rows: the sizes and the modes
            texts, at = [prev[0], texts[0], texts[1], prev[3]], [prev_at[0], at[0], at[1], prev_at[3]]
        if len(texts) < 4:
            continue
        prev, prev_at = texts, at
        sizes_t, major_t, matrix_t, modes_t = texts[:4]
        sizes = [int(x) for x in re.findall(r"(\d+)-bit", sizes_t)]
        unread = ""
        if not sizes or any(s not in SIZE_INDEX for s in sizes) or len(re.findall(r"\d+", sizes_t)) != len(sizes):
            unread = f"{sizes_t!r}: the sizes are not among 4-, 6-, 8-, 16- and 32-bit"
        word = major_t.split("(")[0].strip().lower()
        transposed = "transpose" in major_t
        if word not in ("row", "column") or matrix_t.strip() not in ("A", "B"):
            unread = unread or f"{major_t!r} {matrix_t!r}: no major-ness of A or B"
        modes = _modes(modes_t)
        if modes is None:
            unread = unread or f"{modes_t!r}: the modes do not read"
        value = (frozenset(sizes), word, transposed, matrix_t.strip(), modes)
        for k in range(4):
            sink.add("valid-modes", "tcgen05.valid.modes", None if unread else value, at[k], texts[k], unread)


ALL_MODES = ("none", "128B_base32B", "128B", "64B", "32B")


def _modes(text: str) -> frozenset[str] | None:
    s = text.strip()
    low = s.lower()
    if low == "all swizzling modes":
        return frozenset(ALL_MODES)
    if low.startswith("all except"):
        m = _one_mode(s[len("all except"):])
        return frozenset(ALL_MODES) - {m} if m else None
    if low.startswith("only"):
        m = _one_mode(s[len("only"):])
        return frozenset({m}) if m else None
    return None


def _one_mode(text: str) -> str | None:
    t = " ".join(text.split()).lower()
    exact = {"128b swizzling with 32b atomicity": "128B_base32B", "128b swizzling with 16b atomicity": "128B",
             "128b swizzling": "128B", "64b swizzling": "64B", "32b swizzling": "32B", "no swizzling": "none"}
    return exact.get(t)


# ----------------------------------------------------------------------------- the atoms' pages (Table 38 / 53)

def read_atoms(sink: Sink, sec: Section, instr: str) -> None:
    """Table 38 / 53, the major-ness table, the atoms' arithmetic and the figures of the atoms."""
    for b in sec.blocks:
        if isinstance(b, Table) and b.header and re.search(r"Swizzl", b.header[0]):
            for texts, cols, line in table_cells(b, 3):
                if len(texts) < 3:
                    continue
                mode, major = _atom_mode(texts[0]), major_of_words(texts[1])
                shape = re.fullmatch(r"(\d+)\s*x\s*(\d+)", texts[2].strip())
                dash = texts[1].strip() in ("–", "-") and texts[2].strip() in ("–", "-")
                unread = ""
                if mode is None:
                    unread = f"{texts[0]!r} names no swizzling mode"
                elif not dash and (major is None or shape is None):
                    unread = f"{texts[1]!r} {texts[2]!r}: no leading dimension and atom"
                major = major or ("K" if dash else "")
                subject = f"{instr}.shared.atom.{major}.{mode}"
                value: object = None if dash else (int(shape.group(1)), int(shape.group(2))) if shape else None
                for k in range(3):
                    sink.add("atom", subject, value, (line, cols[k]), texts[k], unread)
        elif isinstance(b, Table) and len(b.header) >= 3 and "Transposed" in " ".join(b.header):
            for row in b.rows:
                cells = [c.text.strip() for c in row.cells]
                if len(cells) < 3:
                    continue
                value = (cells[0], cells[1], cells[2])
                for k in range(3):
                    sink.add("transpose-major", f"matrix:{cells[0]}", value, (row.line, row.cells[k].col), cells[k])
        elif isinstance(b, Text):
            _atom_text(sink, b, instr)
        elif isinstance(b, Caption):
            text = b.text.replace("\uf0c1", "")
            cm = re.match(r"Figure\s+\d+\s+(MN|K)\s+major\s+(\S.*?)$", text)
            if cm and not re.search(r",\s+\S+ and \w+ type", text):
                mode = mode_of_words(cm.group(2))
                sink.add("figure-atom", instr, (cm.group(1), mode) if mode else None,
                         sink.at(b.line, 1, text, cm.start(1)), text, "" if mode else f"{cm.group(2)!r} names no mode")
                sink.add("figure-atom", instr, (cm.group(1), mode) if mode else None,
                         sink.at(b.line, 1, text, cm.start(2)), text, "" if mode else f"{cm.group(2)!r} names no mode")


def _atom_mode(text: str) -> str | None:
    t = " ".join(text.split())
    if re.fullmatch(r"128B Swizzling with 32B atomicity", t, re.I):
        return "128B_base32B"
    if re.fullmatch(r"128B Swizzling with 16B atomicity", t, re.I):
        return "128B"
    m = re.fullmatch(r"(\d+)B Swizzling Mode", t, re.I)
    if m:
        return f"{m.group(1)}B" if m.group(1) in ("32", "64", "128") else None
    return "none" if t.lower() == "none" else None


def _atom_text(sink: Sink, b: Text, instr: str) -> None:
    t = b.text

    def add(kind: str, subject: str, value: Any, offset: int, unread: str = "") -> None:
        sink.add(kind, subject, value, sink.at(b.line, b.col, t, offset), t, unread)

    m = re.search(r"The above shapes are for elements of size\s+(\d+)\s+bits", t)
    if m:
        add("atom-unit-bits", instr, int(m.group(1)), m.start(1))
    m = re.search(r"by a factor of\s+(\d+)\s*/\s*sizeof_bits", t)
    if m:
        add("atom-factor", instr, int(m.group(1)), m.start(1))
    m = re.search(r"T\s*=\s*(\d+)\s*/\s*sizeof-elements-in-bits", t)
    if m:
        add("atom-factor", instr, int(m.group(1)), m.start(1))
    m = re.search(r"(\d+)B\s+(\w+)\s+major swizzle atom would have a shape of\s*\(?\s*(\d+)\s*\\?\*\s*\(\s*(\d+)\s*/\s*(\d+)\s*\)\s*\)?"
                  r"\s*x\s*(\d+)\s*=\s*(\d+)\s*x\s*(\d+)\s+for\s+(\w+)", t)
    if m:
        mode, major = f"{m.group(1)}B", m.group(2).upper()
        value = (major, mode, int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(6)), int(m.group(7)),
                 int(m.group(8)), m.group(9).lower())
        unread = "" if major in ("MN", "K") else f"{m.group(2)!r} is no major-ness"
        for g in range(1, 10):
            add("atom-example", instr, None if unread else value, m.start(g), unread)


# ----------------------------------------------------------------------------- the wgmma page: definitions, examples, descriptor

def read_definitions(sink: Sink, sec: Section, name: str) -> None:
    """The LBO / SBO definition table: each clause as (dimension, count) of the major-ness and swizzling it is of."""
    for major, cond, statement, cell, cols, line in definition_rows(sec):
        at = cell.find(statement[:20]) if statement else 0
        subject = f"wgmma.{name}.{major}.{'none' if cond.startswith(('no-swizzl', 'interleave')) else 'swizzled' if cond else 'any'}"
        pos = sink.at(line, cols[1], cell, max(at, 0))
        if re.search(r"not used", statement, re.I):
            value: Any = "unused"
        else:
            m = re.search(r"offset from the first\s+(?:(\d+|\(swizzle-byte-size/16\))\s+)?(rows?|columns?)\s+to the\s+"
                          r"(?:next|second)\s+(?:(\d+|\(swizzle-byte-size/16\))\s+)?(rows?|columns?)", statement, re.I)
            if not m:
                sink.add("stride-definition", subject, None, pos, statement, "the definition does not read")
                continue
            count = m.group(1) or "1"
            again = m.group(3) or "1"
            dims = {m.group(2).rstrip("s").lower(), m.group(4).rstrip("s").lower()}
            if count != again or len(dims) != 1:
                sink.add("stride-definition", subject, None, pos, statement,
                         f"from the first {count} {m.group(2)} to the next {again} {m.group(4)}: not one step")
                continue
            value = (dims.pop() + "s", "W" if count.startswith("(") else int(count))
            for g in (1, 2, 3, 4):
                if m.group(g):
                    sink.add("stride-definition", subject, value, sink.at(line, cols[1], cell, max(at, 0) + m.start(g)),
                             statement)
        sink.add("stride-definition", subject, value, pos, statement)
        tm = re.search(r"of the\s+(\d+)x(\d+)\s+tile", statement)
        if tm:
            sink.add("definition-tile", f"wgmma.shared.{major}.none", (int(tm.group(1)), int(tm.group(2))),
                     sink.at(line, cols[1], cell, max(at, 0) + tm.start(1)), statement)
        am = re.search(r"assumed to be\s+(\d+)", statement)
        if am:
            sink.add("definition-assumed", f"wgmma.{name}.{major}", int(am.group(1)),
                     sink.at(line, cols[1], cell, max(at, 0) + am.start(1)), statement)


_EXAMPLE = re.compile(r"(K|MN)-Major,\s*(.+?)\s+and\s+(\w+)\s+type", re.I)
_CAPTION_EXAMPLE = re.compile(r"Figure\s+\d+\s+(K|MN)\s+major,\s*(.+?)\s+and\s+(\w+)\s+type", re.I)
TYPE_BITS = {"tf32": 32, "f32": 32, "bf16": 16, "f16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}


def read_canonical(sink: Sink, sec: Section) -> None:
    """The canonical-layout table: each row's layout with its swizzle, as the family map the reviewed spec holds."""
    table = next((b for b in sec.blocks if isinstance(b, Table) and any("Canonical" in h for h in b.header)), None)
    if table is None:
        return
    for texts, cols, line in table_cells(table, 4):
        if len(texts) < 4:
            continue
        major, mode = major_of_words(texts[0]), mode_of_words(texts[1])
        unread = "" if major and mode else f"{texts[0]!r} {texts[1]!r}: no major-ness and swizzling mode"
        value, why = _canonical_map(f"{texts[3].replace(' ', '')} o {texts[2]}", major or "K", mode or "none") \
            if not unread else (None, unread)
        for k in (1, 2, 3):
            sink.add("canonical-row", f"wgmma.shared.{major}.{mode}", value, (line, cols[k]), texts[k], why)


def read_examples(sink: Sink, sec: Section) -> None:
    """The worked examples of the canonical layouts: which example (major, swizzling, type: its reviewed id), the
    canonical layout each names (a map), its parameters (with what is needed to instantiate the canonical layout and
    compare it with the exact one), and the encodings of LBO and SBO."""
    blocks = list(sec.blocks)
    k = 0
    while k < len(blocks):
        b = blocks[k]
        h = _EXAMPLE.match(b.text) if isinstance(b, Text) else None
        if not h or not isinstance(b, Text):  # (a match is of a Text)
            k += 1
            continue
        n = k + 1
        while n < len(blocks) and not _is_example(blocks[n]):
            n += 1
        _example(sink, b, h, blocks[k + 1:n])
        k = n


def _is_example(b: Block) -> bool:
    return isinstance(b, Text) and bool(_EXAMPLE.match(b.text))


def _example(sink: Sink, head: Text, h: re.Match[str], blocks: list[Any]) -> None:
    subject = f"wgmma.example@{head.line}"
    mode = mode_of_words(h.group(2))
    major, tname = h.group(1).upper(), h.group(3).lower()
    lid = f"wgmma.shared.example.{major}.{mode}.{tname}" if mode else None
    for g in (1, 2, 3):
        sink.add("example-id", subject, lid, sink.at(head.line, head.col, head.text, h.start(g)), head.text,
                 "" if mode else f"{h.group(2)!r} names no swizzling mode")
    exact = canonical = None
    rows: list[tuple[str, str, int, int]] = []  # the parameter table: (name, value, line, value's column)
    for b in blocks:
        if isinstance(b, Caption):
            cm = _CAPTION_EXAMPLE.match(b.text.replace("\uf0c1", ""))
            if cm:
                cmode = mode_of_words(cm.group(2))
                clid = f"wgmma.shared.example.{cm.group(1).upper()}.{cmode}.{cm.group(3).lower()}" if cmode else None
                for g in (1, 2, 3):
                    sink.add("example-id", subject, clid, sink.at(b.line, 1, b.text, cm.start(g)), b.text,
                             "" if cmode else f"{cm.group(2)!r} names no swizzling mode")
        elif isinstance(b, Text) and b.text.startswith("Exact layout"):
            exact = b
        elif isinstance(b, Text) and b.text.startswith("Canonical Layout"):
            canonical = b
        elif isinstance(b, Table):
            for texts, cols, line in table_cells(b, 2):
                if len(texts) >= 2:
                    rows.append((texts[0].strip(), texts[1].replace("\\*", "*").strip(), line, cols[1]))
    bits = TYPE_BITS.get(tname)
    if canonical is not None and mode:
        text = canonical.text.split(":", 1)[1].strip() if ":" in canonical.text else ""
        start = canonical.text.find(text)
        value, unread = _canonical_map(text, major, mode)
        sink.add("example-canonical", f"wgmma.shared.{major}.{mode}", value,
                 sink.at(canonical.line, canonical.col, canonical.text, start), canonical.text, unread)
    if exact is not None and lid:
        text = exact.text.split(":", 1)[1].strip() if ":" in exact.text else ""
        value, unread = _exact_map(text, bits)
        sink.add("example-exact", lid, value, sink.at(exact.line, exact.col, exact.text, exact.text.find(text)),
                 exact.text, unread)
    if exact is None or canonical is None:
        return
    ex_text = exact.text.split(":", 1)[1].strip() if ":" in exact.text else ""
    can_text = canonical.text.split(":", 1)[1].strip() if ":" in canonical.text else ""
    firsts: dict[str, str] = {}
    for name, v, _, _ in rows:
        firsts.setdefault(name, v)
    stated = tuple(sorted((k2, v) for k2, v in firsts.items() if k2 in ("T", "m", "k", "LBO", "SBO")))
    frame = (major, str(mode), tname, bits, can_text, ex_text, stated)
    for name, v, line, col in rows:
        em_name = re.fullmatch(r"Encoding of (\w+) in descriptor", name)
        if em_name:
            em = re.fullmatch(r"\((\w+)\)\s*>>\s*(\d+)\s*=\s*(\d+)", v)
            am = re.fullmatch(r"(\d+)\s*\(assumed\)", v)
            value = (em_name.group(1), em.group(1), int(em.group(2)), int(em.group(3)), frame) if em else \
                (em_name.group(1), None, None, int(am.group(1)), frame) if am else None
            raw = sink.page.lines[line - 1] if 0 < line <= len(sink.page.lines) else ""
            name_col = raw.find(name) + 1 if name in raw else 1
            for at in [(line, col), (line, name_col + len("Encoding of "))] + \
                    ([(line, col + em.start(g)) for g in (1, 2, 3)] if em else []):
                sink.add("example-encoding", subject, value, at, v, "" if value else f"{v!r} does not read")
            continue
        raw = sink.page.lines[line - 1] if 0 < line <= len(sink.page.lines) else ""
        name_col = raw.find(name) + 1 if name and name in raw else 1
        unread = "" if name in ("T", "m", "k", "LBO", "SBO") else f"{name!r} is no parameter (T, m, k, LBO, SBO)"
        for at in ((line, col), (line, name_col)):
            sink.add("example-param", subject, (name, v, frame), at, v, unread)


def _exact_map(text: str, bits: int | None) -> tuple[Any, str]:
    """An example's exact layout (``Swizzle<B,M,S> o (shape):(stride)``, integers) as the map the reviewed spec holds."""
    from ..layout.notations.cute_layout import flatten
    from ..layout.notations.cute_shared import parse_cute_shared
    from ..layout.notations.errors import NotationError
    from .shared_symbolic import concrete_map
    if not bits or 128 % bits:
        return None, "the example's type has no element size"
    try:
        sw = parse_cute_shared(text, "<page>")
        lay = sw.layout
        r, c = lay.mode(0), lay.mode(1)
        row_mode = (list(flatten(r.shape)), list(flatten(r.stride)))
        col_mode = (list(flatten(c.shape)), list(flatten(c.stride)))
        return concrete_map(row_mode, col_mode, sw.swizzle, 128 // bits), ""
    except NotationError as e:
        return None, f"the exact layout does not read: {e.message}"
    except (ValueError, IndexError) as e:
        return None, f"the exact layout does not read: {e}"


def _canonical_map(text: str, major: str, mode: str) -> tuple[Any, str]:
    """A canonical layout the page writes (``Swizzle<B,M,S> o ((8,m),(T,2k)):(...)``) as the family map the reviewed
    specs hold (``shared_symbolic.canonical_family``), or why it does not read."""
    from ..layout.shared import Swizzle
    from .shared_page_context import WGMMA_T
    sm = re.match(r"\s*Swizzle\s*<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\s*o\s*", text)
    if not sm:
        return None, "no Swizzle<B,M,S> o before the layout"
    try:
        sw = Swizzle(int(sm.group(1)), int(sm.group(2)), int(sm.group(3)))
        row, col = parse_symbolic(text[sm.end():])
        units = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[mode]
        fm, _ = canonical_family(row, col, sw, WGMMA_T, units, stride_roles(major, mode))
    except (SymError, ValueError, KeyError) as e:
        return None, f"the layout does not read: {e}"
    return fm, ""


def read_descriptor(sink: Sink, sec: Section) -> None:
    for b in sec.blocks:
        if isinstance(b, Text):
            m = re.search(r"It is a\s+(\d+)-bit value", b.text)
            if m:
                sink.add("descriptor-word", "wgmma.descriptor", int(m.group(1)), sink.at(b.line, b.col, b.text, m.start(1)),
                         b.text)
        elif isinstance(b, Table) and b.header and "Bit-field" in b.header[0]:
            for texts, cols, line in table_cells(b, 3):
                if len(texts) < 3:
                    continue
                rm = re.fullmatch(r"(\d+)\s*[–-]\s*(\d+)", texts[0].strip())
                size = int(texts[1]) if texts[1].strip().isdigit() else None
                name = _field_name(texts[2])
                unread = "" if rm and size is not None and name else f"{' | '.join(texts[:2])}: the field does not read"
                value: object = (name, int(rm.group(1)), int(rm.group(2)), size) if not unread and rm else None
                for k in range(3):
                    sink.add("descriptor-field", "wgmma.descriptor", value, (line, cols[k]), texts[k], unread)
                if name == "swizzle":
                    for cm in re.finditer(r"(\d+)\s*:\s*([^*]+?)(?=\s*\*|$)", texts[2]):
                        mode = mode_of_words(cm.group(2))
                        sink.add("descriptor-code", "wgmma.descriptor", (int(cm.group(1)), mode) if mode else None,
                                 sink.at(line, cols[2], texts[2], cm.start(1)), texts[2],
                                 "" if mode else f"{cm.group(2)!r} names no mode")
                        sink.add("descriptor-code", "wgmma.descriptor", (int(cm.group(1)), mode) if mode else None,
                                 sink.at(line, cols[2], texts[2], cm.start(2)), texts[2],
                                 "" if mode else f"{cm.group(2)!r} names no mode")
        elif isinstance(b, Table) and b.header and any("Starting address" in h for h in b.header):
            for texts, cols, line in table_cells(b, 2):
                mode = mode_of_words(texts[0])
                m = re.match(r"(\d+)-Byte boundary", texts[1])
                value = (mode, int(m.group(1))) if mode and m else None
                for k in range(2):
                    sink.add("pattern-boundary", "wgmma.descriptor", value, (line, cols[k]), texts[k],
                             "" if value else "the boundary does not read")
        elif isinstance(b, Code):
            for cl in b.lines:
                m = re.search(r"matrix-descriptor-encode\(x\)\s*=\s*\(x\s*&\s*(\w+)\)\s*>>\s*(\w+)", cl.text)
                if m:
                    value, unread = _ints(m.group(1), m.group(2))
                    for g in (1, 2):
                        sink.add("descriptor-encode", "wgmma.descriptor", value, (cl.line, cl.col + m.start(g)), cl.text, unread)
                m = re.search(r"base offset\s*=\s*\(pattern start addr\s*>>\s*(\w+)\)\s*&\s*(\w+)", cl.text)
                if m:
                    value, unread = _ints(m.group(1), m.group(2))
                    for g in (1, 2):
                        sink.add("base-offset-formula", "wgmma.descriptor", value, (cl.line, cl.col + m.start(g)), cl.text,
                                 unread)


def _ints(*words: str) -> tuple[tuple[int, ...] | None, str]:
    try:
        return tuple(int(w, 0) for w in words), ""
    except ValueError:
        return None, f"{' '.join(words)!r}: not numbers"


def _field_name(desc: str) -> str:
    for name, rx in (("start", r"Matrix start address"), ("lbo", r"Leading dimension byte offset"),
                     ("sbo", r"Stride dimension byte offset"), ("base_offset", r"Matrix base offset"),
                     ("swizzle", r"swizzling mode")):
        if re.search(rx, desc, re.I):
            return name
    return ""


__all__ = ["read_atoms", "read_canonical", "read_definitions", "read_descriptor", "read_examples", "read_packing", "read_valid"]
