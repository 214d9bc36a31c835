"""The blockwise fp32 scale storage of FlashInfer's SM107 FP8 groupwise GEMM (``storage.sf.cutlass.blockwise.*``).

Part of the ``flashinfer`` reference (FlashInfer's origin).  FlashInfer 0.7.4's CuTe-DSL backend
(``flashinfer/gemm/kernels/gemm_fp8_groupwise_sm107.py``: Python, read with ``ast``, never imported or run)
compiles its blockwise GEMM kernel for scale tensors it declares itself, in ``_get_compiled``::

    mk = cute.runtime.make_fake_compact_tensor
    sfa_f = mk(cutlass.Float32, (sym_m, sym_kb, sym_l), stride_order=(0, 1, 2), ...)
    sfb_f = mk(cutlass.Float32, (sym_nb, sym_kb, sym_l), stride_order=(0, 1, 2), ...)

A compact tensor's ``stride_order`` gives each mode's rank among the strides (0: stride 1; each next mode's
stride the product of the extents before it), as the same function's A (``(m, k, l)``, ``(2, 0, 1)``: K-major) and
C (``(m, n, l)``, ``(1, 0, 2)``: row-major) declarations and the wrapper's ``as_strided`` views of them read.  So
``offset(m, kb, l)`` in fp32 elements, at every member of ``storage.sf.cutlass.blockwise.1x128`` (``sym_m`` -> M,
``sym_kb`` -> KB, ``sym_l`` -> L) and of ``.128x128`` (``sym_nb`` -> NB); compared as maps (``maps.same``, both
engines).  The shapes' symbols are matched by name; a declaration of another form, a type other than
``cutlass.Float32`` or a ``stride_order`` that is no permutation is refused at its line.
"""
from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable
from pathlib import Path

from ...layout.model import MapLayout
from .common import Evaluated, located
from .pyfunc import Refused, parse_module

DIST = "flashinfer-python"
REL = "flashinfer/gemm/kernels/gemm_fp8_groupwise_sm107.py"
FILE = "gemm/kernels/gemm_fp8_groupwise_sm107.py"
FUNC = "_get_compiled"
MAKER = "make_fake_compact_tensor"
SPECS = {"storage.sf.cutlass.blockwise.1x128": ("sfa_f", {"sym_m": "m", "sym_kb": "kb", "sym_l": "l"}),
         "storage.sf.cutlass.blockwise.128x128": ("sfb_f", {"sym_nb": "nb", "sym_kb": "kb", "sym_l": "l"})}


def _refuse(reason: str, node: ast.AST) -> Refused:
    return Refused(reason, FILE, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def declarations(text: str) -> dict[str, tuple[tuple[str, ...], tuple[int, ...], int]]:
    """``name -> (mode symbols, stride_order, line)`` of each ``name = mk(cutlass.Float32, (...), stride_order=(...))``
    in ``_get_compiled`` whose ``mk`` is ``cute.runtime.make_fake_compact_tensor``."""
    tree = parse_module(text, FILE)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == FUNC]
    if len(fns) != 1:
        raise Refused(f"{len(fns)} definitions of {FUNC} (one expected)", FILE, 0)
    assigns = [n for n in ast.walk(fns[0]) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name)]
    makers = {t.id for n in assigns for t in n.targets[:1]
              if isinstance(t, ast.Name) and isinstance(n.value, ast.Attribute) and n.value.attr == MAKER}
    out = {}
    for n in assigns:
        v = n.value
        if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in makers):
            continue
        target = n.targets[0]
        name = target.id if isinstance(target, ast.Name) else ""
        if len(v.args) != 2 or not isinstance(v.args[1], ast.Tuple) or \
                not all(isinstance(x, ast.Name) for x in v.args[1].elts):
            raise _refuse(f"{name}: no ({MAKER}(type, (symbols...), ...)", v)
        dtype = ast.unparse(v.args[0])
        order_kw = [k.value for k in v.keywords if k.arg == "stride_order"]
        if len(order_kw) != 1 or not isinstance(order_kw[0], ast.Tuple) or \
                not all(isinstance(x, ast.Constant) and type(x.value) is int for x in order_kw[0].elts):
            raise _refuse(f"{name}: no stride_order of integer literals", v)
        modes = tuple(x.id for x in v.args[1].elts)  # type: ignore[attr-defined]
        order = tuple(x.value for x in order_kw[0].elts)  # type: ignore[attr-defined]
        if sorted(order) != list(range(len(modes))):
            raise _refuse(f"{name}: stride_order {order} is no permutation of the {len(modes)} modes", v)
        out[name] = (modes, order, n.lineno, dtype)
    return out  # type: ignore[return-value]


def blockwise_items(specs: Iterable, root: Path | None = None) -> list[Evaluated]:
    """Each ``storage.sf.cutlass.blockwise.*`` member from FlashInfer's declarations (``root``: a directory holding
    ``REL``; default the installed wheel).  Nothing when the file or the specs are absent."""
    by = {s.id: s for s in specs if isinstance(s, MapLayout)}
    path = (Path(root) / REL) if root is not None else located(DIST, REL)
    wanted = {sid: v for sid, v in SPECS.items() if sid in by}
    if path is None or not path.is_file() or not wanted:
        return []
    try:
        decl = declarations(path.read_text(encoding="utf-8", errors="replace"))
    except Refused as e:
        return [Evaluated(f"{FUNC}: {v[0]}", "", FILE, e.line, by[sid], error=str(e)) for sid, v in wanted.items()]
    items = []
    for sid, (var, names) in wanted.items():
        spec = by[sid]
        label = f"{FUNC}: {var} = {MAKER}(...)"
        if var not in decl:
            items.append(Evaluated(label, "", FILE, 0, spec, error=f"{FILE}: {FUNC} declares no {var}"))
            continue
        modes, order, line, dtype = decl[var]  # type: ignore[misc]
        text = f"{var} = {MAKER}({dtype}, ({', '.join(modes)}), stride_order={order})"
        if dtype != "cutlass.Float32" or sorted(modes) != sorted(names):
            items.append(Evaluated(label, "", FILE, line, spec, text=text,
                                   error=f"{var} is {dtype} over {modes}, not cutlass.Float32 over {tuple(names)}"))
            continue
        pnames = [q.name for q in spec.params]
        for vals in itertools.product(*(q.values for q in spec.params)):
            env = dict(zip(pnames, vals))
            member = spec.instance(**env)
            ins = [d.name for d in member.inputs]
            extent = {d.name: int(d.size) for d in member.inputs}
            stride, acc = {}, 1
            for i in sorted(range(len(modes)), key=lambda i: order[i]):
                stride[names[modes[i]]] = acc
                acc *= extent[names[modes[i]]]
            rows = tuple((*pt, sum(stride[k] * x for k, x in zip(ins, pt)))
                         for pt in itertools.product(*(range(extent[k]) for k in ins)))
            items.append(Evaluated(label, "", FILE, line, spec, tuple(sorted(env.items())), text=text, map_rows=rows))
    return items
