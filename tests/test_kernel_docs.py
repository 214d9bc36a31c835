"""docs/kernels.md is a contract: its CuTe launch reads.  Its transcripts (``$ ptx-verify kernel ...`` followed by
output) are run with every page's by ``tests/test_docs.py`` (the Triton one, which compiles, in the slow tier)."""
from __future__ import annotations

import re

from conftest import ROOT
from verify.kernel.launch import parse_launch

DOC = (ROOT / "docs" / "kernels.md").read_text(encoding="utf-8")


def test_the_transcripts_were_found():
    from transcripts import transcripts
    shown = [t for t in transcripts(ROOT / "docs" / "kernels.md") if t.shown]
    assert len([t for t in shown if "--triton" not in t.argv]) == 34
    assert len([t for t in shown if "--triton" in t.argv]) == 1


def test_the_cute_launch_reads():
    (toml,) = re.findall(r"^```toml\n(ptx = \"sgemm_sm80.ptx\".*?)^```", DOC, re.S | re.M)
    launch = parse_launch(toml, "sgemm.toml")
    assert launch.computes.describe() == "C[m, n] = A[m, k] * B[n, k]" and len(launch.args) == 18
    from test_kernel_compiled import CUTE  # the launch the slow test verifies
    assert toml.strip() in CUTE
