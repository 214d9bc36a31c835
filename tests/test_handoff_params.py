"""``handoff``'s parameters on either side (issue 35 items 6 and 12): ``--param`` binds a name on every side
that has it, a given side included; a consumer given in a notation is the member its extent fixes and binds
the producer's shared parameter with it; ``--from-param``/``--to-param`` bind two families that share a name
apart (ldmatrix ``.x1`` -> ``.x2``)."""
from __future__ import annotations

import json

import pytest
from conftest import SPECS, cli

from verify import api
from verify.checks.members import FamilyError

D = "wgmma.m64nNk16.D.f32"
# wgmma D as index code over tid and i: it states no N, the number of elements fixes it
D_CODE = ("row = 16 * (tid // 32) + (tid % 32) // 4 + 8 * ((i // 2) % 2)\n"
          "col = (tid % 4) * 2 + (i % 2) + 8 * (i // 4)\n")
D24_CUTE = "((4,8,4),(2,2,3)):((128,1,16),(64,8,512))"  # wgmma D at N = 24


@pytest.fixture()
def d_code(tmp_path) -> str:
    p = tmp_path / "d.txt"
    p.write_text(D_CODE)
    return str(p)


def test_param_binds_a_side_given_in_a_notation(capsys, d_code) -> None:
    """Both sides given as index code, --param N=96 was refused: "no parameter N here (parameters: none)"."""
    code, out, err = cli(capsys, "handoff", D, "--formula", d_code, "--to-formula", d_code, "--param", "N=96")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"handoff index {d_code} (N = 96) -> index {d_code} (N = 96): free"
    # FROM given, TO the family: the same --param binds both
    code, out, _ = cli(capsys, "handoff", D, D, "--formula", d_code, "--param", "N=96")
    assert code == 0 and out.splitlines()[0] == f"handoff index {d_code} (N = 96) -> {D} (N = 96): free"


def test_a_consumer_in_a_notation_is_the_member_its_extent_fixes(capsys, d_code) -> None:
    """Without --param, a consumer whose extent fixes its member (index code with --to-threads 128
    --to-elements 48: N = 96; a CuTe D of N = 24) binds the producer's N too: one member, not every one."""
    code, out, _ = cli(capsys, "handoff", D, D, "--to-formula", d_code, "--to-threads", "128", "--to-elements", "48")
    assert code == 0 and out.splitlines()[0] == f"handoff {D} (N = 96) -> index {d_code} 128 48 (N = 96): free"
    code, out, _ = cli(capsys, "handoff", D, D, "--to-cute", D24_CUTE)
    assert code == 0 and out.splitlines()[0] == f"handoff {D} (N = 24) -> cute {D24_CUTE} (N = 24): free"
    code, out, _ = cli(capsys, "handoff", D, D, "--to-cute", D24_CUTE, "--format", "json")
    assert json.loads(out)["handoff"]["params"] == {"N": 24}
    # in the API, a given read as its member (N = 24) and another value for it: refused, never cut down
    specs = api.load(f"{SPECS}/wgmma.m64nNk16.toml")
    given = api.cute(D24_CUTE, api.layout(specs, D))
    assert dict(given.params_bound) == {"N": 24}
    with pytest.raises(FamilyError, match=r"--param N=32: TO .* is the member N = 24"):
        api.handoff(api.layout(specs, D), given, params={"N": 32})


def test_two_families_sharing_a_name_bound_apart(capsys) -> None:
    """ldmatrix .x1 -> .x2: both sides are ldmatrix.m8n8.R.b16 (NUM); --param binds both to one value."""
    ldm = "ldmatrix.m8n8.R.b16"
    code, out, _ = cli(capsys, "handoff", ldm, ldm, "--from-param", "NUM=1", "--to-param", "NUM=2")
    assert code == 0 and out.splitlines()[0] == f"handoff {ldm} (NUM = 1) -> {ldm} (NUM = 2): free"
    code, out, _ = cli(capsys, "handoff", ldm, ldm, "--from-param", "NUM=1", "--to-param", "NUM=2", "--format", "json")
    doc = json.loads(out)["handoff"]
    assert doc["params"] == {"FROM NUM": 1, "TO NUM": 2} and doc["status"] == "free"
    # one side bound alone: the other side's NUM takes every value, apart
    code, out, _ = cli(capsys, "handoff", ldm, ldm, "--from-param", "NUM=2")
    assert out.splitlines()[0] == f"handoff {ldm} -> {ldm}: incompatible (free at TO NUM = 2, 4; incompatible at TO NUM = 1)"
    # --param and a side's own value together: the side's own wins there
    code, out, _ = cli(capsys, "handoff", ldm, ldm, "--param", "NUM=2", "--to-param", "NUM=4")
    assert code == 0 and out.splitlines()[0] == f"handoff {ldm} (NUM = 2) -> {ldm} (NUM = 4): free"
    # without any: one NUM for both sides, as before
    code, out, _ = cli(capsys, "handoff", ldm, ldm)
    assert out.splitlines()[0] == f"handoff {ldm} -> {ldm}: free for every member (NUM = 1, 2, 4)"


def test_bad_bindings_are_one_line(capsys) -> None:
    ldm, a = "ldmatrix.m8n8.R.b16", "mma.m16n8k16.A.f16_bf16"
    for argv, msg in (
            (["--from-param", "N=2"], f"--from-param N=2: FROM {ldm} has no parameter N (parameters: NUM = 1..2 step 1, 4)"),
            (["--to-param", "NUM=2"], f"--to-param NUM=2: TO {a} has no parameter NUM (parameters: none)"),
            (["--param", "NUM=3"], "--param NUM=3: not a value of NUM"),
            (["--param", "K=3"], "--param K=3: no parameter K here (parameters: NUM = 1..2 step 1, 4)"),
            (["--to-param", "NUM=x"], "--to-param 'NUM=x': the value is not a whole number in decimal digits"),
            (["--from-param", "NUM=1", "--from-param", "NUM=2"], "--from-param NUM is given twice")):
        code, out, err = cli(capsys, "handoff", ldm, a, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and msg in err, (argv, err)


def test_side_bindings_in_the_api() -> None:
    from verify.checks.members import side_bindings
    specs = api.load([f"{SPECS}/ldmatrix.m8n8.toml", f"{SPECS}/mma.m16n8k16.float.toml"])
    ldm = api.layout(specs, "ldmatrix.m8n8.R.b16")
    shown, members = side_bindings(ldm, ldm, to_params={"NUM": 4})
    assert [p.name for p in shown] == ["FROM NUM"]
    assert members == [({"FROM NUM": v}, {"NUM": v}, {"NUM": 4}) for v in (1, 2, 4)]
    shown, members = side_bindings(ldm, ldm)
    assert [p.name for p in shown] == ["NUM"] and [m[1:] for m in members] == [({"NUM": v}, {"NUM": v}) for v in (1, 2, 4)]
    with pytest.raises(FamilyError, match="has no parameter"):
        side_bindings(ldm, api.layout(specs, "mma.m16n8k16.A.f16_bf16"), to_params={"NUM": 1})
    r = api.handoff(ldm, ldm, from_params={"NUM": 1}, to_params={"NUM": 2})
    assert r.status == "free" and dict(r.source.params_bound) == {"NUM": 1} and dict(r.target.params_bound) == {"NUM": 2}
