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
* ``_packed_word(data, offset)``: a 32-bit load (``ld_global_nc_u32``) at a byte offset;
* ``_TensorCorePagedScore._score_tile`` (warp 0: ``tx`` = lane, ``tile_start`` = 0, ``head_tile`` = 0): key part ``p``
  of the lane is ``column = col + Int32(part * 8)`` (``col``, ``lane`` as the method assigns them), its packed data
  ``kb[part]`` and its scale bytes ``sb[part]``; ``a0 .. a3 = _packed_word(pool, kb[i] + byte_col + c)`` and ``b0, b1 =
  _packed_word(q, qb + byte_col + c)`` (``qb`` of the lane's ``head = ... + lane // 4``); ``sfa = _scale_pair(pool,
  sb[scale_row] + E)`` (the scale bytes of key part ``scale_row`` from group ``E`` on) and ``sfb = _scale_pair(qs, qsb
  + E)``; ``byte_col`` at lane 0 is the MMA ``kstep``'s first byte (two E2M1 per byte: K ``2 byte_col``, so scale
  group ``E + c`` is the MMA's K block ``E + c - 2 byte_col / 32``).

The MMA's 16 A rows are the warp's 16 keys in the kernel's order (``column - column(lane 0, part 0)``: its scores
are written back by that index) and its 8 B columns the heads ``head``.  So: A register ``p`` of a lane holds the 8
E2M1 of its key from K ``2 (offset - first byte)`` on (nibble ``e`` is K element ``e``: the packing of E2M1 pairs,
lower element in the low nibble, that PTX's ``.e2m1x2`` and the OCP MX format use, and FlashInfer's quantizer writes),
B register ``p`` likewise for the lane's head; SFA's lane holds the factor of the key of part ``scale_row``, SFB's
the factor of its head; byte ``j`` holds K block ``j`` of the MMA.  Compared with ``mma.m16n8k64.A.e2m1`` and
``.B.e2m1``, and, on the lanes FlashInfer's thread-id picks (the doc's rule), with the spec member of its selectors,
``mma.block_scale.m16n8k64.SF[AB].ue8m0`` (``.scale_vec::2X``), for both ``kstep``.
"""
from __future__ import annotations

import ast
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import Layout
from .common import Evaluated, located
from .pyfunc import Refused, parse_module

DIST = "flashinfer-python"
REL = "flashinfer/experimental/b12x/attention/dsa_indexer/mxfp4.py"
FILE = "dsa_indexer/mxfp4.py"
PTX = "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0"
WRAPPER, PAIR, CLASS, METHOD = "_mxfp4_mma", "_scale_pair", "_TensorCorePagedScore", "_score_tile"
A_SPEC, B_SPEC = "mma.m16n8k64.A.e2m1", "mma.m16n8k64.B.e2m1"
WORD = "_packed_word"
NIBBLES = 8         # E2M1 elements in a 32-bit register
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
    return parse_module(text, FILE)


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
    """The value of ``target = value`` in ``fn`` (at any depth; repeated only with the same value)."""
    found = [n.value for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == target]
    if not found or any(ast.dump(f) != ast.dump(found[0]) for f in found[1:]):
        raise Refused(f"{fn.name}: {len(found)} different assignments to {target} (one expected)", FILE, fn.lineno)
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


def _word_at(fn: ast.FunctionDef, target: str, tensor: str, base: str) -> tuple[int, ast.expr, ast.expr]:
    """``target = _packed_word(tensor, BASE + ...)``: (the index of ``base[i]`` or -1 when BASE is the name ``base``,
    the byte offset's expression with the base term taken out, the statement)."""
    v = _assigned(fn, target)
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == WORD and len(v.args) == 2
            and isinstance(v.args[0], ast.Name) and v.args[0].id == tensor):
        raise _refuse(f"{fn.name}: {target} is no {WORD}({tensor}, ...)", v)
    terms: list[ast.expr] = []

    def flat(e: ast.expr) -> None:
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            flat(e.left)
            flat(e.right)
        else:
            terms.append(e)

    flat(v.args[1])
    bases = [t for t in terms if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == base)
             or (isinstance(t, ast.Name) and t.id == base)]
    if len(bases) != 1:
        raise _refuse(f"{fn.name}: {target}'s address has no one {base} term", v)
    rest = [t for t in terms if t is not bases[0]]
    off: ast.expr = ast.Constant(0)
    for t in rest:
        off = ast.BinOp(off, ast.Add(), t)
    idx = value(bases[0].slice, {}) if isinstance(bases[0], ast.Subscript) else -1
    return idx, off, v


def lanes(tree: ast.Module) -> dict[str, object]:
    """Per lane and ``kstep``: the key index (A row) of each key part, SFA's key part, the lane's B column, each
    scale byte's K block, and each A and B register's first K (see the module docstring)."""
    fn = _function(tree, METHOD, CLASS)
    word = _function(tree, WORD)
    if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "ld_global_nc_u32"
               for n in ast.walk(word)):
        raise Refused(f"{WORD}: no ld_global_nc_u32 (a 32-bit load at the offset)", FILE, word.lineno)
    fills = {n.targets[0].value.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Subscript) and isinstance(n.targets[0].value, ast.Name)
             and isinstance(n.targets[0].slice, ast.Name) and n.targets[0].slice.id == "part"}
    if not {"kb", "sb"} <= fills:
        raise Refused(f"{METHOD}: kb[part] and sb[part] (a key's data and scales) not both filled", FILE, fn.lineno)
    a_regs = {p: _word_at(fn, f"a{p}", "pool", "kb") for p in range(4)}
    b_regs = {p: _word_at(fn, f"b{p}", "q", "qb") for p in range(2)}
    base_a, groups_a = _scale_call(fn, "sfa", "pool")
    if not (isinstance(base_a, ast.Subscript) and isinstance(base_a.value, ast.Name) and base_a.value.id == "sb"
            and isinstance(base_a.slice, ast.Name)):
        raise _refuse(f"{METHOD}: sfa's base is no sb[name]", base_a)
    part_name = base_a.slice.id
    base_b, groups_b = _scale_call(fn, "sfb", "qs")
    if not (isinstance(base_b, ast.Name) and base_b.id == "qsb"):
        raise _refuse(f"{METHOD}: sfb's base is no qsb", base_b)
    for name in ("qsb", "qb"):
        e = _assigned(fn, name)
        if not any(isinstance(n, ast.Name) and n.id == "head" for n in ast.walk(e)):
            raise _refuse(f"{METHOD}: {name} does not depend on head", e)
    e_lane, e_col, e_column = _assigned(fn, "lane"), _assigned(fn, "col"), _assigned(fn, "column")
    e_part, e_head, e_bcol = _assigned(fn, part_name), _assigned(fn, "head"), _assigned(fn, "byte_col")
    out: dict[str, object] = {"SFA": _assigned(fn, "sfa").lineno, "SFB": _assigned(fn, "sfb").lineno,
                              "A": a_regs[0][2].lineno, "B": b_regs[0][2].lineno,
                              "text": f"{part_name} = {ast.unparse(e_part)}; column = {ast.unparse(e_column)}; "
                                      f"col = {ast.unparse(e_col)}; head = {ast.unparse(e_head)}"}
    per: dict[tuple[int, int], dict[str, object]] = {}
    key0 = None
    for ln in range(32):
        env = {"tx": ln, "tile_start": 0, "head_tile": 0}
        env["lane"] = value(e_lane, env)
        env["col"] = value(e_col, env)
        keys = {p: value(e_column, {**env, "part": p}) for p in range(2)}
        key0 = keys[0] if key0 is None else key0
        for kstep in range(KSTEPS):
            env["kstep"] = kstep
            env["byte_col"] = value(e_bcol, env)
            first = value(e_bcol, {**env, "lane": 0})        # the MMA's first byte: K 2 * first (two E2M1 a byte)
            if (2 * first) % SF_BLOCK:
                raise _refuse(f"{METHOD}: kstep {kstep} starts at K {2 * first}, inside a scale block", e_bcol)
            a = {}
            for p, (idx, off, st) in a_regs.items():
                if idx not in keys:
                    raise _refuse(f"{METHOD}: a{p} is loaded from kb[{idx}], no key part", st)
                a[p] = (keys[idx] - key0, 2 * (value(off, env) - first))
            per[(ln, kstep)] = {
                "A": a, "B": {p: 2 * (value(off, env) - first) for p, (_, off, _) in b_regs.items()},
                "sfa_row": keys[value(e_part, env)] - key0, "col": value(e_head, env),   # head_tile 0
                "SFA": value(groups_a, env) - 2 * first // SF_BLOCK, "SFB": value(groups_b, env) - 2 * first // SF_BLOCK}
    out["per"] = per
    return out


def mxf4_items(specs: list, root: Path | None = None) -> list[Evaluated]:
    """The SFA and SFB fragments FlashInfer's MXFP4 indexer feeds its 2X MMA (``root``: a directory holding
    ``REL``; default the installed wheel).  Nothing when FlashInfer or the specs are absent."""
    lays = {x.id: x for x in specs if isinstance(x, Layout)}
    where = (Path(root) / REL) if root is not None else located(DIST, REL)
    spec = {part: in_use_of(lays, sid) for part, sid in SPECS.items() if sid in lays}
    for part, sid in (("A", A_SPEC), ("B", B_SPEC)):
        if sid in lays:
            spec[part] = in_use_of(lays, sid)
    if where is None or not where.is_file() or not spec:
        return []
    try:
        tree = _tree(where.read_text(encoding="utf-8", errors="replace"))
        (ba, ta), (bb, tb), wline = selectors(tree)
        byte_of = pair_bytes(tree)
        got = lanes(tree)
    except Refused as e:
        return [Evaluated(f"{METHOD} -> {WRAPPER}", part, FILE, e.line, s, error=str(e)) for part, s in spec.items()]
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
                at = got["per"][(ln, kstep)]  # type: ignore[index]
                picked = (ln % 4) >> 1 == thread_id if part == "SFA" else ln % 4 == thread_id
                for i in range(s.n_elements):
                    if not picked or i not in byte_of:
                        ents.append((ln, i, None, None))
                    elif part == "SFA":
                        ents.append((ln, i, at["sfa_row"], at["SFA"] + byte_of[i]))
                    else:
                        ents.append((ln, i, at["SFB"] + byte_of[i], at["col"]))
            label = f"{CLASS}.{METHOD} -> {WRAPPER} ({part}: byte-id {byte_id}, thread-id {thread_id}, kstep {kstep})"
            items.append(Evaluated(label, part, FILE, int(got[part]), s, params, tuple(ents),  # type: ignore[call-overload]
                                   str(got["text"])))
    for part, sid in (("A", A_SPEC), ("B", B_SPEC)):   # the e2m1 operands: nibble e of a word is K element e
        s = in_use_of(lays, sid) if sid in lays else None
        if s is None:
            continue
        per = NIBBLES
        for kstep in range(KSTEPS):
            ents = []
            for ln in range(32):
                at = got["per"][(ln, kstep)]  # type: ignore[index]
                for i in range(s.n_elements):
                    if part == "A":
                        row, k0 = at["A"][i // per]
                        ents.append((ln, i, row, k0 + i % per))
                    else:
                        ents.append((ln, i, at["B"][i // per] + i % per, at["col"]))
            label = f"{CLASS}.{METHOD} -> {WRAPPER} ({part}, kstep {kstep})"
            items.append(Evaluated(label, part, FILE, int(got[part]), s, (), tuple(ents),  # type: ignore[call-overload]
                                   str(got["text"])))
    return items
