"""The committed report in reports/ptx-isa-9.0 is exactly what the documented command produces, wherever the pages
are: it names them as the command gives them, ``../shared/ptx-isa-9.0``; pages elsewhere (``$PTX_DOCS_DIR``) are
given by their own path from the checkout, written back as the command names them (``conftest.pages_as_recorded``)."""
from __future__ import annotations

import filecmp
import os
import subprocess
import sys

import pytest

from conftest import ROOT, pages_as_recorded


@pytest.mark.slow
def test_committed_report_regenerates_byte_for_byte(tmp_path, docs_dir):
    out = tmp_path / "rep"
    pages = os.path.relpath(docs_dir, ROOT)
    r = subprocess.run([sys.executable, "-m", "verify", "report", "specs", "--pages", pages, "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "123"})
    assert r.returncode == 0, r.stderr
    committed = ROOT / "reports" / "ptx-isa-9.0"
    cmp = filecmp.dircmp(committed, out)
    assert not cmp.left_only and not cmp.right_only, (cmp.left_only, cmp.right_only)
    for name in ["report.md", "report.html"] + [f"svg/{n}" for n in sorted(os.listdir(out / "svg"))]:
        made = pages_as_recorded((out / name).read_text(encoding="utf-8"), (("../shared/ptx-isa-9.0", docs_dir),))
        assert (committed / name).read_bytes() == made.encode("utf-8"), f"{name} differs: regenerate with " \
            "`ptx-verify report specs --pages ../shared/ptx-isa-9.0 --out reports/ptx-isa-9.0`"
