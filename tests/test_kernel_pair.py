"""The CTA pair: a cluster's CTAs run together (barrier.cluster, mbarrier waits another CTA completes), and
``tcgen05.mma.cta_group::2`` reads both CTAs' shared memory and writes both CTAs' Tensor Memory (Layout A), its
multicast ``tcgen05.commit`` arriving on both CTAs' mbarriers.  Fixture: ``examples/kernels/tcgen05_pair.cu``."""
from __future__ import annotations


import pytest

from kernel_plants import agree, first, KERNELS, mutant, nvcc_makes, only_finding
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

BASE = "tcgen05_pair"


def test_the_pair_mma_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2  # two k-blocks, each one MMA of the pair


def test_the_odd_ctas_half_of_a_not_loaded_is_its_first_row():
    """The planted "cta_group::2 with one CTA's operand": the odd CTA never copies its half of A, so the pair's MMA
    multiplies undefined shared memory into D's rows 128-255 (the odd CTA's Tensor Memory); the first wrong
    element is D[128, 0], and the chain names the A descriptor."""
    r = verify(str(KERNELS / f"{BASE}_one_cta_a.toml"))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[128, 0]", 128 * 64)
    text = kernel_text(r)
    assert "expected sum over k of A[128, k] * B[k, 0]; has an undefined value * B[0, 0]" in text
    assert "the A descriptor 0x0000402000080000" in text
    unread = next(f for f in r.findings if f.kind == "unwritten_read")
    assert "(CTA 1, thread 0)" in unread.words or "CTA 1" in kernel_text(r)


def test_the_second_k_blocks_b_descriptor_taken_from_the_first(tmp_path):
    """The second MMA given the first k-block's B descriptor (what -DEVEN_B compiles to): every element of D, in
    both CTAs' Tensor Memory, has B's rows 0-15 twice; the first wrong element is D[0, 0]."""
    def change(lines: list[str]) -> None:
        k = [i for i, s in enumerate(lines) if "tcgen05.mma.cta_group::2" in s][1]
        assert "%rd22, %rd23," in lines[k]
        lines[k] = lines[k].replace("%rd22, %rd23,", "%rd22, %rd21,")
    r = verify(mutant(tmp_path, BASE, change))
    f = only_finding(r, "D[0, 0]", 256 * 64)
    assert "A[0, 16] * B[0, 0]" in f.words and "lacks A[0, 16] * B[16, 0]" in f.words


def test_without_the_cluster_barrier_the_even_cta_runs_ahead_of_the_odd_one(tmp_path):
    """The CTAs run together and meet only where the kernel makes them: with the first barrier.cluster gone, the
    even CTA's pair MMA and multicast commit run before the odd CTA has copied its halves or initialised its
    mbarrier: the commit's arrival on that mbarrier is an error naming the odd CTA."""
    def change(lines: list[str]) -> None:
        for pattern in (r"barrier\.cluster\.wait", r"barrier\.cluster\.arrive"):
            lines[first(lines, pattern)] = ""
    with pytest.raises(SpecError, match=r"tcgen05\.commit\.cta_group::2.*shared 0x[0-9a-f]+ of CTA rank 1 holds no "
                                        r"initialised mbarrier"):
        verify(mutant(tmp_path, BASE, change))


def test_a_commit_that_arrives_on_the_even_cta_only_hangs_the_odd_cta(tmp_path):
    """The multicast commit's CTA mask 0b11 made 0b01: the odd CTA's mbarrier never completes its phase; once no CTA
    of the cluster can make progress, the even CTA's wait (for the odd CTA's arrival) is an error naming where the
    odd CTA waits: its own mbarrier (the kernel would hang)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"mov\.b16\s+%rs7, 3;")
        lines[k] = lines[k].replace("%rs7, 3;", "%rs7, 1;")
    with pytest.raises(SpecError, match=r"can never complete.*; the cluster's other CTAs wait: rank 1 at line \d+ "
                                        r"\(mbarrier\.try_wait\.parity\.shared::cta"):
        verify(mutant(tmp_path, BASE, change))


def test_mapa_names_the_even_ctas_mbarrier(tmp_path):
    """The odd CTA arrives on the even CTA's mbarrier through mapa's shared::cluster address; mapa's rank 0 made 1
    (the odd CTA's own mbarrier): the even CTA's wait on it can never complete, an error once no CTA of the
    cluster can make progress."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"mapa\.shared::cluster\.u32")
        assert lines[k].endswith(", 0;")
        lines[k] = lines[k][:-4] + ", 1;"
    with pytest.raises(SpecError, match=r"mbarrier\.try_wait.*waits for phase 0 of the mbarrier at shared 0x[0-9a-f]+ "
                                        r".*which can never complete: 1 of its 1 arrivals"):
        verify(mutant(tmp_path, BASE, change))


def test_a_register_renamed_stays_proved(tmp_path):
    """Meaning-preserving: the instruction descriptor's register renamed (%r124 -> %r229, one more declared)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"\.reg \.b32 \t%r<229>;")
        lines[k] = lines[k].replace("%r<229>", "%r<230>")
        for k, s in enumerate(lines):
            if ("mov.b32 \t%r124, " in s or "tcgen05.mma" in s) and "%r124" in s:
                lines[k] = s.replace("%r124", "%r229")
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_the_launch_must_give_the_kernels_cluster(tmp_path):
    """.reqnctapercluster 2, 1, 1 against a launch without clusters: exit 2 at the function."""
    with pytest.raises(SpecError, match=r"requires clusters of \[2, 1, 1\] CTAs"):
        verify(mutant(tmp_path, BASE, lambda lines: None, lambda t: t.replace("cluster = [2, 1, 1]\n", "")))


def test_cta_group_2_without_a_pair_is_an_error(tmp_path):
    """Without .reqnctapercluster, cta_group::2 in clusters of one CTA is an error at the instruction."""
    def change(lines: list[str]) -> None:
        for k, s in enumerate(lines):
            if s.startswith(".explicitcluster") or s.startswith(".reqnctapercluster"):
                lines[k] = ""
    with pytest.raises(SpecError, match="cta_group::2 acts on a CTA pair"):
        verify(mutant(tmp_path, BASE, change, lambda t: t.replace("cluster = [2, 1, 1]\n", "")))


@pytest.mark.slow
@pytest.mark.parametrize("name,defines", [(BASE, []), (f"{BASE}_one_cta_a", ["-DONE_CTA_A"])])
def test_the_pair_kernel_compiles_to_the_fixture(tmp_path, name, defines):
    """nvcc here makes the committed PTX (its code), and that PTX is verified (above)."""
    nvcc_makes(tmp_path, BASE, name, defines)

