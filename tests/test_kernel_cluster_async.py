"""``st.async`` and ``red.async`` into another CTA's shared memory, completing on that CTA's mbarrier
(``.mbarrier::complete_tx::bytes``): the bytes land in the destination CTA, count as the mbarrier's transactions, and
the destination's wait on the mbarrier's phase orders them before its reads.  Fixtures:
``examples/kernels/cluster_st_async.cu`` (a cluster of two CTAs of one warp, each sending its half of A to the other
with ``st.async``, each one's ``mma.sync`` computing eight columns of D) and its ``-DRED`` form
``cluster_red_async`` (the half added onto zeros by ``red.async...add.u32``)."""
from __future__ import annotations

import re

import pytest

from kernel_plants import agree, first, KERNELS, mutant, renamed
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

ST = "cluster_st_async"
RED = "cluster_red_async"
STORE = "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32"
WAIT = "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 ok, [%r39], 0;"


@pytest.mark.parametrize("base", [ST, RED])
def test_the_exchange_is_proved(base):
    r = verify(str(KERNELS / f"{base}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2  # one mma.sync per CTA, on the half of A the other CTA sent


def test_a_renamed_register_stays_proved(tmp_path):
    """Meaning-preserving: the stored value's register renamed (%r46 -> %r214, one more declared)."""
    r = verify(mutant(tmp_path, ST, renamed("b32", 214, "%r46")))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_the_store_to_its_own_rank(tmp_path):
    """mapa's rank for the other CTA's sA and mbarrier (rank ^ 1) made the CTA's own rank: each CTA stores its half
    of A into its own sA again (its own mbarrier takes the 256 bytes, so the wait completes) and the other half is
    never written.  CTA 1 computes D's columns 0-7 from rows 0-7 it never got: the first wrong element D[0, 0]."""
    def change(lines: list[str]) -> None:
        for reg in ("%r35, %r36", "%r38, %r39"):
            k = first(lines, rf"mapa\.shared::cluster\.u32 {reg}, %r3;")
            lines[k] = lines[k].replace("%r3;", "%r32;")
    r = verify(mutant(tmp_path, ST, change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["unwritten_read", "wrong_element"]
    wrong = r.findings[1]
    assert (wrong.element, wrong.count) == ("D[0, 0]", 2 * 8 * 8)
    assert "expected sum over k of A[0, k] * B[k, 0]; has an undefined value * B[0, 0]" in wrong.words
    assert "ld.shared.u32 reads shared 0x0, which nothing wrote (CTA 1, thread 0)" in kernel_text(r)


def test_without_the_mbarrier_wait_the_read_races(tmp_path):
    """The wait on the mbarrier made a predicate that is always true: CTA 1 reads the rows CTA 0 has not yet sent
    (never written: D[0, 0] the first wrong element), and CTA 0's reads of the rows CTA 1 sent have nothing ordering
    them after the stores: the cluster's race, named at CTA 0's reads.  The first race is CTA 0's st.async of the
    rows CTA 1 read before they were sent, with nothing ordering the read before the store: a write after a read,
    named at the st.async."""
    def change(lines: list[str]) -> None:
        lines[first(lines, r"@!ok bra")] = ""
        k = first(lines, r"mbarrier\.try_wait")
        lines[k] = lines[k].replace(WAIT, "setp.eq.u32 ok, 0, 0;")
    r = verify(mutant(tmp_path, ST, change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["unwritten_read", "race", "wrong_element"]
    race = r.findings[1]
    line = first((KERNELS / f"{ST}.ptx").read_text().split("\n"), STORE.replace(".", r"\.")) + 1
    assert (f"{STORE} of CTA rank 0 writes shared 0x0 (CTA rank 1's shared memory), which CTA rank 1 read at line "
            f"{r.findings[0].line} with no barrier.cluster (or mbarrier) between: a write after a read") in race.words
    assert race.line == line
    assert race.count == 64 + 64  # CTA 0's 64 stores after CTA 1's reads; CTA 0's 64 reads of CTA 1's stores
    assert (r.findings[2].element, r.findings[2].count) == ("D[0, 0]", 64)


def test_expecting_too_many_bytes_hangs(tmp_path):
    """expect_tx of 512 bytes where 256 arrive: the wait can never complete (the kernel would hang)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"expect_tx.*256;")
        lines[k] = lines[k].replace("256;", "512;")
    with pytest.raises(SpecError, match=r"k\.ptx:\d+:\d+: mbarrier\.try_wait\.parity.* \(CTA rank 0, thread 0\) waits "
                                        r"for phase 0 .*which can never complete: 256 transaction bytes are still "
                                        r"outstanding"):
        verify(mutant(tmp_path, ST, change))


def test_expecting_too_few_bytes_hangs(tmp_path):
    """expect_tx of 128 bytes where 256 arrive: CTA 1, which expected first, completes its phase at the first 128
    bytes; CTA 0's stores came before its expect_tx, and its count never returns to zero: its wait never completes."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"expect_tx.*256;")
        lines[k] = lines[k].replace("256;", "128;")
    with pytest.raises(SpecError, match=r"\(CTA rank 0, thread 0\) waits for phase 0 .*which can never complete: 128 "
                                        r"bytes more than its transaction count were delivered"):
        verify(mutant(tmp_path, ST, change))


def test_a_store_one_element_on(tmp_path):
    """The first of the unrolled stores' address one 4-byte element on: the word it should fill (shared 0x100 of
    CTA 0, A[8, 0..1]) is never written, the next one holds the wrong pair: D[0, 0] is the first wrong element.
    Thread 31's shifted store lands past the rows it sends: in the first word of the other CTA's own rows (or its
    sB), which that CTA stores itself with nothing ordering the two: a race of two writes, named at the st.async."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"add\.s32 \t%r45, %r57, %r35;")
        lines[k] += "\n\tadd.s32 \t%r45, %r45, 4;"
    r = verify(mutant(tmp_path, ST, change))
    assert r.status == "refuted"
    agree(r)
    assert [f.kind for f in r.findings] == ["race", "unwritten_read", "wrong_element"]
    assert "ld.shared.u32 reads shared 0x100, which nothing wrote (CTA 0, thread 0)" in kernel_text(r)
    race = r.findings[0]
    assert (f"{STORE} of CTA rank 0 writes shared 0x100 (CTA rank 1's shared memory), which CTA rank 1 wrote at line "
            "141 with no barrier.cluster (or mbarrier) between: two writes") in race.words
    assert "(CTA 0, thread 31)" in race.words
    wrong = r.findings[2]
    assert wrong.element == "D[0, 0]"
    assert "A[0, 0] * B[2, 0] (k 2 of B meets k 0 of A)" in wrong.words


def test_a_red_async_whose_value_depends_on_the_order_is_refused(tmp_path):
    """red.async...inc: refused at its line, by ops_atom's rule (the wrap-around makes the value order-dependent)."""
    def change(lines: list[str]) -> None:
        for k, s in enumerate(lines):
            lines[k] = s.replace(".add.u32", ".inc.u32")
    with pytest.raises(SpecError, match=r"k\.ptx:\d+:\d+: unsupported instruction 'red\.async\.relaxed\.cluster\."
                                        r"shared::cluster\.mbarrier::complete_tx::bytes\.inc\.u32' \(inc: "):
        verify(mutant(tmp_path, RED, change))


def test_red_async_without_the_zeros_adds_onto_nothing(tmp_path):
    """The zeroing of sA gone (its five stores of the zero in %r55 and %r59 removed): red.async adds onto bytes
    nothing wrote, named at its line."""
    def change(lines: list[str]) -> None:
        gone = [k for k, s in enumerate(lines) if re.search(r"st\.shared\.u32 \t\[.*\], %r(55|59);", s)]
        assert len(gone) == 5
        for k in gone:
            lines[k] = ""
    r = verify(mutant(tmp_path, RED, change))
    assert r.status == "refuted"
    agree(r)
    assert r.findings[0].kind == "unwritten_read"
    assert "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 reads shared" in \
        r.findings[0].words


def test_another_form_is_refused(tmp_path):
    """st.async without .mbarrier::complete_tx::bytes: refused at its line."""
    def change(lines: list[str]) -> None:
        k = first(lines, STORE.replace(".", r"\."))
        lines[k] = lines[k].replace(".mbarrier::complete_tx::bytes", "")
    with pytest.raises(SpecError, match=r"unsupported instruction 'st\.async\.shared::cluster\.b32' \(only "):
        verify(mutant(tmp_path, ST, change))
