"""FlashInfer's SM107 FP8 groupwise GEMM as a reference for ``storage.sf.cutlass.blockwise.*``
(``references/flashinfer_blockwise.py``, issue 40): the compact fp32 scale tensors ``_get_compiled`` declares,
read with ``ast``.  Tested on a cut-down file of the same shape, with a changed ``stride_order`` (a difference),
a declaration of another form (refused), and on the installed wheel where it is present."""
from __future__ import annotations

import functools

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import flashinfer_blockwise as fb
from verify.checks.references.common import conform_rows, located

FILE = '''
@functools.cache
def _get_compiled(use_2cta: bool, out_is_fp32: bool, out_dtype_name: str) -> Callable:
    import cutlass
    import cutlass.cute as cute
    sym_m, sym_n, sym_k, sym_l = (cute.sym_int() for _ in range(4))
    sym_kb, sym_nb = cute.sym_int(), cute.sym_int()
    mk = cute.runtime.make_fake_compact_tensor
    sfa_f = mk(
        cutlass.Float32,
        (sym_m, sym_kb, sym_l),
        stride_order=(0, 1, 2),
        assumed_align=16,
    )
    sfb_f = mk(
        cutlass.Float32,
        (sym_nb, sym_kb, sym_l),
        stride_order=(0, 1, 2),
        assumed_align=4,
    )
'''


@functools.cache
def _maps() -> tuple:
    return tuple(api.map_layouts(api.load(SPECS)))


def _rows(tmp_path, text: str) -> list:
    (tmp_path / fb.REL).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / fb.REL).write_text(text, encoding="utf-8")
    return conform_rows(fb.blockwise_items(list(_maps()), tmp_path), 10.0)


def _members(spec_id: str) -> int:
    spec = next(m for m in _maps() if m.id == spec_id)
    n = 1
    for q in spec.params:
        n *= len(q.values)
    return n


def test_the_declared_scale_tensors_are_cutlass_blockwise_storage(tmp_path):
    rows = _rows(tmp_path, FILE)
    want = {sid: _members(sid) for sid in fb.SPECS}
    assert {r.spec: sum(1 for x in rows if x.spec == r.spec) for r in rows} == want
    assert {r.kind for r in rows} == {"agree"} and {r.line for r in rows} == {9, 15}   # FILE starts with a newline


@pytest.mark.parametrize("old, new, kinds", [
    ("(sym_m, sym_kb, sym_l),\n        stride_order=(0, 1, 2)", "(sym_m, sym_kb, sym_l),\n        stride_order=(1, 0, 2)",
     {("differ", "storage.sf.cutlass.blockwise.1x128"), ("agree", "storage.sf.cutlass.blockwise.128x128")}),
    ("(sym_nb, sym_kb, sym_l),\n        stride_order=(0, 1, 2)", "(sym_nb, sym_kb, sym_l),\n        stride_order=(0, 2, 1)",
     {("agree", "storage.sf.cutlass.blockwise.1x128"), ("differ", "storage.sf.cutlass.blockwise.128x128")}),
])
def test_a_changed_stride_order_differs(tmp_path, old, new, kinds):
    assert FILE.count(old) == 1
    rows = _rows(tmp_path, FILE.replace(old, new))
    # a member with a single point (M = KB = L = 1) cannot tell the orders apart; every other one differs
    assert {(r.kind, r.spec) for r in rows} - {("agree", s) for s in fb.SPECS} == \
        {k for k in kinds if k[0] == "differ"}


@pytest.mark.parametrize("old, new, why", [
    ("stride_order=(0, 1, 2),\n        assumed_align=16", "stride_order=(0, 1, 1),\n        assumed_align=16",
     "no permutation"),
    ("cutlass.Float32,\n        (sym_m", "cutlass.Float16,\n        (sym_m", "not cutlass.Float32"),
    ("sfa_f = mk(", "sfa_x = mk(", "declares no sfa_f"),
    ("stride_order=(0, 1, 2),\n        assumed_align=16", "stride_order=order,\n        assumed_align=16",
     "no stride_order of integer literals"),
])
def test_another_declaration_is_refused(tmp_path, old, new, why):
    rows = _rows(tmp_path, FILE.replace(old, new))
    bad = [r for r in rows if r.spec == "storage.sf.cutlass.blockwise.1x128" or r.kind == "malformed"]
    assert bad and all(r.kind == "malformed" and why in r.detail for r in bad)


def test_no_file_no_rows(tmp_path):
    assert fb.blockwise_items(list(_maps()), tmp_path) == []


def test_installed_flashinfer_states_the_blockwise_storages():
    where = located(fb.DIST, fb.REL)
    if where is None or not where.is_file():
        pytest.skip(f"reference flashinfer unavailable: no {fb.REL} (pip install --no-deps flashinfer-python==0.7.4)")
    rows = conform_rows(fb.blockwise_items(list(_maps())), 10.0)
    assert {(r.kind, r.spec) for r in rows} == {("agree", s) for s in fb.SPECS}
