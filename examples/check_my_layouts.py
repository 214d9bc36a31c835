"""Proof script: the layouts a kernel uses, checked against the PTX spec with no `import z3`.

Exits 0 when every claim below holds (run from the repository root; the tests run it):
* the CuTe A layout of CUTLASS's SM80_16x8x16_F32F16F16F32_TN is mma.m16n8k16's A, lane for lane;
* a hand-written index function with two registers swapped is caught as a permutation (a0<->a2, a1<->a3);
* Triton's int8 dot-operand layout is mma.m16n8k32's A;
* FlashAttention-2's f32 accumulator feeds the next f16 A without a shuffle, the int8 one does not;
* a property of our own, proved for every lane: the lanes that hold row r of A are the lanes 4*(r % 8)..+3.
"""
import sys
from pathlib import Path

from verify import api

HERE = Path(__file__).resolve().parent
specs = api.load(HERE.parent / "specs")
A = api.layout(specs, "mma.m16n8k16.A.f16_bf16")

ok = True


def claim(what: str, holds: bool) -> None:
    global ok
    ok &= holds
    print(f"{'ok  ' if holds else 'FAIL'} {what}")


cute_a = api.cute("Layout<Shape <Shape < _4,_8>,Shape < _2,_2,  _2>>, Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>", like=A)
claim("CuTe SM80 16x8x16 A conforms", api.conform(A, cute_a).status == "equal")

swapped = api.conform(A, api.index_code((HERE / "layouts" / "m16n8k16_a_swapped.txt").read_text(), like=A))
claim(f"the swapped index code is {swapped.status}: {swapped.permutation.text() if swapped.permutation else ''}",
      swapped.status == "permuted" and swapped.permutation.text() == "a0<->a2, a1<->a3")

i8 = api.layout(specs, "mma.m16n8k32.A.u8_s8")
triton = api.triton((HERE.parent / "tests" / "data" / "notations" / "triton_mma_v2_i8_a_16x32.json").read_text(), like=i8)
claim("Triton's int8 A conforms", api.conform(i8, triton).status == "equal")

fa2 = api.handoff(api.layout(specs, "mma.m16n8k16.float.C.f32"), A)
int8 = api.handoff(api.layout(specs, "mma.m16n8k32.C.s32"), i8)
claim(f"FA2 handoff is {fa2.status}; int8 handoff is {int8.status} ({len(int8.moving)} values move)",
      fa2.status == "free" and int8.status == "shuffle")

lane, i = api.variables("lane i")
ok_a, row, _ = api.cell(A, lane, i)
proof = api.prove(lane >> 2 == row % 8, assuming=[api.domain(A, lane, i), ok_a])
claim(f"row r of A is held by lanes 4*(r % 8)..+3: {proof.status}", proof.status == "proved")
sys.exit(0 if ok else 1)
