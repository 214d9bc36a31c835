"""Every user-visible output is byte-identical to the recorded one unless a change means it.

``check`` (text and JSON) on the bundled specs and on the doc pages, ``list``, ``table`` (text
and JSON) for every layout, and ``kernel`` (text, JSON, SARIF, the ``--svg`` picture) on two fixtures are digested into
``tests/golden/digests.json``; the specs' JSON is kept
whole in ``tests/golden/check_specs.json`` so a failure shows the diff.  A change that is meant
(a fixed bug, a new check) updates them with

    .venv/bin/python tests/test_golden_outputs.py --update

and the diff of those files in the commit says what changed for users.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import DOCS, ROOT, pages_as_recorded

from verify import api
from verify.outputs import json as out_json
from verify.outputs import text as out_text

GOLDEN = ROOT / "tests" / "golden"


def _outputs(docs: Path | None, checked: tuple | None = None, pages_checked: tuple | None = None) -> dict[str, str]:
    """name -> text of every output recorded (pages only when ``docs`` is given); ``checked``: the
    bundled specs (loaded as ``specs``) and their report, ``pages_checked``: the pages' specs, findings and
    report (loaded as given from the checkout), when the session has them already."""
    cwd = os.getcwd()
    os.chdir(ROOT)  # paths in outputs are as a user in the repository gives them
    try:
        out: dict[str, str] = {}
        specs, report = checked if checked is not None else (api.load(["specs"]), None)
        report = report if report is not None else api.check_all(specs)
        out["check_specs.json"] = out_json.to_json(out_json.check_json(report))
        out["check_specs.txt"] = out_text.check_text(report)
        lays = api.layouts(specs)
        out["list_specs.json"] = out_json.to_json(out_json.list_json(lays))
        out["list_specs.txt"] = out_text.list_text(lays)
        for lay in lays:
            shown = lay.representative()  # a family: its smallest instance (table --param picks others)
            out[f"table/{lay.id}.json"] = out_json.to_json(out_json.table_json(shown))
            out[f"table/{lay.id}.txt"] = out_text.table_text(shown)
        out.update(_kernel_outputs())
        if docs is not None:
            out.update(_page_outputs(docs, pages_checked))
        return out
    finally:
        os.chdir(cwd)


def _page_outputs(docs: Path, pages_checked: tuple | None = None, as_recorded: bool = True) -> dict[str, str]:
    """``check`` (JSON and text) of the doc pages at ``docs`` and their tables, given from the checkout as
    ``os.path.relpath(docs, ROOT)`` and recorded as the pages at ``../shared/ptx-isa-9.0`` would print: the
    outputs name each page as it was given, and that path is the one thing that depends on where the pages are
    (``conftest.pages_as_recorded``)."""
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        if pages_checked is None:
            pspecs, findings = api.load_with_doc_findings([os.path.relpath(docs, ROOT)])
            prep = api.check_all(pspecs, doc_findings=findings)
        else:
            pspecs, _, prep = pages_checked
        out = {"check_pages.json": out_json.to_json(out_json.check_json(prep)), "check_pages.txt": out_text.check_text(prep)}
        for lay in api.layouts(pspecs):
            out[f"page_table/{lay.id}.json"] = out_json.to_json(out_json.table_json(lay))
    finally:
        os.chdir(cwd)
    if not as_recorded:
        return out
    return {k: pages_as_recorded(v, (("../shared/ptx-isa-9.0", docs),)) for k, v in out.items()}


def _kernel_outputs() -> dict[str, str]:
    """``ptx-verify kernel`` on a proved and a refuted fixture, and on the Hopper and Blackwell fixtures with a bug
    planted (a wgmma descriptor, a scale-factor id), in its three formats and its picture (condensed and
    ``--full``), run from the repository."""
    from verify.kernel.frontdoor import verify
    from verify.outputs.kernel import kernel_sarif, kernel_text
    from verify.outputs.sarif import to_text
    from verify.outputs.svg_kernel import kernel_svg
    out: dict[str, str] = {}
    for name in ("mma_inline", "mma_inline_read_swizzled", "triton_sm90_64_lbo_sbo", "triton_sm100_mxfp8_sf_id"):
        r = verify(f"examples/kernels/{name}.toml")
        out[f"kernel/{name}.txt"] = kernel_text(r)
        out[f"kernel/{name}.json"] = out_json.to_json(r.to_json())
        out[f"kernel/{name}.sarif"] = to_text(kernel_sarif(r))
        out[f"kernel/{name}.svg"] = kernel_svg(r)
        out[f"kernel/{name}.full.svg"] = kernel_svg(r, full=True)
    return out


def _digests(outputs: dict[str, str]) -> dict[str, str]:
    return {k: hashlib.sha256(v.encode("utf-8")).hexdigest() for k, v in sorted(outputs.items())}


def test_outputs_are_unchanged(catalog_report, request):
    recorded = json.loads((GOLDEN / "digests.json").read_text(encoding="utf-8"))
    docs = DOCS if DOCS.is_dir() else None
    outputs = _outputs(docs, catalog_report, request.getfixturevalue("docs_report") if docs is not None else None)
    now = _digests(outputs)
    if docs is None:
        recorded = {k: v for k, v in recorded.items() if not k.startswith(("check_pages", "page_table/"))}
    changed = sorted(k for k in set(recorded) | set(now) if recorded.get(k) != now.get(k))
    if "check_specs.json" in changed:
        old = (GOLDEN / "check_specs.json").read_text(encoding="utf-8").splitlines()
        diff = "\n".join(list(difflib.unified_diff(old, outputs["check_specs.json"].splitlines(), "recorded", "now",
                                                   lineterm=""))[:60])
        pytest.fail(f"check --format json changed:\n{diff}\n(all changed: {changed[:20]})")
    assert not changed, (f"{len(changed)} outputs changed: {changed[:20]}; if meant, run "
                         "`.venv/bin/python tests/test_golden_outputs.py --update`")
    if docs is None:
        pytest.skip(f"doc pages not found at {DOCS}: page outputs not compared (specs were)")


def test_the_page_outputs_do_not_depend_on_where_the_pages_are(docs_dir: Path, docs_report, tmp_path: Path) -> None:
    """The pages copied to another place, under another name, give the recorded page outputs byte for byte.  (In
    the worker that checked them where ``$PTX_DOCS_DIR`` or ``../shared`` has them, ``docs_report``: the verdicts
    on their maps are not decided again.)"""
    import shutil
    elsewhere = tmp_path / "another" / "place" / "pages-9.0"
    shutil.copytree(docs_dir, elsewhere)
    assert os.path.relpath(elsewhere, ROOT) != os.path.relpath(docs_dir, ROOT)
    raw = _page_outputs(elsewhere, as_recorded=False)
    assert os.path.relpath(elsewhere, ROOT) + "/9-7-14-5-8-" in raw["check_pages.txt"]  # paths as given: from here
    now = _digests({k: pages_as_recorded(v, (("../shared/ptx-isa-9.0", elsewhere),)) for k, v in raw.items()})
    recorded = json.loads((GOLDEN / "digests.json").read_text(encoding="utf-8"))
    assert len(now) > 100 and set(now) == {k for k in recorded if k.startswith(("check_pages", "page_table/"))}
    changed = sorted(k for k in now if recorded[k] != now[k])
    assert not changed, changed


def update() -> None:
    if not DOCS.is_dir():
        raise SystemExit(f"doc pages not found at {DOCS} (set PTX_DOCS_DIR): the golden digests need them")
    outputs = _outputs(DOCS)
    GOLDEN.mkdir(exist_ok=True)
    (GOLDEN / "digests.json").write_text(json.dumps(_digests(outputs), indent=1) + "\n", encoding="utf-8")
    (GOLDEN / "check_specs.json").write_text(outputs["check_specs.json"], encoding="utf-8")
    print(f"recorded {len(outputs)} outputs in {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        raise SystemExit("usage: tests/test_golden_outputs.py --update")
