"""``atom`` and ``red`` (issue 38): Triton's split-K matmul (``tl.atomic_add`` onto a zeroed C) proved for sm_80
(``atom.global.add.f32``, ``red.global.add.f32``) and sm_90 (``red.global.add.v4.f32``); planted bugs each at the
right first wrong element (a k-split counted twice, one missing, both CTAs on one split, the tile added at its
transposed place, the atomic made a plain store: a race between CTAs); meaning-preserving changes (atom made red,
two updates swapped) still proved; what depends on the order of the updates refused at its line; the concrete
semantics in shared memory (thread after thread at one address, generic addresses, two warps' updates no race, an
update of another warp's plain store one) and in another CTA's through ``mapa`` (``red.shared::cluster``), a read of
it with no cluster barrier between a race."""
from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import numpy as np
import pytest

from kernel_plants import KERNELS, agree, first, mutant, ptx_code
from verify.errors import SpecError
from verify.kernel.einsum import parse_einsum
from verify.kernel.frontdoor import verify
from verify.kernel.launch import Launch, Scalar, Tensor
from verify.kernel.load import compile_triton
from verify.kernel.machine import KernelError
from verify.kernel.numeric import Numeric
from verify.kernel.run import execute
from verify.kernel.symbolic import Symbolic, element_starts
from verify.outputs.kernel import kernel_text
from verify.ptx import parse_module

ATOM = r"atom\.global\.gpu\.acq_rel\.add\.f32 (%r\d+), "


def _proved(r) -> None:
    assert r.status == "proved", kernel_text(r)
    agree(r)


@pytest.mark.parametrize("base", ["triton_splitk", "triton_splitk_red",
                                  pytest.param("triton_splitk_sm90", marks=pytest.mark.slow)])
def test_triton_split_k_is_proved(base):
    r = verify(str(KERNELS / f"{base}.toml"))
    _proved(r)
    assert r.grid == (4, 2, 1)


def test_the_fixture_uses_the_atomics_it_is_for():
    text = {b: (KERNELS / f"{b}.ptx").read_text(encoding="utf-8")
            for b in ("triton_splitk", "triton_splitk_red", "triton_splitk_sm90")}
    assert len(re.findall(ATOM, text["triton_splitk"])) == 32
    assert text["triton_splitk_red"].count("red.global.gpu.relaxed.add.f32 ") == 32
    assert text["triton_splitk_sm90"].count("red.global.gpu.relaxed.add.v4.f32 ") == 8


def _twice(lines: list[str]) -> None:  # every atomic issued twice: each k-split's partial sums counted twice
    for k in range(len(lines) - 1, -1, -1):
        if re.search(ATOM, lines[k]):
            lines.insert(k + 1, lines[k])


def _one_split(lines: list[str]) -> None:  # %ctaid.y read as 0: both CTAs of a tile add the first half of K
    k = first(lines, r"%ctaid\.y")
    lines[k] = lines[k].replace("%ctaid.y", "0")


def _plain(lines: list[str]) -> None:  # the atomics made plain stores: the second CTA's store replaces the first's
    for k, s in enumerate(lines):
        lines[k] = re.sub(ATOM, "st.global.f32 ", s)


def _no_change(lines: list[str]) -> None:
    pass


PLANTS = {
    "a k-split counted twice": (_twice, None, "counts A[0, 0] * B[0, 0], A[0, 1] * B[1, 0], A[0, 2] * B[2, 0] more "
                                              "than once"),
    "a k-split missing (grid y 1)": (_no_change, lambda s: s.replace("grid = [4, 2, 1]", "grid = [4, 1, 1]"),
                                     "lacks A[0, 128] * B[128, 0], A[0, 129] * B[129, 0]"),
    "both CTAs on the first k-split": (_one_split, None, "more than once; lacks A[0, 128] * B[128, 0]"),
}


@pytest.mark.parametrize("name", list(PLANTS))
def test_a_planted_split_k_bug_is_reported_at_its_first_wrong_element(name, tmp_path):
    change, toml_change, words = PLANTS[name]
    r = verify(mutant(tmp_path, "triton_splitk", change, toml_change))
    assert r.status == "refuted"
    agree(r)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", "C[0, 0]", 128 * 128)
    assert words in f.words
    assert f.chain[0].opcode.startswith("atom.global.gpu.acq_rel.add.f32")


def test_the_tile_added_at_its_transposed_place_is_reported_at_c_0_1():
    r = verify(str(KERNELS / "triton_splitk_swap.toml"))
    assert r.status == "refuted"
    agree(r)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", "C[0, 1]", 128 * 128 - 128)  # the diagonal is right
    assert "has A[1, 0] * B[0, 0] (A's m is 1, the element's is 0)" in f.words


def test_the_atomic_made_a_plain_store_is_a_race_between_ctas(tmp_path):
    r = verify(mutant(tmp_path, "triton_splitk", _plain))
    assert r.status == "refuted"
    agree(r)
    kinds = {f.kind: f for f in r.findings}
    assert set(kinds) == {"race", "wrong_element", "written_twice"}
    race = kinds["race"]
    assert race.count == 128 * 128
    assert race.words.startswith("st.global.f32 writes C[0, 0], which CTA 0 wrote at line 651, with nothing ordering "
                                 "the two CTAs: a race") and "(CTA 4, thread 0)" in race.words
    assert (kinds["wrong_element"].element, kinds["wrong_element"].count) == ("C[0, 0]", 128 * 128)
    assert "lacks A[0, 0] * B[0, 0]" in kinds["wrong_element"].words  # the first CTA's half of K is lost


def _as_red(lines: list[str]) -> None:  # atom (result unused) -> red, and the first two updates swapped
    for k, s in enumerate(lines):
        lines[k] = re.sub(ATOM, "red.global.gpu.relaxed.add.f32 ", s)
    a = first(lines, r"\bred\.global")
    b = a + 1 + first(lines[a + 1:], r"\bred\.global")
    lines[a], lines[b] = lines[b], lines[a]


def test_meaning_preserving_changes_stay_proved(tmp_path):
    _proved(verify(mutant(tmp_path, "triton_splitk", _as_red)))


def _refused(tmp_path: Path, change, words: str) -> None:
    with pytest.raises(KernelError) as e:
        verify(mutant(tmp_path, "triton_splitk", change))
    assert e.value.line == 651 and words in e.value.message, e.value.message


def test_an_atom_whose_result_is_read_is_refused(tmp_path):
    def used(lines: list[str]) -> None:
        lines.insert(first(lines, ATOM) + 1, "\tmov.b32 \t%r159, %r158;")
    _refused(tmp_path, used, "unsupported instruction 'atom.global.gpu.acq_rel.add.f32': the old value it returns in "
                             "%r158 (read at line 652) depends on the order of the atomic updates")


def test_compare_and_swap_and_max_of_data_are_refused(tmp_path):
    def cas(lines: list[str]) -> None:
        k = first(lines, ATOM)
        lines[k] = re.sub(r"add\.f32 (%r\d+), (\[[^]]*\]), (%r\d+);", r"cas.b32 \1, \2, \3, \3;", lines[k])
    _refused(tmp_path, cas, "unsupported instruction 'atom.global.gpu.acq_rel.cas.b32' (cas: whether each compare "
                            "succeeds depends on the order of the updates")

    def mx(lines: list[str]) -> None:
        k = first(lines, ATOM)
        lines[k] = lines[k].replace("add.f32", "max.s32")
    _refused(tmp_path / "..", mx, "unsupported instruction 'atom.global.gpu.acq_rel.max.s32' (thread 0: max of data")


def test_init_zero_is_for_the_output_only(tmp_path):
    toml = (KERNELS / "triton_splitk.toml").read_text(encoding="utf-8").replace(
        '{ tensor = "A", type = "f16", shape = [128, 256] }',
        '{ tensor = "A", type = "f16", shape = [128, 256], init = "zero" }')
    (tmp_path / "k.toml").write_text(toml.replace('"triton_splitk.ptx"', f'"{KERNELS / "triton_splitk.ptx"}"'),
                                     encoding="utf-8")
    with pytest.raises(SpecError) as e:
        verify(str(tmp_path / "k.toml"))
    assert "tensor A: init = \"zero\" is for the output tensor (C)" in str(e.value)


def test_without_init_zero_the_first_update_reads_memory_nothing_wrote(tmp_path):
    r = verify(mutant(tmp_path, "triton_splitk", _no_change, lambda s: s.replace(', init = "zero"', "")))
    kinds = {f.kind: f for f in r.findings}
    assert r.status == "refuted" and "unwritten_read" in kinds
    assert kinds["unwritten_read"].words.startswith("atom.global.gpu.acq_rel.add.f32 reads C[0, 0], which nothing wrote")


@pytest.mark.slow
@pytest.mark.parametrize("name,target,extra", [("triton_splitk", "sm_80", {"RELAXED": 0, "SWAP": 0}),
                                               ("triton_splitk_sm90", "sm_90", {"RELAXED": 1, "SWAP": 0})])
def test_triton_compiles_the_committed_split_k_fixtures(name, target, extra):
    if importlib.util.find_spec("triton") is None:
        pytest.skip("Triton is not installed (pip install -e '.[refs]' gives triton==3.9.0)")
    args = (Tensor("A", "f16", (128, 256), (256, 1)), Tensor("B", "f16", (256, 128), (128, 1)),
            Tensor("C", "f32", (128, 128), (128, 1)), *[Scalar(x) for x in (128, 128, 256, 256, 1, 128, 1, 128, 1)])
    cwd = os.getcwd()
    os.chdir(KERNELS)
    try:
        k = compile_triton("splitk.py:matmul_splitk", {"BM": 64, "BN": 64, "BK": 32, "SPLIT": 2, **extra}, args,
                           target, 4, 2)
    finally:
        os.chdir(cwd)
    assert ptx_code(k.ptx) == ptx_code((KERNELS / f"{name}.ptx").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- concrete semantics, shared memory

HEAD = """.version 8.8
.target sm_80
.address_size 64
.visible .entry t(.param .u64 t_o, .param .u64 t_x, .param .u64 t_y)
{
\t.reg .pred %p<8>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<16>;
\t.shared .align 4 .b32 cnt[2];
\tld.param.u64 %rd1, [t_o];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tsetp.eq.u32 %p1, %r1, 0;
\t@%p1 st.shared.u32 [cnt], 5;
\tbar.sync 0;
"""
TAIL = "\tbar.sync 0;\n\tld.shared.u32 %r30, [cnt];\n\tst.global.b32 [%rd3], %r30;\n\tret;\n}\n"


def _run(body: str, threads: int = 64, domain: str = "symbolic"):
    module = parse_module(HEAD + body + TAIL, "t.ptx")
    (fn,) = module.entries()
    launch = Launch((1, 1, 1), (threads, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (threads, 1), (1, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))))
    r = execute(module, fn, launch, Symbolic(launch) if domain == "symbolic" else Numeric(launch, module))
    offs = element_starts(launch.tensors()["O"])
    b = r.gmem.by_name["O"].bits
    out = b[offs].astype(np.uint32) | b[offs + 1].astype(np.uint32) << 8 | b[offs + 2].astype(np.uint32) << 16 | \
        b[offs + 3].astype(np.uint32) << 24
    return out, [(e.kind, e.words) for e in r.prog.events.all()]


S = int(np.arange(64).sum())
SHARED = [
    ("red.add, every thread at one address", "\tred.shared.add.u32 [cnt], %r1;\n", 5 + S),
    ("atom.add with its result unused", "\tatom.shared.add.u32 %r9, [cnt], %r1;\n", 5 + S),
    ("red.max", "\tred.shared.max.u32 [cnt], %r1;\n", 63),
    ("red.min.s32 of negatives", "\tneg.s32 %r2, %r1;\n\tred.shared.min.s32 [cnt], %r2;\n", (1 << 32) - 63),
    ("red.xor", "\tred.shared.xor.b32 [cnt], %r1;\n", 5 ^ int(np.bitwise_xor.reduce(np.arange(64)))),
    ("a generic address", "\tcvta.shared.u64 %rd5, cnt;\n\tred.add.u32 [%rd5], 2;\n", 5 + 128),
]


@pytest.mark.parametrize("domain", ["symbolic", "numeric"])
@pytest.mark.parametrize("name,body,want", SHARED, ids=[c[0] for c in SHARED])
def test_shared_atomics_leave_one_value_whatever_the_order(name, body, want, domain):
    out, events = _run(body, domain=domain)
    assert out.tolist() == [want] * 64
    assert events == []  # two warps' atomic updates of one word: no race


def test_an_atomic_update_of_another_warps_plain_store_is_a_race():
    _, events = _run("\tsetp.eq.u32 %p2, %r1, 40;\n\t@%p2 st.shared.u32 [cnt], 0;\n\tred.shared.add.u32 [cnt], 1;\n")
    assert events == [("race", "warp 0 writes shared 0x0, which another warp wrote in the same barrier epoch")]


def test_a_float_sum_of_two_nonzero_values_is_refused():
    with pytest.raises(KernelError) as e:
        _run("\tred.shared.add.f32 [cnt], 0f3F800000;\n")
    assert "adds two nonzero f32 values: the sum rounds, and the order of the updates decides it" in e.value.message


CLUSTER = """.version 8.8
.target sm_90a
.address_size 64
.visible .entry t(.param .u64 t_o, .param .u64 t_x, .param .u64 t_y)
{
\t.reg .pred %p<4>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<8>;
\t.shared .align 4 .b32 cnt[2];
\tld.param.u64 %rd1, [t_o];
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, %cluster_ctarank;
\tmov.u32 %r3, %ctaid.x;
\tmad.lo.u32 %r4, %r3, 64, %r1;
\tmul.wide.u32 %rd2, %r4, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tsetp.eq.u32 %p1, %r1, 0;
\t@%p1 st.shared.u32 [cnt], 5;
\tbarrier.cluster.arrive.release.aligned;
\tbarrier.cluster.wait.acquire.aligned;
\txor.b32 %r5, %r2, 1;
\tmov.u32 %r6, cnt;
\tmapa.shared::cluster.u32 %r7, %r6, %r5;
\tred.shared::cluster.add.u32 [%r7], %r1;
\tbarrier.cluster.arrive.release.aligned;
\tbarrier.cluster.wait.acquire.aligned;
\tld.shared.u32 %r30, [cnt];
\tst.global.b32 [%rd3], %r30;
\tret;
}
"""


def _run_cluster(text: str, domain: str = "symbolic"):
    module = parse_module(text, "t.ptx")
    (fn,) = module.entries()
    launch = Launch((2, 1, 1), (64, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (128, 1), (1, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))), cluster=(2, 1, 1))
    r = execute(module, fn, launch, Symbolic(launch) if domain == "symbolic" else Numeric(launch, module))
    offs = element_starts(launch.tensors()["O"])
    b = r.gmem.by_name["O"].bits
    out = b[offs].astype(np.uint32) | b[offs + 1].astype(np.uint32) << 8
    return out, [(e.kind, e.words) for e in r.prog.events.all()]


@pytest.mark.parametrize("domain", ["symbolic", "numeric"])
def test_atomic_updates_of_another_ctas_shared_memory_through_mapa(domain):
    out, events = _run_cluster(CLUSTER, domain)
    assert out.tolist() == [5 + S] * 128 and events == []


def test_a_read_of_shared_memory_another_cta_updated_with_no_cluster_barrier_between_is_a_race():
    lines = CLUSTER.split("\n")  # the load of cnt moved before the second barrier.cluster
    ld = next(i for i, s in enumerate(lines) if "ld.shared.u32" in s)
    k = max(i for i, s in enumerate(lines) if "barrier.cluster.arrive" in s)
    lines.insert(k, lines.pop(ld))
    _, events = _run_cluster("\n".join(lines))
    assert [k for k, _ in events] == ["race"]
    # CTA 1 runs past the first barrier.cluster to its load before CTA 0 goes on; CTA 0's update of CTA 1's cnt comes
    # after that read with nothing ordering the two (the first race: a write after a read), and CTA 0's own load
    # after CTA 1's update of its cnt (a read of another CTA's unordered write)
    assert events[0][1].startswith("red.shared::cluster.add.u32 of CTA rank 0 updates shared 0x0 (CTA rank 1's shared "
                                   "memory), which CTA rank 1 read at line 25 with no barrier.cluster")
    assert "a write after a read" in events[0][1]
