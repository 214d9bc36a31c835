"""Doc pages as input: find them, ingest them into spec texts, write specs atomically.

``check`` and ``report`` accept pages (or directories of pages) wherever they accept spec files;
``load`` sorts the paths it is given into the two kinds.  Writing is all-or-nothing: every spec
is rendered first, then written to a temporary file in the output directory and renamed into place.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

from ..errors import SpecError
from ..layout.model import Spec
from .docpage import PageError
from .ingest import IngestFinding, IngestResult, ingest_pages
from .spec import load_spec_text, load_specs

PAGE_SUFFIXES = (".md", ".txt", ".html", ".htm")


class IngestError(SpecError):
    """Bad input in a doc page, reported like a bad spec: one line ``file:line:col: error: msg``."""


def expand_pages(paths: Sequence[str | Path]) -> list[str]:
    """Files as given; directories expand to their page files, sorted."""
    out: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(str(q) for q in sorted(p.iterdir()) if q.is_file() and q.suffix.lower() in PAGE_SUFFIXES)
        elif p.is_file():
            out.append(str(p))
        else:
            raise IngestError(str(p), 1, 1, "no such file or directory")
    return out


def ingest(paths: Sequence[str | Path]) -> IngestResult:
    try:
        return ingest_pages(expand_pages(paths))
    except PageError as e:
        raise IngestError(e.path, e.line, e.col, e.message) from None


def specs_from_pages(paths: Sequence[str | Path]) -> list[tuple[str, str]]:
    """[(spec file name, TOML text)] for every matrix-fragment section of the pages.

    Every text is checked with ``load_spec_text`` before it is returned, so a caller
    never receives a spec the loader would reject.
    """
    result = ingest(paths)
    out = result.specs()
    for name, text in out:
        load_spec_text(text, name)
    return out


def write_all(out_dir: Path, specs: list[tuple[str, str]]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[Path, Path]] = []
    try:
        for name, text in specs:
            fd, tmp = tempfile.mkstemp(prefix=".ingest-", suffix=".toml.tmp", dir=out_dir)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            temps.append((Path(tmp), out_dir / name))
        for tmp, final in temps:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _ in temps:
            try:
                tmp.unlink()
            except OSError:
                pass
        raise
    return [final for _, final in temps]


def is_page(p: Path) -> bool:
    return p.is_file() and p.suffix.lower() in PAGE_SUFFIXES


def load(paths: Sequence[str | Path]) -> tuple[list[Spec], tuple[IngestFinding, ...]]:
    """Specs from spec files, directories of specs and doc pages (ingested on the fly), plus the
    errata ``ingest`` found in the text of the pages (warnings and errors)."""
    spec_paths: list[str | Path] = []
    pages: list[Path] = []
    for p in map(Path, paths):
        if is_page(p):
            pages.append(p)
        elif p.is_dir() and not any(p.rglob("*.toml")) and any(q.suffix.lower() in PAGE_SUFFIXES for q in p.iterdir()):
            pages.extend(sorted(q for q in p.iterdir() if is_page(q)))
        else:
            spec_paths.append(p)
    specs = load_specs(spec_paths) if spec_paths else []
    doc_findings: tuple[IngestFinding, ...] = ()
    if pages:
        result = ingest([str(p) for p in pages])
        for name, text in result.specs():
            specs.append(load_spec_text(text, name))
        doc_findings = tuple(f for f in result.findings if f.severity in ("error", "warning"))
    return specs, doc_findings


def doc_findings(pages: Sequence[str | Path]) -> tuple[IngestFinding, ...]:
    """Only the errata ``ingest`` finds in the text of doc pages (warnings and errors)."""
    return tuple(f for f in ingest([str(p) for p in pages]).findings if f.severity in ("error", "warning"))
