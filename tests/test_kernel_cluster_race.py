"""Races across a cluster's CTAs in shared memory: a write into a CTA's shared memory (``st.shared::cluster``,
``st.async``, ``red.async``, a multicast TMA load's box, the CTA's own stores) is a race when another CTA of the
cluster read the bytes (a write after a read) or wrote them (two writes) with no release and acquire between the
two (``barrier.cluster``, an mbarrier); a read of another CTA's unordered write is the race ``cluster_race`` finds
(``tests/test_kernel_cluster_smem.py``).  Fixture: ``examples/kernels/cluster_race.cu``, a cluster of two CTAs of
one warp; CTA 0 stores each k-block of A into its own and CTA 1's ``sA``, and a ``barrier.cluster`` orders CTA 1's
reads of one block before CTA 0's stores of the next (``-DNO_SYNC`` removes it; ``-DDOUBLE`` stores the second
block into a second buffer instead)."""
from __future__ import annotations

import re

import pytest

from kernel_plants import agree, first, KERNELS, mutant, nvcc_makes, renamed
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

RACE = "cluster_race"


def _lines(name: str) -> list[str]:
    return (KERNELS / f"{name}.ptx").read_text(encoding="utf-8").split("\n")


def _line_of(name: str, pattern: str, nth: int = 0) -> int:
    """The 1-based line of the ``nth`` line of fixture ``name`` that ``pattern`` matches."""
    return [k for k, s in enumerate(_lines(name)) if re.search(pattern, s)][nth] + 1


# nvcc's copy loop of a k-block (16 x 8 words, i = lane, lane + 32, ...): a remainder of up to three stores (none
# runs: 128 / 32 = 4 trips) before the loop unrolled by four; the store of thread 0's first word (shared 0x0) is the
# k-block's fourth st.shared::cluster (index 3, and 10 for the second k-block: seven a block)
FIRST_BLOCK, SECOND_BLOCK = 3, 10


def _second_cluster_barrier_removed(lines: list[str]) -> None:
    """The barrier.cluster between the first k-block's mma and the second k-block's stores made empty lines (the
    lines keep their numbers)."""
    k = [i for i, s in enumerate(lines) if "barrier.cluster.arrive" in s][1]
    assert "barrier.cluster.wait" in lines[k + 1]
    lines[k] = lines[k + 1] = ""


def test_the_single_buffer_kernel_is_proved():
    """A barrier.cluster between CTA 1's reads of sA and CTA 0's next stores there: no race, every element right."""
    r = verify(str(KERNELS / f"{RACE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 4  # two k-blocks, two CTAs


def test_without_the_barrier_the_stores_race_the_reads():
    """``-DNO_SYNC``: CTA 1 runs past the first barrier.cluster and reads the first k-block from its sA while CTA 0
    waits there; CTA 0 then stores the second k-block into CTA 1's sA, with nothing ordering CTA 1's reads before
    the stores: a write after a read, named at CTA 0's st.shared::cluster, naming CTA 1's load.  The executor's
    order gave every element its right products (no wrong element): the race is what the hardware need not
    order."""
    name = f"{RACE}_no_sync"
    r = verify(str(KERNELS / f"{name}.toml"))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["race"]
    (race,) = r.findings
    store = _line_of(name, r"st\.shared::cluster\.u32", SECOND_BLOCK)
    load = _line_of(name, r"ld\.shared\.u32")  # the first k-block's first load of sA
    assert race.words == (f"st.shared::cluster.u32 of CTA rank 0 writes shared 0x0 (CTA rank 1's shared memory), which "
                          f"CTA rank 1 read at line {load} with no barrier.cluster (or mbarrier) between: a write after "
                          "a read (the read may find the new bytes) (CTA 0, thread 0)")
    assert race.line == store
    assert race.source.endswith("cluster_race.cu:50")
    assert race.count == 128  # 32 threads' four stores each: every word of the block CTA 1 read
    assert r.engines["symbolic"]["verdict"] == r.engines["numeric"]["verdict"] == "refuted"
    assert r.engines["symbolic"]["wrong_elements"] == r.engines["numeric"]["wrong_elements"] == 0


def test_the_barrier_removed_from_the_ptx_is_the_same_race(tmp_path):
    """The plant made on the single-buffer kernel's PTX (its second barrier.cluster removed): the same race."""
    r = verify(mutant(tmp_path, RACE, _second_cluster_barrier_removed))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["race"]
    (race,) = r.findings
    assert race.line == _line_of(RACE, r"st\.shared::cluster\.u32", SECOND_BLOCK)
    assert (f"which CTA rank 1 read at line {_line_of(RACE, r'ld.shared.u32')} with no barrier.cluster (or mbarrier) "
            "between: a write after a read") in race.words
    assert race.count == 128


def test_two_buffers_need_no_barrier():
    """``-DDOUBLE``: the second k-block goes into the second buffer, which no CTA read: proved, no race."""
    r = verify(str(KERNELS / f"{RACE}_double.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 4


def test_the_double_buffered_kernels_register_renamed_stays_proved(tmp_path):
    """Meaning-preserving: the %cluster_ctarank register renamed (one more declared)."""
    lines = _lines(f"{RACE}_double")
    reg = re.search(r"mov\.u32 (%r\d+), %cluster_ctarank;", "\n".join(lines))
    assert reg is not None
    count = int(re.search(r"\.reg \.b32 \t%r<(\d+)>;", "\n".join(lines)).group(1))
    r = verify(mutant(tmp_path, f"{RACE}_double", renamed("b32", count, reg.group(1))))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_a_ctas_own_store_racing_the_other_ctas_store_is_two_writes(tmp_path):
    """Each CTA stores its rank into the first word of its own sA before the first barrier.cluster: CTA 0 runs first
    (its own store, then its stores of the first k-block into both sAs) and waits; CTA 1's store of its own sA comes
    after CTA 0's store of the word with nothing ordering the two: two writes, named at CTA 1's st.shared; CTA 1's
    A[0, 0..1] is then its rank (CTA 1's columns 8-15 of D wrong)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"mov\.u32 %r\d+, %cluster_ctarank;")
        rank = re.search(r"(%r\d+)", lines[k]).group(1)
        lines[k] += f"\n\tmov.u32 \t%r0, _ZZ8race_mmaE2sA;\n\tst.shared.u32 \t[%r0], {rank};"
    r = verify(mutant(tmp_path, RACE, change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["race", "wrong_element"]
    race, wrong = r.findings
    store = _line_of(RACE, r"st\.shared::cluster\.u32", FIRST_BLOCK) + 2  # two lines inserted above it
    assert race.words == (f"st.shared.u32 of CTA rank 1 writes shared 0x0 (its own shared memory), which CTA rank 0 "
                          f"wrote at line {store} with no barrier.cluster (or mbarrier) between: two writes (the value "
                          "left depends on their order) (CTA 1, thread 0)")
    assert race.line == _line_of(RACE, r"%cluster_ctarank;") + 2
    assert race.count == 32  # CTA 1's 32 threads store the word
    assert wrong.element == "D[0, 8]"


def test_a_read_before_the_stores_are_ordered_is_reported_once(tmp_path):
    """The first barrier.cluster removed (the one between CTA 0's stores of the first k-block and the reads): CTA 1's
    reads of its sA come after CTA 0's stores with nothing ordering them, the read of an unordered write that
    ``cluster_race`` names (at CTA 1's load); the write-after-read check adds nothing to it (CTA 0's next stores
    come after the second barrier.cluster, which orders CTA 1's reads before them)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"barrier\.cluster\.arrive")
        lines[k] = lines[k + 1] = ""
    r = verify(mutant(tmp_path, RACE, change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["race"]
    (race,) = r.findings
    assert race.words.startswith("CTA rank 1 reads shared 0x0 (its own shared memory), which CTA rank 0 wrote at line "
                                 f"{_line_of(RACE, r'st.shared::cluster.u32', FIRST_BLOCK)} with no barrier.cluster")
    assert race.line == _line_of(RACE, r"ld\.shared\.u32")
    assert race.count == 128  # CTA 1's 32 threads' four loads each, each once


@pytest.mark.slow
@pytest.mark.parametrize("name,defines", [(RACE, []), (f"{RACE}_no_sync", ["-DNO_SYNC"]),
                                          (f"{RACE}_double", ["-DDOUBLE"])])
def test_nvcc_makes_the_committed_ptx(tmp_path, name, defines):
    nvcc_makes(tmp_path, RACE, name, defines, arch="sm_90a")


def test_a_store_racing_a_multicast_into_the_same_bytes_is_two_writes(tmp_path):
    """``cluster_multicast.cu`` with each CTA storing its rank into the first word of its own sA just after the
    barrier.cluster: CTA 1 runs past the barrier first and stores (then waits for the box); CTA 0's multicast of the
    box into CTA 1's sA is issued after that store with nothing ordering the two (the barrier was before it): two
    writes, named at the copy (checked when it is issued: the box lands later, at the wait)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"barrier\.cluster\.wait")
        lines[k] += "\n\tmov.u32 \t%r0, _ZZ13multicast_mmaE2sA;\n\tst.shared.u32 \t[%r0], %r3;"
    r = verify(mutant(tmp_path, "cluster_multicast", change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["race"]
    (race,) = r.findings
    copy = _line_of("cluster_multicast", r"cp\.async\.bulk\.tensor") + 2
    store = _line_of("cluster_multicast", r"barrier\.cluster\.wait") + 2
    assert race.words.startswith("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes."
                                 "multicast::cluster of CTA rank 0 writes shared 0x0 (CTA rank 1's shared memory), "
                                 f"which CTA rank 1 wrote at line {store} with no barrier.cluster (or mbarrier) "
                                 "between: two writes")
    assert race.line == copy
    assert race.count == 2  # the box's two f16 elements in the word


# ----------------------------------------------------------------------------- atomic updates across the cluster

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
\tmov.u32 %r3, %ctaid.x;
\tmad.lo.u32 %r4, %r3, 64, %r1;
\tmul.wide.u32 %rd2, %r4, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tsetp.eq.u32 %p1, %r1, 0;
\t@%p1 st.shared.u32 [cnt], 0;
\tbarrier.cluster.arrive.release.aligned;
\tbarrier.cluster.wait.acquire.aligned;
\tmov.u32 %r6, cnt;
\tmapa.shared::cluster.u32 %r7, %r6, 0;
\tred.shared::cluster.add.u32 [%r7], %r1;
\tbarrier.cluster.arrive.release.aligned;
\tbarrier.cluster.wait.acquire.aligned;
\tld.shared::cluster.u32 %r30, [%r7];
\tst.global.b32 [%rd3], %r30;
\tbarrier.cluster.arrive.release.aligned;
\tbarrier.cluster.wait.acquire.aligned;
\tret;
}
"""
S = 64 * 63 // 2


def _run_cluster(text: str, domain: str):
    import numpy as np

    from verify.kernel.einsum import parse_einsum
    from verify.kernel.launch import Launch, Tensor
    from verify.kernel.numeric import Numeric
    from verify.kernel.run import execute
    from verify.kernel.symbolic import Symbolic, element_starts
    from verify.ptx import parse_module
    module = parse_module(text, "t.ptx")
    (fn,) = module.entries()
    launch = Launch((2, 1, 1), (64, 1, 1), parse_einsum("O[i, j] = X[i, k] * Y[k, j]"),
                    (Tensor("O", "u32", (128, 1), (1, 1)), Tensor("X", "f16", (1, 1), (1, 1)),
                     Tensor("Y", "f16", (1, 1), (1, 1))), cluster=(2, 1, 1))
    r = execute(module, fn, launch, Symbolic(launch) if domain == "symbolic" else Numeric(launch, module))
    offs = element_starts(launch.tensors()["O"])
    b = r.gmem.by_name["O"].bits
    out = b[offs].astype(np.uint32) | b[offs + 1].astype(np.uint32) << 8
    return out.tolist(), [(e.kind, e.words, e.count) for e in r.prog.events.all()]


@pytest.mark.parametrize("domain", ["symbolic", "numeric"])
def test_two_ctas_updating_one_word_do_not_race(domain):
    """Both CTAs' 64 threads add their thread index onto CTA 0's cnt (red.shared::cluster through mapa's address of
    rank 0) between two barrier.cluster: two CTAs' atomic updates of one word are no race, and every thread reads
    the sum of both CTAs' updates."""
    out, events = _run_cluster(CLUSTER, domain)
    assert out == [2 * S] * 128 and events == []


@pytest.mark.parametrize("domain", ["symbolic", "numeric"])
def test_a_plain_store_racing_the_other_ctas_updates_is_two_writes(domain):
    """CTA 1's update made a plain st.shared::cluster of its thread index (the same in both engines): CTA 1 runs past
    the barrier.cluster first and stores; CTA 0's updates of its cnt then read and write bytes CTA 1 stored with
    nothing ordering the two: the race is named at CTA 0's first update (its read of CTA 1's unordered write, and
    its write of the bytes, two writes, counted with it; the updates run thread after thread, each later one on
    CTA 0's own update), and the updates add onto the last store's value."""
    text = CLUSTER.replace("\tred.shared::cluster.add.u32 [%r7], %r1;\n",
                           "\tsetp.eq.u32 %p2, %r3, 0;\n\t@%p2 red.shared::cluster.add.u32 [%r7], %r1;\n"
                           "\t@!%p2 st.shared::cluster.u32 [%r7], %r1;\n")
    out, events = _run_cluster(text, domain)
    assert [k for k, _, _ in events] == ["race"]
    ((_, words, count),) = events
    assert words == ("CTA rank 0 reads shared 0x0 (its own shared memory), which CTA rank 1 wrote at line 24 with no "
                     "barrier.cluster (or mbarrier) between")
    assert count == 2
    assert out == [63 + S] * 128
