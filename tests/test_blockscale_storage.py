"""Storage layouts users write around block-scaled GEMMs (issue 35, item 16): each spec is derived from a library's
source, and here re-derived from that source's own arithmetic, independently of the spec's formula, at every
listed size; both engines prove each spec's verdicts."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import ROOT, cli

from verify import api
from verify.checks.maps import check_map_layout
from verify.layout.algebra import bind
from verify.layout.named import bindings, evaluate_all

FILES = ("storage.blockwise_scales.toml", "tcgen05.scale_factors_b.toml", "map.rasterisation.toml")


def maps() -> dict:
    return {m.id: m for s in api.load([str(ROOT / "specs" / f) for f in FILES]) for m in s.maps}


def table(m, env: dict) -> tuple[np.ndarray, dict]:
    """The spec's map at one binding: (ok, outputs) over its input grid."""
    v = evaluate_all(bind(m.map, **env) if env else m.map)
    return np.asarray(v.ok, bool), {k: np.asarray(x, np.int64) for k, x in v.out.items()}


def cute(shape: tuple, stride: tuple, coord: tuple) -> int:
    """A CuTe layout at a hierarchical coordinate: the sum of coordinate x stride over every mode."""
    if isinstance(shape, tuple):
        return sum(cute(s, d, c) for s, d, c in zip(shape, stride, coord))
    assert 0 <= coord < shape
    return coord * stride


def test_every_new_layout_is_decided_as_its_spec_expects_by_both_engines(capsys):
    rc, out, err = cli(capsys, "check", *(str(ROOT / "specs" / f) for f in FILES))
    assert rc == 0 and out.splitlines()[-1] == "0 layouts, 10 maps, 0 instructions: 2 findings (2 known errata), 0 " \
                                               "unexpected", out
    for m in maps().values():
        assert m.provenance.derived, m.id  # none is stated by the PTX ISA: each says where it comes from
        for c in check_map_layout(m).checks:
            assert c.engines.get("z3") == c.engines.get("enumeration") == c.status, (m.id, c)


@pytest.mark.parametrize("lid,sfm", [("storage.sf.cutlass.blockwise.1x128", 1), ("storage.sf.cutlass.blockwise.128x128", 128)])
def test_cutlass_blockwise_layouts_are_cute_s_mn_major_sf_layouts(lid, sfm):
    """Sm100BlockwiseScaleConfig's tile_atom_to_shape_SF{A,B} (MN-major): ((sfm, ceil(MN/sfm)), (128, ceil(K/128)),
    L) : ((0, 1), (0, ceil(MN/sfm)), ceil(MN/sfm) * ceil(K/128)), evaluated at each element's block."""
    m = maps()[lid]
    for env in bindings(m.map):
        blocks = env["M"] if "M" in env else env["NB"]
        mn = blocks * sfm
        KB, L = env["KB"], env["L"]
        shape, stride = ((sfm, blocks), (128, KB), L), ((0, 1), (0, blocks), blocks * KB)
        ok, out = table(m, env)
        assert ok.all()
        inside = sorted({0, sfm // 2, sfm - 1}), (0, 1, 127)  # the stride-0 modes at their ends: every element of a block
        for l, xb, kb in itertools.product(range(L), range(blocks), range(KB)):
            for dx, dk in itertools.product(*inside):
                x, k = xb * sfm + dx, kb * 128 + dk
                want = cute(shape, stride, ((x % sfm, x // sfm), (k % 128, k // 128), l))
                assert out["offset"][l, xb, kb] == want, (env, l, x, k)
        assert mn == blocks * sfm


def deepgemm_packed_ue8m0(batches: int, mn: int, sf_k: int) -> dict[tuple[int, int, int], int]:
    """DeepGEMM's get_mn_major_tma_aligned_packed_ue8m0_tensor_torch, emulated with numpy: (b, m, k) -> the byte of
    the output buffer that holds that scale's exponent."""
    ids = np.arange(batches * mn * sf_k, dtype=np.int64).reshape(batches, mn, sf_k)
    am, ak = -(-mn // 4) * 4, -(-sf_k // 4) * 4  # get_tma_aligned_size(mn, 4), align(k, 4)
    padded = np.full((batches, am, ak), -1, np.int64)
    padded[:, :mn, :sf_k] = ids
    words = padded.reshape(batches, am, ak // 4, 4)  # view as int32: 4 bytes, little-endian
    out = np.full(batches * am * (ak // 4) * 4, -1, np.int64)
    for b, r, w in itertools.product(range(batches), range(am), range(ak // 4)):
        base = 4 * (b * am * (ak // 4) + w * am + r)  # strides {am * packed_k, 1, am} in words
        out[base:base + 4] = words[b, r, w]
    return {(int(v) // (mn * sf_k), int(v) // sf_k % mn, int(v) % sf_k): byte for byte, v in enumerate(out) if v >= 0}


def test_deepgemm_packed_ue8m0_is_deepgemm_s_packer():
    m = maps()["storage.sf.deepgemm.ue8m0.packed"]
    for env in bindings(m.map):
        where = deepgemm_packed_ue8m0(env["L"], env["M"], env["KB"])
        ok, out = table(m, env)
        got = {(l, r, k): int(out["offset"][l, r, k]) for l, r, k in zip(*np.nonzero(ok))}
        assert got == where, env


def test_deepgemm_fp32_is_the_tma_aligned_mn_major_tensor():
    """get_mn_major_tma_aligned_tensor: empty_strided({b, mn, sf_k}, {am * sf_k, 1, am}), am = align(mn, 4)."""
    m = maps()["storage.sf.deepgemm.1x128.fp32"]
    for env in bindings(m.map):
        am = -(-env["M"] // 4) * 4
        ok, out = table(m, env)
        for l, r, k in itertools.product(range(env["L"]), range(env["M"]), range(env["KB"])):
            assert out["offset"][l, r, k] == l * am * env["KB"] + r + k * am


def test_scale_factors_of_b_in_tensor_memory_are_cute_s_sfb_atom():
    """UMMA::tmem_sf_frg, SFB 4x1: (((32, N/32), 4), (VS, NSF)) : (((1, 512), 32), (0, 128)) in virtual TMEM
    addresses (lane = addr % 128, byte column = addr / 128); one scale factor per (copy, row, K block)."""
    m = maps()["tcgen05.sf.B.4x1"]
    for env in bindings(m.map):
        n = env["N"]
        ok, out = table(m, env)
        assert ok.all()
        for q, row, kb in itertools.product(range(4), range(n), range(4)):
            addr = cute((((32, n // 32), 4), 4), (((1, 512), 32), 128), (((row % 32, row // 32), q), kb))
            col = addr // 128
            assert (out["tmem_lane"][q, row, kb], out["tmem_col"][q, row, kb], out["byte"][q, row, kb]) == \
                (addr % 128, col // 4, col % 4), (env, q, row, kb)


def triton_grouped(pid: int, nm: int, nn: int, g: int, persistent: bool) -> tuple[int, int]:
    """Triton's tutorials, as written: 03 matmul_kernel's grouped ordering, 09 _compute_pid."""
    num_pid_in_group = g * nn
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * g
    group_size_m = min(nm - first_pid_m, g)
    pid_m = first_pid_m + (pid % group_size_m if persistent else (pid % num_pid_in_group) % group_size_m)
    return pid_m, (pid % num_pid_in_group) // group_size_m


@pytest.mark.parametrize("lid,persistent", [("map.raster.triton.grouped", False),
                                            ("map.raster.triton.grouped.persistent", True)])
def test_triton_grouped_orderings_are_the_tutorials_and_compute_every_tile_once(lid, persistent):
    m = maps()[lid]
    for env in bindings(m.map):
        nm, nn, g = env["NM"], env["NN"], env["G"]
        ok, out = table(m, env)
        tiles = [triton_grouped(p, nm, nn, g, persistent) for p in range(nm * nn)]
        assert [(int(out["tm"][p]), int(out["tn"][p])) for p in range(nm * nn)] == tiles
        assert sorted(tiles) == list(itertools.product(range(nm), range(nn)))


def test_cutlass_identity_swizzle_is_get_tile_offset():
    m = maps()["map.raster.cutlass.identity"]
    for env in bindings(m.map):
        t = env["T"]
        lt = t.bit_length() - 1
        ok, out = table(m, env)
        for bx, by in itertools.product(range(env["NM"] * t), range(-(-env["NN"] // t))):
            assert (out["tm"][bx, by], out["tn"][bx, by]) == (bx >> lt, (by << lt) + (bx & (t - 1)))


def test_the_group_size_slip_is_refuted_where_the_group_is_short(capsys):
    rc, out, err = cli(capsys, "check", str(ROOT / "specs" / "map.rasterisation.toml"), "--format", "json")
    import json
    doc = json.loads(out)
    slip = next(x for x in doc["maps"] if x["id"] == "map.raster.grouped.full_group")
    assert slip["checks"]["in_range"]["status"] == "refuted" and slip["checks"]["injective"]["status"] == "proved"
    assert slip["checks"]["in_range"]["message"].startswith("NM = 1, NN = 2, G = 2: pid 1 lands at (tm 1, tn 0)")


@pytest.mark.parametrize("writer,reader,rc", [
    ("storage.sf.deepgemm.ue8m0.packed", "storage.sf.deepgemm.ue8m0.packed", 0),
    ("storage.sf.ue8m0.packed.kmajor", "storage.sf.deepgemm.ue8m0.packed", 1),
    ("storage.sf.cutlass.blockwise.1x128", "storage.sf.deepgemm.1x128.fp32", 1),
])
def test_writers_and_readers_of_the_new_layouts(capsys, writer, reader, rc):
    got, out, err = cli(capsys, "consistent", "--writer", writer, "--reader", reader)
    assert got == rc and err == "", (out, err)
    assert out.splitlines()[-1] == ("consistent" if rc == 0 else "mismatch")
