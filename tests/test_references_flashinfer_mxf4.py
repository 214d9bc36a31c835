"""FlashInfer's MXFP4 indexer as a reference for ``mma.block_scale.m16n8k64.SF[AB].ue8m0`` (``.scale_vec::2X``) and
``mma.m16n8k64.[AB].e2m1`` (
``references/flashinfer_mxf4.py``, issue 40).

The reader is tested on a file with the statements it reads (the shape of FlashInfer 0.7.4's
``dsa_indexer/mxfp4.py``, cut down), on the same file with one statement changed (a different row, byte order,
selector: each caught as a difference or refused at its line), and on the installed wheel where it is present.
"""
from __future__ import annotations

import functools

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import flashinfer_mxf4 as fm
from verify.checks.references.common import conform_rows, located

KERNEL = '''
@dsl_user_op
def _mxfp4_mma(d0, d1, d2, d3, a0, a1, a2, a3, b0, b1, sfa, sfb, *, loc=None, ip=None):
    operands = [Uint32(v).ir_value(loc=loc, ip=ip) for v in (a0, a1, a2, a3, b0, b1)]
    for scale in (sfa, sfb):
        operands.extend(
            (
                Uint32(scale).ir_value(loc=loc, ip=ip),
                Uint16(0).ir_value(loc=loc, ip=ip),
                Uint16(0).ir_value(loc=loc, ip=ip),
            )
        )
    result = llvm.inline_asm(
        llvm.StructType.get_literal([T.f32()] * 4),
        operands,
        """
        mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0
        {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$0,$1,$2,$3},
        {$10}, {$11,$12}, {$13}, {$14,$15};
        """,
    )


@cute.jit
def _packed_word(data: cute.Tensor, offset: Int64):
    return ld_global_nc_u32(get_ptr_as_int64(data, offset))


@cute.jit
def _scale_pair(data: cute.Tensor, offset: Int64):
    return Uint32(data[offset]) | (Uint32(data[offset + Int64(1)]) << Uint32(8))


class _TensorCorePagedScore(_PagedScore):
    @cute.jit
    def _score_tile(self, q, qs, pool, tile_start: Int32):
        tx, _, _ = cute.arch.thread_idx()
        lane = Int32(tx) % Int32(32)
        col = tile_start + (Int32(tx) // Int32(32)) * Int32(16) + lane // Int32(4)
        for part in cutlass.range_constexpr(2):
            column = col + Int32(part * 8)
            kb[part] = page * pool_stride + token * Int64(64)
            sb[part] = page * pool_stride + Int64(self.page_size * 64) + token * Int64(4)
        for head_tile in cutlass.range_constexpr((self.heads + 7) // 8):
            head = Int32(head_tile * 8) + lane // Int32(4)
            qb = (Int64(row) * Int64(self.heads) + Int64(head)) * Int64(64)
            qsb = (Int64(row) * Int64(self.heads) + Int64(head)) * Int64(4)
            for kstep in cutlass.range_constexpr(2):
                byte_col = Int64(kstep * 32) + Int64(lane % Int32(4)) * Int64(4)
                if valid_key[0]:
                    a0 = _packed_word(pool, kb[0] + byte_col)
                    a2 = _packed_word(pool, kb[0] + byte_col + Int64(16))
                if valid_key[1]:
                    a1 = _packed_word(pool, kb[1] + byte_col)
                    a3 = _packed_word(pool, kb[1] + byte_col + Int64(16))
                scale_row = lane % Int32(2)
                if valid_key[scale_row]:
                    sfa = _scale_pair(pool, sb[scale_row] + Int64(kstep * 2))
                if head < Int32(self.heads):
                    b0 = _packed_word(q, qb + byte_col)
                    b1 = _packed_word(q, qb + byte_col + Int64(16))
                    sfb = _scale_pair(qs, qsb + Int64(kstep * 2))
'''


@functools.cache
def _layouts() -> tuple:
    return tuple(api.layouts(api.load(SPECS)))


def _rows(tmp_path, text: str) -> list:
    (tmp_path / fm.REL).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / fm.REL).write_text(text, encoding="utf-8")
    return conform_rows(fm.mxf4_items(list(_layouts()), tmp_path), 10.0)


def test_the_indexers_scale_factors_are_the_2x_fragments(tmp_path):
    rows = _rows(tmp_path, KERNEL)
    assert [(r.kind, r.spec, r.params) for r in rows] == \
        [("agree", fm.SPECS["SFA"], (("BYTE_ID_A", 0), ("THREAD_ID_A", 0)))] * 2 + \
        [("agree", fm.SPECS["SFB"], (("BYTE_ID_B", 0), ("THREAD_ID_B", 0)))] * 2 + \
        [("agree", fm.A_SPEC, ())] * 2 + [("agree", fm.B_SPEC, ())] * 2
    line = KERNEL.splitlines().index("                    sfa = _scale_pair(pool, sb[scale_row] + Int64(kstep * 2))") + 1
    assert rows[0].line == line and rows[0].header == fm.FILE


@pytest.mark.parametrize("old, new, kinds", [
    # the other key of the pair: SFA rows 8 apart from the spec's
    ("scale_row = lane % Int32(2)", "scale_row = (lane + 1) % Int32(2)", ["differ"] * 2 + ["agree"] * 6),
    # the two bytes of the register exchanged: K blocks 0 and 1 swapped in both
    ("Uint32(data[offset]) | (Uint32(data[offset + Int64(1)]) << Uint32(8))",
     "Uint32(data[offset + Int64(1)]) | (Uint32(data[offset]) << Uint32(8))", ["differ"] * 4 + ["agree"] * 4),
    # every lane's B column shifted by one
    ("head = Int32(head_tile * 8) + lane // Int32(4)", "head = Int32(head_tile * 8) + (lane // Int32(4) + 1) % Int32(8)",
     ["agree"] * 2 + ["differ"] * 2 + ["agree"] * 2 + ["differ"] * 2),
    # A's second K half read 8 bytes early (K 16.. instead of 32..)
    ("a2 = _packed_word(pool, kb[0] + byte_col + Int64(16))", "a2 = _packed_word(pool, kb[0] + byte_col + Int64(8))",
     ["agree"] * 4 + ["differ"] * 2 + ["agree"] * 2),
    # B's first register loaded from its second half
    ("b0 = _packed_word(q, qb + byte_col)\n", "b0 = _packed_word(q, qb + byte_col + Int64(16))\n",
     ["agree"] * 6 + ["differ"] * 2),
    # A's second register from the lane's first key (rows gid, not gid + 8)
    ("a1 = _packed_word(pool, kb[1]", "a1 = _packed_word(pool, kb[0]", ["agree"] * 4 + ["differ"] * 2 + ["agree"] * 2),
    # byte-id 2: the spec's pair at bytes 2-3, FlashInfer's factors at 0-1
    ("Uint16(0).ir_value(loc=loc, ip=ip),\n                Uint16(0)", "Uint16(2).ir_value(loc=loc, ip=ip),\n"
     "                Uint16(0)", ["differ"] * 4 + ["agree"] * 4),
])
def test_a_changed_statement_differs(tmp_path, old, new, kinds):
    assert KERNEL.count(old) == 1
    rows = _rows(tmp_path, KERNEL.replace(old, new))
    assert [r.kind for r in rows] == kinds


@pytest.mark.parametrize("old, new, why", [
    ("scale_vec::2X", "scale_vec::4X", "no mma.sync.aligned.kind::mxf4nvf4"),
    ("lane % Int32(2)", "lane.bit(0)", "Call outside the integer subset"),
    ("a1 = _packed_word(pool, kb[1]", "a1 = _packed_word(pool, kb[2]", "a1 is loaded from kb[2], no key part"),
    ("ld_global_nc_u32(", "ld_global_nc_u16(", "no ld_global_nc_u32"),
    ("def _scale_pair", "def _scale_pair_", "0 definitions of _scale_pair"),
])
def test_what_is_not_the_statement_read_is_refused_at_its_place(tmp_path, old, new, why):
    rows = _rows(tmp_path, KERNEL.replace(old, new))
    assert [r.kind for r in rows] == ["malformed"] * 4
    assert why in rows[0].detail and fm.FILE in rows[0].detail


def test_no_file_no_rows(tmp_path):
    assert fm.mxf4_items(list(_layouts()), tmp_path) == []


def test_installed_flashinfer_states_the_2x_scale_factors():
    if located(fm.DIST, fm.REL) is None or not located(fm.DIST, fm.REL).is_file():
        pytest.skip(f"reference flashinfer unavailable: no {fm.REL} (pip install --no-deps flashinfer-python==0.7.4)")
    rows = conform_rows(fm.mxf4_items(list(_layouts())), 10.0)
    assert [(r.kind, r.spec) for r in rows] == [("agree", fm.SPECS["SFA"])] * 2 + [("agree", fm.SPECS["SFB"])] * 2 + \
        [("agree", fm.A_SPEC)] * 2 + [("agree", fm.B_SPEC)] * 2
