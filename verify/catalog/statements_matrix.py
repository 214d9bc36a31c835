"""The statements of the ldmatrix, stmatrix and movmatrix pages (9.7.14.5.15-17), one value at its words.

Read here, judged in ``verify.checks.statements`` (subjects: the instruction, ``instr.SHAPE`` for what is said of
one shape, ``instr.example@LINE`` for one example):

* the syntax: the ``.shape``, ``.num``, ``.type``, ``.dst_fmt``, ``.src_fmt`` sets (``syntax-*``), each form's
  ``.trans`` (``syntax-trans``: none, optional, mandatory);
* the shape table: each shape's matrix (``matrix-shape``) and element sizes (``element-bits``); the element sizes
  of the whole instruction; the source formats (``src-format``: the format's own name, ``src-count``,
  ``src-bits``, ``src-padding``, ``src-shape``, ``src-dst``);
* ``.num``: what ``.x1/.x2/.x4`` mean (``num-matrices``), the values a shape takes (``shape-nums``), the
  registers per ``.num`` (``registers-per-num``) and their bits (``register-bits``);
* addresses: per matrix (``addresses-per-matrix``, ``address-threads-per-matrix``), which addresses are a
  matrix's rows (``address-range``), the table of threads and addresses (``address-threads``, ``address-cell``);
* the fragments (maps, judged by both engines): a group of G consecutive threads holds a row (``row-threads``,
  ``column-threads``), a thread's C consecutive columns across R rows (``thread-cells``), thread T the F-th
  fragment (``first-fragment``), the k-th matrix in the r-th register (``register-matrix``), what ``.trans``
  does (``trans-means``), the bytes of a row (``row-bytes``), which matrix the prose is about (``matrix-ref``);
* per shape: registers per matrix (``registers-per-matrix``), their type, elements per register, container bits,
  padding of 4- and 6-bit data (``padding``), the elements each thread gives per matrix (``thread-elements``),
  the byte order of a register (``byte-order``), the types a shape takes (``shape-types``), ``.trans`` mandatory
  (``trans-mandatory``);
* figure captions (``matrix-ref``, ``element-bits``);
* examples: the instruction (``example``), its registers (``example-registers``), the ``.reg`` declarations
  (``example-declared``, ``example-register-type``, ``example-address-bits``), and the comment above it
  (``example-count``, ``example-shape``, ``example-bits``, ``example-trans``, ``example-address-bits``).
"""
from __future__ import annotations

import re

from .page_model import Caption, Code, CodeLine, Section, Table, Text
from .statement_text import NUMBER, Sink, number

_RXC = re.compile(r"\b(\d+)x(\d+)\b")
_FORM_WORDS = {"shape", "num", "trans", "ss", "type", "dst_fmt", "src_fmt", "shared", "shared::cta"}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "next": 2, "subsequent": 3}


def read_matrix_section(sink: Sink, sec: Section, instr: str) -> None:
    """All statements of one ldmatrix / stmatrix / movmatrix section (module docstring)."""
    ctx = _Ctx(sink, instr)
    for b in sec.blocks:
        if isinstance(b, Code):
            if any(re.match(r"\s*\.\w+\s*=\s*\{", cl.text) for cl in b.lines) or not any(
                    "//" in cl.text or ".reg" in cl.text for cl in b.lines):
                ctx.syntax(b)
            else:
                ctx.examples(b)
        elif isinstance(b, Table):
            ctx.table(b)
        elif isinstance(b, Caption):
            ctx.caption(b)
        elif isinstance(b, Text):
            ctx.text(b)


class _Ctx:
    def __init__(self, sink: Sink, instr: str) -> None:
        self.sink = sink
        self.instr = instr
        self.shape_of: dict[tuple[int, int], str] = {}  # a matrix's rows x cols -> the shape it is (the shape table)
        self.figure_shape = ""  # the shape the prose since the last figure is about

    # -- helpers
    def add(self, kind: str, subject: str, value: object, line: int, col: int, text: str, offset: int,
            words: str = "", unread: str = "") -> None:
        self.sink.add(kind, subject, value, self.sink.at(line, col, text, offset), words or text, unread)

    def shape_subject(self, rows: int, cols: int) -> str:
        shape = self.shape_of.get((rows, cols)) or self.shape_of.get((cols, rows)) or f"m{rows}n{cols}"
        return f"{self.instr}.{shape}"

    # -- the syntax block
    def syntax(self, code: Code) -> None:
        for cl in code.lines:
            t = cl.text
            m = re.match(r"\s*\.(shape|num|type|dst_fmt|src_fmt)\s*=\s*\{([^}]*)\}", t)
            if m:
                items = [x.strip() for x in m.group(2).split(",") if x.strip()]
                names = []
                unread = ""
                for it in items:
                    im = re.fullmatch(r"\.([\w:]+?)(?:\{[^}]*\})?", it)
                    if not im:
                        unread = f"{it!r} is no qualifier"
                    else:
                        names.append(im.group(1))
                value: object
                if m.group(1) == "num":
                    nums = [int(x[1:]) if re.fullmatch(r"x\d+", x) else None for x in names]
                    value = frozenset(n for n in nums if n is not None)
                    unread = unread or ("" if None not in nums else "a .num that is no .xN")
                else:
                    value = frozenset(names)
                self._code(f"syntax-{m.group(1).replace('_', '-')}", self.instr, value, cl, m.start(2), unread)
                continue
            fm = re.search(rf"\b{self.instr}\.sync\.aligned\.([^\s]+)", t)
            if fm:
                form = fm.group(1)
                sm = re.search(r"\.(m\d+n\d+)\b", "." + form)
                trans = "mandatory" if re.search(r"(?<![{])\.trans\b", "." + form) else "optional" if "{.trans}" in form else "none"
                subject = f"{self.instr}.{sm.group(1)}" if sm else (
                    "movmatrix.m8n8" if self.instr == "movmatrix" else self.instr)
                odd = [q for q in re.findall(r"\.?([A-Za-z_][\w:]*)", form.replace("{", ".").replace("}", ""))
                       if q not in _FORM_WORDS and not re.fullmatch(r"m\d+n\d+|x\d+|b\w+", q)]
                self._code("syntax-trans", subject, trans, cl, fm.start(1),
                           f"unknown qualifier .{odd[0]}" if odd else "")

    def _code(self, kind: str, subject: str, value: object, cl: CodeLine, offset: int, unread: str = "") -> None:
        self.sink.add(kind, subject, value, (cl.line, cl.col + offset), cl.text, unread)

    # -- tables
    def table(self, t: Table) -> None:
        head = [h.strip().lstrip(".").replace("\\", "") for h in t.header]
        if head and head[0] == "shape":
            self._shape_table(t)
        elif head and head[0] == "src_fmt":
            self._src_table(t)
        elif head and head[0] == "num":
            self._address_table(t)

    def _shape_table(self, t: Table) -> None:
        for row in t.rows:
            cells = row.cells
            if len(cells) < 3:
                continue
            line = lambda c: c.line or row.line  # noqa: E731
            sm = re.fullmatch(r"\.(m(\d+)n(\d+))", cells[0].text.strip())
            if not sm:
                self.add("matrix-shape", self.instr, None, line(cells[0]), cells[0].col, cells[0].text, 0,
                         unread="the shape cell names no shape")
                continue
            subject = f"{self.instr}.{sm.group(1)}"
            rm = _RXC.search(cells[1].text)
            if rm:
                self.shape_of[(int(rm.group(1)), int(rm.group(2)))] = sm.group(1)
                self.add("matrix-shape", subject, (int(rm.group(1)), int(rm.group(2))), line(cells[1]), cells[1].col,
                         cells[1].text, rm.start())
            else:
                self.add("matrix-shape", subject, None, line(cells[1]), cells[1].col, cells[1].text, 0,
                         unread="the matrix shape does not read")
            self._bits(subject, cells[2].text, line(cells[2]), cells[2].col)

    def _bits(self, subject: str, text: str, line: int, col: int) -> None:
        bits = re.findall(r"(\d+)-bit", text)
        m = re.search(r"\d+-bit", text)
        self.add("element-bits", subject, frozenset(int(b) for b in bits), line, col, text, m.start() if m else 0,
                 unread="" if bits else "no element size")

    def _src_table(self, t: Table) -> None:
        fmt = ""
        for row in t.rows:
            cells = row.cells
            line = lambda c: c.line or row.line  # noqa: E731
            first = cells[0].text.strip() if cells else ""
            if re.fullmatch(r"\.b\w+", first) and len(cells) >= 2:
                fmt = first[1:]
                self.add("src-format", fmt, fmt, line(cells[0]), cells[0].col, cells[0].text, 1)
                shape_cell, rest = cells[1], cells[2:]
            elif cells:
                shape_cell, rest = cells[0], cells[1:]
            else:
                continue
            sm = re.fullmatch(r"\.(m\d+n\d+)", shape_cell.text.strip())
            self.add("src-shape", f"{self.instr}.{sm.group(1)}" if sm else self.instr, fmt if sm else None,
                     line(shape_cell), shape_cell.col, shape_cell.text, 1,
                     unread="" if sm else "the shape cell names no shape")
            if len(rest) >= 2:
                self._src_words(fmt, rest[0].text, line(rest[0]), rest[0].col)
                pm = re.match(r"(\d+)\s+bits", rest[1].text.strip())
                self.add("src-padding", fmt, int(pm.group(1)) if pm else None, line(rest[1]), rest[1].col, rest[1].text, 0,
                         unread="" if pm else "the padding does not read")
            if len(rest) >= 3:
                dm = re.match(r"\.(b\w+)\s*\((\d+)\s+(\d+)-bit elements\)", rest[2].text.strip())
                self.add("src-dst", fmt, (dm.group(1), int(dm.group(2)), int(dm.group(3))) if dm else None, line(rest[2]),
                         rest[2].col, rest[2].text, 0, unread="" if dm else "the destination format does not read")

    def _src_words(self, fmt: str, text: str, line: int, col: int) -> None:
        m = re.search(r"(\d+)\s+(?:unsigned\s+)?(\d+)-bit elements", text)
        if not m:
            self.add("src-count", fmt, None, line, col, text, 0, unread="the source elements do not read")
            return
        self.add("src-count", fmt, int(m.group(1)), line, col, text, m.start(1))
        self.add("src-bits", fmt, int(m.group(2)), line, col, text, m.start(2))

    def _address_table(self, t: Table) -> None:
        groups: list[tuple[int, int] | None] = []
        for k, h in enumerate(t.header[1:]):
            m = re.search(r"Threads\s+(\d+)\s*[–-]\s*(\d+)", h)
            groups.append((int(m.group(1)), int(m.group(2))) if m else None)
            raw = self.sink.page.lines[t.line - 1] if 0 < t.line <= len(self.sink.page.lines) else ""
            pos = [mm.start() for mm in re.finditer(r"Threads", raw)]
            col = pos[k] + 1 if k < len(pos) else 1
            self.sink.add("address-threads", self.instr, (k, groups[-1]) if m else None, (t.line, col), h,
                          "" if m else "the header names no threads")
        for row in t.rows:
            cells = row.cells
            if not cells:
                continue
            nm = re.fullmatch(r"\.x(\d+)", cells[0].text.strip())
            num = int(nm.group(1)) if nm else None
            for j, c in enumerate(cells[1:]):
                text = c.text.strip()
                am = re.fullmatch(r"addr(\d+)\s*[–-]\s*addr(\d+)", text)
                value = (num, j, (int(am.group(1)), int(am.group(2))) if am else None)
                unread = "" if num is not None and (am or text in ("–", "-", "")) else "the cell does not read"
                self.add("address-cell", self.instr, value, c.line or row.line, c.col, c.text, 0, unread=unread)

    # -- figure captions
    def caption(self, c: Caption) -> None:
        text = c.text.replace("\uf0c1", "")
        m = _RXC.search(text)
        if m:
            rows, cols = int(m.group(1)), int(m.group(2))
            subject = self.shape_subject(rows, cols)
            if self.figure_shape:  # the figure the prose before it speaks of
                self.sink.add("figure-of", self.figure_shape, subject, self.sink.at(c.line, 1, text, m.start()), text)
            self.figure_shape = subject
            self.sink.add("matrix-ref", subject, (rows, cols), self.sink.at(c.line, 1, text, m.start()), text)
            bm = re.search(r"with\s+(\d+)[- ]bit\s+elements", text)
            if bm:
                self.sink.add("figure-bits", subject, frozenset({int(bm.group(1))}),
                              self.sink.at(c.line, 1, text, bm.start(1)), text)
            dm = re.search(r"containing\s+([\d/-]+bit)\s+data", text)
            if dm:
                self.sink.add("data-bits", subject, frozenset(int(x) for x in re.findall(r"\d+", dm.group(1))),
                              self.sink.at(c.line, 1, text, dm.start(1)), text)

    # -- prose
    def text(self, b: Text) -> None:
        t = b.text.replace("\\", "")
        self._bits_prose(b, t)
        self._nums(b, t)
        self._registers_prose(b, t)
        self._addresses(b, t)
        self._groups(b, t)
        self._per_shape(b, t)
        self._trans(b, t)
        self._movmatrix(b, t)

    def _here(self, b: Text, t: str, kind: str, subject: str, value: object, offset: int, unread: str = "") -> None:
        self.sink.add(kind, subject, value, self.sink.at(b.line, b.col, b.text, offset), b.text, unread)

    def _bits_prose(self, b: Text, t: str) -> None:
        m = re.search(r"element\s+holds\s+((?:\d+-bit(?:\s+or\s+)?)+)\s+data", t)
        if m:
            self._here(b, t, "element-bits", self.instr, frozenset(int(x) for x in re.findall(r"(\d+)-bit", m.group(1))),
                       m.start(1))
        sm = re.search(r"\.(m\d+n\d+)\s+shape is valid only for\s+\.(\w+)\s+type", t)
        if sm:
            self._here(b, t, "shape-types", f"{self.instr}.{sm.group(1)}", frozenset({sm.group(2)}), sm.start(2))
        for fm in re.finditer(r"For\s+\.(b\w+)\s+format source data is\s+(\d+)\s+unsigned\s+(\d+)-bit elements\s+with\s+(\d+)"
                              r"\s+bits padding", t):
            fmt = fm.group(1)
            self._here(b, t, "src-format", fmt, fmt, fm.start(1))
            self._here(b, t, "src-count", fmt, int(fm.group(2)), fm.start(2))
            self._here(b, t, "src-bits", fmt, int(fm.group(3)), fm.start(3))
            self._here(b, t, "src-padding", fmt, int(fm.group(4)), fm.start(4))

    def _nums(self, b: Text, t: str) -> None:
        m = re.search(r"The values\s+((?:\.x\d+(?:,\s*|\s+and\s+)?)+)\s+for\s+\.num\s+indicate\s+(.*?)\s+matri", t)
        if m:
            xs = [int(x) for x in re.findall(r"\.x(\d+)", m.group(1))]
            words = [(w.group(0), w.start()) for w in re.finditer(NUMBER, m.group(2))]
            for k, x in enumerate(xs):
                if k < len(words):
                    self._here(b, t, "num-matrices", self.instr, (x, number(words[k][0])), m.start(2) + words[k][1])
                else:
                    self._here(b, t, "num-matrices", self.instr, None, m.start(2), "fewer counts than .num values")
        om = re.search(r"When\s+\.shape\s+is\s+\.(m\d+n\d+),\s+only\s+((?:\.x\d+(?:\s+and\s+|,\s*)?)+)\s+are valid", t)
        if om:
            self._here(b, t, "shape-nums", f"{self.instr}.{om.group(1)}",
                       frozenset(int(x) for x in re.findall(r"\.x(\d+)", om.group(2))), om.start(2))

    def _registers_prose(self, b: Text, t: str) -> None:
        m = re.search(r"consisting of\s+([\d,\sor]+?)\s+(\d+)-bit\s+registers\s+as per the value of\s+\.num", t)
        if m:
            counts = [int(x) for x in re.findall(r"\d+", m.group(1))]
            self._here(b, t, "registers-per-num", self.instr, tuple(counts), m.start(1))
            self._here(b, t, "register-bits", self.instr, int(m.group(2)), m.start(2))

    def _addresses(self, b: Text, t: str) -> None:
        m = re.search(r"The\s+(\w+)\s+addresses\s+required\s+for each matrix are provided by\s+(\w+)\s+threads", t)
        if m:
            for k, kind in ((1, "addresses-per-matrix"), (2, "address-threads-per-matrix")):
                n = number(m.group(k))
                self._here(b, t, kind, self.instr, n, m.start(k), "" if n is not None else f"{m.group(k)!r} is no number")
        for am in re.finditer(r"addr(\d+)\s*[–-]\s*addr(\d+)\s+correspond to the rows of the\s+(\w+)\s+matrix", t):
            ordinal = _ORDINALS.get(am.group(3))
            self._here(b, t, "address-range", self.instr,
                       (ordinal, int(am.group(1)), int(am.group(2))) if ordinal else None,
                       am.start(1), "" if ordinal else f"{am.group(3)!r} is no ordinal")

    def _groups(self, b: Text, t: str) -> None:
        """A group of G threads and the row or column it holds; a thread's fragment of a row; thread T the F-th."""
        rm = re.search(r"When\s+(?:reading|storing)\s+(\d+)x(\d+)\s+matrices,\s+a group of\s+(\w+)\s+consecutive\s+threads\s+"
                       r"(?:loads|stores)\s+(\d+)\s+bytes", t)
        if rm:
            subject = self.shape_subject(int(rm.group(1)), int(rm.group(2)))
            self.figure_shape = subject
            self._here(b, t, "matrix-ref", subject, (int(rm.group(1)), int(rm.group(2))), rm.start(1))
            n = number(rm.group(3))
            self._here(b, t, "row-threads", subject, (n, "row"), rm.start(3), "" if n else f"{rm.group(3)!r} is no number")
            self._here(b, t, "row-bytes", subject, int(rm.group(4)), rm.start(4))
        subject = self.figure_shape or self._first_shape()
        who = "input" if self.instr == "movmatrix" else ""
        for fm in re.finditer(r"Each thread in a warp\s+(?:loads|stores|holds)\s+(?:a\s+)?fragments?\s+of\s+a\s+(\w+)(?:\s+of the "
                              r"(input|result) matrix)?,\s+with\s+thread\s+(\d+)\s+(?:receiving|storing|holding)\s+the\s+(\w+)\s+"
                              r"fragment(?:\s+(?:in|from)\s+(?:its\s+)?register\s+(\w+))?", t):
            which = self._movmatrix_subject(fm.group(2) or who, fm.group(5))
            subj = which or subject
            self._here(b, t, "thread-cells", subj, (fm.group(1), 1, 0), fm.start(1))
            k = _ORDINALS.get(fm.group(4))
            self._here(b, t, "first-fragment", subj, (int(fm.group(3)), k) if k else None, fm.start(3),
                       "" if k else f"{fm.group(4)!r} is no ordinal")
        for gm in re.finditer(r"A group of\s+(\w+)\s+(?:(\w+)\s+(?:and aligned\s+)?)?threads\s+(?:loads|stores|holds)\s+an "
                              r"entire\s+(\w+)(?:\s+of the (input|result))?", t):
            which = self._movmatrix_subject(gm.group(4) or "", "")
            self._group(b, t, which or subject, gm.group(1), gm.group(2), gm.group(3), gm.start(1), gm.start(3))
        for gm in re.finditer(r"An entire\s+(\w+)\s+of the matrix can be loaded by a group of\s+(\w+)\s+(\w+)\s+and"
                              r"\s+aligned\s+threads", t):
            self._group(b, t, subject, gm.group(2), gm.group(3), gm.group(1), gm.start(2), gm.start(1))
        for cm in re.finditer(r"Each thread in a warp\s+loads\s+(\d+)\s+(\w+)\s+(columns|rows)(?:\s+across\s+(\d+)\s+(\w+))?",
                              t):
            across = int(cm.group(4)) if cm.group(4) else 1
            unit = cm.group(5) or ("rows" if cm.group(3) == "columns" else "columns")
            unread = ("" if cm.group(2) == "consecutive" else f"{cm.group(2)!r}: the cells are said to be consecutive") or (
                "" if {cm.group(3), unit} == {"columns", "rows"} else f"{cm.group(3)} across {unit}")
            value = ("row" if cm.group(3) == "columns" else "column", across, int(cm.group(1)))
            for k in (1, 2, 3, 4, 5):
                if cm.group(k):
                    self._here(b, t, "thread-cells", subject, value, cm.start(k), unread)
        for nm in re.finditer(r"When\s+\.num\s*=\s*\.x(\d+),\s+(?:the\s+)?elements of the\s+(\w+)(?:\s+and\s+(\w+))?\s+"
                              r"matri(?:x|ces)\s+are\s+(?:loaded|stored|storedd)\s+(?:in|from)\s+the\s+(\w+)\s+"
                              r"(?:destination|source)\s+registers?", t, re.I):
            num = int(nm.group(1))
            reg = nm.group(4)
            for g in (2, 3):
                if nm.group(g) is None:
                    continue
                k = _ORDINALS.get(nm.group(g))
                r = {"next": 2, "subsequent": k}.get(reg, _ORDINALS.get(reg))
                for at in (nm.start(g), nm.start(1), nm.start(4)):
                    self._here(b, t, "register-matrix", subject, (num, k, r) if k and r else None, at,
                               "" if k and r else "the matrix or the register does not read")

    def _group(self, b: Text, t: str, subject: str, count: str, adjective: str | None, line: str, at: int,
               line_at: int) -> None:
        """"A group of N consecutive threads ... an entire row": N, the threads consecutive, a row or a column."""
        n = number(count)
        unread = "" if n else f"{count!r} is no number"
        if adjective not in (None, "consecutive"):
            unread = unread or f"{adjective!r}: the threads of a group are said to be consecutive"
        if line not in ("row", "column"):
            unread = unread or f"{line!r} is neither a row nor a column"
        self._here(b, t, "row-threads", subject, (n, line), at, unread)
        self._here(b, t, "row-threads", subject, (n, line), line_at, unread)

    def _first_shape(self) -> str:
        return f"{self.instr}.{next(iter(self.shape_of.values()))}" if self.shape_of else self.instr

    def _movmatrix_subject(self, which: str, register: str | None) -> str:
        if self.instr != "movmatrix":
            return ""
        if register in ("a", "d"):
            return f"movmatrix.m8n8.{'A' if register == 'a' else 'D'}"
        return f"movmatrix.m8n8.{'A' if which == 'input' else 'D'}" if which else ""

    def _per_shape(self, b: Text, t: str) -> None:
        m = re.search(r"For\s+matrix\s+shape\s+(\d+)x(\d+),\s+(\w+)\s+destination\s+registers?\s+(.*?)\s+of\s+type\s+\.(\w+)"
                      r"\s+must\s+be\s+specified.*?(\w+)\s+(\d+)-bit\s+elements\s+(?:are\s+)?loaded", t)
        if m:
            subject = self.shape_subject(int(m.group(1)), int(m.group(2)))
            self.figure_shape = subject
            self._here(b, t, "matrix-ref", subject, (int(m.group(1)), int(m.group(2))), m.start(1))
            n = number(m.group(3))
            self._here(b, t, "registers-per-matrix", subject, n, m.start(3), "" if n else f"{m.group(3)!r} is no number")
            for k, rm in enumerate(re.finditer(r"\br(\d+)\b", m.group(4))):
                self._here(b, t, "register-name", subject, (k, int(rm.group(1))), m.start(4) + rm.start(1))
            names = re.findall(r"\br(\d+)\b", m.group(4))
            self._here(b, t, "registers-per-matrix", subject, len(names), m.start(4), "" if names else "no register named")
            self._here(b, t, "register-type", subject, m.group(5), m.start(5))
            e = number(m.group(6))
            self._here(b, t, "elements-per-register", subject, e, m.start(6), "" if e else f"{m.group(6)!r} is no number")
            self._here(b, t, "container-bits", subject, int(m.group(7)), m.start(7))
            pm = re.search(r"For\s+(\d+)-bit\s+or\s+(\d+)-bit\s+data,\s+(\d+)-bit\s+element\s+will\s+have\s+(\d+)\s+bits\s+or\s+(\d+)"
                           r"\s+bits\s+of\s+padding", t)
            if pm:
                self._here(b, t, "container-bits", subject, int(pm.group(3)), pm.start(3))
                for data, pad in ((1, 4), (2, 5)):
                    self._here(b, t, "padding", subject, (int(pm.group(data)), int(pm.group(3)), int(pm.group(pad))),
                               pm.start(pad))
                    self._here(b, t, "padding", subject, (int(pm.group(data)), int(pm.group(3)), int(pm.group(pad))),
                               pm.start(data))
        sm = re.search(r"For\s+(\d+)x(\d+)\s+matrix\s+shape,\s+each\s+of\s+the\s+(\d+)\s+threads\s+in\s+the\s+warp\s+provides\s+(\w+)"
                       r"\s+elements\s+of\s+data\s+per\s+matrix", t)
        if sm:
            subject = self.shape_subject(int(sm.group(1)), int(sm.group(2)))
            self.figure_shape = subject
            self._here(b, t, "matrix-ref", subject, (int(sm.group(1)), int(sm.group(2))), sm.start(1))
            self._here(b, t, "warp-threads", subject, int(sm.group(3)), sm.start(3))
            n = number(sm.group(4))
            self._here(b, t, "thread-elements", subject, n, sm.start(4), "" if n else f"{sm.group(4)!r} is no number")
        em = re.search(r"is of type\s+\.(\w+)\s+and contains\s+(\w+)\s+(\d+)\s+bit\s+elements\s+((?:e\d+,?\s*)+)\s*with\s+(e\d+)\s+and"
                       r"\s+(e\d+)\s+containing\s+the\s+(\w+)\s+and\s+(\w+)", t)
        if em:
            subject = self.figure_shape or self._first_shape()
            self._here(b, t, "register-type", subject, em.group(1), em.start(1))
            n = number(em.group(2))
            self._here(b, t, "elements-per-register", subject, n, em.start(2), "" if n else f"{em.group(2)!r} is no number")
            self._here(b, t, "container-bits", subject, int(em.group(3)), em.start(3))
            for k, nm in enumerate(re.finditer(r"e(\d+)", em.group(4))):
                self._here(b, t, "byte-name", subject, (k, int(nm.group(1))), em.start(4) + nm.start(1))
            self._here(b, t, "byte-order", subject, ((em.group(5), em.group(7)), (em.group(6), em.group(8))), em.start(5))
            self._here(b, t, "byte-order", subject, ((em.group(5), em.group(7)), (em.group(6), em.group(8))), em.start(7))

    def _trans(self, b: Text, t: str) -> None:
        m = re.search(r"\.trans\s+indicates that the matrix is\s+(?:loaded|stored)\s+in\s+([\w-]+)\s+format", t)
        if m:
            self._here(b, t, "trans-means", self.instr, m.group(1), m.start(1))
        mm = re.search(r"for\s+(\d+)x(\d+)\s+matrices,\s+\.(\w+)\s+is\s+(\w+)", t)
        if mm:
            subject = self.shape_subject(int(mm.group(1)), int(mm.group(2)))
            self._here(b, t, "matrix-ref", subject, (int(mm.group(1)), int(mm.group(2))), mm.start(1))
            unread = "" if mm.group(3) == "trans" else f".{mm.group(3)} is not the qualifier .trans"
            self._here(b, t, "syntax-trans", subject, mm.group(4), mm.start(4), unread)
            self._here(b, t, "syntax-trans", subject, mm.group(4), mm.start(3), unread)

    def _movmatrix(self, b: Text, t: str) -> None:
        if self.instr != "movmatrix":
            return
        m = re.search(r"Move a\s+([\w-]+)\s+matrix", t)
        if m:
            self._here(b, t, "thread-cells", "movmatrix.m8n8.A", (m.group(1).split("-")[0], 1, 0), m.start(1))
        om = re.search(r"Operands\s+a\s+and\s+d\s+are\s+(\d+)-bit\s+registers", t)
        if om:
            self._here(b, t, "register-bits", self.instr, int(om.group(1)), om.start(1))
        tm = re.search(r"The\s+(\w+)\s+qualifier\s+\.(\w+)\s+indicates that the resulting\s+matrix", t)
        if tm:
            unread = "" if tm.group(2) == "trans" else f".{tm.group(2)} is not the qualifier .trans"
            self._here(b, t, "syntax-trans", "movmatrix.m8n8", tm.group(1), tm.start(1), unread)
            self._here(b, t, "syntax-trans", "movmatrix.m8n8", tm.group(1), tm.start(2), unread)

    # -- examples
    def examples(self, code: Code) -> None:
        comment: CodeLine | None = None
        decls: list[tuple[CodeLine, str, str, int]] = []  # (line, type, name, count)
        for cl in code.lines:
            t = cl.text
            if t.strip().startswith("//"):
                comment, decls = cl, []
                continue
            rm = re.match(r"\s*\.reg\s+\.(\w+)\s+(.*?);?\s*$", t)
            if rm:
                for dm in re.finditer(r"([A-Za-z_]\w*)\s*(?:<(\d+)>)?", rm.group(2)):
                    decls.append((cl, rm.group(1), dm.group(1), int(dm.group(2)) if dm.group(2) else 1))
                continue
            im = re.search(rf"\b{self.instr}\.sync\.aligned((?:\.[\w:]+)+)", t)
            if im:
                self._example(cl, im, comment, decls)
                comment, decls = None, []

    def _example(self, cl: CodeLine, im: re.Match[str], comment: CodeLine | None,
                 decls: list[tuple[CodeLine, str, str, int]]) -> None:
        quals = im.group(1).split(".")[1:]
        odd = [q for q in quals if not re.fullmatch(r"m\d+n\d+|x\d+|trans|shared(::cta)?|b\d+(x16(_p\d+)?)?", q)]
        shape = next((q for q in quals if re.fullmatch(r"m\d+n\d+", q)), "")
        num = next((int(q[1:]) for q in quals if re.fullmatch(r"x\d+", q)), 1 if self.instr == "movmatrix" else None)
        trans = "trans" in quals
        types = tuple(q for q in quals if re.fullmatch(r"b\d+(?:x16(?:_p\d+)?)?", q))
        subject = f"{self.instr}.example:{im.group(1).lstrip('.')}"
        value = (shape, num, trans, types)
        self.sink.add("example", subject, value if shape and types and not odd else None, (cl.line, cl.col + im.start(1)),
                      cl.text, f"unknown qualifier .{odd[0]}" if odd else "" if shape and types else
                      "the instruction names no shape or type")
        rest = cl.text[im.end():]
        used: list[str] = []
        bm = re.search(r"\{([^}]*)\}", rest)
        if bm:
            used = [x.strip() for x in bm.group(1).split(",") if x.strip()]
            off = im.end() + bm.start(1)
        elif self.instr == "movmatrix":
            mm = re.match(r"\s+(\w+)\s*,\s*(\w+)", rest)
            used = [mm.group(1), mm.group(2)] if mm else []
            off = im.end()
        else:
            off = im.end()
        self.sink.add("example-registers", subject, len(used), (cl.line, cl.col + off), cl.text)
        for dl, typ, name, count in decls:
            where = (dl.line, dl.col + max(dl.text.find(name), 0))
            if name in ("addr", "p"):
                self.sink.add("example-address-bits", subject, int(typ[1:]) if typ[1:].isdigit() else None, where, dl.text,
                              "" if typ[1:].isdigit() else "the address register's type does not read")
                continue
            mine = [u for u in used if u == name or re.fullmatch(rf"{re.escape(name)}\d+", u)]
            self.sink.add("example-declared", subject, (name, count, tuple(mine)), where, dl.text)
            self.sink.add("example-register-type", subject, typ, (dl.line, dl.col + max(dl.text.find("." + typ), 0)), dl.text)
        if comment is not None:
            self._comment(comment, subject)

    def _comment(self, cl: CodeLine, subject: str) -> None:
        t = cl.text
        m = re.search(r"(?:Load|Store)\s+(" + NUMBER + r"|a single)\s+(\d+)x(\d+)\s+matri(?:x|ces)", t)
        if m:
            n = number(m.group(1))
            self.sink.add("example-count", subject, n, (cl.line, cl.col + m.start(1)), t,
                          "" if n else f"{m.group(1)!r} is no number")
            self.sink.add("example-shape", subject, (int(m.group(2)), int(m.group(3))), (cl.line, cl.col + m.start(2)), t)
        bm = re.search(r"of\s+(\d+)-bit\s+elements", t)
        if bm:
            self.sink.add("example-bits", subject, int(bm.group(1)), (cl.line, cl.col + bm.start(1)), t)
        if re.search(r"column-major|transpose them", t) or re.search(r"row-major", t):
            tm = re.search(r"(column-major|row-major|transpose them)", t)
            assert tm is not None
            self.sink.add("example-trans", subject, tm.group(1) != "row-major", (cl.line, cl.col + tm.start()), t)
        am = re.search(r"using\s+(\d+)-bit\s+addressing", t)
        if am:
            self.sink.add("example-address-bits", subject, int(am.group(1)), (cl.line, cl.col + am.start(1)), t)


__all__ = ["read_matrix_section"]
