"""The tcgen05 shared-memory pages read into map layouts and the errata of their text: the swizzle atoms and the
valid combinations (9.7.16.10.3, 9.7.16.10.6) and the shared-memory descriptor page of 9.1
(``verify.catalog.shared_pages`` says what is checked against what)."""
from __future__ import annotations

import re
from pathlib import Path

from ..formula import parse_formula
from ..layout.dims import Dim
from ..layout.named import FormulaMap
from ..layout.shared import Swizzle
from .page_model import Code, Table, Text
from .shared_symbolic import (atom_family)

from .shared_page_context import (BASE32B_NOTE, BASE32B_SWIZZLE, CANONICAL, TC_ATOMS, TC_COMBINATIONS, TC_DESCRIPTOR,
                                  TC_SWIZZLE, TC_VALID, TCGEN05_T, WGMMA, WGMMA_ATOMS, captioned, table_cells, column_of,
                                  PageContext, finding, add_map, table_name, report_unread, Where, mode_of_words, mode_words)
from .shared_pages_wgmma import atoms_of, base_offset_rule, canonical_table, descriptor_fields, field_checks, scale_example


# ----------------------------------------------------------------------------- the tcgen05 pages

def read_tcgen05(ctx: PageContext) -> None:
    t53_atoms: dict[tuple[str, str], tuple[int, int, int]] = {}
    n53 = ""
    if TC_SWIZZLE in ctx.pages:
        sec, page = ctx.pages[TC_SWIZZLE]
        found53 = captioned(sec, TC_ATOMS)
        if found53 is None:
            report_unread(ctx, TC_SWIZZLE, f"the table of swizzle atoms ('{TC_ATOMS}')")
        if found53 is not None:
            t53, n53 = found53
            t53_atoms = atoms_of(t53)
            where = f" ({ctx.number(CANONICAL)})" if CANONICAL in ctx.pages else ""
            canon_sw = {"none": Swizzle(0, 4, 3), "32B": Swizzle(1, 4, 3), "64B": Swizzle(2, 4, 3), "128B": Swizzle(3, 4, 3)}
            for (major, mode), (a, b, line) in sorted(t53_atoms.items()):
                sw = BASE32B_SWIZZLE if mode == "128B_base32B" else canon_sw[mode]
                derived = BASE32B_NOTE if mode == "128B_base32B" else (
                    f"swizzle {sw.text()} as the wgmma canonical layouts{where} give it for {mode}")
                add_map(ctx, f"tcgen05.shared.atom.{major}.{mode}", TC_SWIZZLE, line, atom_family(major, a, b, sw, TCGEN05_T),
                     f"{a}x{b} 128b elements, {sw.text()}", "tcgen05",
                     f"{n53} atom in elements of 128/T bits", derived, ("in_range", "injective", "surjective"))
            scale_example(ctx, TC_SWIZZLE, sec, t53_atoms)
            # Table 53 against Table 38 (the same modes, the same atoms)
            if WGMMA in ctx.pages:
                s38 = ctx.pages[WGMMA][0]
                found38 = captioned(s38, WGMMA_ATOMS)
                if found38 is not None:
                    t38, n38 = found38
                    a38 = atoms_of(t38)
                    for key, (a, b, line) in sorted(t53_atoms.items()):
                        if key in a38 and (a38[key][0], a38[key][1]) != (a, b):
                            ctx.findings.append(finding(
                                "smem-table", ctx.where(TC_SWIZZLE, line, f"{a}x{b}"),
                                f"{n53} gives the {key[0]}-major {key[1]} atom {a}x{b}, {n38} (wgmma, "
                                f"{Path(ctx.pages[WGMMA][1].path).name}:{a38[key][2]}) {a38[key][0]}x{a38[key][1]}",
                                {"table53": [a, b], "table38": list(a38[key][:2])}, ctx.number(TC_SWIZZLE)))
    if TC_VALID in ctx.pages and t53_atoms:
        _valid_combinations(ctx, t53_atoms, n53)


_MAJOR_OF = {("row", "A"): "K", ("column", "B"): "K", ("column", "A"): "MN", ("row", "B"): "MN"}
ALL_MODES = ("128B_base32B", "128B", "64B", "32B", "none")


def _valid_combinations(ctx: PageContext, atoms: dict[tuple[str, str], tuple[int, int, int]], atoms_name: str) -> None:
    sec, page = ctx.pages[TC_VALID]
    found = captioned(sec, TC_COMBINATIONS)
    table = found[0] if found is not None else next((b for b in sec.blocks if isinstance(b, Table)), None)
    if table is None:
        return
    name = found[1] if found is not None else table_name(sec, table)
    known = sorted({mode for _, mode in atoms})
    for texts, cols, line in table_cells(table, 4):
        if len(texts) < 4:
            continue
        sizes, majorness, matrix, supported = texts[:4]
        word = majorness.split("(")[0].strip().lower()
        major = _MAJOR_OF.get((word, matrix.strip()))
        if major is None:
            continue
        s = supported.lower()
        modes: list[str | None]
        if s.startswith("all except"):
            modes = [m for m in known if m != mode_of_words(supported[len("all except"):])]
        elif s.startswith("only"):
            modes = [mode_of_words(supported[len("only"):])]
        elif s.startswith("all"):
            modes = list(known)
        else:
            continue
        for mode in modes:
            if mode is not None and (major, mode) not in atoms:
                t53 = [v[2] for k, v in atoms.items() if k[1] == mode]
                ctx.findings.append(finding(
                    "smem-table", Where(page.path, line, cols[3], supported),
                    f"{name} allows {major}-major ({majorness} {matrix}) operands of {sizes} {mode_words(mode)} "
                    f"('{supported}'), but {atoms_name} gives that mode no {major}-major atom"
                    + (f" (its row, line {t53[0]}, is {'/'.join(m for (m, md) in atoms if md == mode)} only)" if t53 else ""),
                    {"major": major, "mode": mode, "types": sizes}, ctx.number(TC_VALID)))


# ----------------------------------------------------------------------------- the tcgen05 descriptor page (9.1)

_FIXED = re.compile(r"Fixed constant value of\s+(0b[01]+|0x[0-9A-Fa-f]+|\d+)\b")
_CODES = re.compile(r"(?<![\w-])(\d)\\?\.\s+(.*?)(?=\s+\d\\?\.\s|\s+Note\b|$)")
# the fields of Table 40 by what their descriptions say, in the order the model (``layout.descriptor``) names them
_FIELD_WORDS = (("start", r"start address"), ("lbo", r"Leading dimension byte (?:offset|address)"),
                ("sbo", r"Stride dimension byte offset"), ("version", r"Fixed constant"),
                ("base_offset", r"base offset"), ("lbo_mode", r"Leading dimension stride mode"),
                ("fixed", r"Fixed constant"), ("swizzle", r"swizzling mode"))


def _field_name(desc: str, taken: set[str]) -> str:
    for name, rx in _FIELD_WORDS:
        if name not in taken and re.search(rx, desc, re.I):
            return name
    return ""


def read_tcgen05_descriptor(ctx: PageContext) -> None:
    """Table 40 (9.7.16.4.1, new in this copy with PTX ISA 9.1): the fields as the map ``(field, bit) -> position``
    and the swizzle codes as ``mode -> code`` (the ids of ``specs/tcgen05.descriptor.toml``, which judges them);
    its errata from its own statements: a field's size against its bit range, overlaps, the encode's width, a
    fixed constant that does not fit its field, the swizzle codes against their field and the invalid ones the
    note names, the leading-dimension mode bit against the strides page's "Bit #52", and the base-offset rule as
    for wgmma."""
    from ..layout.descriptor import FIELDS, SWIZZLE_ORDER, fields_formula, fields_map
    sec, page = ctx.pages[TC_DESCRIPTOR]
    number = sec.number
    table = next((b for b in sec.blocks if isinstance(b, Table) and b.header and "Bit-field" in b.header[0]), None)
    if table is None:
        report_unread(ctx, TC_DESCRIPTOR, "the table of the descriptor's fields (headed 'Bit-field | Size in bits | ...')")
        return
    rows = sorted(descriptor_fields(table), key=lambda r: r[0])
    enc = next((b for b in sec.blocks if isinstance(b, (Text, Code)) and "matrix-descriptor-encode(x)" in b.text), None)
    field_checks(ctx, page, number, rows, enc)
    for lo, hi, size, desc, line, cols, _ in rows:
        fm = _FIXED.search(desc)
        if fm and int(fm.group(1), 0).bit_length() > hi - lo + 1:
            value = int(fm.group(1), 0)
            ctx.findings.append(finding(
                "descriptor-format", Where(page.path, line, cols[2] + max(desc.find(fm.group(1)), 0), fm.group(1)),
                f"bits {lo}-{hi} ({hi - lo + 1} bits) are given the fixed constant {fm.group(1)}, a "
                f"{value.bit_length()}-bit value", {"range": [lo, hi], "value": fm.group(1),
                                                    "value_bits": value.bit_length()}, number))
    # the fields as a map, in bit order; named by their descriptions
    taken: set[str] = set()
    names = []
    for lo, hi, size, desc, line, cols, _ in rows:
        names.append(_field_name(desc, taken))
        taken.add(names[-1])
    model = [f.name for f in FIELDS["tcgen05"]]
    if rows and names == model:
        ranges = [(r[0], r[1] - r[0] + 1) for r in rows]
        add_map(ctx, "tcgen05.descriptor.fields", TC_DESCRIPTOR, table.line, fields_map(ranges), fields_formula(ranges),
             "tcgen05", "Table 40: " + "; ".join(f"{n} bits {r[0]}-{r[1]}" for n, r in zip(names, rows)), kind="map",
             unit="")
    elif rows:
        ctx.findings.append(finding(
            "descriptor-format", Where(page.path, table.line, 1, table.header[0]),
            f"the table's fields, by their descriptions ({', '.join(n or '?' for n in names)}), are not the tcgen05 "
            f"descriptor's ({', '.join(model)})", {"page": names, "model": model}, number))
    # the swizzle codes
    for lo, hi, size, desc, line, cols, _ in rows:
        if "swizzling mode" not in desc:
            continue
        codes = [(int(c), words) for c, words in _CODES.findall(desc)]
        seen: dict[str, int] = {}
        for v, words in codes:
            md = mode_of_words(words)
            if v >= 1 << size:
                ctx.findings.append(finding("descriptor-format", Where(page.path, line, cols[2], f"{v}"),
                                             f"swizzle code {v} does not fit the {size}-bit field", {}, number))
            if md is not None and md in seen:
                ctx.findings.append(finding("descriptor-format", Where(page.path, line, cols[2], f"{v}"),
                                             f"codes {seen[md]} and {v} both name {md}", {}, number))
            if md is not None:
                seen.setdefault(md, v)
        inv = re.search(r"Values?\s+([\d,\sand]+?)\s+(?:are|is)\s+invalid", desc)
        if inv:
            said = sorted(int(x) for x in re.findall(r"\d+", inv.group(1)))
            rest = sorted(set(range(1 << size)) - {v for v, _ in codes})
            if said != rest:
                ctx.findings.append(finding(
                    "descriptor-format", Where(page.path, line, cols[2] + max(desc.find(inv.group(0)), 0), inv.group(0)),
                    f"the note calls {', '.join(map(str, said))} invalid, but the codes the field names leave "
                    f"{', '.join(map(str, rest)) or 'none'} unnamed", {"invalid": said, "unnamed": rest}, number))
        if seen:
            cases = "\n".join(f"{'code =' if k == 0 else '      '} {seen[md]} if mode == {k}"
                               for k, md in enumerate(SWIZZLE_ORDER) if md in seen)
            text = cases + "\n"
            add_map(ctx, "tcgen05.descriptor.swizzle", TC_DESCRIPTOR, line,
                 FormulaMap(parse_formula(text, "x", ("mode",), ("code",)), (Dim("mode", len(SWIZZLE_ORDER)),),
                            (Dim("code", 1 << size),)), text, "tcgen05",
                 "Table 40 swizzle codes, modes in the order " + ", ".join(SWIZZLE_ORDER), kind="map", unit="")
    # the strides page's "Bit #52" names the mode field
    if "tcgen05.lbo" in ctx.pages:
        lsec, lpage = ctx.pages["tcgen05.lbo"]
        bit_text = next((b for b in lsec.blocks if isinstance(b, Text) and re.search(r"Bit #(\d+)", b.text)), None)
        mode_row = next((r for r in rows if re.search(r"Leading dimension stride mode", r[3], re.I)), None)
        if bit_text is not None and mode_row is not None:
            bit = int(re.search(r"Bit #(\d+)", bit_text.text).group(1))  # type: ignore[union-attr]
            if not mode_row[0] <= bit <= mode_row[1]:
                ctx.findings.append(finding(
                    "descriptor-format", Where(lpage.path, bit_text.line, column_of(lpage, bit_text.line, "Bit #"), bit_text.text),
                    f"'Bit #{bit}' distinguishes the leading-dimension stride modes, but the descriptor's table "
                    f"({Path(page.path).name}:{mode_row[4]}) has the mode in bits {mode_row[0]}-{mode_row[1]}",
                    {"said": bit, "table": [mode_row[0], mode_row[1]]}, lsec.number))
    canon = canonical_table(ctx, "tcgen05.canonical") or canonical_table(ctx)
    base_offset_rule(ctx, number, sec, page, canon)
