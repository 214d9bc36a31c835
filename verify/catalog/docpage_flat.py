"""The flattened-text reader of ``verify.catalog.docpage``: tables as ``|``-terminated lines, formulas running into
the next heading."""
from __future__ import annotations


import re

from .page_model import (CAPTION, HEADING_NUM, SEP_ROW, Block, Caption, Cell, Code, CodeLine, Heading, Row, Table, Text)



# ----------------------------------------------------------------------------- flattened text

_TYPE_WORD = r"\.(?:f16|bf16|tf32|f32|f64|s8|u8|s4|u4|b1|s32|e4m3|e5m2|e3m2|e2m3|e2m1)"
_OPERAND_HEAD = r"(?:Multiplicand [AB]\s*:|Accumulators\s*(?:\(C or D\)|C \(or D\))\s*:|Metadata\s*:)"
# structural markers that the flattening glued onto the end of the previous line
_GLUE = [
    re.compile(r"(?<=\S)(" + _OPERAND_HEAD + r".*)$"),
    re.compile(r"(?<=[\w)\]}])(" + _TYPE_WORD + r"(?:\s*(?:and|or|/|,)\s*" + _TYPE_WORD + r")*\s*:)\s*$"),
    re.compile(r"(?<=[^\s\d.])(\d+(?:\.\d+){2,}\.\s+\S.*)$"),
    re.compile(r"(?<=\})(\d+(?:\.\d+){2,}\.\s+\S.*)$"),
]


def _split_glued(text: str, line: int) -> list[tuple[str, int, int]]:
    """Split one flattened line into pieces (text, line, col) at glued markers."""
    pieces: list[tuple[str, int, int]] = []
    start = 0
    rest = text
    while True:
        best = None
        for rx in _GLUE:
            m = rx.search(rest)
            if m and m.start(1) > 0 and (best is None or m.start(1) < best):
                best = m.start(1)
        if best is None:
            pieces.append((rest, line, start + 1))
            return pieces
        pieces.append((rest[:best], line, start + 1))
        start += best
        rest = rest[best:]


def _is_struct(t: str) -> bool:
    s = t.strip()
    return bool(
        re.match(_OPERAND_HEAD, s)
        or re.fullmatch(_TYPE_WORD + r"(?:\s*(?:and|or|/|,)\s*" + _TYPE_WORD + r")*\s*:", s)
        or HEADING_NUM.match(s) and re.match(r"^\d+(?:\.\d+){2,}\.\s", s)
        or s.endswith("|") or s.startswith("|")
        or CAPTION.match(s)
        or s.startswith("The layout of")
        or s.startswith("Matrix fragments for")
        or s.startswith("Elements of")
        or s.startswith("A warp executing")
    )


def _parse_flat(text: str) -> list[Heading | Block]:
    pieces: list[tuple[str, int, int]] = []
    for n, raw in enumerate(text.split("\n"), 1):
        pieces.extend(_split_glued(raw, n))
    out: list[Heading | Block] = []
    k = 0
    while k < len(pieces):
        t, ln, col = pieces[k]
        s = t.strip()
        if not s:
            k += 1
            continue
        lead = len(t) - len(t.lstrip())
        hm = HEADING_NUM.match(s)
        if hm and re.match(r"^\d+(?:\.\d+){2,}\.\s", s) and not s.endswith("|"):
            out.append(Heading(hm.group(1), hm.group(2).strip(), "", ln))
            k += 1
            continue
        if s.endswith("|") or s.startswith("|"):
            # a table: cells end with "|", one or more per line, a |---| separator after the header
            cells: list[tuple[Cell, int]] = []
            header: list[str] | None = None
            tline = ln
            while k < len(pieces):
                t2, ln2, col2 = pieces[k]
                s2 = t2.strip()
                if not (s2.endswith("|") or s2.startswith("|")) or not s2:
                    break
                if SEP_ROW.match(s2):
                    header = [c.text for c, _ in cells]
                    cells = []
                    k += 1
                    continue
                lead2 = len(t2) - len(t2.lstrip())
                body = s2[:-1] if s2.endswith("|") else s2
                parts = body.split("|")
                pos = col2 + lead2
                for part in parts:
                    il = len(part) - len(part.lstrip())
                    cells.append((Cell(part.strip(), pos + il, ln2), ln2))
                    pos += len(part) + 1
                k += 1
            if header is None:
                header = [c.text for c, _ in cells]
                cells = []
            width = max(len(header), 1)
            rows: list[Row] = []
            for j in range(0, len(cells), width):
                chunk = cells[j:j + width]
                rows.append(Row(tuple(c for c, _ in chunk), chunk[0][1],
                                " | ".join(c.text for c, _ in chunk)))
            out.append(Table(tuple(header), tuple(rows), tline))
            continue
        cm = CAPTION.match(s)
        if cm:
            out.append(Caption(int(cm.group(1)), s, "", ln))
            k += 1
            continue
        if s.endswith("can be computed as:"):
            out.append(Text(s, ln, col + lead))
            k += 1
            code: list[CodeLine] = []
            while k < len(pieces):
                t2, ln2, col2 = pieces[k]
                s2 = t2.strip()
                if s2 and _is_struct(s2):
                    break
                if s2:
                    lead2 = len(t2) - len(t2.lstrip())
                    code.append(CodeLine(t2.rstrip()[lead2:] if code == [] else t2.rstrip(),
                                         ln2, col2 + (lead2 if code == [] else 0)))
                k += 1
            if code:
                out.append(Code(tuple(code), code[0].line))
            continue
        out.append(Text(s, ln, col + lead, bool(re.match(_OPERAND_HEAD, s))))
        k += 1
    return out


