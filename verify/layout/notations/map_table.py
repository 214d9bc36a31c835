"""A map layout written point by point: the table ``ptx-verify table ID --format json`` prints for a
``[[layout]]`` (``{"entries": [{"row": 0, "col": 0, "offset": 0}, ...]}``, or a bare list of entries), read
against the spec map's input and output names as a ``TableMap``.

Every entry names every input and output; an output ``null`` (or an input point left out) is undefined
there.  Bad text is a positioned ``NotationError`` (the JSON reader is the bounded one of
``notations.errors``); nothing is evaluated.
"""
from __future__ import annotations

from typing import Any

from ..dims import Dim
from ..named import TableMap
from .registry import MapReader, register_reader
from .table import MAX_COORD, entry_list, table_document
from .table import _int_field as _int


def _dims(doc: Any, top: Any, key: str, names: list[str], default: dict[str, int] | None) -> list[tuple[str, int]]:
    """The table's own ``inputs``/``outputs`` (name and size, as ``table --format json`` writes them), or the
    spec's sizes where it has no such list and they are concrete."""
    if isinstance(top, dict) and key in top:
        dims = top[key]
        if not isinstance(dims, list) or not all(isinstance(d, dict) for d in dims):
            raise doc.error(f"\"{key}\" must be a list of {{\"name\", \"size\"}}", top, key)
        got = [d.get("name") for d in dims]
        if got != names:
            raise doc.error(f"\"{key}\" names {got}, the spec's are {names}", top, key)
        return [(n, int(_int(doc, d, "size", 1 << 30, False))) for n, d in zip(names, dims)]
    if default is None:
        raise doc.error(f"the spec is a family: the table must give its \"{key}\" sizes (or give --param)", top)
    return [(n, default[n]) for n in names]


def parse_map_table(text: str | bytes, inputs: tuple[Dim, ...], outputs: tuple[Dim, ...],
                    source: str = "argument") -> TableMap:
    """The entries as a ``TableMap`` over the names of ``inputs`` -> ``outputs``, with the sizes the table
    states (``table --format json`` writes them) or, where it states none, those of ``inputs``/``outputs``
    when they are concrete."""
    doc, top = table_document(text, source)
    entries = None
    if isinstance(top, dict):
        if "entries" not in top or not isinstance(top["entries"], list):
            raise doc.error("expected an object with a list \"entries\" (or a bare list of entries)", top)
        entries = top["entries"]
    entries = entry_list(doc, top, entries)
    def concrete(dims: tuple[Dim, ...]) -> dict[str, int] | None:
        sizes: dict[str, int] = {}
        for d in dims:
            if not isinstance(d.size, int):
                return None
            sizes[d.name] = d.size
        return sizes
    ins = _dims(doc, top, "inputs", [d.name for d in inputs], concrete(inputs))
    outs = _dims(doc, top, "outputs", [d.name for d in outputs], concrete(outputs))
    seen: set[tuple[int, ...]] = set()
    rows: list[tuple[int, ...]] = []
    for j, e in enumerate(entries):
        if not isinstance(e, dict):
            raise doc.error("an entry must be an object naming " + ", ".join(n for n, _ in ins + outs), entries, j)
        point = tuple(_int(doc, e, n, size, False) for n, size in ins)
        if point in seen:
            raise doc.error(", ".join(f"{n} {v}" for (n, _), v in zip(ins, point)) + " appears twice", entries, j)
        seen.add(point)
        vals = [_int(doc, e, n, MAX_COORD, True) for n, _ in outs]  # beyond the box: in_range's to find
        nums = [v for v in vals if v is not None]
        if not nums:
            continue
        if len(nums) < len(vals):
            raise doc.error("an entry's outputs are all null (undefined) or all integers", e)
        rows.append((*point, *nums))
    if not seen:
        raise doc.error("the table has no entries", entries)
    top_out = [max([s] + [r[len(ins) + k] + 1 for r in rows]) for k, (_, s) in enumerate(outs)]
    return TableMap(tuple(Dim(n, s) for n, s in ins), tuple(Dim(n, s) for (n, _), s in zip(outs, top_out)),
                    tuple(rows))


def _read_map(text: str | bytes, *, inputs: tuple[Dim, ...], outputs: tuple[Dim, ...], source: str = "argument",
              **_: object) -> TableMap:
    return parse_map_table(text, inputs, outputs, source)


register_reader("map", MapReader("table", _read_map, order=2))

__all__ = ["parse_map_table"]
