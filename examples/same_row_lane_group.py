"""Proof script: in mma.m16n8k16 (f16), row r of A and row r of C/D live in the same lane group.

A lane group is the four lanes sharing groupID = %laneid >> 2.  The claim: whenever an A element
of lane la and a C element of lane lc sit on the same row, la >> 2 == lc >> 2.  Z3 proves it
for all lanes and elements at once; the script exits 0 when proved, 1 otherwise.
"""
import sys

from verify import api

specs = api.load("specs")
A = api.layout(specs, "mma.m16n8k16.A.f16_bf16")
C = api.layout(specs, "mma.m16n8k16.float.C.f32")

la, ia, lc, ic = api.variables("la ia lc ic")
ok_a, row_a, _ = api.cell(A, la, ia)
ok_c, row_c, _ = api.cell(C, lc, ic)

proof = api.prove(
    (la >> 2) == (lc >> 2),
    assuming=[api.domain(A, la, ia), api.domain(C, lc, ic), ok_a, ok_c, row_a == row_c],
)
print(f"row r of A and row r of C in the same lane group: {proof.status}")
if proof.counterexample:
    print("counterexample:", proof.counterexample)

# A deliberately false claim, to show a counterexample: same row => same lane.
wrong = api.prove(la == lc, assuming=[api.domain(A, la, ia), api.domain(C, lc, ic), ok_a, ok_c, row_a == row_c])
print(f"... and in the same lane (false): {wrong.status} {wrong.counterexample}")
sys.exit(0 if proof.status == "proved" and wrong.status == "refuted" else 1)
