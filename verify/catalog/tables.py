"""An ingested section as the tables of a spec file: ``[source]``, ``[instruction]``, ``[[fragment]]``.

The one statement of what a ``SectionSpec`` says in the spec format.  Two readers take it: the spec
reader (``verify.catalog.spec``), which builds a page's layouts from these tables directly (no text in
between, positions on the page: ``verify.catalog.pages.page_spec``), and the emitter
(``verify.catalog.emit``), which writes them as TOML for ``ingest --out``.  Values are the ingested ones;
what reading the emitted text gives back for each is ``as_read``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .sections import FragmentSpec, SectionSpec


def is_block(s: str) -> bool:
    """A string the spec format writes as a ``'''``-block (reading it back gives a newline at its end):
    the formula, and any other string with a newline, unless it holds ``'''`` or a control character."""
    return "'''" not in s and not any(ord(c) < 0x20 and c not in "\n\t" for c in s)


def as_read(v: Any, block: bool = False) -> Any:
    """What reading the spec file ``verify.catalog.emit`` writes gives back for a value of these tables
    (``block``: the formula, always written as a block): lists as lists, a block string with its last newline."""
    if isinstance(v, str):
        return v + "\n" if (block or "\n" in v) and is_block(v) else v
    if isinstance(v, (list, tuple)):
        return [as_read(x) for x in v]
    if isinstance(v, dict):
        return {k: as_read(x) for k, x in v.items()}
    return v


def is_seed(section: SectionSpec) -> bool:
    """A flattened test page (``NNN_hex.txt``): named ``seed`` in ``[source]``, not ``page``."""
    return bool(re.fullmatch(r"\d{3}_[0-9a-f]+\.txt", Path(section.page).name))


def source_table(section: SectionSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"document": "PTX ISA"}
    if section.version:
        out["version"] = section.version
    out["section"] = section.number
    out["title"] = section.title
    if section.anchor:
        out["anchor"] = section.anchor
    out["seed" if is_seed(section) else "page"] = Path(section.page).name
    return out


GROUP_NOTE = "group formula checked lane by lane against the doc's table of MMA computations"


def instruction_table(section: SectionSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": section.instruction, "shape": section.shape}
    if section.groups > 1:
        out.update(groups=section.groups, group=section.group, note=GROUP_NOTE)
    return out


def elements_dropped(fr: FragmentSpec) -> bool:
    """The row states no list of its own and the one above it is malformed: no ``elements``."""
    r = fr.row
    return r.elements is not None and r.elements_inherited and bool(r.elements.problems)


def simple_sparse(fr: FragmentSpec) -> bool:
    """A sparse table of ``kept`` and ``chunk`` only (written inline; any other is a sub-table)."""
    return all(k in ("kept", "chunk") for k, _ in fr.sparse)


def fragment_table(fr: FragmentSpec) -> dict[str, Any]:
    """The ``[[fragment]]`` table of a fragment with a formula, keys in the order a spec file gives them
    (``sparse`` and ``corrected`` are the sub-tables, when not inline)."""
    r = fr.row
    out: dict[str, Any] = {"operand": fr.operand, "types": list(fr.types)}
    if fr.variant:
        out["variant"] = fr.variant
    out["registers"] = r.registers or 1
    out["register_type"] = r.register_type or "b32"
    out["elements_per_register"] = r.per_register or 1
    if r.elements is not None and not elements_dropped(fr):
        out["elements"] = r.elements.text
    if r.element_bits:
        out["element_bits"] = r.element_bits
    if fr.rows is not None:
        out["rows"] = fr.rows
        out["cols"] = fr.cols
    if fr.sparse:
        out["sparse"] = dict(fr.sparse)
    if fr.figures:
        out["figure"] = ", ".join(fr.figures)
    out["doc_line"] = fr.formula_line
    out["formula"] = fr.formula
    if fr.derived:
        out["derived"] = fr.derived
    if fr.expect:
        out["expect"] = dict(fr.expect)
    if fr.corrected:
        out["erratum"] = fr.erratum
        out["corrected"] = dict(fr.corrected)
    return out


def fragment_as_read(fr: FragmentSpec) -> dict[str, Any]:
    """The ``[[fragment]]`` table of ``fr`` as reading its spec file gives it."""
    table = as_read(fragment_table(fr))
    table["formula"] = as_read(fr.formula, block=True)
    return table
