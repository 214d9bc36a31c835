"""``--param`` means one thing in every command (issue 35, item 6; docs/layouts.md "Parameters: --param"):
it binds a family's parameter on every side that has it, index code reads it wherever index code is taken, a
name no side has is one error naming the valid ones with their values, and a family left unbound is decided
for every member (a command that prints one layout asks for it).  One implementation: ``verify/layout/params.py``.

Each test failed on the tree before this change (1953d6c): ``banks``/``descriptor --formula`` refused
``--param`` ("--param is for --id"), ``consistent`` refused a name only index code reads ("neither side has a
parameter"), fragment and map code could not read a name of its own ("unknown identifier"), ``check`` of a
layout on its own refused ``--param``, ``probe``/``confirm`` had no ``--param``, ``table`` of a ``[[layout]]``
with ``--formula`` printed the spec's table instead of the code's, and the unknown-name and bad-value errors
were worded four ways (``bind: ...``, ``neither side has ...``, ``... is not a valid value ...``).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, cli
from verify import api

A16 = "mma.m16n8k16.A.f16_bf16"
C32 = "mma.m16n8k16.float.C.f32"
# mma m16n8k16 A as index code over a name of its own: G = 4 is the spec
A_CODE = "row = lane // G + 8 * ((i // 2) % 2)\ncol = lane % G * 2 + i % 2 + 8 * (i // 4)\n"
TILE = "# a K-major tile of BK f16 columns, rows padded by PAD bytes\noff = row * (BK * 2 + PAD) + col * 2\n"
LANES = "row = lane % R\ncol = lane // R * 8\n"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(A_CODE, encoding="utf-8")
    (tmp_path / "tile.txt").write_text(TILE, encoding="utf-8")
    (tmp_path / "lanes.txt").write_text(LANES, encoding="utf-8")
    (tmp_path / "atom.txt").write_text("offset = row * 8 * T + (col ^ (row % 8) * T)\n", encoding="utf-8")
    (tmp_path / "atom_z.txt").write_text("offset = row * 8 * T + (col ^ (row % 8) * Z)\n", encoding="utf-8")
    return tmp_path


def one_line(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (code, out, err)
    return err.strip()


# one case per command that takes a layout: (argv without --param, a name it has with a valid and a bad value)
COMMANDS = {
    "table": (["table", "wgmma.m64nNk16.D.f32"], "N", 24, 7, "N = 8..256 step 8"),
    "conform": (["conform", "wgmma.m64nNk16.D.f32", "--cute", "((4,8,4),(2,2,3)):((128,1,16),(64,8,512))"],
                "N", 24, 20, "N = 8..256 step 8"),
    "conform map": (["conform", "wgmma.shared.atom.K.128B", "--formula", "atom.txt"], "T", 8, 3, "T = 4..8 step 4, 16"),
    "handoff": (["handoff", "ldmatrix.m8n8.R.b16", A16], "NUM", 4, 3, "NUM = 1..2 step 1, 4"),
    "handoff --reduce": (["handoff", "ldmatrix.m8n8.R.b16", "--reduce", "row", "--xor", "1,2"], "NUM", 1, 3,
                         "NUM = 1..2 step 1, 4"),
    "check --as": (["check", "--cute", "((4,8,4),(2,2,3)):((128,1,16),(64,8,512))", "--as", "wgmma.m64nNk16.D.f32"],
                   "N", 24, 12, "N = 8..256 step 8"),
    "consistent": (["consistent", "--writer", "storage.sf.linear", "--reader", "storage.sf.linear"], "M", 64, 3,
                   "M = 64..128 step 64, 200, KB = 2..4 step 2, 8, L = 1..2 step 1"),
    "banks --id": (["banks", "--id", "wgmma.shared.atom.K.128B", "--access", "ldmatrix.x1"], "T", 8, 3,
                   "T = 4..8 step 4, 16"),
    "descriptor --id": (["descriptor", "--id", "wgmma.shared.atom.K.128B"], "T", 8, 3, "T = 4..8 step 4, 16"),
    "probe": (["probe", "ldmatrix.m8n8.R.b16", "--emit", "probes"], "NUM", 2, 3, "NUM = 1..2 step 1, 4"),
    "confirm": (["confirm", "ldmatrix.m8n8.R.b16", "--device", "simulated"], "NUM", 2, 3, "NUM = 1..2 step 1, 4"),
    "banks --formula": (["banks", "--formula", "tile.txt", "--tile", "16x64", "--type", "f16", "--param", "PAD=16",
                         "--access", "ldmatrix.x4"], "BK", 64, None, "BK, PAD (read by the index code)"),
    "descriptor --formula": (["descriptor", "--formula", "tile.txt", "--tile", "64x64", "--type", "f16", "--param",
                              "PAD=0"], "BK", 64, None, "BK, PAD (read by the index code)"),
}


@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_an_unknown_name_is_one_error_naming_the_valid_ones(case: str, files: Path, capsys) -> None:
    argv, name, good, _, have = COMMANDS[case]
    err = one_line(*cli(capsys, *argv, "--param", f"{name}={good}", "--param", "ZZ=1"))
    assert err == f"ptx-verify: error: --param ZZ=1: no parameter ZZ here (parameters: {have})", err


@pytest.mark.parametrize("case", sorted(c for c in COMMANDS if COMMANDS[c][3] is not None))
def test_a_value_the_family_does_not_take_names_its_values(case: str, files: Path, capsys) -> None:
    argv, name, _, bad, have = COMMANDS[case]
    err = one_line(*cli(capsys, *argv, "--param", f"{name}={bad}"))
    values = have.split(" = ", 1)[1].split(", ", 1)[0] if case == "consistent" else have.split(" = ", 1)[1]
    values = "64..128 step 64, 200" if case == "consistent" else values
    assert err == f"ptx-verify: error: --param {name}={bad}: not a value of {name} ({values})", err


@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_a_valid_binding_runs(case: str, files: Path, capsys) -> None:
    argv, name, good, _, _ = COMMANDS[case]
    code, out, err = cli(capsys, *argv, "--param", f"{name}={good}")
    assert code in (0, 1) and out and "error" not in err, (code, err)


def test_the_value_is_decimal_digits_everywhere(capsys) -> None:
    """consistent read ``M=0x40`` with int(value, 0); every command reads --param with one parser now."""
    for argv in (["consistent", "--writer", "storage.sf.linear", "--reader", "storage.sf.linear"],
                 ["table", "wgmma.m64nNk16.D.f32"]):
        err = one_line(*cli(capsys, *argv, "--param", "M=0x40"))
        assert "--param 'M=0x40': the value is not a whole number in decimal digits (e.g. M=24)" in err


# ----------------------------------------------------------------------------- index code reads --param everywhere

def _inline(text: str, **values: int) -> str:
    """The code with each name's value written in (the same layout, no parameter)."""
    text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    for k, v in values.items():
        text = re.sub(rf"\b{k}\b", str(v), text)
    return text


def _same(capsys, argv: list[str], code_file: str, values: dict[str, int], tmp: Path) -> None:
    """``argv`` with ``--param`` gives the answer of the same code with the values written in."""
    text = (tmp / code_file).read_text(encoding="utf-8")
    (tmp / "inlined.txt").write_text(_inline(text, **values), encoding="utf-8")
    binds = [x for k, v in values.items() for x in ("--param", f"{k}={v}")]
    got = cli(capsys, *argv, *binds)
    want = cli(capsys, *[a.replace(code_file, "inlined.txt") if a.endswith(code_file) else a for a in argv])
    assert got[0] == want[0] and got[0] in (0, 1), (got, want)
    assert _strip(json.loads(got[1].replace(code_file, "inlined.txt"))) == _strip(json.loads(want[1]))


def _strip(doc):
    """JSON without the echoed code and the parameters it was read with (the two runs' only difference)."""
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items() if k not in ("text", "formula", "params")}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    return doc


@pytest.mark.parametrize("place", ["banks --formula", "descriptor --formula", "banks --addresses", "conform fragment",
                                   "table fragment", "check alone", "handoff --to-formula", "conform map", "table map",
                                   "consistent index: shared"])
def test_index_code_reads_param_in_every_place(place: str, files: Path, capsys) -> None:
    tile = ["--tile", "16x64", "--type", "f16"]
    cases = {
        "banks --formula": (["banks", "--formula", "tile.txt", *tile, "--access", "ldmatrix.x4", "--format", "json"],
                            "tile.txt", {"BK": 64, "PAD": 16}),
        "descriptor --formula": (["descriptor", "--formula", "tile.txt", "--tile", "64x64", "--type", "f16", "--format",
                                  "json"], "tile.txt", {"BK": 64, "PAD": 0}),
        "banks --addresses": (["banks", "--formula", "inlined_tile.txt", *tile, "--access", "ldmatrix.x4", "--addresses",
                               "lanes.txt", "--format", "json"], "lanes.txt", {"R": 16}),
        "conform fragment": (["conform", A16, "--formula", "a.txt", "--format", "json"], "a.txt", {"G": 4}),
        "table fragment": (["table", A16, "--formula", "a.txt", "--format", "json"], "a.txt", {"G": 4}),
        "check alone": (["check", "--formula", "a.txt", "--tile", "16x16", "--format", "json"], "a.txt", {"G": 4}),
        "handoff --to-formula": (["handoff", C32, A16, "--to-formula", "a.txt", "--format", "json"], "a.txt", {"G": 4}),
        "conform map": (["conform", "wgmma.shared.atom.K.128B", "--formula", "atom_z.txt", "--param", "T=8", "--format",
                         "json"], "atom_z.txt", {"Z": 8}),
        "table map": (["table", "wgmma.shared.atom.K.128B", "--formula", "atom_z.txt", "--param", "T=8", "--format",
                       "json"], "atom_z.txt", {"Z": 8}),
        "consistent index: shared": (["consistent", "--writer", "index:tile.txt", "--reader", "tma:16x64:none", *tile,
                                      "--format", "json"], "tile.txt", {"BK": 64, "PAD": 0}),
    }
    (files / "inlined_tile.txt").write_text("off = row * 128 + col * 2\n", encoding="utf-8")
    argv, code_file, values = cases[place]
    _same(capsys, argv, code_file, values, files)


def test_a_name_the_code_reads_that_nothing_binds_asks_for_it(files: Path, capsys) -> None:
    err = one_line(*cli(capsys, "banks", "--formula", "tile.txt", "--tile", "16x64", "--type", "f16", "--param", "BK=64",
                        "--access", "ldmatrix.x4"))
    assert err == ("tile.txt:2:23: error: unknown identifier 'PAD' (not defined nor an input; a parameter is bound "
                   "with --param PAD=VALUE)"), err


def test_a_name_only_another_sides_code_reads(files: Path, capsys) -> None:
    """banks: R is the address code's, BK and PAD the tile's; handoff: G is TO's code's, bound by --param."""
    code, out, err = cli(capsys, "banks", "--formula", "tile.txt", "--tile", "16x64", "--type", "f16", "--param", "BK=64",
                         "--param", "PAD=16", "--param", "R=8", "--addresses", "lanes.txt", "--access", "ldmatrix.x4")
    assert code == 0 and "conflict-free" in out, err
    code, out, err = cli(capsys, "handoff", C32, A16, "--to-formula", "a.txt", "--param", "G=4")
    assert code == 0 and out.startswith(f"handoff {C32} -> index a.txt (G = 4): free"), (out, err)
    err = one_line(*cli(capsys, "handoff", C32, A16, "--to-formula", "a.txt", "--param", "G=4", "--param", "H=1"))
    assert "--param H=1: no parameter H here (parameters: G = 4)" in err


def test_a_family_left_unbound_is_decided_for_every_member_or_named(files: Path, capsys) -> None:
    err = one_line(*cli(capsys, "table", "wgmma.m64nNk16.D.f32"))
    assert err.endswith("wgmma.m64nNk16.D.f32 is a family: name its member with --param N=VALUE (8..256 step 8)")
    code, out, _ = cli(capsys, "descriptor", "--id", "wgmma.shared.K.128B", "--type", "f16", "--param", "Rk=1")
    assert code == 0 and [line.split(":")[0] for line in out.splitlines() if line.startswith("Rm = ")] == \
        ["Rm = 1", "Rm = 2", "Rm = 3"]
    code, out, _ = cli(capsys, "probe", "ldmatrix.m8n8.R.b16", "--emit", "all")
    assert code == 0 and [p.name for p in sorted(Path("all").glob("*.cu"))] == [
        f"ldmatrix.m8n8.x{n}.b16.cu" for n in (1, 2, 4)]
    code, out, _ = cli(capsys, "probe", "ldmatrix.m8n8.R.b16", A16, "--param", "NUM=2", "--emit", "two")
    cus = sorted(p.name for p in Path("two").glob("*.cu"))
    assert code == 0 and "ldmatrix.m8n8.x2.b16.cu" in cus and not any("x1" in c or "x4" in c for c in cus)
    assert any(c.startswith("mma.m16n8k16") for c in cus)  # the name binds what has it; the rest stays


def test_a_given_whose_extent_fixes_the_member_needs_no_param(files: Path, capsys) -> None:
    """table of a family with a given layout: the member its extent fixes is drawn (table asked for --param even
    then); a given that is a family itself (index code over N's domain) is asked for its member, as check does."""
    d24 = "((4,8,4),(2,2,3)):((128,1,16),(64,8,512))"
    code, out, _ = cli(capsys, "table", "wgmma.m64nNk16.D.f32", "--cute", d24)
    assert code == 0 and out.startswith(f"cute {d24}  (64 x 24, 128 threads x 12 elements)")
    (files / "d.txt").write_text("row = 16 * (tid // 32) + (tid % 32) // 4 + 8 * ((i // 2) % 2)\n"
                                 "col = (tid % 4) * 2 + i % 2 + 8 * (i // 4)\n", encoding="utf-8")
    err = one_line(*cli(capsys, "table", "wgmma.m64nNk16.D.f32", "--formula", "d.txt"))
    assert err.endswith("wgmma.m64nNk16.D.f32 is a family: name its member with --param N=VALUE (8..256 step 8)")
    err = one_line(*cli(capsys, "check", "--formula", "d.txt", "--as", "wgmma.m64nNk16.D.f32"))
    assert "is a family (N): give --param to check one member" in err
    code, out, _ = cli(capsys, "table", "wgmma.m64nNk16.D.f32", "--formula", "d.txt", "--param", "N=16")
    assert code == 0 and out.startswith("index d.txt  (64 x 16, 128 threads x 8 elements)")


def test_table_of_a_map_given_as_code_draws_the_code(files: Path, capsys) -> None:
    """It printed the spec's table whatever --formula said."""
    (files / "linear.txt").write_text("offset = row * 64 + col\n", encoding="utf-8")
    code, out, _ = cli(capsys, "table", "wgmma.shared.atom.K.128B", "--formula", "linear.txt", "--param", "T=8",
                       "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["id"] == "index linear.txt as wgmma.shared.atom.K.128B"
    assert all(e["offset"] == e["row"] * 64 + e["col"] for e in doc["entries"])
    spec = json.loads(cli(capsys, "table", "wgmma.shared.atom.K.128B", "--param", "T=8", "--format", "json")[1])
    assert [e["offset"] for e in spec["entries"]] != [e["offset"] for e in doc["entries"]]


def test_the_api_follows_the_rule() -> None:
    tile = api.shared_layout("index", TILE, type="f16", tile=(16, 64), params={"BK": 64, "PAD": 16})
    assert tile.map.at({"row": 1, "col": 0}) == {"offset": 72}  # (64 * 2 + 16) bytes = 72 f16 elements
    with pytest.raises(api.FamilyError, match=r"--param X=1: no parameter X here \(parameters: BK, PAD"):
        api.shared_layout("index", TILE, type="f16", tile=(16, 64), params={"BK": 64, "PAD": 16, "X": 1})
    with pytest.raises(api.FamilyError, match="no parameter T here"):
        api.shared_layout("cute", "GMMA::Layout_K_SW128_Atom<half_t>", params={"T": 8})
    r = api.banks(tile, "ldmatrix.x4", addresses=LANES, params={"R": 8})
    assert r.ok
    with pytest.raises(api.FamilyError, match="no parameter Q here"):
        api.banks(tile, "ldmatrix.x4", addresses=LANES, params={"R": 8, "Q": 1})
    g = api.given("index", A_CODE, A16, params={"G": 4})
    assert dict(g.params_bound) == {"G": 4} and api.conform(A16, g).status == "equal"
    with pytest.raises(api.FamilyError, match="no parameter H here"):
        api.given("index", A_CODE, A16, params={"G": 4, "H": 1})
    m, env = api.given_map(api.layout(api.load("specs"), "wgmma.shared.atom.K.128B"), "index",
                           "offset = row * 8 * T + col * Z\n", params={"T": 8, "Z": 1})
    assert env == {"T": 8} and not m.params


# ----------------------------------------------------------------------------- the documentation

def test_the_docs_state_the_rule_with_its_transcripts() -> None:
    """docs/layouts.md's section on --param shows four commands (tests/test_docs.py runs every docs transcript
    and compares it with today's output) and names the code's own parameters in its error."""
    text = (ROOT / "docs" / "layouts.md").read_text(encoding="utf-8")
    block = text.split("## Parameters: `--param`", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert len([line for line in block if line.startswith("$ ptx-verify ")]) == 4
    assert "(parameters: BK, PAD (read by the index code))" in text
    assert "layouts.md#parameters---param" in (ROOT / "docs" / "reference" / "formula.md").read_text(encoding="utf-8")


def test_every_command_that_takes_a_layout_takes_param() -> None:
    """The commands that read a layout have --param; those over a whole spec set, or a kernel, say why not (docs)."""
    from verify.cli.main import build_parser
    subs = next(a for a in build_parser()._actions if a.dest == "command").choices
    takes = {name for name, p in subs.items() if "--param" in p._option_string_actions}
    assert takes == {"check", "table", "conform", "handoff", "consistent", "banks", "descriptor", "probe", "confirm"}
    text = (ROOT / "docs" / "layouts.md").read_text(encoding="utf-8").split("## Parameters: `--param`", 1)[1]
    for name in set(subs) - takes:
        assert f"`{name}" in text.split("A tile written as index code", 1)[0], name


def test_check_of_spec_files_refuses_what_only_a_given_layout_takes(capsys) -> None:
    """`check PATH --param N=8` ignored --param (and --as, --tile) without a word: every family is checked whole."""
    for flag, value in (("--param", "N=8"), ("--as", A16), ("--tile", "16x8")):
        err = one_line(*cli(capsys, "check", str(ROOT / "specs" / "mma.m8n8k4.toml"), flag, value))
        assert err == (f"ptx-verify: error: {flag} is for a layout given in a notation (check --formula FILE {flag} "
                       "...); check of spec files checks every member of every family"), err
