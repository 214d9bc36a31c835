"""FlashInfer's sm_120 MXFP4 ``mma ... .scale_vec::2X`` scale factors, read with ``ast`` (part of ``flashinfer``).

FlashInfer 0.7.4's sparse-attention indexer for MXFP4 (``flashinfer/experimental/b12x/attention/dsa_indexer/
mxfp4.py``, a CuTe DSL kernel: Python, never imported or run here) issues ``mma.sync.aligned.kind::mxf4nvf4
.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0`` with two UE8M0 factors per operand row.
What it states, each statement found in the file's syntax tree by its target and evaluated by a closed integer
evaluator (names, integer literals, ``+ - * // % << |``, and the one-argument casts ``Int32``/``Int64``/``Uint32``/
``Uint16`` as the identity; anything else refused at its file:line:col):

* ``_mxfp4_mma``: the asm string (the instruction above) and, for each of ``sfa`` and ``sfb`` in turn, the operand
  tuple ``(Uint32(scale), Uint16(byte-id), Uint16(thread-id))`` (PTX's ``scale-data, {byte-id, thread-id}``);
* ``_scale_pair(data, offset)``: its return ``Uint32(data[offset + c]) << s | ...``: byte ``s / 8`` of the register
  is the scale byte at ``offset + c``;
* ``_TensorCorePagedScore._score_tile`` (warp 0: ``tx`` = lane, ``tile_start`` = 0, ``head_tile`` = 0): the key of
  part ``p`` fills ``kb[part]`` (its packed data) and ``sb[part]`` (its scale bytes), and A registers ``a0 .. a3`` are
  loaded from ``kb[0], kb[1], kb[0], kb[1]`` (key parts 0, 1, 0, 1); ``sfa = _scale_pair(pool, sb[scale_row] +
  E)`` with ``scale_row = lane % ...``: the scale bytes of key part ``scale_row`` from its group ``E`` on; ``head =
  ... + lane // 4`` is the lane's B column and ``sfb = _scale_pair(qs, qsb + E)`` its scale bytes; ``byte_col``
  gives the packed bytes of the MMA ``kstep`` (two E2M1 per byte: K from ``2 byte_col`` at lane 0, so group ``E +
  c`` is the MMA's K block ``E + c - 2 byte_col / 32``).

A key's row in the MMA is the row of the A register it was loaded into (the catalog's ``mma.m16n8k64.A.e2m1``, the
PTX fragment: register ``p`` of lane ``L``), so SFA's lane ``L`` holds the factor of that row (the key of part
``scale_row``) and SFB's lane the factor of column ``head``; byte ``j`` holds K block ``j`` of the MMA.  Compared
on the lanes FlashInfer's thread-id picks (the doc's rule) with the spec member of its selectors,
``mma.block_scale.m16n8k64.SF[AB].ue8m0`` (``.scale_vec::2X``), for both ``kstep``.
"""
from __future__ import annotations

import ast
from pathlib import Path

from ...layout.ids import effective_id
from ...layout.model import Layout
from .common import Evaluated, located
from .pyfunc import Refused

DIST = "flashinfer-python"
REL = "flashinfer/experimental/b12x/attention/dsa_indexer/mxfp4.py"
FILE = "dsa_indexer/mxfp4.py"
PTX = "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0"
WRAPPER, PAIR, CLASS, METHOD = "_mxfp4_mma", "_scale_pair", "_TensorCorePagedScore", "_score_tile"
A_SPEC = "mma.m16n8k64.A.e2m1"
SPECS = {"SFA": "mma.block_scale.m16n8k64.SFA.ue8m0", "SFB": "mma.block_scale.m16n8k64.SFB.ue8m0"}
CASTS = frozenset({"Int32", "Int64", "Uint32", "Uint16"})
SF_BLOCK = 32       # .scale_vec::2X of a K = 64 MMA: one factor per 32 elements
KSTEPS = 2
LIMIT = 1 << 40


def _refuse(reason: str, node: ast.AST) -> Refused:
    return Refused(reason, FILE, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def value(e: ast.expr, env: dict[str, int]) -> int:
    """``e`` over the closed subset (see the module docstring)."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.Name):
        if e.id not in env:
            raise _refuse(f"{e.id} is bound to no value here", e)
        return env[e.id]
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in CASTS and len(e.args) == 1 \
            and not e.keywords:
        return value(e.args[0], env)
    if isinstance(e, ast.BinOp):
        a, b = value(e.left, env), value(e.right, env)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.BitOr: lambda: a | b,
               ast.FloorDiv: lambda: a // b if b else None, ast.Mod: lambda: a % b if b else None,
               ast.LShift: lambda: a << b if 0 <= b < 64 else None}
        op = ops.get(type(e.op))
        v = op() if op is not None else None
        if v is None or not -LIMIT < v < LIMIT:
            raise _refuse(f"{type(e.op).__name__} outside the subset (or out of bounds)", e)
        return v
    raise _refuse(f"{type(e).__name__} outside the integer subset", e)


def _tree(text: str) -> ast.Module:
    try:
        return ast.parse(text, filename=FILE)
    except SyntaxError as e:
        raise Refused(e.msg, FILE, e.lineno or 0, e.offset or 0) from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise Refused(type(e).__name__, FILE, 0) from None


def _function(tree: ast.Module, name: str, cls: str = "") -> ast.FunctionDef:
    body = tree.body
    if cls:
        c = [n for n in body if isinstance(n, ast.ClassDef) and n.name == cls]
        if len(c) != 1:
            raise Refused(f"no class {cls}", FILE, 0)
        body = c[0].body
    fs = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == name]
    if len(fs) != 1:
        raise Refused(f"{len(fs)} definitions of {cls + '.' if cls else ''}{name} (one expected)", FILE, 0)
    return fs[0]


def _assigned(fn: ast.FunctionDef, target: str) -> ast.expr:
    """The value of the only ``target = value`` in ``fn`` (at any depth)."""
    found = [n.value for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == target]
    if len(found) != 1:
        raise Refused(f"{fn.name}: {len(found)} assignments to {target} (one expected)", FILE, fn.lineno)
    return found[0]


def selectors(tree: ast.Module) -> tuple[tuple[int, int], tuple[int, int], int]:
    """``_mxfp4_mma``'s ``(byte-id, thread-id)`` of A and B and its line; refused unless it issues ``PTX``."""
    fn = _function(tree, WRAPPER)
    strings = [" ".join(n.value.split()) for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if not any(PTX in s for s in strings):
        raise Refused(f"{WRAPPER}: no {PTX}", FILE, fn.lineno)
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
             and isinstance(n.iter, ast.Tuple) and [getattr(x, "id", "") for x in n.iter.elts] == ["sfa", "sfb"]]
    if len(loops) != 1:
        raise Refused(f"{WRAPPER}: no loop over (sfa, sfb) adding the scale operands", FILE, fn.lineno)
    tuples = [n for n in ast.walk(loops[0]) if isinstance(n, ast.Tuple) and len(n.elts) == 3]
    if len(tuples) != 1:
        raise Refused(f"{WRAPPER}: the (scale, byte-id, thread-id) operands not found", FILE, loops[0].lineno)
    ids = []
    for x in tuples[0].elts[1:]:
        call = x.func.value if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) else x
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Uint16"
                and len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and type(call.args[0].value) is int):
            raise _refuse(f"{WRAPPER}: a selector that is no Uint16 literal", x)
        ids.append(call.args[0].value)
    return (ids[0], ids[1]), (ids[0], ids[1]), fn.lineno


def pair_bytes(tree: ast.Module) -> dict[int, int]:
    """``_scale_pair``'s byte of the register -> the offset (from ``offset``) of the scale byte it holds."""
    fn = _function(tree, PAIR)
    rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if len(rets) != 1 or rets[0].value is None:
        raise Refused(f"{PAIR}: one return expected", FILE, fn.lineno)
    out: dict[int, int] = {}

    def term(e: ast.expr) -> None:
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitOr):
            term(e.left)
            term(e.right)
            return
        shift = 0
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.LShift):
            shift, e = value(e.right, {}), e.left
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in CASTS and len(e.args) == 1:
            e = e.args[0]
        if not (isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and e.value.id == "data"):
            raise _refuse(f"{PAIR}: a term that is no data[offset + c]", e)
        idx = e.slice
        c = 0 if isinstance(idx, ast.Name) and idx.id == "offset" else None
        if isinstance(idx, ast.BinOp) and isinstance(idx.op, ast.Add) and isinstance(idx.left, ast.Name) \
                and idx.left.id == "offset":
            c = value(idx.right, {})
        if c is None or shift % 8 or shift // 8 in out:
            raise _refuse(f"{PAIR}: a term that is no byte data[offset + c] << 8 j", e)
        out[shift // 8] = c

    term(rets[0].value)
    return out


def _scale_call(fn: ast.FunctionDef, target: str, tensor: str) -> tuple[ast.expr, ast.expr]:
    """``target = _scale_pair(tensor, BASE + E)``: (BASE, E)."""
    v = _assigned(fn, target)
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == PAIR and len(v.args) == 2
            and isinstance(v.args[0], ast.Name) and v.args[0].id == tensor and isinstance(v.args[1], ast.BinOp)
            and isinstance(v.args[1].op, ast.Add)):
        raise _refuse(f"{fn.name}: {target} is no {PAIR}({tensor}, base + groups)", v)
    return v.args[1].left, v.args[1].right


def lanes(tree: ast.Module) -> dict[str, object]:
    """Per lane and ``kstep``: SFA's A register (key part), SFB's column, each byte's K block (see the docstring)."""
    fn = _function(tree, METHOD, CLASS)
    for p in range(4):   # a_p holds key part p % 2
        v = _assigned(fn, f"a{p}")
        subs = [n for n in ast.walk(v) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                and n.value.id == "kb"]
        if len(subs) != 1 or value(subs[0].slice, {}) != p % 2:
            raise _refuse(f"{METHOD}: a{p} is not loaded from kb[{p % 2}]", v)
    base_a, groups_a = _scale_call(fn, "sfa", "pool")
    if not (isinstance(base_a, ast.Subscript) and isinstance(base_a.value, ast.Name) and base_a.value.id == "sb"
            and isinstance(base_a.slice, ast.Name)):
        raise _refuse(f"{METHOD}: sfa's base is no sb[name]", base_a)
    part_name = base_a.slice.id
    base_b, groups_b = _scale_call(fn, "sfb", "qs")
    if not (isinstance(base_b, ast.Name) and base_b.id == "qsb"):
        raise _refuse(f"{METHOD}: sfb's base is no qsb", base_b)
    qsb = _assigned(fn, "qsb")
    if not any(isinstance(n, ast.Name) and n.id == "head" for n in ast.walk(qsb)):
        raise _refuse(f"{METHOD}: qsb does not depend on head", qsb)
    fills = {n.targets[0].value.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Subscript) and isinstance(n.targets[0].value, ast.Name)
             and isinstance(n.targets[0].slice, ast.Name) and n.targets[0].slice.id == "part"}
    if not {"kb", "sb"} <= fills:
        raise Refused(f"{METHOD}: kb[part] and sb[part] (a key's data and scales) not both filled", FILE, fn.lineno)
    e_lane, e_col = _assigned(fn, "lane"), _assigned(fn, "col")
    e_part, e_head, e_bcol = _assigned(fn, part_name), _assigned(fn, "head"), _assigned(fn, "byte_col")
    out: dict[str, object] = {"SFA": _assigned(fn, "sfa").lineno, "SFB": _assigned(fn, "sfb").lineno, "text": f"{part_name} = {ast.unparse(e_part)}; "
                              f"col = {ast.unparse(e_col)}; head = {ast.unparse(e_head)}"}
    per: dict[tuple[int, int], tuple[int, int, dict[str, int]]] = {}
    for ln in range(32):
        env = {"tx": ln, "tile_start": 0, "head_tile": 0}
        env["lane"] = value(e_lane, env)
        env["col"] = value(e_col, env)
        part = value(e_part, env)
        for kstep in range(KSTEPS):
            env["kstep"] = kstep
            k0 = 2 * value(e_bcol, {**env, "lane": 0})        # two E2M1 per byte: the MMA's first K
            if k0 % SF_BLOCK:
                raise _refuse(f"{METHOD}: kstep {kstep} starts at K {k0}, inside a scale block", e_bcol)
            first = {"SFA": value(groups_a, env) - k0 // SF_BLOCK, "SFB": value(groups_b, env) - k0 // SF_BLOCK}
            per[(ln, kstep)] = (part, value(e_head, env), first)   # head_tile 0: the tile's column
    out["per"] = per
    return out


def mxf4_items(specs: list, root: Path | None = None) -> list[Evaluated]:
    """The SFA and SFB fragments FlashInfer's MXFP4 indexer feeds its 2X MMA (``root``: a directory holding
    ``REL``; default the installed wheel).  Nothing when FlashInfer or the specs are absent."""
    lays = {x.id: x for x in specs if isinstance(x, Layout)}
    where = (Path(root) / REL) if root is not None else located(DIST, REL)
    spec = {part: lays[effective_id(i, lays)] for part, i in SPECS.items() if i in lays}
    a_spec = lays.get(effective_id(A_SPEC, lays)) if A_SPEC in lays else None
    if where is None or not where.is_file() or not spec:
        return []
    try:
        tree = _tree(where.read_text(encoding="utf-8", errors="replace"))
        (ba, ta), (bb, tb), wline = selectors(tree)
        byte_of = pair_bytes(tree)
        got = lanes(tree)
        if a_spec is None:
            raise Refused(f"no {A_SPEC} in the catalog (the A rows the keys are loaded into)", FILE, 0)
    except Refused as e:
        return [Evaluated(f"{METHOD} -> {WRAPPER}", part, FILE, e.line, s, error=str(e)) for part, s in spec.items()]
    per_reg = a_spec.n_elements // 4
    items = []
    for part, (byte_id, thread_id) in (("SFA", (ba, ta)), ("SFB", (bb, tb))):
        s = spec.get(part)
        if s is None:
            continue
        x = part[-1]
        names = {p.name for p in s.params}
        params = tuple(sorted((k, v) for k, v in ((f"THREAD_ID_{x}", thread_id), (f"BYTE_ID_{x}", byte_id))
                              if k in names))
        for kstep in range(KSTEPS):
            ents: list[tuple[int, int, int | None, int | None]] = []
            for ln in range(32):
                reg, col, first = got["per"][(ln, kstep)]  # type: ignore[index]
                picked = (ln % 4) >> 1 == thread_id if part == "SFA" else ln % 4 == thread_id
                for i in range(s.n_elements):
                    if not picked or i not in byte_of:
                        ents.append((ln, i, None, None))
                        continue
                    kb = first[part] + byte_of[i]
                    if part == "SFA":
                        row = a_spec.evaluate(ln, reg * per_reg)[0]
                        ents.append((ln, i, row, kb))
                    else:
                        ents.append((ln, i, kb, col))
            label = f"{CLASS}.{METHOD} -> {WRAPPER} ({part}: byte-id {byte_id}, thread-id {thread_id}, kstep {kstep})"
            items.append(Evaluated(label, part, FILE, int(got[part]), s, params, tuple(ents),  # type: ignore[call-overload]
                                   str(got["text"])))
    return items
