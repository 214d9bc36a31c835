"""Reports for doc reviewers: ``ptx-verify report PATH... --out DIR``: the files of the report and their writing.

Writes ``DIR/report.md`` (Markdown: ``report_markdown``), ``DIR/report.html`` (one self-contained page:
``report_html``) and ``DIR/svg/<layout id>.svg``, one picture per layout that has a finding (``report_parts.draw``).

Everything rendered is a pure function of the report's model (``verify.results.report.Model``, built from the checked
``Report`` by ``checks.report_model.build`` before anything is rendered): no timestamps, no timings,
sorted order, integer coordinates, so the same input gives byte-identical files.  The
files are written into a temporary directory next to ``DIR`` and renamed into place at
the end, so a failed run never leaves a half-written report.  This module runs no check.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping

from ..files import OutputError, Owns, check_output_dir, output_error
from ..results.report import Model
from .baseline import SVG_MARK
from .report_html import render_html
from .report_markdown import render_markdown
from .report_parts import draw

REPORT = Owns("a report", (("report.md", "^# PTX warp-level fragment layouts: verification report"),
                           ("report.html", "<title>PTX fragment layouts: verification report</title>"),
                           ("*.svg", SVG_MARK)), dirs=("svg",))

# ----------------------------------------------------------------------------- files



def render_files(m: Model) -> dict[str, str]:
    """Relative path -> text, for every file of the report."""
    pics = draw(m)
    files = {"report.md": render_markdown(m, pics), "report.html": render_html(m, pics)}
    for pic in pics.values():
        if pic['svg_file']:
            files[pic['svg_file']] = pic['svg']
        if pic['svg_full_file']:
            files[pic['svg_full_file']] = pic['svg_full']
    return dict(sorted(files.items()))


def check_tree(out: str | Path, owns: Owns = REPORT) -> None:
    """Refuse, before any work, an output directory that cannot be written or replaced (``OutputError``):
    one that cannot be made, or that holds anything the command did not write (``files.check_output_dir``)."""
    check_output_dir(out, owns)


def write_tree(files: Mapping[str, str], out: str | Path, owns: Owns = REPORT) -> None:
    """Write ``files`` into ``out`` all at once: temp dir beside it, then rename into place.

    An existing ``out`` is replaced only if it holds nothing but what ``owns`` says the command wrote (by
    default a previous report).
    """
    shown, out = out, Path(out)
    check_tree(out, owns)
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    except OSError as e:
        raise output_error(shown, e) from None
    old: Path | None = None
    try:
        for rel, text in files.items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            with open(p, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for p in sorted(tmp.rglob("*")):
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        os.chmod(tmp, 0o755)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
            os.rmdir(old)
            os.rename(out, old)
        os.rename(tmp, out)
    except BaseException as e:  # an interrupt too: nothing half-written is left, the old output is back
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and old.exists() and not out.exists():
            os.rename(old, out)
        if isinstance(e, OSError):
            raise output_error(shown, e) from None
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def read_references(path: str | Path) -> dict[str, Any]:
    """The ``references`` object of a ``crosscheck --matrix --format json`` file; ``OutputError`` (one line)
    when it cannot be read or is no such document."""
    import json
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise OutputError(f"--references {path}: {e.strerror or 'cannot read'}") from None
    except ValueError as e:
        raise OutputError(f"--references {path}: not JSON ({str(e).splitlines()[0]})") from None
    refs = doc.get("references") if isinstance(doc, dict) else None
    if not (isinstance(refs, dict) and isinstance(refs.get("layouts"), list) and isinstance(refs.get("names"), list)
            and all(isinstance(e, dict) and isinstance(e.get("id"), str) and isinstance(e.get("cells"), dict)
                    for e in refs["layouts"])):
        raise OutputError(f"--references {path}: not a `ptx-verify crosscheck --matrix --format json` document")
    return refs


def write_report(m: Model, out: str | Path) -> int:
    """Render the model (``checks.report_model.build``: ``api.report_model``) and write the tree; the number of
    SVG files written."""
    files = render_files(m)
    write_tree(files, out)
    return sum(1 for name in files if name.endswith(".svg"))


__all__ = ["REPORT", "SVG_MARK", "Model", "OutputError", "check_tree", "read_references",
           "render_files", "write_report", "write_tree"]
