"""Textual errata of the doc pages beyond mma: wmma (9.7.14.4), ldmatrix / stmatrix / movmatrix
(9.7.14.5.15-17), wgmma and sparse wgmma (9.7.15), tcgen05.ld/st and block scaling (9.7.16).

These pages state their layouts only as figures (wgmma, tcgen05, ldmatrix) or not at all (wmma), so what
can be ingested is what they *count*: registers per thread, bits per lane, metadata bits, valid shapes.
Every finding here is computed from the page's own statements, one against another (a register count
against the matrix it must hold, a fragment table against the data-per-lane sentence, an example
against the declarations above it, a syntax list against the shape table), never from a list of known
errata: a page that is fixed produces no finding.  Findings are ``IngestFinding`` (page:line:column,
the doc's words, a witness), the form ``ingest`` reports for the mma pages; ``ptx-verify check PAGES``
shows them with the other ``doc_findings`` once ``ingest`` calls :func:`catalog_findings`.

The kinds:

* ``register-count``        a fragment's registers x elements per register x threads cannot hold its
                            matrix (wmma .f64 accumulator), or contradict the data the page says a warp
                            moves (tcgen05 .16x128b/.16x256b, ldmatrix .m16n16);
* ``metadata-bits``         a sparse metadata register said to hold more bits than its 32 (sparse wgmma);
* ``shape-list``            an instruction's ``.shape`` list that differs from the Matrix Shape table;
* ``example-declaration``   a doc example using a register its ``.reg`` lines do not declare, or a ``.reg``
                            line that does not parse (missing ``;`` or ``,``);
* ``example-type``          an example whose register type or element size contradicts its instruction;
* ``example-qualifier``     an example missing a qualifier the text calls mandatory (``.trans``, ``.aligned``);
* ``fragment-wording``      movmatrix's result described so that d would hold a's own elements;
* ``figure-caption``        captions on the scale-factor-B page naming ``SFA_ID``;
* ``address-count``         ldmatrix's "eight addresses for each matrix" for a matrix with 16 rows;
* ``self-reference``        a "documented in [...]" link to the section it stands in;
* ``anchor``                a tcgen05 shape section whose anchor spells another shape.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

from .docpage import read_page

from .page_model import Code, Page, PageError, Section, Table, Text
from .known import Found, SectionIndex, squeeze
from .sections import IngestFinding, NUM_WORDS, freeze

# wmma shapes per multiplicand type (9.7.14.1 Matrix Shape); a fragment row without a shape column applies
# to each of them
_WMMA_SHAPES = {"f16": ("m16n16k16", "m8n32k16", "m32n8k16"), "bf16": ("m16n16k16", "m8n32k16", "m32n8k16"),
                "f32": ("m16n16k16", "m8n32k16", "m32n8k16", "m16n16k8"), "s32": ("m16n16k16", "m8n32k16", "m32n8k16")}
_REG_ELEMS = {"f16x2": 2}


def _num(word: str) -> int | None:
    w = word.lower().strip()
    if w.isdigit():
        return int(w)
    return NUM_WORDS.get(w) if w not in ("a",) else None


def _finding(kind: str, page: str, line: int, col: int, words: str, message: str, witness: dict,
             section: str, operand: str = "", types: Sequence[str] = ()) -> IngestFinding:
    return IngestFinding(kind, "warning", page, line, col, words[:120], message,
                         tuple((k, freeze(v)) for k, v in witness.items()), section, operand, tuple(types))


def _col(page: Page, line: int, words: str) -> int:
    text = page.lines[line - 1] if 0 < line <= len(page.lines) else ""
    k = text.find(words[:20]) if words else -1
    return k + 1 if k >= 0 else 1


# ----------------------------------------------------------------------------- wmma fragment counts

def _dims(shape: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
    assert m is not None
    return int(m[1]), int(m[2]), int(m[3])


def _wmma_counts(sec: Section, page: Page) -> list[IngestFinding]:
    """Each row of the fragment tables: registers x elements per register x 32 must be a whole, positive
    number of copies of its matrix (the layout is unspecified, so copies are allowed)."""
    out = []
    matrix_default = ""
    for block in sec.blocks:
        if isinstance(block, Text):
            m = re.search(r"\((A or B|C or D)\)", block.text)
            if m:
                matrix_default = m.group(1)
            continue
        if not isinstance(block, Table):
            continue
        typ = shape = matrix = frag = ""
        for row in block.rows:
            cells = [c.text.strip() for c in row.cells]
            for c in cells:
                if re.fullmatch(r"\.m\d+n\d+k\d+", c):
                    shape = c[1:]
                elif re.fullmatch(r"\.[a-z0-9]+( or \.[a-z0-9]+)?", c):
                    typ = c
                elif c in ("A", "B", "A or B", "C or D"):
                    matrix = c
                elif "vector expression" in c:
                    frag = c
            if not frag:
                continue
            mat = matrix or matrix_default
            rm = re.search(r"(\w+) \.(b32|f16x2|f32|s32|f64) register", frag)
            if rm is None or _num(rm.group(1)) is None:
                continue
            regs, rtype = _num(rm.group(1)), rm.group(2)
            em = re.search(r"containing (\w+) elements", frag)
            per = (_num(em.group(1)) if em else None) or _REG_ELEMS.get(rtype, 1)
            base = typ.split(" or ")[0].lstrip(".")
            shapes = (shape,) if shape else _WMMA_SHAPES.get(base, ())
            for shp in shapes:
                mm, nn, kk = _dims(shp)
                for op in ("A", "B") if mat == "A or B" else ("C",) if mat == "C or D" else (mat,):
                    rows, cols = {"A": (mm, kk), "B": (kk, nn)}.get(op, (mm, nn))
                    total = regs * per * 32  # type: ignore[operator]
                    if total % (rows * cols) == 0 and total >= rows * cols:
                        continue
                    words = frag
                    out.append(_finding(
                        "register-count", page.path, row.line, _col(page, row.line, words), words,
                        f"wmma .{shp} {typ} {op if mat != 'C or D' else 'C/D'}: {regs} x {per} element(s) x 32 threads "
                        f"= {total} values cannot hold the {rows} x {cols} matrix ({rows * cols}) a whole number of "
                        f"times", {"shape": shp, "registers": regs, "elements_per_register": per, "threads": 32,
                                   "total": total, "matrix": rows * cols}, sec.number, op, (base,)))
    return out


# ----------------------------------------------------------------------------- tcgen05 .num registers

_TC_SHAPE = re.compile(r"Matrix fragments for shape \.?(\d+)x(\d+)b(x2)?", re.I)


def _tcgen05_counts(sections: SectionIndex) -> list[IngestFinding]:
    """'A vector expression containing .num number of .b32 registers' against the page's own 'A warp ...
    will access L lanes ... (B * .num)-bits' (x2 shapes: two accesses): L x B x .num / (32 threads x 32 bits)
    registers per thread."""
    out = []
    for found in sections:
        sec, page, number = found.section, found.page, found.number
        m = _TC_SHAPE.search(sec.heading.title)
        if m is None:
            continue
        lanes_t = " ".join(b.text for b in sec.blocks if isinstance(b, Text))
        am = re.search(r"access (\d+) lanes.*?\((\d+) \\?\* \.num\)-bits", lanes_t)
        if am is None:
            continue
        lanes, bits = int(am.group(1)), int(am.group(2))
        accesses = 2 if m.group(3) else 1
        per_num = lanes * bits * accesses // (32 * 32)
        for block in sec.blocks:
            if not isinstance(block, Table):
                continue
            for row in block.rows:
                for cell in row.cells:
                    cm = re.search(r"containing \.?num number of \.b32 registers", cell.text)
                    if cm and per_num != 1:
                        shape = f"{m.group(1)}x{m.group(2)}b{m.group(3) or ''}"
                        out.append(_finding(
                            "register-count", page.path, row.line, _col(page, row.line, "A vector expression"),
                            cell.text, f"tcgen05 .{shape}: '.num number of .b32 registers', but a warp moving {lanes} "
                            f"lanes x ({bits} * .num) bits{' twice' if accesses == 2 else ''} holds {per_num} * .num "
                            f"registers of 32 bits per thread",
                            {"shape": shape, "stated": ".num", "lanes": lanes, "bits_per_lane": bits,
                             "registers_per_num": per_num}, number, "R", ("b32",)))
    return out


# ----------------------------------------------------------------------------- ldmatrix / stmatrix

def _ldst(sec: Section, page: Page) -> list[IngestFinding]:
    out = []
    texts = [b for b in sec.blocks if isinstance(b, Text)]
    instr = "ldmatrix" if "ldmatrix" in sec.heading.title else "stmatrix"
    # the general register count against each shape of the shape table
    gen = next((t for t in texts if re.search(r"consisting of 1, 2, or 4 32-bit\s+registers as per the value of \.num",
                                              t.text)), None)
    shapes: list[tuple[str, int, int, int]] = []
    for block in sec.blocks:
        if isinstance(block, Table) and block.header and block.header[0].strip() == ".shape":
            for row in block.rows:
                cells = [c.text.strip() for c in row.cells]
                if len(cells) >= 3 and re.fullmatch(r"\.m\d+n\d+", cells[0]):
                    dm = re.fullmatch(r"(\d+)x(\d+)", cells[1])
                    bm = re.findall(r"(\d+)-bit", cells[2])
                    if dm and bm:
                        shapes.append((cells[0], int(dm[1]), int(dm[2]), max(8, min(int(b) for b in bm))))
    if gen is not None:
        for shp, r, c, bits in shapes:
            per_matrix = r * c * bits // (32 * 32)
            if per_matrix != 1:
                out.append(_finding(
                    "register-count", page.path, gen.line, _col(page, gen.line, "consisting of"), gen.text,
                    f"{instr}: 'consisting of 1, 2, or 4 32-bit registers as per the value of .num', but one {r}x{c} "
                    f"matrix ({shp}, {bits}-bit containers) is {r * c * bits} bits = {per_matrix} registers per "
                    f"thread", {"shape": shp.lstrip("."), "registers_per_matrix": per_matrix}, sec.number, "R"))
    # 'The eight addresses required for each matrix' (each the start of a row) against each shape's rows
    addr = next((t for t in texts if re.search(r"The (\w+) addresses required\s+for each matrix", t.text)), None)
    if addr is not None:
        word = re.search(r"The (\w+) addresses", addr.text).group(1)  # type: ignore[union-attr]
        n = _num(word)
        for shp, r, c, bits in shapes:
            if n is not None and r != n:
                out.append(_finding(
                    "address-count", page.path, addr.line, _col(page, addr.line, "Consecutive"), addr.text,
                    f"{instr}: 'The {word} addresses required for each matrix', each the start of a row, but a {r}x{c} matrix "
                    f"({shp}) has {r} rows; the address table covers only 8-row matrices",
                    {"shape": shp.lstrip("."), "addresses": n, "rows": r}, sec.number, "R"))
    # '.trans is mandatory' for a shape, against the examples
    mand = [re.search(r"for (\d+)x(\d+) matrices, \.trans is mandatory", t.text) for t in texts]
    need = {f".m{m.group(1)}n{m.group(2)}" for m in mand if m}
    for code in (b for b in sec.blocks if isinstance(b, Code)):
        for cl in code.lines:
            im = re.search(rf"\b{instr}\.sync\.aligned(\.m\d+n\d+)\S*", cl.text)
            if im and im.group(1) in need and ".trans" not in im.group(0):
                out.append(_finding("example-qualifier", page.path, cl.line, cl.col + im.start(), cl.text.strip(),
                                    f"example {im.group(0)} lacks .trans, which the text makes mandatory for "
                                    f"{im.group(1)}", {"instruction": im.group(0), "missing": ".trans"}, sec.number))
        # '// Load ... of N-bit elements' against the type of the instruction that follows
        pending: tuple[int, int, str] | None = None
        for cl in code.lines:
            cm = re.search(r"//.*\bof (\d+)-bit elements", cl.text)
            if cm:
                pending = (int(cm.group(1)), cl.line, cl.text.strip())
                continue
            im = re.search(rf"\b{instr}\.\S+", cl.text)
            if im and pending is not None:
                src = re.search(r"\.b(\d+)x16_p\d+", im.group(0))
                typ = re.search(r"\.b(\d+)(?:x16)?\b(?!.*\.b\d)", im.group(0))
                loaded = int(src.group(1)) if src else int(typ.group(1)) if typ else None
                if loaded is not None and loaded != pending[0]:
                    out.append(_finding("example-type", page.path, pending[1], _col(page, pending[1], "//"), pending[2],
                                        f"the example's comment says {pending[0]}-bit elements, its instruction "
                                        f"{im.group(0)} loads {loaded}-bit ones",
                                        {"comment_bits": pending[0], "instruction_bits": loaded}, sec.number))
                pending = None
    return out


# ----------------------------------------------------------------------------- examples: declarations

_REG = re.compile(r"^\s*\.reg\s+\.([a-z0-9]+)\s+(.*)$")


def _syntax_aligned(sections: Iterable[Section]) -> set[str]:
    """The wmma instructions whose syntax has ``.aligned`` unbracketed (mandatory)."""
    out: set[str] = set()
    for sec in sections:
        for code in (b for b in sec.blocks if isinstance(b, Code)):
            for cl in code.lines:
                out.update(m.group(1) for m in re.finditer(r"\b(wmma\.(?:load|store|mma))[\w.]*?\.sync\.aligned\b",
                                                           cl.text))
    return out


def _examples(sec: Section, page: Page, syntax_aligned: set[str] = frozenset()) -> list[IngestFinding]:  # type: ignore[assignment]
    """Registers an example uses that its ``.reg`` lines do not declare (a vector ``x<8>`` declares x0..x7),
    ``.reg`` lines that ptxas cannot parse, ``.f64`` wmma fragments in registers of another type, and
    ``.aligned`` missing where the syntax has it unbracketed."""
    out = []
    for code in (b for b in sec.blocks if isinstance(b, Code)):
        vectors: dict[str, int] = {}
        scalars: set[str] = set()
        types: dict[str, str] = {}
        depth = 0
        statement = ""  # the mnemonic of the statement being read (until ';')
        typed = False  # the f64 finding is made once per statement
        bad: dict[str, tuple[int, int, str, list[str]]] = {}  # undeclared uses of one statement, per vector

        def flush(bad: dict[str, tuple[int, int, str, list[str]]] = bad, vectors: dict[str, int] = vectors) -> None:
            for owner, (line, col, words, used) in bad.items():
                n = vectors[owner]
                out.append(_finding(
                    "example-declaration", page.path, line, col, words,
                    f"the example uses {', '.join(used) if len(used) <= 4 else used[0] + ' .. ' + used[-1]} "
                    f"({len(used)} register{'s' if len(used) > 1 else ''}), but its .reg line declares {owner}<{n}> "
                    f"({owner}0..{owner}{n - 1})", {"used": used, "declared": f"{owner}<{n}>"}, sec.number))
            bad.clear()

        for cl in code.lines:
            text = cl.text.split("//", 1)[0]
            rm = _REG.match(text)
            if rm:
                body = rm.group(2).rstrip()
                if not body.endswith(";"):
                    out.append(_finding("example-declaration", page.path, cl.line, cl.col + len(text.rstrip()),
                                        cl.text.strip(), "a .reg declaration without its closing ';' (ptxas: "
                                        "parse error)", {"declaration": cl.text.strip()}, sec.number))
                decl = body.rstrip(";").strip()
                if re.search(r"(?:>|\w)\s+[A-Za-z_]", decl):
                    out.append(_finding("example-declaration", page.path, cl.line, cl.col, cl.text.strip(),
                                        "declarators of a .reg line not separated by ',' (ptxas: parse error)",
                                        {"declaration": cl.text.strip()}, sec.number))
                for name, n in re.findall(r"([A-Za-z_]\w*)\s*(?:<(\d+)>)?", decl):
                    if n:
                        vectors[name] = int(n)
                    else:
                        scalars.add(name)
                    types[name] = rm.group(1)
                continue
            im = re.search(r"\b(?:wmma|wgmma|ldmatrix|stmatrix|movmatrix|tcgen05)\.[\w.:]+", text)
            if im:
                statement, typed = im.group(0), False
            for m in re.finditer(r"[{}]|\b[A-Za-z_]\w*\b", text):
                tok = m.group()
                if tok == "{":
                    depth += 1
                    continue
                if tok == "}":
                    depth = max(0, depth - 1)
                    continue
                if depth == 0:
                    continue
                col = cl.col + m.start()
                owner = max((v for v in vectors if tok.startswith(v) and (tok[len(v):].isdigit() or tok == v)),
                            key=len, default=None)
                if tok not in scalars and owner is not None:
                    idx = tok[len(owner):]
                    if idx == "" or int(idx) >= vectors[owner]:
                        bad.setdefault(owner, (cl.line, col, cl.text.strip(), []))[3].append(tok)
                decl_type = types.get(tok if tok in scalars else owner or "")
                if (not typed and decl_type is not None and decl_type != "f64"
                        and re.match(r"wmma\.\S*\.f64\b", statement)):
                    typed = True
                    out.append(_finding("example-type", page.path, cl.line, col, cl.text.strip(),
                                        f"a .f64 wmma fragment in .{decl_type} registers ({tok} is declared "
                                        f".{decl_type}); the fragment table says .f64 registers",
                                        {"register": tok, "declared": decl_type, "instruction": statement}, sec.number))
            if ";" in text:
                statement = ""
                flush()
            for m in re.finditer(r"\b(wmma\.(?:load|store|mma))((?:\.\w+)*?)\.sync\b(?!\.aligned)", cl.text):
                if m.group(1) in syntax_aligned:
                    out.append(_finding("example-qualifier", page.path, cl.line, cl.col + m.start(), cl.text.strip(),
                                        f"example {m.group(0)}... lacks .aligned, which the syntax of "
                                        f"{m.group(1)} has unbracketed (mandatory)",
                                        {"instruction": m.group(1), "missing": ".aligned"}, sec.number))
        flush()
    return out


# ----------------------------------------------------------------------------- wgmma

def _shape_table(sec: Section) -> list[tuple[str, str, set[str], int]]:
    """Rows of the wgmma Matrix Shape table: (type words, sparsity, shapes, line); rows that continue the
    previous one (no shape cell) inherit its shapes."""
    out: list[tuple[str, str, set[str], int]] = []
    for block in sec.blocks:
        if not isinstance(block, Table):
            continue
        last: set[str] = set()
        pending: list[tuple[str, str, int]] = []
        for row in block.rows:
            cells = [c.text.strip() for c in row.cells]
            shapes = {s for c in cells for s in re.findall(r"\.(m64n\d+k\d+)", c)}
            words = " ".join(c for c in cells if not re.search(r"\.m64n", c))
            sparse = "Sparse" if "Sparse" in words else "Dense" if "Dense" in words else ""
            if shapes:
                for w, sp, ln in pending:  # rows merged into this one's shape cell
                    out.append((w, sp or sparse, set(shapes), ln))
                pending = []
                out.append((words, sparse, shapes, row.line))
                last = shapes
            else:
                pending.append((words, sparse, row.line))
        for w, sp, ln in pending:
            out.append((w, sp, set(last), ln))
    return out


def _wgmma_shape_section(sections: SectionIndex) -> Found | None:
    """wgmma's Matrix Shape section (9.7.15.2 in 9.0 and 9.1): the section titled so whose table lists the
    ``.m64nNkK`` shapes (the title is wmma's and tcgen05's too)."""
    for found in sections:
        if squeeze(found.section.heading.title) == "matrixshape" and any(
                isinstance(b, Table) and any(re.search(r"\.m64n\d+k\d+", c.text) for r in b.rows for c in r.cells)
                for b in found.section.blocks):
            return found
    return None


def _wgmma_shapes(sections: SectionIndex) -> list[IngestFinding]:
    """The ``.shape`` list of each wgmma.mma_async syntax block against wgmma's Matrix Shape table."""
    found = _wgmma_shape_section(sections)
    if found is None:
        return []
    rows = _shape_table(found.section)
    where = f"the Matrix Shape table ({found.number})"
    out = []
    for f in sections:
        sec, page, number = f.section, f.page, f.number
        if "wgmma.mma_async" not in sec.heading.title or "Instruction" not in sec.heading.title:
            continue
        sparse = ".sp" in sec.heading.title
        for code in (b for b in sec.blocks if isinstance(b, Code)):
            text = code.text
            if ".shape" not in text:
                continue
            start = next((cl for cl in code.lines if re.search(r"\.shape\s*=", cl.text)), None)
            listed = set(re.findall(r"\.(m64n\d+k\d+)", text[text.find(".shape"):]))
            if not listed or start is None:
                continue
            ks = {re.sub(r"m64n\d+", "", s) for s in listed}
            kind = "int" if ".s32" in text else "b1" if ".b1" in text else "float"
            want: set[str] = set()
            for words, sp, shapes, _ln in rows:
                if (sp == "Sparse") != sparse:
                    continue
                rk = "int" if "Integer" in words else "b1" if "Single-bit" in words else "float"
                if rk == kind and {re.sub(r"m64n\d+", "", s) for s in shapes} & ks:
                    want |= shapes
            missing = sorted(want - listed, key=lambda s: int(re.search(r"n(\d+)", s).group(1)))  # type: ignore[union-attr]
            if want and missing:
                out.append(_finding("shape-list", page.path, start.line, start.col, start.text.strip(),
                                    f"the {kind} {'sparse ' if sparse else ''}wgmma .shape list omits "
                                    f"{', '.join('.' + s for s in missing)}, which {where} lists",
                                    {"missing": missing, "listed": len(listed), "table": len(want)}, number))
    return out


def _metadata_bits(sec: Section, page: Page) -> list[IngestFinding]:
    out = []
    for block in sec.blocks:
        if not isinstance(block, Text):
            continue
        m = re.search(r"a \.b32 register containing (\w+) (\d+)-bit vectors", block.text)
        n = _num(m.group(1)) if m is not None else None
        if m is None or n is None:
            continue
        bits = int(m.group(2))
        if n * bits > 32:
            out.append(_finding("metadata-bits", page.path, block.line, _col(page, block.line, "Metadata"), block.text,
                                f"a .b32 metadata register cannot hold {n} {bits}-bit vectors ({n * bits} bits)",
                                {"vectors": n, "bits": bits, "register_bits": 32}, sec.number, "E"))
    return out


def _self_reference(sec: Section, page: Page) -> list[IngestFinding]:
    """A 'documented in [...]' link that points at the section it stands in."""
    out = []
    own = sec.heading.anchor
    for block in sec.blocks:
        if isinstance(block, Text) and own and "documented in" in block.text and any(
                lk.endswith("#" + own) or lk == "#" + own for lk in block.links):
            out.append(_finding("self-reference", page.path, block.line, _col(page, block.line, block.text.split()[0]),
                                block.text, f"'{block.text[:60]}...' links to this section itself (#{own}), not to the "
                                "layout it names", {"anchor": own}, sec.number))
    return out


def _tcgen05_anchors(sections: SectionIndex) -> list[IngestFinding]:
    """The anchor of each 'Matrix fragments for shape .LxBb' section spells its shape (3232b, 16128b, ...)."""
    out = []
    for found in sections:
        sec, page, number = found.section, found.page, found.number
        m = _TC_SHAPE.search(sec.heading.title)
        anchor = sec.heading.anchor
        if m is None or not anchor.startswith("tcgen05-matrix-fragments-shape-"):
            continue
        want = f"{m.group(1)}{m.group(2)}b{'2' if m.group(3) else ''}"
        got = anchor[len("tcgen05-matrix-fragments-shape-"):]
        if got != want:
            out.append(_finding("anchor", page.path, sec.heading.line, 1, sec.heading.title,
                                f"the anchor of the .{m.group(1)}x{m.group(2)}b section is '{anchor}' (shape '{got}'), "
                                f"where the other sections' pattern gives '{want}'", {"anchor": anchor, "expected": want},
                                number))
    return out


# ----------------------------------------------------------------------------- movmatrix, scale-factor pages

def _movmatrix(sec: Section, page: Page) -> list[IngestFinding]:
    texts = [b for b in sec.blocks if isinstance(b, Text)]
    src = next((t for t in texts if re.search(r"fragment of a row of the input matrix", t.text)), None)
    dst = next((t for t in texts if re.search(r"fragment of a column of the result matrix", t.text)), None)
    trans = any("transpose" in t.text for t in texts)
    if src is None or dst is None or not trans:
        return []
    return [_finding("fragment-wording", page.path, dst.line, _col(page, dst.line, "Each thread"), dst.text,
                     "a holds row g of the input A (A[g][2q+e]); if d held column g of the result R = A^T, d would hold "
                     "R[2q+e][g] = A[g][2q+e]: a's own elements, no transposition. The result fragment must be a row of "
                     "R (a column of the input)", {"source": "row of the input", "result": "column of the result"},
                     sec.number, "D")]


def _captions(sec: Section, page: Page) -> list[IngestFinding]:
    from .page_model import Caption
    wrong = [b for b in sec.blocks if isinstance(b, Caption) and "SFA_ID" in b.text.replace("\\", "")]
    if not wrong:
        return []
    first = wrong[0]
    return [_finding("figure-caption", page.path, first.line, 1, first.text,
                     f"{len(wrong)} figure caption(s) on the scale factor B page name SFA_ID (the text says SFB_ID)",
                     {"captions": [c.number for c in wrong]}, sec.number)]


# ----------------------------------------------------------------------------- driver

# the known sections (``verify.catalog.known``: found by anchor or title, never by number) and their checks;
# ``+``: the section and every section under it
_SECTION_CHECKS = (
    ("wmma.fragments", _wmma_counts),
    ("wmma.load", _examples), ("wmma.store", _examples), ("wmma.mma", _examples),
    ("ldmatrix", _ldst), ("stmatrix", _ldst),
    ("movmatrix", _movmatrix),
    ("wgmma.mma_async", _examples), ("wgmma.mma_async.sp", _examples),
    ("wgmma.sp.fragments", _metadata_bits), ("wgmma.sp.fragments", _self_reference),
    ("tcgen05.scale_b+", _captions), ("tcgen05.scale_b.layouts", _captions),
)


def catalog_findings(paths: Sequence[str | Path]) -> list[IngestFinding]:
    """The textual errata of the wmma / ldmatrix / stmatrix / movmatrix / wgmma / tcgen05 sections among
    ``paths`` (doc pages; other pages and sections are ignored), sorted by page, line, column."""
    pages = []
    for p in paths:
        try:
            pages.append(read_page(p))
        except PageError:
            continue  # ``ingest`` reports unreadable pages itself
    sections = SectionIndex(pages)
    aligned = _syntax_aligned(f.section for role in ("wmma.load", "wmma.store", "wmma.mma") for f in sections.all(role))
    out: list[IngestFinding] = []
    done: set[tuple[str, str]] = set()
    for role, fn in _SECTION_CHECKS:
        whole = role.endswith("+")
        for found in sections.all(role.rstrip("+")):
            for f in [found, *(sections.under(found) if whole else ())]:
                if (f.number, fn.__name__) in done:
                    continue
                done.add((f.number, fn.__name__))
                out.extend(fn(f.section, f.page, aligned) if fn is _examples else fn(f.section, f.page))
    out.extend(_tcgen05_counts(sections))
    out.extend(_wgmma_shapes(sections))
    out.extend(_tcgen05_anchors(sections))
    seen = set()
    uniq = []
    for f in sorted(out, key=lambda f: (f.page, f.line, f.column, f.kind, f.message)):
        key = (f.page, f.line, f.kind, f.message)
        if key not in seen:
            seen.add(key)
            uniq.append(f)
    return uniq


__all__ = ["catalog_findings"]
