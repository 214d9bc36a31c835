"""Shared-memory layouts against the references (``verify.checks.references.smem``): CuTe's GMMA/UMMA atoms and
their ``tile_to_shape`` (compiled), Triton's ``NVMMASharedLayout`` (offset bases).

The reference side of each test is computed here from the PTX swizzle definition (byte address bits
[4, 4 + log2(W / 16)) XORed with bits [7, ...), W the swizzle width in bytes), not from the spec's formula;
a reference that drops the swizzle or spaces the atoms apart must be reported as ``differ`` (both engines
decide every comparison: ``maps.same``).
"""
from __future__ import annotations

import functools
import json

import pytest
from conftest import SPECS
from test_references import _matrix

from verify import api
from verify.checks.references import cute as cute_ref
from verify.checks.references import smem
from verify.checks.references import triton as triton_ref
from verify.checks.references.common import conform_rows
from verify.layout.notations import NotationError
from verify.layout.notations.cute_compiled import Printed, Request, parse_output, program


@functools.cache
def _maps() -> tuple:
    return tuple(api.map_layouts(tuple(api.load(SPECS))))


def _spec(layout_id: str) -> smem.SmemSpec:
    return next(x for x in smem.smem_specs(list(_maps())) if x.spec.id == layout_id)


def swizzled_k_major(rows: int, cols: int, bits: int, width: int, swizzle: bool = True) -> dict:
    """(row, col) -> element offset of a K-major tile whose rows are ``width`` bytes (8-row atoms stacked
    along M), swizzled as PTX defines it (or not)."""
    out = {}
    for r in range(rows):
        for c in range(cols):
            byte = r * width + c * bits // 8
            if swizzle:
                byte ^= ((byte >> 7) & (width // 16 - 1)) << 4
            out[(r, c)] = byte * 8 // bits
    return out


# ----------------------------------------------------------------------------- pairing specs with tiles

def test_cute_tiles_one_per_t_and_rm_serving_every_rk():
    s = _spec("wgmma.shared.K.128B@corrected")
    tiles = smem.cute_tiles(s)
    assert len(tiles) == 9                                          # T in {4, 8, 16} x Rm in {1, 2, 3}
    t = next(t for t in tiles if dict(t.members[0][0]) == {"T": 8, "Rm": 2, "Rk": 1})
    assert (t.bits, t.rows, t.cols, t.cxx_type) == (16, 16, 64, "cutlass::half_t")
    assert [dict(p)["Rk"] for p, _, _ in t.members] == [1, 2, 3, 4]
    assert smem.cute_expression(t) == "tile_to_shape(GMMA::Layout_K_SW128_Atom<cutlass::half_t>{}, make_shape(16, 64))"
    a = smem.cute_tiles(_spec("tcgen05.shared.atom.MN.128B_base32B"))
    assert {smem.cute_expression(t) for t in a} >= {"UMMA::Layout_MN_SW128_32B_Atom<float>{}"}


def test_triton_tiles_only_where_triton_stacks_as_the_page():
    mn = smem.triton_tiles(_spec("wgmma.shared.MN.64B"))
    served = [dict(p) for t in mn for p, _, _ in t.members]
    assert served and all(e["Rk"] == 1 or e["Rm"] == 1 for e in served)
    assert len(served) == 3 * (3 + 5 - 1)                           # per T: Rk = 1 (3) and Rm = 1, Rk > 1 (4)
    k = smem.triton_tiles(_spec("wgmma.shared.K.32B@corrected"))
    assert [(t.bits, t.rows, t.cols) for t in k] == [(32, 32, 8), (16, 32, 16), (8, 32, 32)]
    assert smem.triton_tiles(_spec("wgmma.shared.K.none")) == []    # Triton's swizzle 0 is not the core-matrix tiling
    assert smem.triton_tiles(_spec("tcgen05.shared.atom.MN.128B_base32B")) == []
    assert all(t.bits != 4 for t in smem.triton_tiles(_spec("tcgen05.shared.atom.K.32B")))


# ----------------------------------------------------------------------------- compiled CuTe

def test_the_program_prints_offsets_and_they_are_read_back():
    req = Request("smem", "GMMA::Layout_K_SW32_Atom<cutlass::half_t>{} [x]", "GMMA::Layout_K_SW32_Atom<cutlass::half_t>{}",
                  "cute/atom/mma_traits_sm90_gmma.hpp", 1, type_args=("cutlass::half_t",))
    src, _ = program([req])
    assert "as_position_independent_swizzle_layout" in src
    assert 'ptxv_smem<cutlass::half_t>("0", GMMA::Layout_K_SW32_Atom<cutlass::half_t>{});' in src
    out = parse_output("@smem 0\nSizeofBits 16\nLayout Sw<1,4,3> o (_8,_16):(_16,_1)\nOffsets 0 0,1\nOffsets 1 16,17\n",
                       [req])
    p = out[0]
    assert (p.types["SizeofBits"], p.offsets) == ("16", {0: (0, 1), 1: (16, 17)})
    with pytest.raises(NotationError, match="Offsets line"):
        parse_output("@smem 0\nOffsets 0 1;2\n", [req])


def _cute_rows(layout_id: str, offsets: dict, bits: int | None = None, index: int = 0) -> list:
    tile = smem.cute_tiles(_spec(layout_id))[index]
    expr = smem.cute_expression(tile)
    req = Request("smem", f"{expr} [{layout_id}]", expr, "cute/atom/mma_traits_sm90_gmma.hpp", 1,
                  type_args=(tile.cxx_type,))
    rows = {r: tuple(offsets[(r, c)] for c in range(tile.cols)) for r in range(tile.rows)}
    p = Printed("smem", req.name, {"Layout": ("Sw<...> o ...", 3)}, {"SizeofBits": str(bits or tile.bits)}, rows)
    return conform_rows(cute_ref.smem_layouts(req, p, tile), 10.0)


def test_cute_atom_agrees_and_an_unswizzled_one_differs():
    tile = smem.cute_tiles(_spec("wgmma.shared.atom.K.32B"))[1]
    assert (tile.bits, tile.rows, tile.cols) == (16, 8, 16)
    good = _cute_rows("wgmma.shared.atom.K.32B", swizzled_k_major(8, 16, 16, 32), index=1)
    assert [(r.kind, r.status, r.params) for r in good] == [("agree", "equal", (("T", 8),))]
    bad = _cute_rows("wgmma.shared.atom.K.32B", swizzled_k_major(8, 16, 16, 32, swizzle=False), index=1)
    assert bad[0].kind == "differ" and bad[0].counterexample
    wrong_bits = _cute_rows("wgmma.shared.atom.K.32B", swizzled_k_major(8, 16, 16, 32), bits=8, index=1)
    assert wrong_bits[0].kind == "malformed" and "bits" in wrong_bits[0].detail


@pytest.mark.slow
def test_cute_canonical_tile_restricted_to_each_rk():
    """One tile_to_shape (T = 8, Rm = 2, 16 x 64 halves, 128B swizzle) serves Rk = 1..4: each its first columns."""
    tiles = smem.cute_tiles(_spec("wgmma.shared.K.128B@corrected"))
    k = next(i for i, t in enumerate(tiles) if dict(t.members[0][0]) == {"T": 8, "Rm": 2, "Rk": 1})
    good = _cute_rows("wgmma.shared.K.128B@corrected", swizzled_k_major(16, 64, 16, 128), index=k)
    assert [r.kind for r in good] == ["agree"] * 4
    # the second atom one atom further than the page's dense SBO (64 * T elements): injective, not the page's
    gap = {(r, c): v + (512 if r >= 8 else 0) for (r, c), v in swizzled_k_major(16, 64, 16, 128).items()}
    assert {r.kind for r in _cute_rows("wgmma.shared.K.128B@corrected", gap, index=k)} == {"differ"}
    dropped = swizzled_k_major(16, 64, 16, 128, swizzle=False)
    assert {r.kind for r in _cute_rows("wgmma.shared.K.128B@corrected", dropped, index=k)} == {"differ"}


# ----------------------------------------------------------------------------- Triton (offset bases)

def _bases(offsets: dict) -> list[list[int]]:
    """Triton's offset bases of a linear tile: offset bit k -> the (dim0, dim1) it is at."""
    at = {v: k for k, v in offsets.items()}
    n = len(offsets).bit_length() - 1
    return [list(at[1 << k]) for k in range(n)]


def _fake_triton(monkeypatch, swizzle: bool):
    def run_dump(requests):
        found = {}
        for r in requests:
            assert r["layout"] == "nvmma_shared" and not r["transposed"]
            rows, cols = r["shape"]
            offs = swizzled_k_major(rows, cols, r["bits"], r["swizzle"], swizzle)
            found[r["key"]] = {"key": r["key"], "printed": "fake", "shape": r["shape"], "offset_bases": _bases(offs),
                               "block_bases": []}
        return "fake", found
    monkeypatch.setattr(triton_ref, "run_dump", run_dump)


@pytest.mark.slow
def test_triton_offset_bases_agree_and_unswizzled_ones_differ(monkeypatch):
    specs = [m for m in _maps() if m.id in ("wgmma.shared.atom.K.64B", "wgmma.shared.K.64B@corrected")]
    _fake_triton(monkeypatch, swizzle=True)
    rep = triton_ref.evaluate_default(specs)
    assert rep.rows and {r.kind for r in rep.rows} == {"agree"}
    assert {r.spec for r in rep.rows} == {"wgmma.shared.atom.K.64B", "wgmma.shared.K.64B@corrected"}
    assert len([r for r in rep.rows if r.spec.startswith("wgmma.shared.K")]) == 18   # every (T, Rm, Rk) member
    _fake_triton(monkeypatch, swizzle=False)
    rep = triton_ref.evaluate_default(specs)
    assert {r.kind for r in rep.rows} == {"differ"} and all(r.counterexample for r in rep.rows)


def test_triton_offsets_from_bases():
    """Offset bit k -> the XOR of basis k's coordinates; a cell two offsets reach keeps the smallest."""
    assert triton_ref.smem_offsets({"offset_bases": [[0, 1], [1, 1]], "block_bases": []}) == \
        {(0, 0): 0, (0, 1): 1, (1, 1): 2, (1, 0): 3}
    assert triton_ref.smem_offsets({"offset_bases": [[0, 1], [0, 0]], "block_bases": []}) == {(0, 0): 0, (0, 1): 1}
    with pytest.raises(NotationError, match="multi-CTA"):
        triton_ref.smem_offsets({"offset_bases": [[0, 1]], "block_bases": [[1, 0]], "printed": "x"})
    assert json.loads(triton_ref._key({"a": 1, "members": [1, 2]})) == {"a": 1}


# ----------------------------------------------------------------------------- the real references

@pytest.mark.slow
def test_every_shared_memory_map_in_the_matrix():
    """Installed references (the matrix test_references computes): CuTe states every shared-memory map (its
    correction where the page has an erratum), Triton the swizzled ones and the atoms; all agree."""
    m = _matrix()
    shared = [s.spec.id for s in smem.smem_specs(list(_maps()))]
    assert len(shared) == 30
    expect = {"cute": set(shared),
              "triton": {i for i in shared if ".none" not in i or ".atom." in i}
              - {"tcgen05.shared.atom.MN.128B_base32B", "wgmma.shared.example.MN.32B.bf16",
                 "wgmma.shared.example.MN.64B.bf16"}}
    ran = 0
    for name, ids in expect.items():
        if name in m.unavailable:
            continue
        ran += 1
        got = {i: m.status(i)[name] for i in shared}
        assert {i for i, v in got.items() if v != "absent"} == ids, name
        assert {got[i] for i in ids} == {"agrees"}, name
        for base in ("wgmma.shared.K.128B", "wgmma.shared.example.K.32B.tf32"):   # the page's errata
            assert m.status(base)[name] == "differs", (name, base)
    if not ran:
        pytest.skip("neither CuTe nor Triton installed: " + json.dumps(m.unavailable))


# ----------------------------------------------------------------------------- the compile cache

@pytest.mark.slow  # runs the toolchain (nvcc/ptxas or g++): an integration test
def test_the_compile_cache_is_read_back_and_locked_while_compiling(tmp_path, monkeypatch):
    """The second run of one program reads the cache (no compiler run); while a program compiles its lock file
    is held exclusively, so test workers asking for the same program compile it once."""
    import fcntl
    import os

    from test_references import FAKE

    from verify.checks.references import compile_cute
    from verify.layout.notations.cute_compiled import discover_text
    if compile_cute.probe():
        pytest.skip(f"no toolchain: {compile_cute.probe()}")
    (tmp_path / "inc" / "cute" / "atom").mkdir(parents=True)
    (tmp_path / "inc" / "cute" / "atom" / "mma_traits_fake.hpp").write_text(FAKE)
    reqs = discover_text(FAKE, "cute/atom/mma_traits_fake.hpp")
    held = []
    real = compile_cute._compile

    def compile_(*a, **k):
        lock = next((tmp_path / "cache").glob("*.lock"))
        fd = os.open(lock, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(lock.name)
        finally:
            os.close(fd)
        return real(*a, **k)
    monkeypatch.setattr(compile_cute, "_compile", compile_)
    first = compile_cute.run(tmp_path / "inc", reqs, cache=tmp_path / "cache")
    second = compile_cute.run(tmp_path / "inc", reqs, cache=tmp_path / "cache")
    assert len(held) == 1 and (first.cached, second.cached) == (False, True)
    assert (second.output, second.failures) == (first.output, first.failures)
    cfile = next((tmp_path / "cache").glob("*.json"))
    cfile.write_text("{not json")                                   # a spoiled cache entry is compiled again
    third = compile_cute.run(tmp_path / "inc", reqs, cache=tmp_path / "cache")
    assert len(held) == 2 and not third.cached and third.output == first.output
