"""A given layout checked on its own (issue 35, item 8): ``check --triton FILE`` (``--cute``, ``--formula``... every
notation) answers plain bijectivity and, beside it, Triton's rule: legal when bijective once the zero bases are
removed (broadcast is fine, a repeated nonzero basis is not).  Both engines decide every bit and every verdict; the
rule is held to an independent GF(2) rank computation on generated and mutated linear layouts."""
from __future__ import annotations

import json
import random

import pytest
from conftest import ROOT, cli

from verify import api
from verify.checks.validity import check_given
from verify.layout.notations.triton import TritonLayout, triton_to_formula

# The two layouts: a repeated nonzero register basis, and a broadcast through a zero lane basis.
REPEATED = ("#ttg.linear<{register = [[0, 1], [0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], "
            "block = []}>\n")
BROADCAST = ("#ttg.linear<{register = [[0, 1], [4, 0]], lane = [[0, 0], [0, 2], [0, 4], [1, 0], [2, 0]], warp = [], "
             "block = []}>\n")
LIKE = api.layout_from_formula("row = 0\ncol = 0", operand="C", rows=1, cols=1, elements=1, layout_id="given")


def write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_a_repeated_nonzero_basis_is_not_valid(capsys, tmp_path):
    rc, out, err = cli(capsys, "check", "--triton", write(tmp_path, "rep.mlir", REPEATED))
    assert rc == 1 and err == "", err
    assert ": not valid (Triton's rule), not bijective" in out.splitlines()[0]
    assert "  injective   FAIL  (z3 refuted, enumeration refuted): lane 0 element c1 and lane 0 element c2 both land " \
           "at cell (0, 1)" in out
    assert "  valid       FAIL  (z3 refuted, enumeration refuted): with the broadcast bits removed (none), not " \
           "injective: lane 0 element c1 and lane 0 element c2 both land at cell (0, 1)" in out
    assert "  broadcast   none (every input bit moves some element)" in out


def test_a_zero_basis_is_broadcast_and_valid(capsys, tmp_path):
    rc, out, err = cli(capsys, "check", "--triton", write(tmp_path, "bcast.mlir", BROADCAST))
    assert rc == 0 and err == "", err
    assert out.splitlines()[0].endswith(": valid (Triton's rule: bijective once the broadcast bits are removed: lane "
                                        "bit 0), not bijective")
    assert "  injective   FAIL  (z3 refuted, enumeration refuted): lane 0 element c0 and lane 1 element c0" in out
    assert "  valid       ok    (z3 proved, enumeration proved): bijective once the broadcast bits are removed (lane " \
           "bit 0): Triton's rule" in out
    rc, out, err = cli(capsys, "check", "--triton", write(tmp_path, "bcast.mlir", BROADCAST), "--format", "json")
    doc = json.loads(out)
    assert doc["status"] == "valid" and doc["broadcast"] == [{"dim": "lane", "bit": 0}]
    assert doc["checks"]["valid"]["engines"] == {"z3": "proved", "enumeration": "proved"}
    assert doc["checks"]["injective"]["status"] == "refuted" and len(doc["bits"]) == 7


@pytest.mark.parametrize("argv", [
    ["--cute", "((4,8),(2,2)):((32,1),(16,8))", "--tile", "16x8"],
    ["--cute", "((4,8),(2,2)):((32,1),(16,8))", "--as", "mma.m16n8k16.float.C.f32"],
    ["--formula", str(ROOT / "examples/layouts/m16n8k16_a.txt"), "--tile", "16x16"],
    ["--formula", str(ROOT / "examples/layouts/twelve_warps.txt"), "--threads", "384", "--elements", "4"],
    ["--tiled-mma", str(ROOT / "tests/data/cute_tiled/sm80_16x8x16_atom2x2x1_tile32x32.txt")],
    ["--tilelang", str(ROOT / "tests/data/tilelang/acc_16x64_4warps.txt")],
    ["--triton", str(ROOT / "examples/layouts/handoff_32x16.ttgir"), "--tensor", "#mma"],
])
def test_every_notation_is_checked_on_its_own(capsys, argv):
    rc, out, err = cli(capsys, "check", *argv)
    assert rc == 0 and err == "" and ": bijective (and valid: Triton's rule)" in out.splitlines()[0], (out, err)


def test_every_registered_notation_has_a_check_flag(capsys):
    from verify.cli.given import STATES_ITS_TILE
    names = {n.name for n in api.notations()}
    assert STATES_ITS_TILE <= names and {"cute", "index"} <= names - STATES_ITS_TILE
    rc, out, _ = cli(capsys, "check", "--help")
    assert all(n.flag in out for n in api.notations())


def test_a_table_is_checked_on_its_own(capsys, tmp_path):
    rc, table, _ = cli(capsys, "table", "mma.m16n8k16.float.C.f32", "--format", "json")
    rc, out, err = cli(capsys, "check", "--table", write(tmp_path, "t.json", table))
    assert rc == 0 and ": bijective" in out.splitlines()[0]


def test_a_cute_stride_zero_mode_is_broadcast(capsys):
    """A notation that is no linear layout: CuTe's stride-0 thread mode holds each cell twice, and is valid."""
    rc, out, err = cli(capsys, "check", "--cute", "((2,16),2):((0,1),16)", "--tile", "16x2")
    assert rc == 0 and "valid (Triton's rule: bijective once the broadcast bits are removed: lane bit 0)" in out, out
    rc, out, err = cli(capsys, "check", "--cute", "((2,16),2):((1,1),16)", "--tile", "16x2")  # two thread modes collide
    assert rc == 1 and "not valid" in out.splitlines()[0]


@pytest.mark.parametrize("argv,words", [
    (["--cute", "((4,8),(2,2)):((32,1),(16,8))"], "does not state its tile: give --tile"),
    (["--formula", str(ROOT / "examples/layouts/twelve_warps.txt"), "--threads", "384"], "needs --elements"),
    (["--formula", str(ROOT / "examples/layouts/wgmma_d_wraps_at_128.txt"), "--as", "wgmma.m64nNk16.D.f32"],
     "is a family"),
    (["--triton", str(ROOT / "examples/layouts/handoff_32x16.ttgir"), "--tensor", "#mma", "--tile", "8x8"],
     "but --tile says 8 x 8"),
    (["specs/mma.m8n8k16.toml", "--cute", "(32,2):(2,1)", "--tile", "8x8"], "give spec PATHs or a layout"),
])
def test_what_a_layout_on_its_own_lacks_is_said(capsys, argv, words):
    rc, out, err = cli(capsys, "check", *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1 and words in err, err


# ----------------------------------------------------------------------------- held to GF(2) ranks

def _rank(vectors: list[int]) -> int:
    basis: list[int] = []
    for v in vectors:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    return len(basis)


def gf2_valid(t: TritonLayout) -> tuple[bool, set[tuple[str, int]]]:
    """Triton's rule by rank: the nonzero bases independent and spanning the shape; and the zero bases."""
    rows, cols = t.shape
    cb = cols.bit_length() - 1
    named = [("i", b, v) for b, v in enumerate(t.register)] + [("lane", b, v) for b, v in enumerate(t.lane)]
    named += [("lane", len(t.lane) + b, v) for b, v in enumerate(t.warp)]
    nonzero = [(r << cb) | c for _, _, (r, c) in named if (r, c) != (0, 0)]
    need = (rows * cols).bit_length() - 1
    return len(nonzero) == _rank(nonzero) == need, {(d, b) for d, b, v in named if v == (0, 0)}


def random_layout(rng: random.Random) -> TritonLayout:
    rows, cols = rng.choice((4, 8, 16)), rng.choice((4, 8, 16))
    units = [(1 << k, 0) for k in range(rows.bit_length() - 1)] + [(0, 1 << k) for k in range(cols.bit_length() - 1)]
    rng.shuffle(units)
    bases = list(units)
    mutation = rng.choice(("none", "zero", "repeat", "sum", "drop"))
    if mutation == "zero":
        bases.insert(rng.randrange(len(bases) + 1), (0, 0))
    elif mutation == "repeat":
        bases.insert(rng.randrange(len(bases) + 1), rng.choice(units))
    elif mutation == "sum":
        a, b = rng.sample(units, 2)
        bases[rng.randrange(len(bases))] = (a[0] ^ b[0], a[1] ^ b[1])
    elif mutation == "drop" and len(bases) > 5:
        bases.pop(rng.randrange(len(bases)))
    while len(bases) < 5:  # a warp has 32 lanes: pad with broadcast
        bases.insert(rng.randrange(len(bases) + 1), (0, 0))
    nl = 5
    lane, rest = bases[:nl], bases[nl:]
    warps = rng.randrange(len(rest) + 1) if len(rest) > 1 else 0
    return TritonLayout(tuple(rest[warps:]), tuple(lane), tuple(rest[:warps]), (), (rows, cols))


@pytest.mark.parametrize("seed", range(6))
def test_valid_is_triton_s_rule_by_rank(seed):
    rng = random.Random(seed)
    for _ in range(8):
        t = random_layout(rng)
        from verify.layout.notations.build import to_layout
        lay = to_layout(triton_to_formula(t, "c", operand="C"), LIKE)
        r = check_given(lay)
        valid, zero = gf2_valid(t)
        assert r.valid == valid, (t, [c.message for c in r.checks])
        assert {(b.dim if b.dim != "thread" else "lane", b.bit) for b in r.broadcast} == zero, t
        for c in r.checks + tuple(b.check for b in r.bits):
            assert c.status in ("proved", "refuted") and c.engines["z3"] == c.engines["enumeration"], (c, t)
        assert r.bijective == (valid and not zero), t
