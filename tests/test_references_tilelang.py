"""The TileLang reference (``references.tilelang``) and its interpreter (``references.pyfunc``).

The interpreter is tested on literal functions (each operator, calls, aliases, sibling imports, and
the constructs it refuses, never executing them); the reference on small layout files written here
(a stated layout agreeing, one coefficient changed giving ``differ`` at its line), and on the installed
TileLang files where they are (``pip install --no-deps tilelang==0.1.15``; skipped with why otherwise).
"""
from __future__ import annotations

import functools
import json
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import SPECS, cli

from verify import api
from verify.checks.references import NAMES, ORIGINS, reference
from verify.checks.references import tilelang as tl
from verify.checks.references.pyfunc import Interpreter, Refused, read_module


@functools.cache
def spec_layouts() -> list:
    specs = api.load(SPECS)
    return [*api.layouts(specs), *api.map_layouts(specs)]


def interp(text: str, **more: str) -> Interpreter:
    mods = {"m": read_module(textwrap.dedent(text), "m.py")}
    mods.update({k: read_module(textwrap.dedent(v), f"{k}.py") for k, v in more.items()})
    return Interpreter(mods)


# ----------------------------------------------------------------------------- the interpreter

@pytest.mark.parametrize(("expr", "want"), [
    ("a + b", 17), ("a - b", 3), ("a * b", 70), ("a // b", 1), ("a % b", 3), ("a << 2", 40), ("a >> 1", 5),
    ("a & b", 2), ("a | b", 15), ("a ^ b", 13), ("-a + b", -3), ("(a + 1) * 2 - b // 3", 20),
])
def test_each_operator(expr: str, want: int) -> None:
    it = interp(f"def f(a, b):\n    return {expr}\n")
    assert it.call("m", "f", (10, 7)) == want


def test_locals_tuples_calls_aliases_and_sibling_imports() -> None:
    it = interp('''\
        from pkg.layouts.other import g as h
        def f(t, i):
            """a docstring is skipped"""
            row = t // 4 + 8 * (i % 2)
            col = helper(t, i)
            return row, col
        def helper(t, i):
            return (t % 4) * 2 + i // 2
        alias = f
        def via_import(x, y):
            return h(x, y)
        ''', other="def g(x, y):\n    return y, x\n")
    assert it.call("m", "f", (13, 3)) == (11, 3)
    assert it.call("m", "alias", (13, 3)) == (11, 3)
    assert it.call("m", "via_import", (1, 2)) == (2, 1)


@pytest.mark.parametrize(("body", "reason"), [
    ("return t.bit_length()", "call of Attribute"),
    ("return eval('t')", "'eval' is no function of m.py"),
    ("return __import__('os').getpid()", "call of Attribute"),
    ("return __import__('os')", "'__import__' is no function of m.py"),
    ("for k in range(3):\n        t = t + k\n    return t", "For statement outside the subset"),
    ("if t:\n        return 1\n    return 0", "If statement outside the subset"),
    ("return t if t else 0", "IfExp outside the subset"),
    ("return t < 3", "Compare outside the subset"),
    ("return t / 2", "operator Div outside the subset"),
    ("return t ** 2", "operator Pow outside the subset"),
    ("return t.real", "Attribute outside the subset"),
    ("return undefined + 1", "name 'undefined' is bound to no argument"),
    ("return 'text'", "Constant outside the subset"),
    ("return True", "Constant outside the subset"),
    ("return t // 0", "division by zero"),
    ("return t % (t - t)", "modulo by zero"),
    ("return 1 << 64", "shift by 64"),
    ("return (1 << 62) * 4", "integer out of bounds"),
    ("x = t\n    x += 1\n    return x", "AugAssign statement outside the subset"),
    ("global t\n    return t", "Global statement outside the subset"),
    ("t", "Expr statement outside the subset"),
    ("return f(t)", "calls nest more than 16 deep"),
    ("return g(t, t)", "g takes 1 arguments, called with 2"),
    ("return g(x=t)", "keyword or starred arguments"),
])
def test_refused_constructs_with_their_position(body: str, reason: str) -> None:
    it = interp(f"def f(t):\n    {body}\ndef g(a):\n    return a\n")
    with pytest.raises(Refused) as e:
        it.call("m", "f", (5,))
    assert reason in e.value.reason
    assert e.value.file == "m.py" and e.value.line >= 1


def test_refused_code_is_never_run(tmp_path: Path) -> None:
    target = tmp_path / "written"
    it = interp(f"def f(t):\n    return open({str(target)!r}, 'w').write('x')\n"
                f"def g(t):\n    x = exec('open({str(target)!r}, \"w\")')\n    return t\n")
    for name in ("f", "g"):
        with pytest.raises(Refused):
            it.call("m", name, (1,))
    assert not target.exists()


def test_refused_parameters_and_unknown_modules() -> None:
    it = interp("def f(t, i=0):\n    return t\ndef g(*a):\n    return 1\nfrom tvm import DataType\n"
                "def h(t):\n    return DataType(t)\n")
    with pytest.raises(Refused, match="plain positional parameters"):
        it.call("m", "f", (1, 2))
    with pytest.raises(Refused, match="plain positional parameters"):
        it.call("m", "g", (1,))
    with pytest.raises(Refused, match="module 'tvm', not among the layout files"):
        it.call("m", "h", (1,))


def test_deep_nesting_is_refused_not_a_crash() -> None:
    it = interp("def f(t):\n    return " + " + ".join(["t"] * 5000) + "\n")
    try:
        assert it.call("m", "f", (1,)) == 5000   # within the stack: evaluated
    except Refused as e:
        assert "does not parse" in e.reason or "nests too deep" in e.reason
    it = interp("def f(t):\n    return " + "(" * 1000 + "t" + ")" * 1000 + "\n")
    with pytest.raises(Refused, match="does not parse"):
        it.call("m", "f", (1,))
    it = interp("def f(t):\n    return t\x00\n")
    with pytest.raises(Refused, match="does not parse"):
        it.call("m", "f", (1,))


def test_a_file_that_does_not_parse() -> None:
    it = interp("def f(t:\n    return t\n")
    with pytest.raises(Refused, match="does not parse"):
        it.call("m", "f", (1,))


# ----------------------------------------------------------------------------- the reference on files written here

# PTX's m16n8k16 .f16 A (9.7.14.5.8) and tf32 m16n8k8 B written as TileLang writes them: B as (n, k) over
# two n8 tiles (mma_layout.py:193's form)
GOOD = '''\
def mma_load_a_32x8_to_shared_16x16_layout(thread_id, local_id):
    row = (thread_id // 4) + 8 * (local_id % 4 // 2)
    col = (thread_id % 4) * 2 + (local_id % 2) + 8 * (local_id // 4)
    return row, col


def mma_load_b_32x4_to_shared_16x8_layout(thread_id, local_id):
    row = 8 * (local_id // 2) + (thread_id // 4)
    col = 4 * (local_id % 2) + (thread_id % 4)
    return row, col


def shared_16x16_to_mma_a_32x8_layout(i, j):
    thread_id = 4 * (i % 8) + (j % 8) // 2
    return thread_id, 4 * (j // 8) + (i // 8) * 2 + (j % 2)
'''


def _files(tmp_path: Path, mma_layout: str, sm70: str = "", sp: str = "") -> Path:
    (tmp_path / "mma_layout.py").write_text(mma_layout)
    (tmp_path / "mma_sp_layout.py").write_text(sp)
    (tmp_path / "mma_sm70_layout.py").write_text(sm70)
    return tmp_path


def _rows(path: Path, func: str) -> list:
    report = tl.evaluate_default(spec_layouts(), 10.0, path)
    return [r for r in report.rows if r.trait == func]


def test_written_layouts_agree(tmp_path: Path) -> None:
    path = _files(tmp_path, GOOD)
    [a] = _rows(path, "mma_load_a_32x8_to_shared_16x16_layout")
    assert (a.kind, a.spec, a.line) == ("agree", "mma.m16n8k16.A.f16_bf16", 1)
    [b] = _rows(path, "mma_load_b_32x4_to_shared_16x8_layout")   # (n, k), transposed to the spec's (k, n)
    assert (b.kind, b.spec, b.line) == ("agree", "mma.m16n8k8.B.tf32", 7)
    [inv] = _rows(path, "shared_16x16_to_mma_a_32x8_layout")     # the inverse, enumerated over the tile
    assert (inv.kind, inv.spec, inv.line) == ("agree", "mma.m16n8k16.A.f16_bf16", 13)


def test_one_coefficient_changed_differs_at_its_line(tmp_path: Path) -> None:
    bad = GOOD.replace("8 * (local_id % 4 // 2)", "8 * (local_id % 2)", 1)   # a1 in row g + 8, a2 in row g
    assert bad != GOOD
    [a] = _rows(_files(tmp_path, bad), "mma_load_a_32x8_to_shared_16x16_layout")
    assert (a.kind, a.spec, a.header, a.line) == ("differ", "mma.m16n8k16.A.f16_bf16",
                                                  "tilelang/cuda/intrinsics/layout/mma_layout.py", 1)
    assert "a1" in a.detail and a.counterexample is not None


def test_a_construct_outside_the_subset_is_malformed_with_its_position(tmp_path: Path) -> None:
    bad = GOOD.replace("row = (thread_id // 4)", "row = int(thread_id // 4)", 1)
    [a] = _rows(_files(tmp_path, bad), "mma_load_a_32x8_to_shared_16x16_layout")
    assert a.kind == "malformed" and a.line == 1
    assert a.detail.startswith("mma_layout.py:2:") and "'int' is no function of mma_layout.py" in a.detail


def test_an_inverse_that_is_not_a_bijection_is_malformed(tmp_path: Path) -> None:
    bad = GOOD.replace("(i // 8) * 2 + (j % 2)", "(i // 8) * 2", 1)
    [inv] = _rows(_files(tmp_path, bad), "shared_16x16_to_mma_a_32x8_layout")
    assert inv.kind == "malformed" and "not a bijection" in inv.detail


# TileLang's A row-address map (mma_layout.py:19's form): lane s gives row s % 16, columns 8 * (s // 16) + e
LDSM = GOOD + '''

def ldmatrix_32x8_to_shared_16x16_layout(thread_id, local_id):
    row = thread_id % 16
    col = 8 * (thread_id // 16) + local_id % 8
    return row, col


def ldmatrix_32x32_to_shared_16x64_layout_b(thread_id):
    return thread_id, 0
'''


def test_ldmatrix_address_map_with_its_fragment_states_the_ldmatrix_layout(tmp_path: Path) -> None:
    rows = [r for r in _rows(_files(tmp_path, LDSM), "ldmatrix_32x8_to_shared_16x16_layout")]
    by = {r.spec: r for r in rows}
    a = by["ldmatrix.m8n8.R.b16"]   # with mma_load_a_32x8_to_shared_16x16_layout, A stored (m, k)
    assert (a.kind, a.params, a.line) == ("agree", (("NUM", 4),), 18)
    # the two middle matrices' lanes swapped: lanes 8-15 point at columns 8.., lanes 16-23 at rows 8..
    swapped = LDSM.replace("row = thread_id % 16\n    col = 8 * (thread_id // 16)",
                           "row = thread_id % 8 + 8 * (thread_id // 16)\n    col = 8 * (thread_id // 8 % 2)")
    assert swapped != LDSM
    by = {r.spec: r for r in _rows(_files(tmp_path, swapped), "ldmatrix_32x8_to_shared_16x16_layout")}
    assert by["ldmatrix.m8n8.R.b16"].kind == "differ" and "r2" in by["ldmatrix.m8n8.R.b16"].detail


def test_unpaired_and_missing_functions(tmp_path: Path) -> None:
    report = tl.evaluate_default(spec_layouts(), 10.0, _files(tmp_path, LDSM))
    [ld] = [r for r in report.rows if r.trait == "ldmatrix_32x32_to_shared_16x64_layout_b"]
    assert ld.kind == "unmatched" and "row-address" in ld.detail
    missing = [r for r in report.rows if r.trait == "mma_load_a_32x16_to_shared_16x32_layout"]
    assert missing and all(r.kind == "malformed" and "not defined" in r.detail for r in missing)


def test_sm70_quad_pairs_rank_rows_and_columns(tmp_path: Path) -> None:
    # TileLang's 16x4 A of m8n8k4 (mma_sm70_layout.py:31's form): quad pair q owns rows 8 * (q % 2) + 0..7
    sm70 = ("def mma_load_a_32x4_to_shared_16x4_layout(thread_id, local_id):\n"
            "    row = (thread_id % 4) + (4 * ((thread_id // 16 + thread_id % 16 // 4 * 2) % 4))\n"
            "    col = local_id\n    return row, col\n")
    [a] = _rows(_files(tmp_path, GOOD, sm70), "mma_load_a_32x4_to_shared_16x4_layout")
    assert (a.kind, a.spec) == ("agree", "mma.m8n8k4.A.f16.row")
    swapped = sm70.replace("(thread_id % 4) + (4 *", "(3 - thread_id % 4) + (4 *")   # rows reversed in each 4
    [a] = _rows(_files(tmp_path, GOOD, swapped), "mma_load_a_32x4_to_shared_16x4_layout")
    assert a.kind == "differ"


def test_probe_and_missing_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tl, "_installed", lambda: None)
    assert tl.probe() == ("no tilelang files: pip install --no-deps tilelang==0.1.15 (its layout functions are "
                          "read from source; tilelang itself needs torch)")
    with pytest.raises(FileNotFoundError, match="no tilelang files"):
        tl.evaluate_default(spec_layouts(), 10.0)
    with pytest.raises(FileNotFoundError, match="not a directory"):
        tl.evaluate_default(spec_layouts(), 10.0, tmp_path / "absent")


def test_registered() -> None:
    assert "tilelang" in NAMES and ORIGINS["tilelang"] == "TileLang"
    assert reference("tilelang").module is tl


# ----------------------------------------------------------------------------- the installed TileLang 0.1.15

def _installed() -> Path:
    why = tl.probe()
    if why:
        pytest.skip(f"reference tilelang unavailable: {why}")
    root = tl._installed()
    assert root is not None
    return root


@functools.cache
def installed_report():
    return api.reference("tilelang", SPECS, 10.0)


@pytest.mark.slow
def test_installed_tilelang_agrees_on_known_layouts() -> None:
    _installed()
    rows = installed_report().rows
    agree = {(r.trait, r.spec) for r in rows if r.kind == "agree"}
    for pair in [("mma_load_a_32x8_to_shared_16x16_layout", "mma.m16n8k16.A.f16_bf16"),
                 ("shared_16x16_to_mma_a_32x8_layout_trans", "mma.m16n8k16.A.f16_bf16"),
                 ("mma_load_b_32x8_to_shared_16x16_layout", "mma.m16n8k16.B.f16_bf16"),
                 ("mma_store_32x8_to_shared_16x16_layout", "mma.m16n8k16.float.C.f32"),
                 ("shared_16x16_to_mma_sp_layout_sr_a", "mma.sp.m16n8k16.A.tf32"),
                 # TileLang agrees with the reviewed corrections of the doc's sparse B layouts
                 ("shared_16x32_to_mma_sp_layout_sr_b", "mma.sp.m16n8k32.B.f16_bf16@corrected"),
                 ("shared_16x16_to_mma_sp_layout_sr_b", "mma.sp.m16n8k16.B.tf32@corrected"),
                 ("mma_32x8_to_shared_16x16_layout_fp32", "mma.m8n8k4.f16.C.f32"),
                 # ldmatrix: an address map with the fragment it loads (module docstring)
                 ("ldmatrix_32x8_to_shared_16x16_layout", "ldmatrix.m8n8.R.b16"),
                 ("ldmatrix_trans_32x8_to_shared_16x16_layout", "ldmatrix.m8n8.R.b16.trans"),
                 ("ldmatrix_32x16_to_shared_8x64_layout_b", "ldmatrix.m8n8.R.b16")]:
        assert pair in agree, pair
    assert not [r for r in rows if r.kind == "malformed"]


def test_installed_tilelang_differences_are_located() -> None:
    _installed()
    differ = {(r.trait, r.header.rsplit("/", 1)[-1], r.line, r.spec) for r in installed_report().rows
              if r.kind == "differ"}
    assert differ == {
        # the e2m1 A inverse puts the k half before the m half: its forward (mma_layout.py:257) agrees
        ("shared_16x64_to_mma_a_32x32_layout", "mma_layout.py", 208, "mma.m16n8k64.A.e2m1"),
        ("shared_64x16_to_mma_a_32x32_layout_trans", "mma_layout.py", 215, "mma.m16n8k64.A.e2m1"),
        # thread = row + 8 * col // 4 + 4 * rep: (8 * col) // 4, threads beyond the warp
        ("shared_4x16_to_mma_b_32x4_layout", "mma_sm70_layout.py", 7, "mma.m8n8k4.B.f16.row"),
    }


@pytest.mark.slow
def test_installed_sm70_b_with_the_precedence_fixed_agrees(tmp_path: Path) -> None:
    root = _installed()
    for f in tl.FILES:
        shutil.copy(root / f"{f}.py", tmp_path / f"{f}.py")
    p = tmp_path / "mma_sm70_layout.py"
    text = p.read_text()
    assert "8 * col // 4" in text
    p.write_text(text.replace("8 * col // 4", "8 * (col // 4)"))
    [b] = _rows(tmp_path, "shared_4x16_to_mma_b_32x4_layout")
    assert b.kind == "agree"


@pytest.mark.slow
def test_crosscheck_reference_tilelang_cli(capsys: pytest.CaptureFixture[str]) -> None:
    _installed()
    rc, out, err = cli(capsys, "crosscheck", "--reference", "tilelang", "--format", "json")
    doc = json.loads(out)["crosscheck"]
    assert rc == 1 and doc["reference"] == "tilelang" and doc["root"] == "tilelang 0.1.15"
    assert doc["summary"]["differ"] == 3 and doc["summary"]["malformed"] == 0 and doc["summary"]["agree"] > 60
