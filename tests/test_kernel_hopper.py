"""``ptx-verify kernel`` on Hopper and Blackwell kernels (the fixtures of examples/kernels, made by make_fixtures.py
with Triton 3.9 on the CPU): wgmma through shared-memory descriptors, TMA with mbarriers, tcgen05 with Tensor
Memory, block-scaled tcgen05.mma.  Each is proved; changes planted in their PTX (a descriptor's LBO and SBO
swapped, its swizzle mode changed, a TMA box moved, a Tensor Memory column moved, a scale-factor id changed) are
each reported with the right first wrong element and a chain that names the descriptor field or the Tensor Memory
cell; changes that keep the meaning stay proved; and both engines agree on every one."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernel_plants import KERNELS, agree, first, mutant
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.kernel.launch import parse_launch
from verify.outputs.kernel import kernel_text


@pytest.mark.parametrize("name", ["triton_sm90_64", "triton_sm90_tma", "triton_sm100", "triton_sm100_mxfp8"])
def test_the_hopper_and_blackwell_fixtures_are_proved(name):
    """(triton_sm90, the 128 x 128 x 64 benchmark kernel, is proved by the docs' transcript test.)"""
    r = verify(str(KERNELS / f"{name}.toml"))
    assert r.status == "proved", kernel_text(r)
    assert r.findings == ()
    agree(r)


# ----------------------------------------------------------------------------- planted changes

def _replace_all(old: str, new: str):
    def change(lines: list[str]) -> None:
        hits = [k for k, s in enumerate(lines) if old in s]
        assert hits, old
        for k in hits:
            lines[k] = lines[k].replace(old, new)
    return change


# triton_sm90_64: A's descriptors are 0x8000002000000000 | start (K-major, 64B swizzle, SBO 512 B), B's
# 0x4000004000000000 | start (MN-major, 128B swizzle, SBO 1024 B: the next 8 rows of K; LBO, the next 64 columns of N,
# unused by a 64-column tile)
def swap_lbo_sbo(lines: list[str]) -> None:
    """B's descriptor with its LBO and SBO swapped (LBO 1024 B, SBO 0)."""
    _replace_all("4611686293305294848", str(0x4000000000400000))(lines)


def change_swizzle(lines: list[str]) -> None:
    """A's descriptor with its swizzle mode changed from 64B to 128B."""
    _replace_all("-9223371899415822336", str(0x4000002000000000))(lines)


def unused_lbo(lines: list[str]) -> None:
    """A's descriptor (K-major, swizzled) with an LBO field of 1024 B: the canonical layout does not use it."""
    _replace_all("-9223371899415822336", str(0x8000002000400000 - (1 << 64)))(lines)


# triton_sm90_tma: the first TMA load of A writes its 128 x 64 box (128B swizzle) at the stage's start
def move_box(lines: list[str]) -> None:
    """The first TMA box of A moved by 512 bytes in shared memory: half a 128B swizzle atom (8 rows of 128 B)."""
    k = first(lines, r"cp\.async\.bulk\.tensor.*\[%r12\], \[%rd18")
    lines[k] = lines[k].replace("[%r12]", "[%r12+512]")


# triton_sm100: the accumulator is read back by one tcgen05.ld.32x32b.x128 per warp
def move_tmem_column(lines: list[str]) -> None:
    """The tcgen05.ld of the accumulator one Tensor Memory column off."""
    k = first(lines, r"tcgen05\.ld\.sync")
    lines[k] = lines[k].replace("[%r334 + 0]", "[%r334 + 1]")


# triton_sm100_mxfp8: four MMAs of K = 32 per 128-wide K tile, their instruction descriptors giving SFA_ID = SFB_ID
# = 0, 1, 2, 3 (the K blocks' bytes of each scale-factor column)
def change_sf_id(lines: list[str]) -> None:
    """The second MMA's instruction descriptor with its scale-factor A id 1 changed to 0 (the K block of the first)."""
    _replace_all("mov.b32 \t%r208, 681639952;", f"mov.b32 \t%r208, {681639952 & ~(3 << 29)};")(lines)


def move_sfb_column(lines: list[str]) -> None:
    """The scale factors of B read one Tensor Memory column on (the factors of the next 32 columns of N)."""
    _replace_all("[ %r207 + 0 ]", "[ %r207 + 1 ]")(lines)


# (base, change, first wrong element, the words it starts with, how many wrong, the chain's opcodes and PTX lines,
#  a piece of the chain's words)
PLANTED = [
    ("triton_sm90_64", swap_lbo_sbo, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 8] * B[0, 0] "
     "(k 0 of B meets k 8 of A)", 16384,
     [("st.global.v4", 438), ("wgmma.mma_async.m64n64k16", 258), ("cp.async", 131)],
     "multiplied B[0, 0], element (8, 0) of its B tile: the B descriptor 0x4000000000400200 (start 0x2000, LBO "
     "1024 B (field 64), SBO 0 B (field 0), base offset 0, swizzle 128B) reads it from shared 0x2000"),
    ("triton_sm90_64", change_swizzle, "C[1, 0]", "expected sum over k of A[1, k] * B[k, 0]; has A[2, 0] * B[0, 0] "
     "(A's m is 2, the element's is 1)", 15360,
     [("st.global.v4", 438), ("wgmma.mma_async.m64n64k16", 258), ("cp.async", 114)],
     "the A descriptor 0x4000002000000000 (start 0x0, LBO 0 B (field 0), SBO 512 B (field 32), base offset 0, "
     "swizzle 128B) reads it from shared 0x90"),
    ("triton_sm90_tma", move_box, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has an undefined value * "
     "B[0, 0]", 16384, [("st.global.v4", 867), ("wgmma.mma_async.m64n128k16", 504)],
     "the A descriptor 0x4000004000000000 (start 0x0"),
    ("triton_sm100", move_tmem_column, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 0] * B[0, 1] "
     "(B's n is 1, the element's is 0)", 16384,
     [("st.global.v4", 1185), ("tcgen05.ld.32x32b.x128", 1080), ("tcgen05.mma.kind::f16", 449), ("cp.async", 259)],
     "read Tensor Memory lane 0, column 1, which holds element (0, 1) of the D of the tcgen05.mma.kind::f16 at "
     "line 890"),
    ("triton_sm100_mxfp8", change_sf_id, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0] * SA[0, k / 32] * "
     "SB[0, k / 32]; has A[0, 32] * B[32, 0] * SA[0, 0] * SB[0, 1] (SA's k / 32 is 0, but k is 32: the scale factor "
     "of another block)", 16384,
     [("st.global.v4", 1139), ("tcgen05.ld.32x32b.x128", 1033), ("tcgen05.mma.kind::mxf8f6f4", 860),
      ("tcgen05.st.32x32b.x4", 804), ("ld.shared.v4", 778), ("ld.global", 710)],
     "multiplied SA[0, 0], the scale factor of element (0, 0) of its A tile: the instruction descriptor 0x08a10010 "
     "(SFA_ID 0, SFB_ID 1) reads it from Tensor Memory lane 0, column 128, byte 0"),
    ("triton_sm100_mxfp8", move_sfb_column, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0] * SA[0, k / 32] * "
     "SB[0, k / 32]; has A[0, 0] * B[0, 0] * SA[0, 0] * SB[32, 0] (SB's n is 32, the element's is 0)", 16384,
     [("st.global.v4", 1139), ("tcgen05.ld.32x32b.x128", 1033), ("tcgen05.mma.kind::mxf8f6f4", 850)],
     "reads it from Tensor Memory lane 0, column 133"),
]


@pytest.mark.parametrize("base,change,element,words,count,chain,link", PLANTED, ids=[p[1].__name__ for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element_with_its_chain(tmp_path, base, change, element, words, count,
                                                                     chain, link):
    r = verify(mutant(tmp_path, base, change))
    assert r.status == "refuted"
    agree(r)
    f = next(x for x in r.findings if x.kind == "wrong_element")
    assert (f.element, f.count) == (element, count), kernel_text(r)
    assert f.words.startswith(words), f.words
    assert [(c.opcode, c.line) for c in f.chain][:len(chain)] == chain, kernel_text(r)
    assert any(link in c.words for c in f.chain), kernel_text(r)


def rename_register(lines: list[str]) -> None:
    """%r463 (the Tensor Memory address every tcgen05 instruction uses) renamed %r570 everywhere."""
    k = first(lines, r"\.reg \.b32\s+%r<570>")
    lines[k] = lines[k].replace("%r<570>", "%r<571>")
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r463\b", "%r570", s)


@pytest.mark.parametrize("base,change", [("triton_sm90_64", unused_lbo), ("triton_sm100", rename_register)],
                         ids=["unused_lbo", "rename_register"])
def test_a_change_that_keeps_the_meaning_stays_proved(tmp_path, base, change):
    r = verify(mutant(tmp_path, base, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


# ----------------------------------------------------------------------------- asynchronous units

def _drop(pattern: str, n: int = 0):
    def change(lines: list[str]) -> None:
        hits = [k for k, s in enumerate(lines) if re.search(pattern, s)]
        del lines[hits[n]]
    return change


def _kinds(r) -> list[str]:
    return [f.kind for f in r.findings]


def test_accumulators_read_before_the_wgmma_wait_are_in_flight(tmp_path):
    """The last wgmma.wait_group removed: the epilogue reads accumulators a wgmma still writes (and stores them into
    the shared memory it still reads)."""
    r = verify(mutant(tmp_path, "triton_sm90_64", _drop(r"wgmma\.wait_group\.sync\.aligned 0")))
    agree(r)
    assert set(_kinds(r)) == {"overwrite_in_flight", "register_in_flight"}, kernel_text(r)
    f = r.findings[_kinds(r).index("register_in_flight")]
    assert re.fullmatch(r"\w+ reads %r\d+, which the wgmma at line 269 still writes \(no wgmma.wait_group between "
                        r"them\) \(CTA 0, thread 0\)", f.words), f.words


def test_a_wgmma_with_no_fence_before_it_is_reported(tmp_path):
    r = verify(mutant(tmp_path, "triton_sm90_64", _drop(r"wgmma\.fence")))
    agree(r)
    assert r.findings[0].kind == "wgmma_fence_missing"
    assert "runs before any wgmma.fence" in r.findings[0].words


def test_shared_memory_overwritten_while_a_wgmma_reads_it(tmp_path):
    """wait_group 1 (one group left in flight) made wait_group 2: the next stage's cp.async lands on the tile the
    previous iteration's wgmma still reads."""
    r = verify(mutant(tmp_path, "triton_sm90_64", _replace_all("wgmma.wait_group.sync.aligned 1",
                                                                "wgmma.wait_group.sync.aligned 2")))
    agree(r)
    kinds = _kinds(r)
    assert "overwrite_in_flight" in kinds, kernel_text(r)
    f = r.findings[kinds.index("overwrite_in_flight")]
    assert re.search(r"writes shared 0x[0-9a-f]+, which the wgmma at line \d+ still reads", f.words), f.words


def test_a_read_before_the_tma_bytes_have_arrived(tmp_path):
    """The first transaction count halved: the phase completes when A's bytes arrive, B's are read in flight."""
    r = verify(mutant(tmp_path, "triton_sm90_tma", _replace_all("[%r9], 32768;", "[%r9], 16384;")))
    agree(r)
    f = r.findings[0]
    assert f.kind == "read_in_flight"
    assert re.match(r"wgmma reads shared 0x[0-9a-f]+ before the TMA copy \(cp\.async\.bulk\) at line 135 that writes "
                    r"it has completed", f.words), f.words


def test_a_wait_that_can_never_complete_is_an_error(tmp_path):
    """The first expect_tx of 32768 bytes doubled: the phase waits for bytes no copy brings (the kernel hangs)."""
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, "triton_sm90_tma", _replace_all("[%r9], 32768;", "[%r9], 65536;")))
    assert "which can never complete: 32768 transaction bytes are still outstanding" in e.value.message


def test_tensor_memory_read_before_the_mma_commit_is_waited_for(tmp_path):
    """The wait on the last tcgen05.commit's mbarrier removed: tcgen05.ld reads accumulators still being written."""
    def no_wait(lines: list[str]) -> None:
        k = [k for k, s in enumerate(lines) if "mbarrier.try_wait" in s][1]
        lines[k] = "\tmov.pred \tcomplete, -1;"
    r = verify(mutant(tmp_path, "triton_sm100", no_wait))
    agree(r)
    assert _kinds(r)[:2] == ["barrier_invalidated", "read_in_flight"], kernel_text(r)
    assert "while 0 TMA copies and 1 tcgen05.commit still complete on it" in r.findings[0].words
    f = r.findings[1]
    assert f.words.startswith("tcgen05.ld (warp 0) reads Tensor Memory lane 0, column 0 before the tcgen05.mma at "
                              "line 890 that writes it has completed"), f.words


def test_tensor_memory_not_freed(tmp_path):
    r = verify(mutant(tmp_path, "triton_sm100", _drop(r"tcgen05\.dealloc")))
    agree(r)
    assert _kinds(r) == ["tmem_not_freed"]
    assert "exits with 128 Tensor Memory columns allocated" in r.findings[0].words


def test_an_allocation_past_512_columns_is_an_error(tmp_path):
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, "triton_sm100", _replace_all("[%r24], 128;", "[%r24], 1024;")))
    assert "1024 columns: a power of 2 from 32 to 512" in e.value.message


# ----------------------------------------------------------------------------- the launch's tensor maps

def _launch_error(text: str) -> SpecError:
    with pytest.raises(SpecError) as e:
        parse_launch(text, "l.toml")
    return e.value


HEAD = 'ptx = "k.ptx"\ngrid = [1]\nblock = [128]\ncomputes = "C[m, n] = A[m, k] * B[k, n]"\n'


@pytest.mark.parametrize("arg,message", [
    ('{ tensor_map = "A", type = "f16", shape = [64, 64], box = [64, 128], swizzle = "128B" }',
     "the inner box dimension is 256 bytes, wider than the 128-byte span of 128B swizzling"),
    ('{ tensor_map = "A", type = "f16", shape = [64, 64], box = [64, 4] }',
     "the inner box dimension is 8 bytes, not a multiple of 16"),
    ('{ tensor_map = "A", type = "f16", shape = [64, 64], box = [64, 64], swizzle = "96B" }',
     "swizzle '96B' is not one of none, 32B, 64B, 128B"),
    ('{ tensor_map = "A", type = "f16", shape = [64, 64], box = [512, 64] }', "'box' must be 1 to 5 integers"),
    ('{ tensor_map = "A", box = [64, 64] }', "tensor map A maps no tensor"),
    ('{ tensor_map = "A", type = "f16", shape = [64, 60], box = [64, 56] }',
     "stride 60 is 120 bytes, not a multiple of 16"),
])
def test_a_tensor_map_cutensormapencodetiled_refuses_is_refused_at_its_line(arg, message):
    e = _launch_error(HEAD + f"args = [\n  {arg},\n]\n")
    assert message in e.message
    assert (e.line, e.col) == (6, 3)


def test_a_tensor_map_orders_its_dimensions_by_stride():
    """An M-major A (strides [1, M]): the map's dimensions outermost first are (k, m), as CuTe's TMA atom has them."""
    from verify.kernel.launch import map_order
    lau = parse_launch(HEAD.replace("C[m, n] = A[m, k] * B[k, n]", "C[m, n] = A[m, k] * B[n, k]") +
                       'args = [\n  { tensor = "A", type = "f16", shape = [128, 64], strides = [1, 128] },\n'
                       '  { tensor_map = "A", box = [8, 64], swizzle = "128B" },\n'
                       '  { tensor = "B", type = "f16", shape = [128, 64] },\n'
                       '  { tensor = "C", type = "f32", shape = [128, 128] },\n]\n', "l.toml")
    assert map_order(lau.tensors()["A"]) == (1, 0)


# ----------------------------------------------------------------------------- computes with scale factors

def test_computes_takes_four_factors_and_divided_indices():
    from verify.kernel.einsum import parse_einsum
    e = parse_einsum("C[m, n] = A[m, k] * B[k, n] * SFA[m, k / 32] * SFB[k / 32, n]")
    assert [f.text() for f in e.factors] == ["A[m, k]", "B[k, n]", "SFA[m, k / 32]", "SFB[k / 32, n]"]
    assert e.summed == ("k",)
    assert e.factors[2].text({"m": 3, "k": 70}) == "SFA[3, 2]"


@pytest.mark.parametrize("text,message", [
    ("C[m, n] = A[m, k] * B[k, n] * S[m, j / 32] * T[k, n]", "S's index j / 32: j must also appear whole"),
    ("C[m, n] = A[m, k] * B[k, n] * S[m, k / 1] * T[k, n]", "expected a divisor (an integer from 2 to 65536)"),
    ("C[m, n] = A[m, k] * B[k, n] * A[m, k / 32] * T[k, n]", "a tensor is a factor twice"),
    ("C[m, n] = A[m, k] * B[k, n] * S[m, k / 32]", "computes has 3 factors"),
    ("C[m / 2, n] = A[m, k] * B[k, n]", "the output C takes whole indices"),
])
def test_a_computes_the_grammar_refuses_is_an_error(text, message):
    from verify.kernel.einsum import parse_einsum
    with pytest.raises(SpecError) as e:
        parse_einsum(text)
    assert message in e.value.message


def test_a_scale_factor_tensor_of_the_wrong_extent_is_refused():
    e = _launch_error('ptx = "k.ptx"\ngrid = [1]\nblock = [128]\n'
                      'computes = "C[m, n] = A[m, k] * B[k, n] * SA[m, k / 32] * SB[n, k / 32]"\nargs = [\n'
                      '  { tensor = "A", type = "e4m3", shape = [128, 256] },\n'
                      '  { tensor = "B", type = "e4m3", shape = [256, 128] },\n'
                      '  { tensor = "SA", type = "u8", shape = [128, 4] },\n'
                      '  { tensor = "SB", type = "u8", shape = [128, 8] },\n'
                      '  { tensor = "C", type = "f32", shape = [128, 128] },\n]\n')
    assert "SA's dimension 1 is 4, but k / 32 takes 8 values (k is 256 in A)" in e.message


# ----------------------------------------------------------------------------- the descriptors as decoded

def test_the_instruction_descriptor_is_cutes_bit_for_bit():
    """tcgen05's instruction descriptor fields (PTX 9.1 Tables 42-43) at the bit positions of CuTe's
    UMMA::InstrDescriptor and InstrDescriptorBlockScaled (mma_sm100_desc.hpp, read as text): an independent
    reference of the decoder."""
    cutlass = pytest.importorskip("cutlass_library")
    from verify.layout.descriptor import IDESC_FIELDS
    text = (Path(cutlass.__file__).parent / "source" / "include" / "cute" / "arch" / "mma_sm100_desc.hpp").read_text()

    def fields(union: str) -> dict[str, tuple[int, int]]:
        body = text[text.index(f"union {union}\n"):]
        body = body[:body.index("};")]
        out = {}
        for m in re.finditer(r"(\w+)\s*:\s*(\d+)[,;]?\s*// bit \[\s*(\d+),\s*(\d+)\)", body):
            out[m.group(1)] = (int(m.group(3)), int(m.group(2)))
        return out
    cute = fields("InstrDescriptor")
    ours = {n: (lo, w) for n, lo, w in IDESC_FIELDS["dense"]}
    pairs = {"sparse_id2_": "sparsity_selector", "sparse_flag_": "sparse", "saturate_": "saturate", "c_format_": "dtype",
             "a_format_": "atype", "b_format_": "btype", "a_negate_": "negate_a", "b_negate_": "negate_b",
             "a_major_": "transpose_a", "b_major_": "transpose_b", "n_dim_": "n", "m_dim_": "m", "max_shift_": "max_shift"}
    for c, o in pairs.items():
        assert cute[c] == ours[o], (c, cute[c], ours[o])
    cute = fields("InstrDescriptorBlockScaled")
    ours = {n: (lo, w) for n, lo, w in IDESC_FIELDS["mxf8f6f4"]}
    for c, o in {"b_sf_id_": "sfb_id", "a_sf_id_": "sfa_id", "scale_format_": "scale_type", "n_dim_": "n"}.items():
        assert cute[c] == ours[o], (c, cute[c], ours[o])
    assert cute["m_dim_"][0] + 3 == ours["m"][0]  # CuTe's M >> 4 at bit 24 is the table's M >> 7 at bit 27


def test_tritons_instruction_descriptor_decodes_to_its_mma():
    from verify.layout.descriptor import decode_instruction
    d = decode_instruction("f16", 136380432)
    assert (d.dtype, d.atype, d.btype, d.m, d.n, d.k, d.transpose_a, d.transpose_b) == \
        ("f32", "f16", "f16", 128, 128, 16, 0, 1)
    d = decode_instruction("mxf8f6f4", 681639952)
    assert (d.atype, d.m, d.n, d.k, d.sfa_id, d.sfb_id, d.scale_type) == ("e4m3", 128, 128, 32, 1, 1, "ue8m0")
    with pytest.raises(ValueError, match="reserved bit 6 is set"):
        decode_instruction("f16", 136380432 | 1 << 6)


def test_a_tensor_map_on_the_command_line():
    from verify.cli.kernel import parse_arg
    assert parse_arg("A:f16:128x256:tma=128x64:128B") == {"tensor_map": "A", "type": "f16", "shape": [128, 256],
                                                          "box": [128, 64], "swizzle": "128B"}
    assert parse_arg("B:f16:256x128:tma=64x128") == {"tensor_map": "B", "type": "f16", "shape": [256, 128],
                                                     "box": [64, 128]}


def test_cluster_special_registers_follow_the_launchs_clusters():
    """A grid of 4 CTAs in clusters of 2: each CTA's %cluster_ctarank, %clusterid.x and %cluster_nctarank."""
    from test_kernel_exec import HEAD, TAIL
    from verify.kernel.einsum import parse_einsum
    from verify.kernel.launch import Launch, Tensor
    from verify.kernel.run import execute
    from verify.kernel.symbolic import Symbolic
    from verify.ptx import parse_module
    body = ("\tmov.u32 %r2, %ctaid.x;\n\tmul.wide.u32 %rd4, %r2, 128;\n\tadd.s64 %rd3, %rd3, %rd4;\n"
            "\tmov.u32 %r3, %cluster_ctarank;\n\tmov.u32 %r4, %clusterid.x;\n\tmov.u32 %r5, %cluster_nctarank;\n"
            "\tmad.lo.u32 %r6, %r4, 16, %r3;\n\tmad.lo.u32 %r30, %r5, 256, %r6;\n")
    module = parse_module(HEAD + body + TAIL, "t.ptx")
    (fn,) = module.entries()
    launch = Launch((4, 1, 1), (32, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (128, 1), (1, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))), cluster=(2, 1, 1))
    r = execute(module, fn, launch, Symbolic(launch))
    b = r.gmem.by_name["O"].bits
    got = [int(b[128 * c]) | int(b[128 * c + 1]) << 8 for c in range(4)]
    assert got == [2 * 256 + 16 * (c // 2) + c % 2 for c in range(4)]
