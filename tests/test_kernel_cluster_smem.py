"""A cluster's shared memory: a TMA multicast load (``cp.async.bulk.tensor...multicast::cluster``) lands its box in
every CTA of its CTA mask, each one's mbarrier taking the bytes; ``ld``/``st`` through a ``shared::cluster`` address
(``mapa``'s) read and write another CTA's shared memory, ordered by ``barrier.cluster`` (a read of another CTA's
write with no barrier between is a race).  Fixtures: ``examples/kernels/cluster_multicast.cu`` and
``examples/kernels/cluster_dsmem.cu``, both a cluster of two CTAs of one warp, each CTA's ``mma.sync`` computing
eight columns of D."""
from __future__ import annotations

import pytest

from kernel_plants import agree, first, KERNELS, mutant, nvcc_makes, renamed
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

MULTICAST = "cluster_multicast"
DSMEM = "cluster_dsmem"


# ----------------------------------------------------------------------------- TMA multicast

def test_the_multicast_kernel_is_proved():
    r = verify(str(KERNELS / f"{MULTICAST}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2  # one mma.sync per CTA, each on the box the multicast landed


def test_a_mask_without_the_second_cta_hangs_it():
    """The CTA mask 0b11 made 0b01 (``-DMASK=1``): the box lands in CTA 0 only, and CTA 1's wait for the 512 bytes it
    expects can never complete: an error naming CTA 1's wait (the kernel would hang)."""
    with pytest.raises(SpecError, match=r"cluster_multicast_mask\.ptx:\d+:\d+: mbarrier\.try_wait\.parity\.shared::cta"
                                        r"\.b64 \(CTA rank 1, thread 0\) waits for phase 0 .*which can never complete: "
                                        r"512 transaction bytes are still outstanding"):
        verify(str(KERNELS / f"{MULTICAST}_mask.toml"))


def test_without_the_cluster_barrier_the_copy_reaches_an_uninitialised_mbarrier(tmp_path):
    """CTA 0 runs ahead of CTA 1 until it waits: with the barrier.cluster gone, its multicast reaches CTA 1 before
    CTA 1 has initialised its mbarrier, an error naming CTA 1."""
    def change(lines: list[str]) -> None:
        for pattern in (r"barrier\.cluster\.wait", r"barrier\.cluster\.arrive"):
            lines[first(lines, pattern)] = ""
    with pytest.raises(SpecError, match=r"cp\.async\.bulk\.tensor.*multicast::cluster: shared 0x200 of CTA rank 1 "
                                        r"holds no initialised mbarrier"):
        verify(mutant(tmp_path, MULTICAST, change))


def test_a_mask_naming_a_cta_outside_the_cluster_is_an_error(tmp_path):
    def change(lines: list[str]) -> None:
        k = first(lines, r"mov\.u16\s+%rs1, 3;")
        lines[k] = lines[k].replace("%rs1, 3;", "%rs1, 7;")
    with pytest.raises(SpecError, match=r"CTA mask 0x7 names a CTA rank outside the cluster of 2 CTAs"):
        verify(mutant(tmp_path, MULTICAST, change))


def test_a_tma_load_into_another_ctas_shared_memory_is_refused(tmp_path):
    """Without .multicast::cluster, the copy's destination given as mapa's address of CTA 1's sA: refused at its
    line (exit 2), not landed in the issuing CTA's memory."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"cp\.async\.bulk\.tensor\.2d")
        lines[k] = ("\tmapa.shared::cluster.u32 %r7, %r7, 1;\n"
                    + lines[k].replace(".multicast::cluster", "").replace("], %rs1;", "];"))
    with pytest.raises(SpecError, match=r"unsupported instruction 'cp\.async\.bulk\.tensor.*' \(a TMA load into "
                                        r"another CTA's shared memory\)"):
        verify(mutant(tmp_path, MULTICAST, change))


def test_the_multicast_kernels_register_renamed_stays_proved(tmp_path):
    """Meaning-preserving: the CTA mask's register renamed (%rs1 -> %rs6, one more declared)."""
    r = verify(mutant(tmp_path, MULTICAST, renamed("b16", 6, "%rs1")))
    assert r.status == "proved", kernel_text(r)
    agree(r)


# ----------------------------------------------------------------------------- ld/st on another CTA's shared memory

def test_the_distributed_shared_memory_kernel_is_proved():
    r = verify(str(KERNELS / f"{DSMEM}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2


def test_the_remote_store_to_its_own_rank(tmp_path):
    """mapa's rank for the other CTA's sA (rank ^ 1) made the CTA's own rank: each CTA stores its half of A twice
    into its own sA and the other half is never written.  CTA 1 computes D's columns 0-7: its rows 0-7 of A are the
    ones it never got; the first wrong element is D[0, 0], and rows 8-15 of CTA 0's columns 8-15 are wrong too."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"mapa\.shared::cluster\.u32 %r32, %r33, %r34;")
        lines[k] = lines[k].replace("%r34;", "%r31;")
    r = verify(mutant(tmp_path, DSMEM, change))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[0, 0]", 2 * 8 * 8)
    assert "expected sum over k of A[0, k] * B[k, 0]; has an undefined value * B[0, 0]" in wrong.words
    assert [f.kind for f in r.findings] == ["unwritten_read", "wrong_element"]
    assert "ld.shared.u32 reads shared 0x0, which nothing wrote (CTA 1, thread 0)" in kernel_text(r)


def test_a_remote_load_before_the_cluster_barrier():
    """``-DEARLY_LOAD``: each CTA reads the other CTA's B columns before the first barrier.cluster.  CTA 0 runs first
    and reads CTA 1's sB before anything wrote it (its D columns 8-15 are products of undefined values: the first
    wrong element D[0, 8]); CTA 1's stores of its sB come after CTA 0's reads with nothing ordering the two (a write
    after a read, named at CTA 1's store: the first race), and CTA 1's read of CTA 0's sB comes after CTA 0 wrote
    it, with nothing ordering the two either (a race, named at CTA 1's load)."""
    r = verify(str(KERNELS / f"{DSMEM}_early_load.toml"))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["unwritten_read", "race", "wrong_element"]
    unread, race, wrong = r.findings
    assert "ld.shared::cluster.u32 reads shared 0x200 of CTA rank 1, which nothing wrote" in unread.words
    assert (f"st.shared.u16 of CTA rank 1 writes shared 0x200 (its own shared memory), which CTA rank 0 read at line "
            f"{unread.line} with no barrier.cluster (or mbarrier) between: a write after a read") in race.words
    assert "(CTA 1, thread 0)" in race.words
    # CTA 1's 128 stores of the halves CTA 0 read, and its 64 loads (32 threads, two each) of CTA 0's sB
    assert race.count == 128 + 64
    assert (wrong.element, wrong.count) == ("D[0, 8]", 128)
    assert "A[0, 0] * an undefined value" in wrong.words


def test_without_the_closing_cluster_barrier_the_other_cta_has_ended(tmp_path):
    """The second barrier.cluster keeps each CTA running while the other reads its sB: without it, CTA 1 runs to its
    end while CTA 0 waits at the first barrier, and CTA 0's load from CTA 1's sB is an error (that memory is gone)."""
    def change(lines: list[str]) -> None:
        for pattern in (r"barrier\.cluster\.wait", r"barrier\.cluster\.arrive"):
            k = [i for i, s in enumerate(lines) if pattern.replace("\\", "") in s][1]
            lines[k] = ""
    with pytest.raises(SpecError, match=r"ld\.shared::cluster\.u32 \(CTA rank 0\): shared::cluster 0x2000200 is in "
                                        r"CTA rank 1, which has ended"):
        verify(mutant(tmp_path, DSMEM, change))


def test_without_the_first_cluster_barrier_both_kinds_of_read_race(tmp_path):
    """The first barrier.cluster gone: CTA 0 runs first and reads CTA 1's sB before anything wrote it; CTA 1's reads
    come after CTA 0's writes but nothing orders them: its 64 ld.shared::cluster of CTA 0's sB, and its 64 local
    ld.shared of the A rows CTA 0 stored into its sA (st.shared::cluster): 128 races; and CTA 1's writes come after
    CTA 0's reads of the bytes, with nothing ordering them either: its stores of A's rows 8-15 into CTA 0's sA (64,
    the first race, named at CTA 1's st.shared::cluster) and its stores of its own sB (128), written after reads."""
    def change(lines: list[str]) -> None:
        for pattern in (r"barrier\.cluster\.wait", r"barrier\.cluster\.arrive"):
            lines[first(lines, pattern)] = ""
    r = verify(mutant(tmp_path, DSMEM, change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["unwritten_read", "race", "wrong_element"]
    race = r.findings[1]
    assert ("st.shared::cluster.u32 of CTA rank 1 writes shared 0x100 (CTA rank 0's shared memory), which CTA rank 0 "
            "read at line") in race.words
    assert race.words.endswith("a write after a read (the read may find the new bytes) (CTA 1, thread 0)")
    assert race.count == 128 + 64 + 128
    assert (r.findings[2].element, r.findings[2].count) == ("D[0, 8]", 128)


def test_an_mbarrier_orders_the_other_ctas_stores_before_the_reads():
    """``-DMBARRIER``: each CTA's threads arrive on the other CTA's mbarrier (release.cluster, through mapa) after
    their stores, and each CTA waits on its own (acquire.cluster) before it reads: proved, no race."""
    r = verify(str(KERNELS / f"{DSMEM}_mbarrier.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_without_the_mbarrier_wait_the_reads_race(tmp_path):
    """The wait on the mbarrier gone: CTA 1 (past the first barrier.cluster while CTA 0 waits there) reads CTA 0's
    sB before CTA 0 stored it; CTA 0 then reads CTA 1's stores, which CTA 1's arrival released but CTA 0 never
    acquired: a race; the first race is CTA 0's store into CTA 1's sA (and of its own sB), after CTA 1 read the
    bytes with nothing ordering the two: a write after a read."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"mbarrier\.try_wait\.parity\.acquire\.cluster")
        lines[k] = ""
        lines[k + 1] = ""
    r = verify(mutant(tmp_path, f"{DSMEM}_mbarrier", change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["unwritten_read", "race", "wrong_element"]
    assert "reads shared 0x200 of CTA rank 0, which nothing wrote" in r.findings[0].words
    assert ("st.shared::cluster.u32 of CTA rank 0 writes shared 0x0 (CTA rank 1's shared memory), which CTA rank 1 "
            "read at line") in r.findings[1].words
    assert r.findings[1].count == 128 + 64 + 128
    assert r.findings[2].element == "D[0, 0]"


def test_st_async_completing_on_no_mbarrier_is_an_error(tmp_path):
    """The remote store made st.async completing on its own address (no mbarrier there): an error at its line naming
    the destination CTA (st.async itself: ``tests/test_kernel_cluster_async.py``)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"st\.shared::cluster\.u32")
        lines[k] = lines[k].replace("st.shared::cluster.u32 [%r39], %r40;",
                                    "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r39], %r40, [%r39];")
        assert "st.async" in lines[k]
    with pytest.raises(SpecError, match=r"k\.ptx:\d+:\d+: st\.async\.shared::cluster\.mbarrier::complete_tx::bytes\.b32: "
                                        r"shared 0x0 of CTA rank 1 holds no initialised mbarrier"):
        verify(mutant(tmp_path, DSMEM, change))


def test_the_dsmem_kernels_register_renamed_stays_proved(tmp_path):
    """Meaning-preserving: the other CTA's rank (%r34 -> %r204, one more declared)."""
    r = verify(mutant(tmp_path, DSMEM, renamed("b32", 204, "%r34")))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_a_shared_cluster_address_without_a_cluster_is_an_error(tmp_path):
    """mapa's rank 1 in a launch of clusters of one CTA (no .reqnctapercluster): an error at the mapa."""
    def change(lines: list[str]) -> None:
        for k, s in enumerate(lines):
            if s.startswith(".explicitcluster") or s.startswith(".reqnctapercluster"):
                lines[k] = ""
    with pytest.raises(SpecError, match=r"mapa\.shared::cluster\.u32 \(thread \d+\): rank 1 is not in the cluster of "
                                        r"1 CTAs"):
        verify(mutant(tmp_path, DSMEM, change, lambda t: t.replace("cluster = [2, 1, 1]\n", "")))


@pytest.mark.slow
@pytest.mark.parametrize("base,name,defines", [(MULTICAST, MULTICAST, []), (MULTICAST, f"{MULTICAST}_mask", ["-DMASK=1"]),
                                                (DSMEM, DSMEM, []), (DSMEM, f"{DSMEM}_early_load", ["-DEARLY_LOAD"]),
                                                (DSMEM, f"{DSMEM}_mbarrier", ["-DMBARRIER"])])
def test_the_cluster_kernels_compile_to_the_fixtures(tmp_path, base, name, defines):
    """nvcc here makes the committed PTX (its code), and that PTX is verified (above)."""
    nvcc_makes(tmp_path, base, name, defines, arch="sm_90a")
