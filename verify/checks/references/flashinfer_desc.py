"""The tcgen05 descriptor's swizzle codes (``tcgen05.descriptor.swizzle``) as FlashInfer's sm_100 MMA code states them.

Part of the ``flashinfer`` reference (FlashInfer's origin).  FlashInfer 0.7.4 builds tcgen05 shared-memory
descriptors in Python for its DeepSeek sparse-attention kernels (``flashinfer/experimental/qwen_3_5_block/
_cudnn_frost/deepseek_sparse_attention/utils/sm100/mma_desc.py``, "ported Cutlass code from C++ to Python": its own
code, as tensor-layouts' transcription of CuTe's traits is; it catches a misreading of CuTe's header, not a mistake
CuTe made).  Read with ``ast``, never imported or run:

* ``class LayoutType(IntEnum)``: each enumerator ``NAME = <int literal>`` (anything else refused at its line), paired
  with the spec's modes in the spec's order (none, 128B with 32B atomicity, 128B, 64B, 32B);
* ``make_smem_desc_base``: the statement ``desc |= (int(layout_type) & 0x7) << 61`` that puts the enumerator's value
  into the descriptor's bits 61-63 (its mask and shift evaluated; a different field is a finding).
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import MapLayout
from .common import Evaluated, located
from .descriptor import MODES, SPEC
from .pyfunc import Refused, parse_module

DIST = "flashinfer-python"
REL = "flashinfer/experimental/qwen_3_5_block/_cudnn_frost/deepseek_sparse_attention/utils/sm100/mma_desc.py"
FILE = "sm100/mma_desc.py"
ENUM, BUILDER = "LayoutType", "make_smem_desc_base"
FIELD = (61, 0x7)   # the table's swizzling mode: bits 61-63


def _int(e: ast.expr, what: str) -> int:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    raise Refused(f"{what} is no integer literal", FILE, getattr(e, "lineno", 0), getattr(e, "col_offset", 0))


def read_codes(text: str) -> tuple[dict[str, int], int, tuple[int, int]]:
    """The enumerators of ``LayoutType``, its line, and (shift, mask) of the field ``make_smem_desc_base`` puts
    ``int(layout_type)`` in."""
    tree = parse_module(text, FILE)
    enums = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == ENUM]
    if len(enums) != 1:
        raise Refused(f"{len(enums)} classes {ENUM} (one expected)", FILE, 0)
    codes: dict[str, int] = {}
    for st in enums[0].body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            codes[st.targets[0].id] = _int(st.value, f"{ENUM}.{st.targets[0].id}")
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == BUILDER]
    if len(fns) != 1:
        raise Refused(f"{len(fns)} definitions of {BUILDER} (one expected)", FILE, enums[0].lineno)
    fields = []
    for n in ast.walk(fns[0]):   # desc |= (int(layout_type) & MASK) << SHIFT
        if not (isinstance(n, ast.AugAssign) and isinstance(n.op, ast.BitOr) and isinstance(n.value, ast.BinOp)
                and isinstance(n.value.op, ast.LShift) and isinstance(n.value.left, ast.BinOp)
                and isinstance(n.value.left.op, ast.BitAnd)):
            continue
        inner = n.value.left.left
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "int" \
                and len(inner.args) == 1 and isinstance(inner.args[0], ast.Name) and inner.args[0].id == "layout_type":
            fields.append((_int(n.value.right, "the layout type's shift"), _int(n.value.left.right, "its mask")))
    if len(fields) != 1:
        raise Refused(f"{BUILDER}: {len(fields)} statements putting int(layout_type) into the descriptor (one "
                      "expected)", FILE, fns[0].lineno)
    return codes, enums[0].lineno, fields[0]


def swizzle_items(specs: Iterable, root: Path | None = None) -> list[Evaluated]:
    """``tcgen05.descriptor.swizzle`` from FlashInfer's ``LayoutType`` (``root``: a directory holding ``REL``; default
    the installed wheel).  Nothing when the file or the spec is absent."""
    by = {s.id: s for s in specs if isinstance(s, MapLayout)}
    spec = in_use_of(by, SPEC)
    path = (Path(root) / REL) if root is not None else located(DIST, REL)
    if not isinstance(spec, MapLayout) or path is None or not path.is_file():
        return []
    name = f"{ENUM} (IntEnum) and {BUILDER}"
    try:
        codes, line, field = read_codes(path.read_text(encoding="utf-8", errors="replace"))
        missing = [x for x in MODES if x not in codes]
        if missing:
            raise Refused(f"{ENUM} has no {missing[0]}", FILE, line)
        if field != FIELD:
            raise Refused(f"{BUILDER} puts the layout type at bit {field[0]} with mask {field[1]:#x}, not the swizzling "
                          f"mode's bits 61-63", FILE, line)
    except Refused as e:
        return [Evaluated(name, "", FILE, e.line, spec, error=str(e))]
    rows = tuple((mode, codes[x]) for mode, x in enumerate(MODES))
    shown = ", ".join(f"{x} = {codes[x]}" for x in MODES)
    return [Evaluated(name, "", FILE, line, spec, text=f"class {ENUM}(IntEnum): {shown}", map_rows=rows)]
