"""The executor's semantics, instruction by instruction, on small hand-written kernels: integers are exact
bit-vectors that wrap at their width, data moves byte by byte, branches run as the kernel runs them (split threads
join again), and what the executor cannot follow is an error at its line (exit 2), never a guess."""
from __future__ import annotations

import numpy as np
import pytest

from verify.kernel.einsum import parse_einsum
from verify.kernel.launch import Launch, Tensor
from verify.kernel.machine import KernelError
from verify.kernel.numeric import Numeric
from verify.kernel.run import execute
from verify.kernel.symbolic import Symbolic, element_starts
from verify.ptx import parse_module

HEAD = """.version 8.8
.target sm_80
.address_size 64
.visible .entry t(.param .u64 t_o, .param .u64 t_x, .param .u64 t_y)
{
\t.reg .pred %p<8>;
\t.reg .b16 %rs<8>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<16>;
\tld.param.u64 %rd1, [t_o];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
"""
TAIL = "\tst.global.b32 [%rd3], %r30;\n\tret;\n}\n"


def run(body: str, threads: int = 32, domain: str = "symbolic") -> np.ndarray:
    """The kernel HEAD + body + TAIL (which stores %r30 at O[tid]) run on ``threads`` threads: O as uint32."""
    text = HEAD + body + TAIL
    module = parse_module(text, "t.ptx")
    (fn,) = module.entries()
    launch = Launch((1, 1, 1), (threads, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (threads, 1), (1, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))))
    dom = Symbolic(launch) if domain == "symbolic" else Numeric(launch, module)
    r = execute(module, fn, launch, dom)
    region = r.gmem.by_name["O"]
    offs = element_starts(launch.tensors()["O"])
    b = region.bits
    return (b[offs].astype(np.uint32) | b[offs + 1].astype(np.uint32) << 8 | b[offs + 2].astype(np.uint32) << 16
            | b[offs + 3].astype(np.uint32) << 24)


T = np.arange(32, dtype=np.int64)


def u32(x) -> np.ndarray:
    return (np.asarray(x, np.int64) % (1 << 32)).astype(np.uint32)


CASES = [
    ("add wraps at 32 bits", "\tadd.u32 %r30, %r1, -3;\n", u32(T - 3)),
    ("sub", "\tsub.s32 %r30, 5, %r1;\n", u32(5 - T)),
    ("mul.lo wraps", "\tmul.lo.u32 %r30, %r1, 0x20000001;\n", u32(T * 0x20000001)),
    ("mul.hi.u32", "\tmul.hi.u32 %r30, %r1, 0x80000000;\n", u32(T >> 1)),
    ("mul.wide.s32 then high word", "\tsub.s32 %r2, 0, %r1;\n\tmul.wide.s32 %rd4, %r2, 3;\n"
                                    "\tmov.b64 {%r3, %r30}, %rd4;\n", u32(np.where(T > 0, -1, 0))),
    ("mad.lo", "\tmad.lo.s32 %r30, %r1, 7, 100;\n", u32(7 * T + 100)),
    ("div.s32 rounds toward zero", "\tsub.s32 %r2, 3, %r1;\n\tdiv.s32 %r30, %r2, 4;\n",
     u32(np.trunc((3 - T) / 4).astype(np.int64))),
    ("rem.s32 keeps the dividend's sign", "\tsub.s32 %r2, 3, %r1;\n\trem.s32 %r30, %r2, 4;\n",
     u32(np.fmod(3 - T, 4))),
    ("shl past the width is 0", "\tshl.b32 %r30, 1, %r1;\n", u32(np.where(T < 32, 1 << T, 0))),
    ("shr.s32 is arithmetic", "\tsub.s32 %r2, 0, %r1;\n\tshr.s32 %r30, %r2, 1;\n", u32((-T) >> 1)),
    ("shr.u32 is logical", "\tsub.s32 %r2, 0, %r1;\n\tshr.u32 %r30, %r2, 28;\n", u32(((-T) % (1 << 32)) >> 28)),
    ("bfe.s32 sign-extends the field", "\tbfe.s32 %r30, %r1, 2, 3;\n",
     u32([((t >> 2) & 7) - 8 if (t >> 4) & 1 else (t >> 2) & 7 for t in range(32)])),
    ("bfi", "\tbfi.b32 %r30, %r1, 0xffffffff, 4, 8;\n", u32([0xFFFFFFFF & ~(0xFF << 4) | (t << 4) for t in range(32)])),
    ("prmt selects and replicates sign bytes", "\tmov.b32 %r2, 0x80402010;\n\tprmt.b32 %r30, %r2, %r1, 0xbc40;\n",
     u32([0x10 | (t << 8) | (0x00 << 16) | (0xFF << 24) for t in range(32)])),
    ("min/max are signed for .s32", "\tsub.s32 %r2, 10, %r1;\n\tmin.s32 %r3, %r2, 0;\n\tmax.s32 %r30, %r3, -5;\n",
     u32(np.maximum(np.minimum(10 - T, 0), -5))),
    ("setp and selp", "\tsetp.lt.u32 %p1, %r1, 7;\n\tselp.b32 %r30, 11, 22, %p1;\n", u32(np.where(T < 7, 11, 22))),
    ("setp with two destinations and an and", "\tsetp.gt.s32 %p1|%p2, %r1, 3;\n\tsetp.lt.and.s32 %p3, %r1, 9, %p1;\n"
                                              "\tselp.b32 %r30, 1, 0, %p3;\n", u32((T > 3) & (T < 9))),
    ("cvt.s32.s8 sign-extends", "\tshl.b32 %r2, %r1, 3;\n\tcvt.u16.u32 %rs1, %r2;\n\tcvt.s32.s8 %r30, %rs1;\n",
     u32([((8 * t) & 0xFF) - 256 if (8 * t) & 0x80 else (8 * t) & 0xFF for t in range(32)])),
    ("lop3 0x96 is a xor b xor c", "\tlop3.b32 %r30, %r1, 0xff, 0x0f0f, 0x96;\n", u32(T ^ 0xFF ^ 0x0F0F)),
    ("shf.l.wrap funnels", "\tshf.l.wrap.b32 %r30, 0xf0000000, %r1, 4;\n", u32((T << 4) | 0xF)),
    ("shfl.sync.bfly exchanges lanes", "\tshfl.sync.bfly.b32 %r30, %r1, 5, 0x1f, -1;\n", u32(T ^ 5)),
    ("shfl.sync.idx reads one lane", "\tshfl.sync.idx.b32 %r30, %r1, 9, 0x1f, -1;\n", u32(np.full(32, 9))),
    ("shfl.sync.up keeps its own below delta", "\tshfl.sync.up.b32 %r30, %r1, 3, 0, -1;\n",
     u32(np.where(T >= 3, T - 3, T))),
    ("mov packs and unpacks halves", "\tmov.b32 {%rs1, %rs2}, 0x00020001;\n\tmov.b32 %r30, {%rs2, %rs1};\n",
     u32(np.full(32, 0x00010002))),
    ("a guard writes only its threads", "\tmov.u32 %r30, 5;\n\tsetp.eq.u32 %p1, %r1, 3;\n\t@%p1 mov.u32 %r30, 6;\n",
     u32(np.where(T == 3, 6, 5))),
    ("split threads join again (if/else)", "\tsetp.lt.u32 %p1, %r1, 10;\n\t@%p1 bra A;\n\tmov.u32 %r30, 2;\n"
                                           "\tbra B;\nA:\n\tmov.u32 %r30, 1;\nB:\n\tadd.u32 %r30, %r30, 100;\n",
     u32(np.where(T < 10, 101, 102))),
    ("a loop whose trip count differs per thread", "\tmov.u32 %r30, 0;\n\tmov.u32 %r2, 0;\nL:\n"
                                                  "\tadd.u32 %r30, %r30, 3;\n\tadd.u32 %r2, %r2, 1;\n"
                                                  "\tsetp.le.u32 %p1, %r2, %r1;\n\t@%p1 bra L;\n", u32(3 * (T + 1))),
    ("cvt between float and integer", "\tcvt.rn.f32.u32 %r2, %r1;\n\tmul.f32 %r3, %r2, 0f40000000;\n"
                                      "\tcvt.rzi.u32.f32 %r30, %r3;\n", u32(2 * T)),
]


@pytest.mark.parametrize("name,body,want", CASES, ids=[c[0] for c in CASES])
def test_instruction_semantics(name, body, want):
    assert run(body).tolist() == want.tolist()


@pytest.mark.parametrize("name,body,want", CASES[:6] + CASES[20:24], ids=[c[0] for c in CASES[:6] + CASES[20:24]])
def test_the_numeric_engine_runs_the_same_integers(name, body, want):
    assert run(body, domain="numeric").tolist() == want.tolist()


def test_an_exited_thread_stays_out():
    body = "\tmov.u32 %r30, 7;\n\tsetp.ge.u32 %p1, %r1, 16;\n\t@%p1 bra DONE;\n\tmov.u32 %r30, 8;\nDONE:\n"
    assert run(body).tolist() == u32(np.where(T >= 16, 7, 8)).tolist()


ERRORS = [
    ("atom.global.cas.b32 %r2, [%rd1], 1, 2;", "unsupported instruction 'atom.global.cas.b32'"),
    ("mov.u32 %r2, %clock;", "special register %clock has no fixed value"),
    ("div.u32 %r2, 1, 0;", "division by zero"),
]


@pytest.mark.parametrize("line,message", ERRORS)
def test_what_the_executor_cannot_follow_is_an_error_at_its_line(line, message):
    with pytest.raises(KernelError) as e:
        run(f"\t{line}\n\tmov.u32 %r30, 0;\n")
    assert e.value.line == HEAD.count("\n") + 1 and message in e.value.message


def test_a_collective_reached_by_part_of_the_cta_names_the_branch_that_split_it():
    body = ("\tsetp.lt.u32 %p1, %r1, 4;\n\t@%p1 bra A;\n\tbar.sync 0;\nA:\n\tmov.u32 %r30, 0;\n")
    with pytest.raises(KernelError) as e:
        run(body)
    assert "bar.sync is reached by part of the CTA (the threads were split by the branch at line 15)" in e.value.message
    assert e.value.line == 16


def test_a_loop_that_never_ends_is_an_error(monkeypatch):
    import verify.kernel.machine as machine
    monkeypatch.setattr(machine, "MAX_STEPS", 1000)
    with pytest.raises(KernelError) as e:
        run("L:\n\tbra L;\n")
    assert "did not end after 1000 instructions" in e.value.message


def test_data_in_arithmetic_is_an_error_not_a_guess():
    body = ("\tld.param.u64 %rd5, [t_x];\n\tld.global.b16 %rs1, [%rd5];\n\tcvt.f32.f16 %r2, %rs1;\n"
            "\tadd.f32 %r30, %r2, %r2;\n")
    with pytest.raises(KernelError) as e:
        run(body)
    assert "add.f32 computes with data" in e.value.message
    body = "\tld.param.u64 %rd5, [t_x];\n\tld.global.b16 %rs1, [%rd5];\n\tcvt.u32.u16 %r2, %rs1;\n\tadd.u32 %r30, %r2, 1;\n"
    with pytest.raises(KernelError) as e:
        run(body)
    assert "%r2 holds data (X[0, 0]" in e.value.message


def test_identities_on_data_pass_it_through():
    """x * 1.0, x + 0.0 and 0 * y + x keep the data (here stored as the low half of %r30: X[0, 0]'s atom)."""
    body = ("\tld.param.u64 %rd5, [t_x];\n\tld.global.b16 %rs1, [%rd5];\n\tmov.b16 %rs5, 0x3C00;\n\tmov.b16 %rs6, 0;\n"
            "\tmul.f16 %rs2, %rs1, %rs5;\n\tadd.f16 %rs3, %rs2, %rs6;\n\tfma.rn.f16 %rs4, %rs6, %rs2, %rs3;\n"
            "\tmov.b32 %r30, {%rs4, %rs4};\n")
    text = HEAD + body + TAIL
    module = parse_module(text, "t.ptx")
    (fn,) = module.entries()
    launch = Launch((1, 1, 1), (32, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (32, 1), (1, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))))
    r = execute(module, fn, launch, Symbolic(launch))
    tags = r.gmem.by_name["O"].tags[:4]
    assert tags.tolist() == [8, 9, 8, 9]  # value 1 (X[0, 0]), bytes 0 and 1, twice


# ----------------------------------------------------------------------------- the matrix instructions

MATRIX = """.version 8.8
.target sm_80
.address_size 64
.visible .entry m(.param .u64 m_o, .param .u64 m_x, .param .u64 m_x2)
{
\t.shared .align 16 .b8 sm[128];
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<16>;
\tld.param.u64 %rd1, [m_o];
\tld.param.u64 %rd5, [m_x];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd6, %rd5, %rd2;
\tld.global.b32 %r2, [%rd6];
\tmov.u32 %r3, sm;
\tshl.b32 %r4, %r1, 4;
\tand.b32 %r4, %r4, 112;
\tadd.u32 %r5, %r3, %r4;
\tshl.b32 %r6, %r1, 2;
\tadd.u32 %r7, %r3, %r6;
{body}
\tadd.s64 %rd3, %rd1, %rd2;
\tst.global.b32 [%rd3], %r30;
\tret;
}}
"""


def matrix_cells(body: str) -> list[tuple[int, int]]:
    """Lane l starts with its m8n8 fragment of X (8 x 8 f16): X[l / 4, 2 (l % 4) + e] in half e of %r2.  Runs
    ``body`` and gives, for each half of each lane's %r30 (stored to O[l]), the cell of X it holds."""
    text = MATRIX.replace("{body}", body).replace("}}", "}")
    module = parse_module(text, "m.ptx")
    (fn,) = module.entries()
    launch = Launch((1, 1, 1), (32, 1, 1), parse_einsum("O[i, j] = X[i, k] * X2[k, j]"),
                    (Tensor("O", "u32", (32, 1), (1, 1)), Tensor("X", "f16", (8, 8), (8, 1)),
                     Tensor("X2", "f16", (1, 1), (1, 1))))
    r = execute(module, fn, launch, Symbolic(launch))
    tags = r.gmem.by_name["O"].tags[:128].reshape(64, 2)
    assert (tags[:, 1] == tags[:, 0] + 1).all() and (tags[:, 0] % 8 == 0).all()
    atoms = tags[:, 0] // 8 - 1  # X's atoms are 1 .. 64, row-major
    return [(int(a) // 8, int(a) % 8) for a in atoms]


FRAGMENT = [(lane // 4, 2 * (lane % 4) + e) for lane in range(32) for e in range(2)]


def test_the_fragment_loads_as_its_cells():
    assert matrix_cells("\tmov.b32 %r30, %r2;") == FRAGMENT


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_writes_the_fragment_and_ldmatrix_reads_it_back(trans):
    t = ".trans" if trans else ""
    stored = matrix_cells(f"\tstmatrix.sync.aligned.m8n8.x1{t}.shared.b16 [%r5], {{%r2}};\n\tbar.sync 0;\n"
                          "\tld.shared.b32 %r30, [%r7];")
    assert stored == ([(c, r) for r, c in FRAGMENT] if trans else FRAGMENT)
    back = matrix_cells(f"\tstmatrix.sync.aligned.m8n8.x1{t}.shared.b16 [%r5], {{%r2}};\n\tbar.sync 0;\n"
                        f"\tldmatrix.sync.aligned.m8n8.x1{t}.shared.b16 {{%r30}}, [%r5];")
    assert back == FRAGMENT


def test_movmatrix_transposes_the_fragment():
    assert matrix_cells("\tmovmatrix.sync.aligned.m8n8.trans.b16 %r30, %r2;") == [(c, r) for r, c in FRAGMENT]


def test_shfl_moves_data_between_lanes():
    moved = matrix_cells("\tshfl.sync.idx.b32 %r30, %r2, 3, 0x1f, -1;")
    assert moved == [FRAGMENT[6 + e] for _ in range(32) for e in range(2)]
