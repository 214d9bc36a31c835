"""A CTA pair's ``tcgen05.cp`` (``cta_group::2``): the copy goes into the Tensor Memory of both CTAs of the pair, at
``taddr`` in each, each byte where the catalog's copy layout of the shape puts it.  The fixture
(``tcgen05_cp_pair.cu``, made by make_fixtures.py) stages all of A alike in both CTAs' shared memory, copies it with
four ``.128x256b`` issued by the even CTA's thread 0, and each CTA reads its half of A back as the pair MMA's
operand: proved, both engines agreeing; the copies in another order stay proved; the last copy one Tensor Memory
column on, or the copies made ``cta_group::1`` (the peer's Tensor Memory never written), is the right first wrong
element; a copy whose peer bytes are not the issuer's is refused at its line (whose shared memory the peer's copy
reads is not stated)."""
from __future__ import annotations

import re

import pytest

from conftest import cli
from kernel_plants import KERNELS, agree, mutant, nvcc_makes, only_finding
from verify.kernel.frontdoor import verify
from verify.kernel.machine import KernelError
from verify.outputs.kernel import kernel_text

BASE = "tcgen05_cp_pair"
COPY = "tcgen05.cp.cta_group::2.128x256b ["


def _copies(name: str) -> list[str]:
    """The Tensor Memory column each copy of the fixture ``name`` writes, in issue order (from the add before it)."""
    text = (KERNELS / f"{name}.ptx").read_text(encoding="utf-8")
    cols = dict(re.findall(r"add\.s32 \t(%r\d+), %r36, (\d+);", text))
    return [cols[r] for r in re.findall(r"tcgen05\.cp\.cta_group::2\.128x256b \[(%r\d+)\]", text)]


def test_the_fixture_is_proved_by_both_engines():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    assert r.findings == ()
    agree(r)


def test_the_fixture_copies_a_by_four_pair_copies_before_the_pair_mma():
    text = (KERNELS / f"{BASE}.ptx").read_text(encoding="utf-8")
    assert _copies(BASE) == ["64", "72", "80", "88"]
    assert text.index("tcgen05.cp.") < text.index("tcgen05.mma.")
    groups = set(re.findall(r"tcgen05\.\w+(?:\.\w+)*?\.cta_group::(\d)", text))
    assert groups == {"2"}  # every tcgen05 instruction of the kernel is the pair's


def test_the_copies_in_another_order_stay_proved():
    assert _copies(f"{BASE}_order") == ["88", "80", "72", "64"]
    r = verify(str(KERNELS / f"{BASE}_order.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_a_copy_one_column_on_is_the_first_wrong_element_of_the_odd_cta():
    """The last copy (A's rows 128-255, bytes 32-63: k 16-31) to column 89, not 88: the odd CTA, which reads its
    half of A from columns 80-95, finds column 88 unwritten and k 16.. shifted; the even CTA's half is right."""
    assert _copies(f"{BASE}_column") == ["64", "72", "80", "89"]
    r = verify(str(KERNELS / f"{BASE}_column.toml"))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = next(x for x in r.findings if x.kind == "wrong_element")
    assert (f.element, f.count) == ("D[128, 0]", 8192), kernel_text(r)
    assert "A[128, 16] * B[18, 0] (k 18 of B meets k 16 of A)" in f.words, f.words
    u = next(x for x in r.findings if x.kind == "unwritten_read")
    assert "reads Tensor Memory lane 0, column 88, which nothing wrote (CTA 1" in kernel_text(r), kernel_text(r)
    assert u.count == 384


def test_two_copies_columns_swapped_is_the_first_wrong_element_with_the_pair_copy_in_its_chain(tmp_path):
    """The copies of A's rows 128-255 to each other's columns (k 0-15 to 88, k 16-31 to 80): the odd CTA reads
    k 16.. as k 0..; the chain runs back through its tcgen05.ld and the pair's copy into its Tensor Memory to the
    odd CTA's own staging store."""
    def swap(lines: list[str]) -> None:
        for k, s in enumerate(lines):
            if re.search(r"add\.s32 \t%r12[01], %r36, (80|88);", s):
                lines[k] = s.replace("80;", "@;").replace("88;", "80;").replace("@;", "88;")
    r = verify(mutant(tmp_path, BASE, swap))
    f = only_finding(r, "D[128, 0]", 8192)
    assert f.words.startswith("expected sum over k of A[128, k] * B[k, 0]; has A[128, 16] * B[0, 0] (k 0 of B meets "
                              "k 16 of A)"), f.words
    ops = [c.opcode for c in f.chain]
    assert ops[:6] == ["st.global", "tcgen05.ld.32x32b.x16", "tcgen05.mma.kind::f16", "st.shared.v4",
                       "tcgen05.ld.32x32b.x16", "tcgen05.cp.128x256b"], kernel_text(r)
    assert f.chain[4].words.startswith("(thread 0) read Tensor Memory lane 0, column 80"), kernel_text(r)
    assert f.chain[5].words.startswith("(thread 0) copied it from shared memory to Tensor Memory lane 0, column 80 "
                                       "of both CTAs of the pair (issued by CTA 0)"), kernel_text(r)
    assert ops[-1] == "ld.global" and f.chain[-1].words.endswith("read A[128, 16]"), kernel_text(r)


def test_the_pair_copy_writes_the_peer_s_tensor_memory(tmp_path):
    """The four copies made cta_group::1: only the issuing (even) CTA's Tensor Memory receives A, so the odd CTA
    reads columns nothing wrote and its half of D is wrong from D[128, 0]."""
    def one(lines: list[str]) -> None:
        for k, s in enumerate(lines):
            if COPY in s:
                lines[k] = s.replace("cta_group::2", "cta_group::1")
    r = verify(mutant(tmp_path, BASE, one))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = next(x for x in r.findings if x.kind == "wrong_element")
    assert (f.element, f.count) == ("D[128, 0]", 8192), kernel_text(r)
    assert any(x.kind == "unwritten_read" for x in r.findings), kernel_text(r)


def test_a_pair_copy_whose_peer_bytes_differ_is_refused_at_its_line(capsys):
    """-DOWN_HALF: each CTA stages A's halves in its own order, so the odd CTA's bytes at the first copy's
    addresses are rows 128.. where the even CTA's are rows 0..: the page's two readings (the issuer's shared
    memory, the peer's own) differ, and the copy is not executed."""
    launch = str(KERNELS / f"{BASE}_own_half.toml")
    words = ("unsupported instruction 'tcgen05.cp.cta_group::2.128x256b' (thread 0 of CTA rank 0): a CTA pair's copy "
             "goes to both CTAs' Tensor Memory, and the PTX ISA does not say whether the peer's comes from the "
             "issuer's shared memory or the peer's own; here they differ (row 0, byte 0: shared 0x0 of CTA rank 1 is "
             "not CTA rank 0's; 4096 such bytes)")
    with pytest.raises(KernelError, match=r"tcgen05_cp_pair_own_half\.ptx:\d+:\d+: " + re.escape(words)):
        verify(launch)
    rc, out, err = cli(capsys, "kernel", launch)
    assert (rc, out) == (2, "") and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
@pytest.mark.parametrize("name,defines", [(BASE, []), (f"{BASE}_column", ["-DCP_COLUMN"]),
                                          (f"{BASE}_order", ["-DCP_ORDER"]), (f"{BASE}_own_half", ["-DOWN_HALF"])],
                         ids=["base", "column", "order", "own-half"])
def test_nvcc_makes_the_fixtures(tmp_path, name, defines):
    nvcc_makes(tmp_path, BASE, name, defines)
