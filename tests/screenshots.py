"""Regenerate the screenshots of docs/pictures.md: every kind of picture (``tests/picture_kinds.py``) drawn by
``ptx-verify``, rendered in headless Chromium exactly as the browser tests render and check it, and written as
``docs/pictures/<kind>.png``.  A picture that fails the browser tests' checks is not written (exit 1).

    .venv/bin/python tests/screenshots.py            # from the repository root; needs chromium
    .venv/bin/python tests/screenshots.py --out DIR  # somewhere else

The PNGs depend on the browser's fonts and version, so they are not compared byte for byte; the pictures
themselves are (``tests/test_golden_outputs.py``, ``tests/test_committed_report.py``).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser as chromium
from picture_kinds import KINDS, render, screenshot

from conftest import ROOT


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "pictures", help="where (default: docs/pictures)")
    args = ap.parse_args(argv)
    if chromium.find() is None:
        print(f"screenshots: {chromium.missing()}", file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory(prefix="ptx-screenshots-") as tmp, chromium.Browser.start() as b:
        for k in KINDS:
            if k.argv is None:
                print(f"{k.name}: skipped ({k.what})")
                continue
            work = Path(tmp) / k.name
            work.mkdir()
            page, m, problems = render(b, k, work)
            if problems:
                failed += 1
                print(f"{k.name}: NOT written:\n  " + "\n  ".join(problems), file=sys.stderr)
                continue
            png = screenshot(page, m, k, args.out / f"{k.name}.png")
            page.close()
            print(f"{k.name}: {png.relative_to(ROOT) if png.is_relative_to(ROOT) else png}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
