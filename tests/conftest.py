"""Shared fixtures: the repository root, the bundled specs and the doc pages (when present)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
DOCS = Path(os.environ.get("PTX_DOCS_DIR", ROOT.parent / "shared" / "ptx-isa-9.0"))
SEEDS = Path(os.environ.get("PTX_SEEDS_DIR", ROOT.parent / "shared" / "seeds"))


@pytest.fixture(scope="session")
def docs_dir() -> Path:
    if not DOCS.is_dir():
        pytest.skip(f"PTX ISA pages not found at {DOCS} (set PTX_DOCS_DIR)")
    return DOCS


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    if not SEEDS.is_dir():
        pytest.skip(f"seed excerpts not found at {SEEDS} (set PTX_SEEDS_DIR)")
    return SEEDS
