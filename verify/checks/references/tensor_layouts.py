"""The tensor-layouts reference: the ``tensor-layouts`` package's NVIDIA MMA and copy atoms.

``tensor_layouts.atoms_nv`` states about 124 MMA atoms and 16 copy atoms as CuTe layouts in pure
Python, each with its PTX instruction (a separate transcription of CuTe's traits, so it shares
CuTe's conventions but not its code).  MMA atoms take the same matching and ``conform`` as CuTe's
traits (``checks.crosscheck``), with the element types read from the atom's PTX string
(``mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32``: D, A, B, C); copy atoms the same
evaluation as CuTe's compiled copy traits (``references.cute_copy.copy_layouts``).
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from ...layout.notations import NotationError, TraitEntry
from ...layout.notations.cute_layout import CuteLayout
from ...layout.notations.cute_compiled import Printed, Request
from ..crosscheck import CrosscheckReport, Row, SpecIndex, _trait_rows
from ..fragment import DEFAULT_TIMEOUT
from .common import conform_rows
from .cute_copy import copy_layouts

NAME = "tensor-layouts"
_CPP = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t", "tf32": "cutlass::tfloat32_t", "f32": "float",
        "f64": "double", "s8": "int8_t", "u8": "uint8_t", "s4": "cutlass::int4b_t", "u4": "cutlass::uint4b_t",
        "b1": "cutlass::uint1b_t", "s32": "int32_t", "e4m3": "cutlass::float_e4m3_t", "e5m2": "cutlass::float_e5m2_t",
        "e2m1": "cutlass::float_e2m1_t", "e3m2": "cutlass::float_e3m2_t", "e2m3": "cutlass::float_e2m3_t"}


def probe() -> str:
    import importlib.util
    try:
        found = importlib.util.find_spec("tensor_layouts")
    except (ImportError, ValueError):
        found = None
    return "" if found is not None else "no tensor-layouts: pip install 'ptx-layout-verify[refs]' (tensor-layouts)"


def _cute(layout: Any) -> CuteLayout:
    def tup(x: Any) -> Any:
        return tuple(tup(v) for v in x) if isinstance(x, (tuple, list)) else int(x)
    return CuteLayout(tup(layout.shape), tup(layout.stride))


def _types(ptx: str) -> tuple[str, str, str, str] | None:
    """(A, B, C, D) C++ value types from ``...m16n8k8.row.col.f32.bf16.bf16.f32`` (D A B C) or wgmma's (D A B)."""
    parts = ptx.split(" ")[0].split(".")
    shape = next((k for k, p in enumerate(parts) if re.fullmatch(r"m\d+n\d+k\d+", p)), None)
    if shape is None:
        return None
    ts = [p for p in parts[shape + 1:] if p in _CPP]
    if len(ts) == 4:
        d, a, b, c = ts
    elif len(ts) == 3:
        d, a, b = ts
        c = d
    else:
        return None
    return _CPP[a], _CPP[b], _CPP[c], _CPP[d]


_NAME_TYPES = {"F64": "f64", "F32": "f32", "F16": "f16", "BF16": "bf16", "TF32": "tf32", "S32": "s32", "S8": "s8",
               "U8": "u8", "S4": "s4", "U4": "u4", "U1": "b1", "E4M3": "e4m3", "E5M2": "e5m2"}


def _name_types(name: str) -> tuple[str, str, str, str] | None:
    """(A, B, C, D) from CuTe's atom name ``SM90_64x128x16_F32BF16BF16_SS`` (D A B [C]), when the PTX has none."""
    m = re.search(r"_\d+x\d+x\d+_([A-Z0-9]+?)(?:_|$)", name)
    if not m:
        return None
    toks = re.findall(r"BF16|TF32|E4M3|E5M2|F64|F32|F16|S32|S8|U8|S4|U4|U1", m.group(1))
    if "".join(toks) != m.group(1) or len(toks) not in (3, 4):
        return None
    ts = [_CPP[_NAME_TYPES[t]] for t in toks]
    d, a, b = ts[:3]
    return a, b, (ts[3] if len(ts) == 4 else d), d


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None) -> CrosscheckReport:
    t0 = time.perf_counter()
    import tensor_layouts
    from tensor_layouts import atoms_nv
    from tensor_layouts.atoms import CopyAtom, MMAAtom
    version = getattr(tensor_layouts, "__version__", "") or _dist_version()
    src = Path(atoms_nv.__file__)
    text = src.read_text(encoding="utf-8", errors="replace")
    where = "tensor_layouts/atoms_nv.py"

    def line_of(name: str) -> int:
        m = re.search(rf"^{re.escape(name)}\s*=", text, re.M)
        return text.count("\n", 0, m.start()) + 1 if m else 0

    index = SpecIndex(specs)
    rows: list[Row] = []
    cache: dict = {}
    copies = []
    for attr, atom in sorted(vars(atoms_nv).items()):
        line = line_of(attr)
        if isinstance(atom, MMAAtom):
            types = _types(atom.ptx) or _name_types(attr)
            if types is None:
                rows.append(Row("unmatched", attr, "", where, line, detail=f"PTX {atom.ptx!r} names no element types"))
                continue
            try:
                thr = _cute(atom.thr_id) if atom.thr_id is not None else None
                a, b, c = _cute(atom.a_layout), _cute(atom.b_layout), _cute(atom.c_layout)
            except (ValueError, TypeError) as e:
                rows.append(Row("malformed", attr, "", where, line, detail=str(e)))
                continue
            if thr is None:
                thr = CuteLayout(a.mode(0).size(), 1)
            name = attr + ("_SPARSE" if "(sparse)" in atom.ptx and "SPARSE" not in attr else "")
            entry = TraitEntry(name, types, tuple(atom.shape_mnk), thr, a, b, c, line, where)
            rows.extend(_trait_rows(entry, where, index, cache, timeout))
        elif isinstance(atom, CopyAtom):
            try:
                raw = {"ThrID": (str(_cute(atom.thr_id)), line), "SrcLayout": (str(_cute(atom.src_layout_bits)), line),
                       "DstLayout": (str(_cute(atom.dst_layout_bits)), line)}
            except (ValueError, TypeError, NotationError) as e:
                rows.append(Row("malformed", attr, "", where, line, detail=str(e)))
                continue
            copies.extend(copy_layouts(Request("copy", attr, attr, where, line), Printed("copy", attr, raw), specs))
    rows.extend(conform_rows(copies, timeout))
    return CrosscheckReport(f"tensor-layouts {version}", (where,), tuple(rows), {}, time.perf_counter() - t0, NAME,
                            "tensor-layouts NVIDIA atoms")


def _dist_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("tensor-layouts")
    except PackageNotFoundError:  # the atoms loaded from a checkout, not an installed distribution
        return "?"
