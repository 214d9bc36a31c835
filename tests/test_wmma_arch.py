"""wmmae's per-architecture wmma maps (``verify/catalog/wmma_arch.py``): reference data, never doc-stated.

Each map is checked by both engines (in range, covers, injective or the stated replication), related on
sm_80 to the doc's mma layouts with the algebra, shown and compared by ``table``/``conform --arch`` with its
label, and compared with SIMULATED observations of a matching device.  The catalog's wmma layouts stay
unspecified (``check``: ``n/a``; ``conform`` without ``--arch``: ``unspecified``)."""
from __future__ import annotations

import functools
import json
from typing import Callable

import pytest

from verify import api
from verify.catalog import wmma_arch as W
from verify.checks import wmma_arch as C
from verify.hardware import kinds, observe, wmma
from verify.layout.dims import Dim
from verify.layout.named import TableMap

from conftest import SPECS, cli

# ----------------------------------------------------------------------------- the transcription

# wmmae's ``foreach`` arithmetic at W.WMMAE_COMMIT, restated in its own form (a start index per lane plus an
# offset per fragment element, an index into the matrix in the fragment's memory order), independently of
# the formulas of verify/catalog/wmma_arch.py: (arch, id, major) -> (line, start(lane), offset(x), elements x
# that the arithmetic enumerates; the others are copies of x - 8).
_F16_SM75_80 = {
    "A": {"col": (lambda l: (l >> 2) + ((l & 3) << 5), lambda x: ((x & 1) << 4) + ((x & 2) << 2) + ((x & 4) << 5)),
          "row": (lambda l: ((l >> 2) << 4) + ((l & 3) << 1), lambda x: (x & 1) + ((x & 2) << 6) + ((x & 4) << 1))},
    "B": {"col": (lambda l: ((l >> 2) << 4) + ((l & 3) << 1), lambda x: (x & 1) + ((x & 2) << 2) + ((x & 4) << 5)),
          "row": (lambda l: (l >> 2) + ((l & 3) << 5), lambda x: ((x & 1) << 4) + ((x & 2) << 6) + ((x & 4) << 1))},
}
_SM80_START = {  # sm_80.hpp writes the same starts with other bit operations
    ("A", "col"): lambda l: ((l & 3) << 5) + (l >> 2), ("A", "row"): lambda l: ((l & 3) << 1) + ((l & 0x1C) << 2),
    ("B", "col"): lambda l: ((l & 3) << 1) + ((l & 0x1C) << 2), ("B", "row"): lambda l: ((l & 3) << 5) + (l >> 2),
}
REFERENCE: dict[tuple[str, str, str], tuple[int, Callable[[int], int], Callable[[int], int], int]] = {
    ("sm_70", W.A16, "col"): (11, lambda l: (((l >> 2) & 1) << 3) + ((l >> 4) << 2) + ((l & 3) << 4),
                              lambda x: ((x >> 2) << 6) + (x & 3), 16),
    ("sm_70", W.A16, "row"): (24, lambda l: (((l >> 2) & 1) << 7) + ((l >> 4) << 6) + ((l & 3) << 4), lambda x: x, 16),
    ("sm_70", W.B16, "col"): (37, lambda l: (((l >> 3) & 1) << 7) + ((l >> 4) << 6) + ((l & 3) << 4), lambda x: x, 16),
    ("sm_70", W.B16, "row"): (50, lambda l: (((l >> 3) & 1) << 3) + ((l >> 4) << 2) + ((l & 3) << 4),
                              lambda x: ((x >> 2) << 6) + (x & 3), 16),
    **{("sm_75", W.A16 if op == "A" else W.B16, mj): (line, *_F16_SM75_80[op][mj], 8)
       for (op, mj), line in {("A", "col"): 10, ("A", "row"): 24, ("B", "col"): 38, ("B", "row"): 52}.items()},
    **{("sm_80", W.A16 if op == "A" else W.B16, mj): (line, _SM80_START[(op, mj)], _F16_SM75_80[op][mj][1], 8)
       for (op, mj), line in {("A", "col"): 10, ("A", "row"): 21, ("B", "col"): 32, ("B", "row"): 43}.items()},
    ("sm_80", W.A8, "col"): (11, lambda l: ((l & 3) << 4) + (l >> 2), lambda x: ((x & 2) << 5) + ((x & 1) << 3), 4),
    ("sm_80", W.A8, "row"): (22, lambda l: (l & 3) + ((l & 0x1C) << 1), lambda x: ((x & 1) << 6) + ((x & 2) << 1), 4),
    ("sm_80", W.B8, "col"): (33, lambda l: (l & 3) + ((l & 0x1C) << 1), lambda x: ((x & 1) << 2) + ((x & 2) << 5), 4),
    ("sm_80", W.B8, "row"): (44, lambda l: ((l & 3) << 4) + (l >> 2), lambda x: ((x & 1) << 6) + ((x & 2) << 2), 4),
}


def _cell(entry: W.ArchMap, index: int) -> tuple[int, int]:
    """A matrix index in the fragment's memory order (leading dimension: the columns of a row-major
    operand, the rows of a col-major one) as (row, col)."""
    if entry.major == "row":
        return divmod(index, entry.cols)
    col, row = divmod(index, entry.rows)
    return row, col


def test_the_maps_are_wmmaes_arithmetic() -> None:
    """Every formula gives, at every (lane, i), the cell wmmae's own index arithmetic gives (i >= the
    enumerated elements: the copy of i - 8, wmmae's ``frag_index_list = {x, x + 8}``)."""
    assert {e.key for e in W.MAPS} == set(REFERENCE)
    for e in W.MAPS:
        line, start, offset, listed = REFERENCE[e.key]
        assert e.line == line and e.source == f"wmmae {e.path}:{line}"
        named = e.named()
        for lane in range(32):
            for i in range(e.elements):
                x = i if i < listed else i - 8
                got = named.at({"lane": lane, "i": i})
                assert got is not None and (got["row"], got["col"]) == _cell(e, start(lane) + offset(x)), (e.name, lane, i)


def test_every_map_is_reference_only_with_source_and_commit() -> None:
    assert len(W.MAPS) == 16 and all(e.status == "reference_only" for e in W.MAPS)
    assert W.WMMAE_COMMIT == "3b260b2bf05350363fd1bf403422ca54f1821070"
    assert all(e.source.startswith("wmmae include/wmma_extension/detail/sm_") and e.commit == W.WMMAE_COMMIT
               for e in W.MAPS)
    assert W.covered_ids() == (W.A16, W.B16, W.A8, W.B8)
    assert "not doc-stated" in W.LABEL


@functools.lru_cache(maxsize=None)
def _catalog() -> dict[str, api.Layout]:
    return {lay.id: lay for lay in api.layouts(api.load(str(SPECS)))}


def test_catalog_layouts_match_the_maps_shape_and_stay_unspecified() -> None:
    """Each map has its catalog layout's extent and element count, and its replication is the one the doc's
    counts imply (the spec's ``replication``); the catalog layout itself stays unspecified."""
    cat = _catalog()
    for e in W.MAPS:
        lay = cat[e.layout_id]
        assert lay.unspecified
        assert (lay.rows, lay.cols, lay.n_elements) == (e.rows, e.cols, e.elements)
        assert lay.domain.replication == e.replication == 32 * e.elements // (e.rows * e.cols)


# ----------------------------------------------------------------------------- checks (both engines)

def _engines_agree(r) -> bool:
    return set(r.engines) >= {"z3", "enumeration"} and set(r.engines.values()) == {r.status}


@pytest.mark.slow
def test_every_map_is_a_valid_fragment_replicated_as_stated() -> None:
    results = C.check_all()
    assert len(results) == 16
    for r in results:
        names = [c.check for c in r.checks]
        assert r.ok, [(c.check, c.status, c.message) for c in r.checks]
        assert all(_engines_agree(c) for c in r.checks), r.entry.name
        if r.entry.copy is None:
            assert names == ["in_range", "covers", "injective"]
        else:
            assert names == ["in_range", "covers", "injective", "copies_equal", "copy_injective", "copy_covers"]
            inj = r.checks[2]
            assert inj.status == "refuted" and inj.expected == "refuted"
            a, b = inj.counterexample.first, inj.counterexample.second
            dim, bit = r.entry.copy  # the two points that collide are copies: they differ in the copy bit only
            assert a[dim] ^ b[dim] == 1 << bit and all(a[k] == b[k] for k in a if k != dim)


def test_copies_are_where_the_reference_puts_them() -> None:
    assert {e.copy for e in W.MAPS if e.arch == "sm_70" and e.layout_id == W.A16} == {("lane", 3)}
    assert {e.copy for e in W.MAPS if e.arch == "sm_70" and e.layout_id == W.B16} == {("lane", 2)}
    assert {e.copy for e in W.MAPS if e.arch != "sm_70" and "f16" in e.layout_id} == {("i", 3)}
    assert {e.copy for e in W.MAPS if "tf32" in e.layout_id} == {None}


def _planted() -> TableMap:
    """wmmae's sm_80 A row-major map with one entry changed: lane 5 element 3 holds (0, 0)."""
    named = W.lookup(W.A16, "sm_80", "row").named()
    rows = []
    for lane in range(32):
        for i in range(16):
            at = named.at({"lane": lane, "i": i})
            cell = (0, 0) if (lane, i) == (5, 3) else (at["row"], at["col"])
            rows.append((lane, i, *cell))
    return TableMap((Dim("lane", 32), Dim("i", 16)), (Dim("row", 16), Dim("col", 16)), tuple(rows))


def test_a_planted_wrong_map_is_refuted_with_its_witness() -> None:
    by = {c.check: c for c in C.check_map(_planted(), copy=("i", 3))}
    assert by["in_range"].status == "proved"
    cop = by["copies_equal"]
    assert cop.status == "refuted" and _engines_agree(cop)
    assert cop.counterexample.point == {"lane": 5, "i": 3}
    assert by["copy_injective"].status == "refuted" and _engines_agree(by["copy_injective"])
    assert by["copy_covers"].status == "refuted" and _engines_agree(by["copy_covers"])


# ----------------------------------------------------------------------------- relations

def test_relations_sm80_is_the_doc_mma_layouts() -> None:
    cat = _catalog()
    rels = C.relations(cat.__getitem__)
    res = {r.name: r.decide() for r in rels}
    assert all(r.as_expected and _engines_agree(r) for r in res.values()), \
        [(k, r.status, r.message) for k, r in res.items() if not r.as_expected]
    for major in ("row", "col"):
        assert res[f"sm_80 {W.A16} {major}_major = mma.m16n8k16.A.f16_bf16"].status == "proved"
        assert res[f"sm_80 {W.B16} {major}_major = mma.m16n8k16.B.f16_bf16 x 2 along col"].status == "proved"
        assert res[f"sm_80 {W.A8} {major}_major = mma.m16n8k8.A.tf32"].status == "proved"
        assert res[f"sm_80 {W.B8} {major}_major = mma.m16n8k8.B.tf32 x 2 along col"].status == "proved"
    sm70 = res[f"{W.A16} sm_70: row_major = col_major"]
    assert sm70.status == sm70.expected == "refuted"
    assert sm70.counterexample.point == {"lane": 0, "i": 1}


def test_the_mma_relation_can_fail() -> None:
    """The side-by-side B relation is not vacuous: one mma B (not two), or the tiles in the other element
    order, is refuted with a point."""
    cat = _catalog()
    wmma_b = C.copies(W.lookup(W.B16, "sm_80", "col"))[0]
    mma_b = cat["mma.m16n8k16.B.f16_bf16"]
    from verify.checks import maps
    from verify.layout import algebra as A
    from verify.layout import reshape
    other_order = reshape.merge(A.product(mma_b.map, A.iota(Dim("j", 2), "col")), ("j", "i"), "i")
    r = maps.same(wmma_b, other_order)
    assert r.status == "refuted" and _engines_agree(r)
    assert r.counterexample.point == {"lane": 0, "i": 1}
    one = maps.same(wmma_b, mma_b.map)
    assert one.status == "refuted" and "input i has 8 points against 4" in one.message


# ----------------------------------------------------------------------------- the CLI and the API

def test_table_arch_shows_the_map_labelled(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = cli(capsys, "table", W.A16, "--arch", "sm_80")
    assert rc == 0 and not err
    first = out.splitlines()[0]
    assert first.startswith("per-architecture map from wmmae (reference), not doc-stated: sm_80 row_major, "
                            "wmmae include/wmma_extension/detail/sm_80.hpp:21")
    assert "T0:a0!" in out and "(0,0) T0:a0 T0:a8" in out  # each cell held twice: element i and i + 8
    rc, plain, _ = cli(capsys, "table", W.A16)
    assert rc == 0 and "wmmae" not in plain and "empty cells (.): 256" in plain  # without --arch: as before
    rc, js, _ = cli(capsys, "table", W.A8, "--arch", "sm_80", "--format", "json")
    data = json.loads(js)
    assert rc == 0 and data["reference"]["status"] == "reference_only" and data["reference"]["label"] == W.LABEL
    assert data["reference"]["commit"] == W.WMMAE_COMMIT and len(data["entries"]) == 128
    rc, out, _ = cli(capsys, "table", W.A16, "--arch", "sm_70", "--major", "col")
    assert rc == 0 and "sm_70 col_major" in out.splitlines()[0] and "lane bit 3" in out.splitlines()[0]


@pytest.mark.parametrize("argv, message", [
    (("table", W.A16, "--arch", "sm_70"), "give --major row or --major col"),
    (("table", "wmma.m16n16k16.C.f32", "--arch", "sm_80"), "wmmae gives no per-architecture map"),
    (("table", W.A8, "--arch", "sm_75"), "wmmae gives no map for wmma.m16n16k8.A.tf32 on sm_75"),
    (("table", "mma.m16n8k16.A.f16_bf16", "--arch", "sm_80"), "--arch is for wmma layouts"),
    (("table", W.A16, "--major", "row"), "--major goes with --arch"),
    (("table", W.A16, "--arch", "sm_80", "--format", "svg"), "--arch is for text and json"),
    (("table", W.A16, "--arch", "sm_90"), "invalid choice"),
    (("conform", W.A16, "--arch", "sm_70", "--formula", "-"), "give --major row or --major col"),
])
def test_arch_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str) -> None:
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and not out and message in err and "Traceback" not in err


SM80_A = "row = (lane >> 2) + ((i >> 1) & 1) * 8\ncol = (lane & 3) * 2 + (i & 1) + ((i >> 2) & 1) * 8\n"


def test_conform_arch(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    f = tmp_path / "a.txt"
    f.write_text(SM80_A)
    rc, out, _ = cli(capsys, "conform", W.A16, "--formula", str(f))
    assert rc == 1 and ": unspecified" in out and "wmmae" not in out  # without --arch: as before
    rc, out, _ = cli(capsys, "conform", W.A16, "--arch", "sm_80", "--formula", str(f))
    assert rc == 0 and out.startswith("against the per-architecture map from wmmae (reference), not doc-stated")
    assert ": equal" in out
    rc, out, _ = cli(capsys, "conform", W.A16, "--arch", "sm_70", "--major", "row", "--formula", str(f))
    assert rc == 1 and ": differs" in out and "first difference: lane 0 element a2" in out
    rc, out, _ = cli(capsys, "conform", W.A16, "--arch", "sm_80", "--formula", str(f), "--format", "json")
    data = json.loads(out)
    assert rc == 0 and data["conform"]["status"] == "equal" and data["reference"]["arch"] == "sm_80"
    # a table that is wmmae's but for one entry: differs, at that entry
    rc, js, _ = cli(capsys, "table", W.A16, "--arch", "sm_80", "--format", "json")
    table = json.loads(js)
    del table["reference"]
    for e in table["entries"]:
        if (e["lane"], e["i"]) == (5, 3):
            e["row"], e["col"] = 0, 0
    t = tmp_path / "t.json"
    t.write_text(json.dumps(table))
    rc, out, _ = cli(capsys, "conform", W.A16, "--arch", "sm_80", "--table", str(t))
    assert rc == 1 and ": differs" in out and "first difference: lane 5 element a3" in out


def test_api_layout_is_labelled_and_check_stays_na(capsys: pytest.CaptureFixture[str]) -> None:
    lay = api.wmma_arch_layout(W.A16, "sm_80", specs=str(SPECS))
    assert lay.provenance.derived.startswith(W.LABEL) and lay.provenance.arch == "sm_80" and not lay.unspecified
    with pytest.raises(api.ArchError, match="differ on sm_70"):
        api.wmma_arch_entry(W.A16, "sm_70", specs=str(SPECS))
    rc, out, _ = cli(capsys, "check", str(SPECS / "wmma.m16n16k16.toml"))
    assert rc == 0
    line = next(ln for ln in out.splitlines() if ln.startswith(W.A16 + " "))
    assert "in_range:n/a injective:n/a surjective:n/a" in line


@pytest.mark.slow
def test_api_check_wmma_arch() -> None:
    results, rels = api.check_wmma_arch(str(SPECS))
    assert all(r.ok for r in results) and all(r.as_expected for r in rels)
    j = results[0].to_json()
    assert j["status"] == "reference_only" and j["label"] == W.LABEL and j["commit"] == W.WMMAE_COMMIT


# ----------------------------------------------------------------------------- observations (SIMULATED)

def _probe() -> kinds.Probe:
    found, errors = kinds.all_probes(list(_catalog().values()))
    assert not errors
    return next(p for p in found if p.id == "wmma.m16n16k16.f16.f32")


def _follow(entry: W.ArchMap, swap: tuple[int, int] | None = None):
    """The entry's map; ``swap``: lane 5's elements ``swap`` exchange their cells (the counts stay)."""
    named = entry.named()

    def point(lane: int, i: int) -> tuple[int, int]:
        if swap is not None and lane == 5 and i in swap:
            i = swap[1] if i == swap[0] else swap[0]
        at = named.at({"lane": lane, "i": i})
        return at["row"], at["col"]
    return point


def _judge(p: kinds.Probe, maps: dict, cc: str | None) -> dict:
    raw = kinds.simulate(p)
    raw["out"] = wmma.simulate(p.payload, maps)
    raw["device"] = dict(raw["device"], compute_capability=cc)
    return {r.layout: r for r in kinds.judge(p, observe.from_raw(raw, simulated=True))}


def test_simulated_observation_compared_with_the_reference() -> None:
    """A SIMULATED device that says it is compute capability 8.0 and follows wmmae's sm_80 maps: the observed
    A (.row) and B (.col) maps are the same as wmmae's; one planted element is caught; another compute
    capability gets no comparison.  The status stays ``observed``: the reference is not the doc."""
    p = _probe()
    a, b = W.lookup(W.A16, "sm_80", "row"), W.lookup(W.B16, "sm_80", "col")
    same = _judge(p, {"A": _follow(a), "B": _follow(b)}, "8.0")
    assert all(r.simulated and r.status == "observed" for r in same.values())
    assert "the same map as wmmae's sm_80 row_major map" in same[W.A16].message
    assert "the same map as wmmae's sm_80 col_major map" in same[W.B16].message
    assert "wmmae" not in same["wmma.m16n16k16.C.f32"].message  # no reference map for C
    bent = _judge(p, {"A": _follow(a, (3, 4)), "B": _follow(b)}, "8.0")
    assert bent[W.A16].status == "observed"
    assert ("differs from wmmae's sm_80 row_major map" in bent[W.A16].message
            and "at 2 point(s), first lane 5 element a3: wmmae (9, 3), observed (1, 10)" in bent[W.A16].message)
    sm70 = _judge(p, {"A": _follow(a), "B": _follow(b)}, "7.0")
    assert "differs from wmmae's sm_70 row_major map" in sm70[W.A16].message
    none = _judge(p, {"A": _follow(a), "B": _follow(b)}, None)
    assert all("wmmae" not in r.message for r in none.values())
