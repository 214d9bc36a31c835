"""Tensor Memory and block-scale storage: the data-path layouts A-G, their reading by tcgen05.ld, scale
factors, packing, storage layouts, and writer-against-reader decisions (both engines, every parameter value).

The CuTe derivations re-derive each data-path layout from CuTe's TMEM allocator atoms (CUTLASS 4.2
mma_traits_sm100.hpp, shape:stride text parsed by the CuTe importer) and prove it equal to the spec; when the
nvidia-cutlass wheel is installed, the atom texts are also found in its header.  The Triton derivations read
Triton's TensorMemoryLayout and tcgen05.ld register layouts (recorded from Triton 3.9 below; re-read live in a
subprocess when triton is installed)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from verify import api
from verify.outputs import reports_text
from verify.catalog.tmem import as_read_fragment, read_map
from verify.checks.consistency import decide
from verify.checks.maps import check_map_layout, same, surjective
from verify.checks.relations import check_relations
from verify.layout import algebra as A
from verify.layout import reshape
from verify.layout.dims import Dim
from verify.layout.named import TableMap, formula_map
from verify.layout.notations.cute_parse import parse_cute

from conftest import cli

SPECS = Path(__file__).resolve().parent.parent / "specs"
FILES = ["tcgen05.datapath.toml", "tcgen05.scale_factors.toml", "tcgen05.packing.toml", "storage.scale_factors.toml"]


@pytest.fixture(scope="module")
def specs():
    return api.load([str(SPECS)])


def _lay(specs, lid):
    return api.layout(specs, lid)


# ----------------------------------------------------------------------------- the specs, checked

@pytest.mark.parametrize("name", FILES)
def test_every_tensor_memory_and_storage_layout_is_checked_by_both_engines(name):
    specs = api.load([str(SPECS / name)])
    for m in api.map_layouts(specs):
        res = check_map_layout(m)
        for c in res.checks:
            assert c.engines["z3"] == c.engines["enumeration"] == c.status, (m.id, c.check, c.message)
            assert c.status == m.expect.get(c.check, "proved"), (m.id, c.check, c.message)


def test_layout_e_as_the_table_states_it_is_refuted_with_its_line(specs):
    e = _lay(specs, "tcgen05.datapath.E")
    assert e.provenance.erratum and e.provenance.source.line == 9 and e.provenance.source.section == "9.7.16.10.5"
    res = check_map_layout(e)
    assert res.get("in_range").status == "refuted"
    assert res.get("in_range").counterexample.to_json() == {"params": {"N": 64}, "point": {"row": 0, "col": 42},
                                                  "at": {"tmem_lane": 128, "tmem_col": 0}}
    assert [c.status for c in check_map_layout(_lay(specs, "tcgen05.datapath.E@corrected")).checks] == ["proved"] * 3


def test_list_shows_layouts_a_to_g_and_the_packing_formats(capsys):
    code, out, _ = cli(capsys, "list")
    assert code == 0
    for x in "ABCDEFG":
        assert f"tcgen05.datapath.{x}" in out
    assert "tcgen05.packing.A.mxf4" in out and "tcgen05.packing.A.b16.packed" in out
    code, out, _ = cli(capsys, "list", "--format", "json")
    maps = {m["id"]: m for m in json.loads(out)["maps"]}
    assert maps["tcgen05.datapath.D"]["section"] == "9.7.16.10.5"


def test_surjective_by_counting_is_a_z3_proof_and_a_hole_still_refutes():
    good = formula_map("tmem_lane = row\ntmem_col = col\n", (Dim("row", 128), Dim("col", 256)),
                       (Dim("tmem_lane", 128), Dim("tmem_col", 256)))
    r = surjective(good)
    assert r.status == "proved" and r.engines == {"z3": "proved", "enumeration": "proved"}
    bad = formula_map("tmem_lane = row % 64\ntmem_col = col\n", (Dim("row", 128), Dim("col", 256)),
                      (Dim("tmem_lane", 128), Dim("tmem_col", 256)))
    r = surjective(bad)
    assert r.status == "refuted" and r.counterexample.to_json() == {"params": {}, "at": {"tmem_lane": 64, "tmem_col": 0}}


# ----------------------------------------------------------------------------- each layout is a bijection onto its region

@pytest.mark.parametrize("lid,env,lanes", [
    ("tcgen05.datapath.F", {"N": 64, "BASE": 0}, [q * 32 + l for q in range(4) for l in range(16)]),
    ("tcgen05.datapath.F", {"N": 64, "BASE": 16}, [q * 32 + 16 + l for q in range(4) for l in range(16)]),
])
def test_half_datapath_layouts_fill_exactly_their_lanes(specs, lid, env, lanes):
    lay = _lay(specs, lid)
    image = {(lay.evaluate(row=r, col=c, **env)["tmem_lane"], c) for r in range(64) for c in range(env["N"])}
    assert image == {(l, c) for l in lanes for c in range(env["N"])}


# ----------------------------------------------------------------------------- read by tcgen05.ld

def test_relations_say_who_holds_each_element(specs):
    res = {r.id: r for r in check_relations(specs)}
    ids = [i for i in res if i.startswith("tmem_datapath_")]
    assert sorted({i.split("_")[2] for i in ids}) == list("ABCDEFG".replace("E", "E"))[:0] + sorted("ABCDEFG")
    for i in ids:
        for c in res[i].checks:
            assert c.status == "proved" and c.engines["z3"] == "proved" and c.engines["enumeration"] == "proved", (i, c)
    assert [c.check for c in res["tmem_datapath_D_by_32x32b"].checks] == ["equal", "reads_once"]


def test_a_wrong_claim_of_who_holds_what_is_refuted(specs):
    d, ld = _lay(specs, "tcgen05.datapath.D"), _lay(specs, "tcgen05.ld.32x32b.R.b32").instance(NUM=128)
    given = as_read_fragment(read_map(d, ld, {"N": 128}), ld, (128, 128), "D by 32x32b")
    wrong = formula_map("row = thread % 32\ncol = i\n", (Dim("thread", 128), Dim("i", 128)), (Dim("row", 128), Dim("col", 128)))
    from verify.checks.equivalence import same_map as same_family_map
    r = same_family_map(as_read_fragment(wrong, ld, (128, 128), "wrong"), given)
    assert r.status == "refuted" and r.engines == {"z3": "refuted", "enumeration": "refuted"}


def test_layout_f_read_by_32x32b_reads_lanes_that_hold_nothing(specs):
    f, ld = _lay(specs, "tcgen05.datapath.F"), _lay(specs, "tcgen05.ld.32x32b.R.b32").instance(NUM=64)
    frag = as_read_fragment(read_map(f, ld, {"N": 64, "BASE": 0}), ld, (64, 64), "F by 32x32b")
    res = api.check(frag)
    r = res.get("in_range")
    assert r.status == "refuted" and r.counterexample["lane"] == 16  # lane 16 of warp 0: TMEM lane 16, not in F


def test_read_map_needs_a_cta_for_pair_layouts(specs):
    a, ld = _lay(specs, "tcgen05.datapath.A"), _lay(specs, "tcgen05.ld.32x32b.R.b32").instance(NUM=128)
    with pytest.raises(ValueError, match="CTA pair"):
        read_map(a, ld, {"N": 128})


# ----------------------------------------------------------------------------- derived from CuTe

# CUTLASS 4.2 include/cute/atom/mma_traits_sm100.hpp: the TMEM allocator atoms, (M, N) -> CuTe's virtual
# TMEM address dp + 128 * col (instantiated at N = 64), and the header line of each
CUTE_ATOMS = {
    "D": ("(128,64):(1,128)", 521, "Layout<Shape <_128,Int<N_MMA>>,"),
    "F": ("((16,4),64):((1,32),128)", 507, "Layout<Shape <Shape <_16,  _4>, Int<N_MMA>>,"),
    "E@corrected": ("(64,(32,2)):(1,(128,64))", 935, "Layout<Shape <_64, Shape<Int<N_MMA/2>, _2>>,"),
    "G": ("(32,(16,4)):(1,(128,32))", 922, "Layout<Shape <_32, Shape<Int<N_MMA/4>, _4>>,"),
    "B": ("(64,(32,2)):(1,(128,64))", 550, "Layout<Shape <_64,Shape <Int<N_MMA/2>, _2>>,"),
    "A": ("(128,64):(1,128)", 572, "Layout<Shape <_128,Int<N_MMA>>,"),
}


def _cute_map(text: str, rows: int, cols: int, lanes: int = 128):
    """A CuTe (row, col) -> virtual TMEM address layout as a table (row, col) -> (tmem_lane, tmem_col)."""
    cl = parse_cute(text)
    out = []
    for r in range(rows):
        for c in range(cols):
            v = cl(r, c)
            out.append((r, c, v % 128, v // 128))
    return TableMap((Dim("row", rows), Dim("col", cols)), (Dim("tmem_lane", lanes), Dim("tmem_col", cols)), tuple(out))


@pytest.mark.parametrize("which", sorted(CUTE_ATOMS))
def test_cute_derivation_agrees_with_the_spec(specs, which):
    text, _, _ = CUTE_ATOMS[which]
    lay = _lay(specs, f"tcgen05.datapath.{which}")
    env = {"N": 64, **({"BASE": 0} if any(p.name == "BASE" for p in lay.params) else {})}
    spec_map = A.bind(lay.map, **env)
    rows = spec_map.inputs[0].size
    if which in ("A", "B"):  # one CTA of the pair: rows of CTA 0, the CTA output dropped by the comparison map
        per = rows // 2
        spec_map = reshape.restrict(spec_map, "row", 0, per)
        rows = per
        cute = _cute_map(text, rows, 64)
        spec_map = A.compose(formula_map("tmem_lane = tmem_lane\ntmem_col = tmem_col\n".replace("tmem_lane = tmem_lane", "out_lane = tmem_lane").replace("tmem_col = tmem_col", "out_col = tmem_col"),
                                         (Dim("tmem_lane", 128), Dim("tmem_col", 64)), (Dim("out_lane", 128), Dim("out_col", 64))), spec_map)
        cute = reshape.relabel(cute, outputs={"tmem_lane": "out_lane", "tmem_col": "out_col"})
    else:
        cute = _cute_map(text, rows, 64)
    r = same(spec_map, cute)
    assert r.status == "proved" and r.engines == {"z3": "proved", "enumeration": "proved"}, r.message


def test_cute_derivation_of_layout_c_disagrees_with_the_table(specs):
    """CuTe 4.2's 2x1SM sparse traits allocate D with the 2x2 atom; the table says 4x1 half datapath."""
    c = reshape.restrict(A.bind(_lay(specs, "tcgen05.datapath.C").map, N=64, BASE=0), "row", 0, 64)
    c = A.compose(formula_map("out_lane = tmem_lane\nout_col = tmem_col\n", (Dim("tmem_lane", 128), Dim("tmem_col", 64)),
                              (Dim("out_lane", 128), Dim("out_col", 64))), c)
    cute = reshape.relabel(_cute_map("(64,(32,2)):(1,(128,64))", 64, 64), outputs={"tmem_lane": "out_lane", "tmem_col": "out_col"})
    r = same(c, cute)
    assert r.status == "refuted" and r.counterexample["point"] == {"row": 0, "col": 32}


def test_cute_atoms_are_in_the_installed_header():
    cutlass = api.cutlass_headers()
    if cutlass is None:
        pytest.skip("nvidia-cutlass is not installed (pip install nvidia-cutlass): the atom texts are not looked up")
    lines = (cutlass / "cute" / "atom" / "mma_traits_sm100.hpp").read_text(encoding="utf-8").splitlines()
    for which, (_, line, text) in CUTE_ATOMS.items():
        assert " ".join(lines[line - 1].split()).endswith(" ".join(text.split())), (which, lines[line - 1])


# ----------------------------------------------------------------------------- derived from Triton

# Triton 3.9, gluon TensorMemoryLayout(block, col_stride=1) -> to_linear_layout(shape): TMEM (lane bits, column
# bits) -> (row, col); and compute_tmem_reg_layout(fp32, shape, ..., num_warps=4, "32x32b")
TRITON_TMEM = {
    "D": {"block": [128, 64], "shape": [128, 64], "rows": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0], [64, 0]],
          "cols": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]]},
    "F": {"block": [64, 64], "shape": [64, 64], "rows": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0], [16, 0], [32, 0]],
          "cols": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]]},
}
TRITON_REG_D = {"reg": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]],
                "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], "warp": [[32, 0], [64, 0]]}


def _xor(bases, x):
    r = c = 0
    for b, (dr, dc) in enumerate(bases):
        if x >> b & 1:
            r ^= dr
            c ^= dc
    return r, c


def _triton_tmem(rec):
    rows, cols = rec["shape"]
    ncol = 1 << len(rec["cols"])
    out = []
    for lane in range(128):
        for col in range(ncol):
            a, b = _xor(rec["rows"], lane)
            c, d = _xor(rec["cols"], col)
            out.append((lane, col, a ^ c, b ^ d))
    return TableMap((Dim("tmem_lane", 128), Dim("tmem_col", ncol)), (Dim("row", rows), Dim("col", cols)), tuple(out))


@pytest.mark.parametrize("which", sorted(TRITON_TMEM))
def test_triton_reads_every_element_where_the_spec_puts_it(specs, which):
    lay = _lay(specs, f"tcgen05.datapath.{which}")
    env = {"N": 64, **({"BASE": 0} if which == "F" else {})}
    back = A.compose(_triton_tmem(TRITON_TMEM[which]), A.bind(lay.map, **env))
    r = same(back, A.identity(*A.bind(lay.map, **env).inputs))
    assert r.status == "proved" and r.engines == {"z3": "proved", "enumeration": "proved"}, r.message


def test_triton_register_layout_is_layout_d_read_by_32x32b(specs):
    d, ld = _lay(specs, "tcgen05.datapath.D"), _lay(specs, "tcgen05.ld.32x32b.R.b32").instance(NUM=64)
    ours = read_map(d, ld, {"N": 64})
    rows = [(t, i, *(_xor(TRITON_REG_D["lane"], t % 32)[k] ^ _xor(TRITON_REG_D["warp"], t // 32)[k]
                      ^ _xor(TRITON_REG_D["reg"], i)[k] for k in (0, 1))) for t in range(128) for i in range(64)]
    triton = TableMap((Dim("thread", 128), Dim("i", 64)), (Dim("row", 128), Dim("col", 64)), tuple(rows))
    r = same(ours, triton)
    assert r.status == "proved", r.message


_TRITON_SCRIPT = r"""
import json
from triton._C.libtriton import ir, gluon_ir
import triton.experimental.gluon.language as gl
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout
from triton._C.libtriton.gluon_ir import compute_tmem_reg_layout
ctx = ir.context(); ir.load_dialects(ctx)
b = gluon_ir.GluonOpBuilder(ctx)
out = {}
for k, blk in (("D", (128, 64)), ("F", (64, 64))):
    ll = b.to_linear_layout(TensorMemoryLayout(block=blk, col_stride=1)._to_ir(b), list(blk))
    out[k] = {"rows": ll.rows, "cols": ll.cols}
r = compute_tmem_reg_layout(gl.float32, [128, 64], [128, 64], TensorMemoryLayout(block=(128, 64), col_stride=1), 4, "32x32b")
out["reg"] = {"reg": r.reg_bases, "lane": r.lane_bases, "warp": r.warp_bases}
print(json.dumps(out))
"""


def test_recorded_triton_layouts_match_live_triton():
    try:
        import importlib.util
        if importlib.util.find_spec("triton") is None:
            raise ImportError
    except ImportError:
        pytest.skip("triton is not installed (pip install triton): the recorded Triton layouts are not re-read")
    p = subprocess.run([sys.executable, "-c", _TRITON_SCRIPT], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        pytest.skip(f"triton could not compute layouts here: {p.stderr.strip().splitlines()[-1:]}")
    live = json.loads(p.stdout.strip().splitlines()[-1])
    for k in ("D", "F"):
        assert live[k] == {"rows": TRITON_TMEM[k]["rows"], "cols": TRITON_TMEM[k]["cols"]}
    assert live["reg"] == TRITON_REG_D


# ----------------------------------------------------------------------------- packing and scale factors

ELEMENT_BITS = {"tcgen05.packing.D.b16.unpacked": 16, "tcgen05.packing.A.b16.packed": 16,
                "tcgen05.packing.A.b16.unpacked": 16, "tcgen05.packing.A.mxf8f6f4": 8, "tcgen05.packing.A.mxf4": 4,
                "tcgen05.packing.A.b32": 32}


@pytest.mark.parametrize("lid", sorted(ELEMENT_BITS))
def test_packing_is_consistent_with_the_element_width(specs, lid):
    lay = _lay(specs, lid)
    slots = {d.name: d.size for d in lay.outputs}["slot"]
    container = 32 // slots
    assert container * slots == 32 and ELEMENT_BITS[lid] <= container
    assert all(c.status == "proved" for c in check_map_layout(lay).checks)  # one element per container, all used


def test_each_row_and_k_block_has_exactly_one_scale_factor(specs):
    res = check_map_layout(_lay(specs, "tcgen05.sf.A.4x1"))
    assert [(c.check, c.status) for c in res.checks] == [("in_range", "proved"), ("injective", "proved")]
    bug = _lay(specs, "tcgen05.sf.A.4x1.sfa_id0")
    from verify.checks.maps import injective
    r = injective(bug.map)
    assert r.status == "refuted" and r.counterexample["params"] == {"VS": 1}


# ----------------------------------------------------------------------------- writer against reader

SF_TILE = ["storage.sf.cutlass.128x4.tile", "tcgen05.cp.source.32x128b", "tcgen05.cp.32x128b.warpx4"]


@pytest.mark.parametrize("vs,kind", [(4, "NVFP4 (block16, 4X)"), (1, "MXFP8 (block32, 1X)"), (2, "MXFP4 (2X)")])
def test_a_128x4_scale_tile_copied_by_tcgen05_cp_is_what_the_mma_reads(specs, vs, kind):
    d = api.consistent(SF_TILE, "tcgen05.sf.A.4x1", specs, params={"VS": vs})
    assert d.status == "consistent", reports_text.decision_lines(d)
    assert all(c.engines == {"z3": "proved", "enumeration": "proved"} for c in d.checks)


def test_mmas_never_handed_their_scale_factor_slice(specs):
    d = api.consistent(SF_TILE, "tcgen05.sf.A.4x1.sfa_id0", specs)
    assert d.status == "mismatch"
    c = d.get("same_place")
    assert c.counterexample.to_json() == {"params": {"VS": 1}, "element": {"row": 0, "kb": 1},
                                "written": {"tmem_lane": 0, "tmem_col": 0, "byte": 1},
                                "read": {"tmem_lane": 0, "tmem_col": 0, "byte": 0}}
    assert c.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert d.get("no_padding_read").status == "proved"


def test_flat_batch_padding_against_per_batch_padding(specs):
    d = api.consistent("storage.sf.flat_batch_padding", "storage.sf.cutlass.128x4.quantizer", specs)
    assert d.status == "mismatch"
    assert d.get("same_place").message == ("M = 64, KB = 2, L = 2: element (l 1, m 0, kb 0) is written at (offset 8) "
                                           "and read from (offset 512)")
    assert d.get("reader_in_range").status == "refuted"
    # the layouts agree where M is a multiple of 128
    ok = api.consistent("storage.sf.flat_batch_padding", "storage.sf.cutlass.128x4.quantizer", specs, params={"M": 128})
    assert ok.status == "consistent"


def test_swizzled_scales_read_linearly(specs):
    d = api.consistent("storage.sf.cutlass.128x4.quantizer", "storage.sf.linear", specs)
    assert d.status == "mismatch" and d.get("same_place").counterexample["element"] == {"l": 0, "m": 1, "kb": 0}


def test_host_80_byte_rows_against_a_kernel_reading_128(specs):
    d = api.consistent("storage.fp4.rows.packed", "storage.fp4.rows.aligned128", specs, params={"K": 160})
    assert d.status == "mismatch"
    assert d.get("same_place").counterexample.to_json() == {"params": {"M": 4}, "element": {"m": 1, "byte": 0},
                                                  "written": {"offset": 80}, "read": {"offset": 128}}
    assert d.get("reader_in_range").status == "refuted"


def test_padding_that_is_read_is_reported(specs):
    d = api.consistent("storage.sf.cutlass.128x4.quantizer", "storage.sf.cutlass.128x4", specs)
    assert d.status == "padding_read"
    assert d.get("no_padding_read").counterexample.to_json() == {"params": {"M": 64, "KB": 2, "L": 1},
                                                       "element": {"l": 0, "m": 0, "kb": 2}, "at": {"offset": 2}}
    assert api.consistent("storage.sf.cutlass.128x4", "storage.sf.cutlass.128x4.quantizer", specs).consistent


def test_packed_a_against_unpacked_a(specs):
    d = api.consistent("tcgen05.packing.A.b16.unpacked", "tcgen05.packing.A.b16.packed", specs)
    assert d.status == "mismatch"
    assert d.get("same_place").counterexample["element"] == {"row": 0, "k": 1}


@pytest.mark.slow
def test_data_path_layouts_against_triton_and_cute(specs):
    """The MMA writes D (Layout D, F at base 0, A's CTA 0); Triton's TMEM layout (inverted) reads it back."""
    for which in ("D", "F"):
        lay = _lay(specs, f"tcgen05.datapath.{which}")
        env = {"N": 64, **({"BASE": 0} if which == "F" else {})}
        writer = A.bind(lay.map, **env)
        reader = A.inverse(reshape.restrict(_triton_tmem(TRITON_TMEM[which]), "tmem_lane", 0, 128)) if which == "D" else None
        if reader is None:  # F uses half the lanes: Triton's lane-16 copies are not F's; read F's lanes only
            lanes = [q * 32 + l for q in range(4) for l in range(16)]
            t = _triton_tmem(TRITON_TMEM[which])
            rows = tuple((*t.at({"tmem_lane": ln, "tmem_col": c}).values(), ln, c) for ln in lanes for c in range(64))
            reader = TableMap((Dim("row", 64), Dim("col", 64)), (Dim("tmem_lane", 128), Dim("tmem_col", 64)),
                              tuple(sorted(rows)))
        d = decide(writer, reader)
        assert d.status == "consistent", reports_text.decision_lines(d)
    a = _lay(specs, "tcgen05.datapath.A")
    cta0 = reshape.restrict(A.bind(a.map, N=64), "row", 0, 128)
    cute = A.compose(formula_map("cta = 0 * row\ntmem_lane = row\ntmem_col = col\n", (Dim("row", 128), Dim("col", 64)),
                                 (Dim("cta", 2), Dim("tmem_lane", 128), Dim("tmem_col", 64))), A.identity(Dim("row", 128), Dim("col", 64)))
    assert decide(cta0, cute).status == "consistent"
    # Triton's 64-row block with 128 columns puts columns 64.. at lane +16: not Layout F with N = 128
    f128 = A.bind(_lay(specs, "tcgen05.datapath.F").map, N=128, BASE=0)
    tri = {"rows": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 64], [16, 0], [32, 0]], "cols": TRITON_TMEM["F"]["cols"],
           "shape": [64, 128]}
    tri_map = _triton_tmem(tri)
    rows = tuple(sorted((*tri_map.at({"tmem_lane": ln, "tmem_col": c}).values(), ln, c)
                        for ln in range(128) for c in range(64)))
    reader = TableMap((Dim("row", 64), Dim("col", 128)), (Dim("tmem_lane", 128), Dim("tmem_col", 128)), rows)
    d = decide(f128, reader)
    assert d.status == "mismatch"
    assert d.get("same_place").counterexample["element"] == {"row": 0, "col": 64}


def test_consistent_command(capsys):
    args = ["consistent", *sum((["--writer", w] for w in SF_TILE), []), "--reader", "tcgen05.sf.A.4x1.sfa_id0"]
    code, out, _ = cli(capsys, *args)
    assert code == 1 and out.splitlines()[-1] == "mismatch"
    assert ("  same_place       REFUTED: VS = 1: element (row 0, kb 1) is written at (tmem_lane 0, tmem_col 0, byte 1) "
            "and read from (tmem_lane 0, tmem_col 0, byte 0)") in out
    code, out, _ = cli(capsys, *args[:-1], "tcgen05.sf.A.4x1", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "consistent" and doc["params"] == {"VS": [1, 2, 4]}
    code, out, err = cli(capsys, "consistent", "--writer", "no.such.layout", "--reader", "storage.sf.linear")
    assert code == 2 and out == "" and err.count("\n") == 1 and "no layout 'no.such.layout'" in err
    code, out, err = cli(capsys, "consistent", "--writer", "storage.sf.linear", "--reader", "tcgen05.sf.A.4x1")
    assert code == 2 and "inputs" in err and err.count("\n") == 1
    code, out, err = cli(capsys, "consistent", "--writer", "storage.sf.linear", "--reader", "storage.sf.linear",
                         "--param", "M")
    assert code == 2 and "NAME=VALUE" in err


def test_user_spec_as_writer(capsys, tmp_path):
    (tmp_path / "mine.toml").write_text('''schema = 1
[source]
section = "mine"
[[layout]]
id = "mine.sf.tile"
kind = "storage"
inputs = { row = 128, kb = 4 }
outputs = { offset = 512 }
formula = """
offset = 4 * row + kb
"""
''', encoding="utf-8")
    code, out, _ = cli(capsys, "consistent", "--specs", str(tmp_path), "--writer", "mine.sf.tile", "--writer",
                       "tcgen05.cp.source.32x128b", "--writer", "tcgen05.cp.32x128b.warpx4", "--reader", "tcgen05.sf.A.4x1")
    assert code == 1 and "element (row 1, kb 0) is written at (tmem_lane 0, tmem_col 1, byte 0)" in out
