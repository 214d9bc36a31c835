"""``tcgen05.ld .pack::16b`` and ``tcgen05.st .unpack::16b`` (``verify.kernel.tmem_pack``): the catalog's
``tcgen05.<ld|st>.<shape>`` fragment places each register, and the register's two 16-bit halves are the lower 16 bits
of two adjacent Tensor Memory columns (the lower column in the lower half).  Every shape and ``.num`` runs on a small
hand-written kernel; the fixture ``examples/kernels/tcgen05_pack.cu`` reads an f16 accumulator packed, stores it
back unpacked and reads it again, and is proved; planted changes are refuted at their first wrong element."""
from __future__ import annotations

import re

import numpy as np
import pytest

from kernel_plants import KERNELS, agree, first, mutant, nvcc_makes, only_finding
from verify.errors import SpecError
from verify.kernel.einsum import parse_einsum
from verify.kernel.fragments import NoLayout, tmem_access
from verify.kernel.launch import Launch, Tensor
from verify.kernel.numeric import Numeric
from verify.kernel.run import execute
from verify.kernel.symbolic import Symbolic, element_starts
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text
from verify.ptx import parse_module

BASE = "tcgen05_pack"
SHAPES = {"32x32b": (1, 2, 4, 8, 16, 32, 64, 128), "16x64b": (1, 2, 4, 8, 16, 32, 64, 128),
          "16x32bx2": (1, 2, 4, 8, 16, 32, 64, 128), "16x128b": (1, 2, 4, 8, 16, 32, 64),
          "16x256b": (1, 2, 4, 8, 16, 32)}  # every .num the catalog takes (test_every_num_of_the_catalog_is_run)


def test_every_num_of_the_catalog_is_run():
    """SHAPES holds each shape's .num values: the catalog has a layout for each, and none for the next power of 2."""
    for shape, nums in SHAPES.items():
        for op in ("ld", "st"):
            for num in nums:
                assert tmem_access(op, shape, num).registers > 0
            with pytest.raises(NoLayout, match="is not one of the catalog's"):
                tmem_access(op, shape, 2 * nums[-1])


def _kernel(store: str, load: str, regs: int, outs: int) -> str:
    """One warp: Tensor Memory allocated (512 columns), ``regs`` registers %r10.. each the code
    ``(tid * 256 + 2 i) | (tid * 256 + 2 i + 1) << 16`` stored by ``store``, then ``load`` into %r200.., and each
    thread's ``outs`` registers written to O[tid, :]."""
    body = [".version 8.8", ".target sm_100a", ".address_size 64",
            ".visible .entry t(.param .u64 t_o, .param .u64 t_x, .param .u64 t_y)", "{",
            "\t.reg .b32 %r<400>;", "\t.reg .b64 %rd<8>;", "\t.shared .align 4 .b32 slot;",
            "\tld.param.u64 %rd1, [t_o];", "\tmov.u32 %r1, %tid.x;", "\tmov.u32 %r2, slot;",
            "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 512;",
            "\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;", "\ttcgen05.fence::after_thread_sync;",
            "\tld.shared.u32 %r3, [%r2];", "\tmul.lo.u32 %r4, %r1, 16777472;"]
    body += [f"\tadd.u32 %r{10 + i}, %r4, {(2 * i) | (2 * i + 1) << 16};" for i in range(regs)]
    body += [store, "\ttcgen05.wait::st.sync.aligned;", load, "\ttcgen05.wait::ld.sync.aligned;",
             f"\tmul.wide.u32 %rd2, %r1, {4 * outs};", "\tadd.s64 %rd3, %rd1, %rd2;"]
    body += [f"\tst.global.b32 [%rd3+{4 * j}], %r{200 + j};" for j in range(outs)]
    body += ["\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;",
             "\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 512;", "\tret;", "}", ""]
    return "\n".join(body)


def _regs(first_reg: int, n: int) -> str:
    return "{" + ", ".join(f"%r{first_reg + i}" for i in range(n)) + "}"


def _run(text: str, outs: int, domain: str) -> np.ndarray:
    """O[32, outs] (uint32) after the kernel ``text`` ran on one warp in ``domain``."""
    module = parse_module(text, "t.ptx")
    (fn,) = module.entries()
    launch = Launch((1, 1, 1), (32, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (32, outs), (outs, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))))
    dom = Symbolic(launch) if domain == "symbolic" else Numeric(launch, module)
    r = execute(module, fn, launch, dom)
    b = r.gmem.by_name["O"].bits
    offs = element_starts(launch.tensors()["O"])
    words = b[offs].astype(np.uint32) | b[offs + 1].astype(np.uint32) << 8 | b[offs + 2].astype(np.uint32) << 16 \
        | b[offs + 3].astype(np.uint32) << 24
    return words.reshape(32, outs)


def _plain_load(c0: int, n: int) -> str:
    """tcgen05.ld.32x32b.x<n> (one 32-bit column a register, lane l to thread l) of columns c0.. into %r200.."""
    return f"\tadd.u32 %r5, %r3, {c0};\n\ttcgen05.ld.sync.aligned.32x32b.x{n}.b32 {_regs(200, n)}, [%r5];"


def _imm(shape: str, num: int, packed: bool) -> str:
    return f", {2 * num if packed else num}" if shape == "16x32bx2" else ""


def _code(tid: int, reg: int, half: int) -> int:
    return tid * 256 + 2 * reg + half


@pytest.mark.parametrize("domain", ["symbolic", "numeric"])
@pytest.mark.parametrize("shape,num", [(s, n) for s, nums in SHAPES.items() for n in nums])
def test_unpack_then_pack_of_every_shape_and_num(shape, num, domain):
    """st .unpack::16b then ld .pack::16b of the same shape and .num gives each thread its registers back; and the
    cells the unpacking store wrote, read one 32-bit column a register (32x32b), hold in their lower 16 bits the
    half the catalog's fragment, its columns doubled, puts there: register i of lane l, fragment cell (row, c), is
    the lower half of column 2c and the upper half of column 2c + 1 of lane row."""
    form = tmem_access("st", shape, num)
    n = form.registers
    st = f"\ttcgen05.st.sync.aligned.{shape}.x{num}.unpack::16b.b32 [%r3]{_imm(shape, num, True)}, {_regs(10, n)};"
    ld = f"\ttcgen05.ld.sync.aligned.{shape}.x{num}.pack::16b.b32 {_regs(200, n)}, [%r3]{_imm(shape, num, True)};"
    back = _run(_kernel(st, ld, n, n), n, domain)
    want = np.array([[_code(t, i, 0) | _code(t, i, 1) << 16 for i in range(n)] for t in range(32)], np.uint32)
    assert (back == want).all()
    cols = 2 * int(form.col.max()) + 2
    cells = np.concatenate([_run(_kernel(st, _plain_load(c0, min(128, cols - c0)), n, min(128, cols - c0)),
                                 min(128, cols - c0), domain) for c0 in range(0, cols, 128)], axis=1) & 0xFFFF
    expect = np.full((32, cols), -1, np.int64)
    for t in range(32):
        for i in range(n):
            for h in range(2):
                expect[int(form.row[t, i]), 2 * int(form.col[t, i]) + h] = _code(t, i, h)
    written = expect >= 0
    assert written.sum() == 2 * 32 * n  # every half in its own cell
    assert (cells[written] == expect[written]).all()


def test_the_unpacking_stores_lower_half_goes_to_the_lower_column():
    """The doc's example shape (32x32b.x1, one register): lane l's register ``lo | hi << 16`` at column 0 is ``lo``
    in column 0 and ``hi`` in column 1, each in the lower 16 bits (as the hardware probe ``tmem_kind.st`` reads
    tcgen05.packing.A.b16.unpacked)."""
    st = "\ttcgen05.st.sync.aligned.32x32b.x1.unpack::16b.b32 [%r3], {%r10};"
    ld = "\ttcgen05.ld.sync.aligned.32x32b.x2.b32 {%r200, %r201}, [%r3];"
    cells = _run(_kernel(st, ld, 1, 2), 2, "symbolic")
    assert (cells[5, 0] & 0xFFFF, cells[5, 1] & 0xFFFF) == (5 * 256, 5 * 256 + 1)


def test_the_packing_load_takes_the_lower_halves_of_two_columns():
    """32x32b.x2 (plain) writes the codes of registers 0 and 1 into columns 0 and 1; 32x32b.x1.pack::16b reads
    column 0's lower half into the lower half of its register, column 1's into the upper half."""
    st = "\ttcgen05.st.sync.aligned.32x32b.x2.b32 [%r3], {%r10, %r11};"
    ld = "\ttcgen05.ld.sync.aligned.32x32b.x1.pack::16b.b32 {%r200}, [%r3];"
    got = _run(_kernel(st, ld, 2, 1), 1, "numeric")
    assert int(got[7, 0]) == _code(7, 0, 0) | _code(7, 1, 0) << 16


def test_a_plain_load_of_an_unpacked_store_has_undefined_upper_halves():
    """.unpack::16b leaves the upper 16 bits of each word unspecified: read whole and stored as data they are
    undefined (the register's tags), never a guessed zero."""
    module = parse_module(_kernel("\ttcgen05.st.sync.aligned.32x32b.x1.unpack::16b.b32 [%r3], {%r10};",
                                  "\ttcgen05.ld.sync.aligned.32x32b.x1.b32 {%r200}, [%r3];", 1, 1), "t.ptx")
    (fn,) = module.entries()
    launch = Launch((1, 1, 1), (32, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (32, 1), (1, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))))
    r = execute(module, fn, launch, Symbolic(launch))
    region = r.gmem.by_name["O"]
    offs = element_starts(launch.tensors()["O"])
    assert (region.tags[offs + 2] == -2).all() and (region.tags[offs + 3] == -2).all()
    assert (region.tags[offs] == -1).all()  # the lower half: the concrete code


@pytest.mark.parametrize("instr,why", [
    ("tcgen05.st.sync.aligned.32x32b.x1.pack::16b.b32 [%r3], {%r10};", "tcgen05.st takes .unpack::16b, not .pack::16b"),
    ("tcgen05.ld.sync.aligned.32x32b.x1.unpack::16b.b32 {%r200}, [%r3];",
     "tcgen05.ld takes .pack::16b, not .unpack::16b"),
    ("tcgen05.ld.sync.aligned.16x32bx2.x2.pack::16b.b32 {%r200, %r201}, [%r3], 2;",
     "an immHalfSplitoff other than 2 x .num"),
])
def test_a_packing_form_not_executed_is_refused_at_its_line(instr, why):
    text = _kernel("\ttcgen05.st.sync.aligned.32x32b.x1.b32 [%r3], {%r10};", "\t" + instr, 1, 1)
    with pytest.raises(Exception, match=re.escape(why)) as e:
        _run(text, 1, "symbolic")
    assert "t.ptx:" in str(e.value)


# ----------------------------------------------------------------------------- the compiled fixture

def test_the_pack_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2


def test_the_pack_dropped_from_the_first_load_is_reported_at_d_0_1(tmp_path):
    """Without .pack::16b, register j is column j whole: D[0, 2j] gets D[0, j] and D[0, 2j + 1] the zero upper half
    of column j's word: D[0, 0] is right, D[0, 1] the first wrong (31 of each row's 32)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"tcgen05\.ld\.sync\.aligned\.32x32b\.x16\.pack::16b")
        lines[k] = lines[k].replace(".pack::16b", "")
    f = only_finding(verify(mutant(tmp_path, BASE, change)), "D[0, 1]", 128 * 31)
    assert "holds 0" in f.words


def test_the_unpack_dropped_from_the_store_is_reported(tmp_path):
    """Without .unpack::16b the store writes whole words into 32 columns; the packing load reads 64 columns' lower
    halves: D[0, 1] gets (the lower half of) the word of the register that held D[1, 0] (16x128b: threads 0-3 in
    lane 0), and columns 96-127 were never written."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"tcgen05\.st\.sync\.aligned\.16x128b\.x8\.unpack::16b")
        lines[k] = lines[k].replace(".unpack::16b", "")
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert wrong.element == "D[0, 1]"
    assert "has A[1, 0] * B[0, 0]" in wrong.words
    unread = next(f for f in r.findings if f.kind == "unwritten_read")
    assert "reads Tensor Memory lane 0, column 96, which nothing wrote" in unread.words


def test_the_second_loads_column_moved_is_reported_at_d_0_0(tmp_path):
    """The reload's address 2 columns on (one 16x128b register pair): thread 0 gets the halves thread 1 stored (D's
    row 1) at D[0, 0]; the chain names the cells, the unpacking store and the packing load."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"tcgen05\.ld\.sync\.aligned\.16x128b\.x8\.pack::16b")
        addr = re.search(r"\[(%r\d+)\];", lines[k]).group(1)
        decl = first(lines, r"\.reg \.b32 \t%r<\d+>;")
        lines[decl] = re.sub(r"%r<\d+>", "%r<400>", lines[decl])
        lines[k] = lines[k].replace(f"[{addr}];", "[%r399];")
        lines.insert(k, f"\tadd.s32 \t%r399, {addr}, 2;")
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[0, 0]", 128 * 32)
    assert "has A[1, 0] * B[0, 0] (A's m is 1, the element's is 0)" in wrong.words
    text = kernel_text(r)
    assert "read Tensor Memory lane 0, column 66, which holds element (1, 0) of the D" in text
    assert "tcgen05.st.16x128b.x8.unpack::16b at line 309 [tcgen05_pack.cu:78] (thread 1) wrote it to Tensor Memory " \
        "lane 0, column 66" in text
    assert "tcgen05.ld.32x32b.x16.pack::16b at line 297 [tcgen05_pack.cu:72] (thread 1) read Tensor Memory lane 1, " \
        "column 0, which holds element (1, 0) of the D of the tcgen05.mma.kind::f16 at line 262" in text
    assert "accesses Tensor Memory column 128, which no tcgen05.alloc holds" in text


def test_the_round_trip_in_another_shape_stays_proved(tmp_path):
    """Meaning-preserving: the unpacking store and the packing reload both 32x32b.x16 (each thread its own lane)
    instead of 16x128b.x8: every element still reaches its place."""
    def change(lines: list[str]) -> None:
        for k, s in enumerate(lines):
            if "16x128b.x8" in s:
                lines[k] = s.replace("16x128b.x8", "32x32b.x16")
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_a_pack_of_the_unpacked_form_not_executed_stays_an_error(tmp_path):
    """A ``.pack::16b`` on the store is no PTX form: an error at its line (exit 2), never run as something else."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"tcgen05\.st\.sync\.aligned\.16x128b\.x8\.unpack::16b")
        lines[k] = lines[k].replace(".unpack::16b", ".pack::16b")
    with pytest.raises(SpecError, match=r":\d+:\d+: .*tcgen05\.st takes \.unpack::16b"):
        verify(mutant(tmp_path, BASE, change))


def _masked(which: tuple[int, ...], words: tuple[int, int, int, int]):
    """The fixture's MMAs ``which`` (0, 1) given the disable-output-lane vector ``words`` (cta_group::1: four 32-bit
    registers, bit b of register j lane 32 j + b)."""
    def change(lines: list[str]) -> None:
        decl = first(lines, r"\.reg \.b32 \t%r<\d+>;")
        lines[decl] = re.sub(r"%r<\d+>", "%r<400>", lines[decl])
        mmas = [k for k, s in enumerate(lines) if s.startswith("tcgen05.mma")]
        for n, k in reversed(list(enumerate(mmas))):
            if n in which:
                lines[k] = lines[k].replace(", p;", ", {%r396, %r397, %r398, %r399}, p;")
                for j, w in enumerate(words):
                    lines.insert(k, f"mov.b32 %r{396 + j}, {w};")
    return change


@pytest.mark.parametrize("which,words,element,unwritten", [
    ((1,), (1 << 5, 0, 0, 0), "D[5, 0]", None),
    ((0, 1), (1 << 5, 0, 0, 0), "D[5, 0]", "lane 5, column 0"),
    ((0, 1), (0, 0, 0, 1 << 4), "D[100, 0]", "lane 100, column 0"),
])
def test_a_disable_output_lane_mask_leaves_its_lanes_unwritten(tmp_path, which, words, element, unwritten):
    """A lane the mask disables is not written by that MMA (PTX ISA 9.0, 9.7.16.10.9.1): disabled on the second MMA
    only, row 5 keeps the first k-block's sum (lacks A[5, 16] * B[16, 0]); disabled on both, the packing load reads
    cells nothing wrote. Only that row is wrong (32 elements)."""
    r = verify(mutant(tmp_path, BASE, _masked(which, words)))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == (element, 32)
    if unwritten is None:
        assert len(r.findings) == 1 and "lacks A[5, 16] * B[16, 0]" in wrong.words
    else:
        f = next(f for f in r.findings if f.kind == "unwritten_read")
        assert f"reads Tensor Memory {unwritten}, which nothing wrote" in f.words


def test_a_zero_disable_output_lane_mask_stays_proved(tmp_path):
    r = verify(mutant(tmp_path, BASE, _masked((0, 1), (0, 0, 0, 0))))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_a_disable_output_lane_vector_of_the_wrong_size_is_an_error(tmp_path):
    def change(lines: list[str]) -> None:
        k = first(lines, r"^tcgen05\.mma")
        lines[k] = lines[k].replace(", p;", ", {%r87, %r87}, p;")
    with pytest.raises(SpecError, match=r"a disable-output-lane vector of 2 registers; cta_group::1 takes 4"):
        verify(mutant(tmp_path, BASE, change))


def _scaled(which: tuple[int, ...], scale: int):
    """The fixture's MMAs ``which`` given ``scale-input-d`` ``scale`` (the first MMA's enable-input-d is false, the
    second's true)."""
    def change(lines: list[str]) -> None:
        mmas = [k for k, s in enumerate(lines) if s.startswith("tcgen05.mma")]
        for n in which:
            lines[mmas[n]] = lines[mmas[n]].replace(", p;", f", p, {scale};")
    return change


@pytest.mark.parametrize("which,scale", [((0, 1), 0), ((0,), 15)])
def test_a_scale_input_d_that_scales_nothing_stays_proved(tmp_path, which, scale):
    """D = A*B + D * 2^-scale (9.7.16.10.9.1): scale 0 is the plain MMA; on the first MMA, whose enable-input-d is
    false, no D is read, so any scale leaves D = A*B."""
    r = verify(mutant(tmp_path, BASE, _scaled(which, scale)))
    assert r.status == "proved", kernel_text(r)
    agree(r)


@pytest.mark.parametrize("which,scale,why", [
    ((1,), 3, r"\(thread 0\): scale-input-d 3 scales the accumulated D by 2\^-3: A\*B \+ D\*2\^-3 is not a sum of products"),
    ((0,), 16, r"scale-input-d is an immediate in \[0, 15\]"),
])
def test_a_scale_input_d_that_scales_is_refused_at_its_line(tmp_path, which, scale, why):
    """The second MMA accumulates (enable-input-d true): a scaled D is no sum of products, refused (exit 2) at the
    MMA's line, never run as the plain MMA; a scale outside [0, 15] is an error."""
    with pytest.raises(SpecError, match=r":\d+:\d+: .*" + why):
        verify(mutant(tmp_path, BASE, _scaled(which, scale)))


@pytest.mark.slow
def test_the_pack_kernel_compiles_to_the_fixture(tmp_path):
    """nvcc here makes the committed PTX (its code), and that PTX is verified (above)."""
    nvcc_makes(tmp_path, BASE, BASE, [])
