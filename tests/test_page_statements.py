"""Issue 41: every statement a cited page makes about a layout is read, judged (against the reviewed specs, against
the page's other statements, by both engines where it is a map), and a changed one fails the run at its own line;
a statement written another way that means the same is no finding; every cited page is read alone."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verify.catalog.docpage import read_page
from verify.catalog.page_statements import read as read_statements
from verify.checks.statements import JUDGES

from conftest import cli

LDM = "9-7-14-5-15-warp-level-matrix-load-instruction-ldmatrix.md"
STM = "9-7-14-5-16-warp-level-matrix-store-instruction-stmatrix.md"
WG = "9-7-15-5-1-1-register-fragments.md"
SMEM = "9-7-15-5-1-2-shared-memory-matrix-layout.md"
T52 = "9-7-16-10-3-valid-combinations-of-type-size-major-ness-and-swizzling.md"
T53 = "9-7-16-10-6-shared-memory-layout-and-swizzling.md"
PACK = "9-7-16-10-4-packing-formats-of-elements-in-tensor-and-shared-memory.md"

# every page a bundled spec cites (its [source] page), and Table 52's
CITED = ["9-7-14-3-block-scaling.md", "9-7-14-4-1-matrix-fragments-for-wmma.md", LDM, STM,
         "9-7-14-5-17-warp-level-matrix-transpose-instruction-movmatrix.md", WG, SMEM,
         "9-7-15-6-2-1-matrix-fragments-for-sparse-wgmma-mma-async-m64nnk32.md",
         "9-7-15-6-2-2-matrix-fragments-for-sparse-wgmma-mma-async-m64nnk16.md",
         "9-7-15-6-2-3-matrix-fragments-for-sparse-wgmma-mma-async-m64nnk64.md", T52, PACK,
         "9-7-16-10-5-data-path-layout-organization.md", T53, "9-7-16-10-7-2-scale-factor-a-id.md",
         "9-7-16-2-3-1-memory-layout.md"]


def _copy(docs: Path, tmp: Path, name: str, old: str = "", new: str = "", line: int = 0) -> Path:
    """The page copied into a directory of the same release's name, one change made (on ``line`` when given)."""
    out = tmp / docs.name
    out.mkdir(exist_ok=True)
    text = (docs / name).read_text(encoding="utf-8")
    if old:
        lines = text.split("\n")
        k = line - 1
        assert old in lines[k], (name, line, lines[k])
        lines[k] = lines[k].replace(old, new, 1)
        text = "\n".join(lines)
    (out / name).write_text(text, encoding="utf-8")
    return out / name


def _check(capsys: pytest.CaptureFixture[str], page: Path) -> tuple[int, dict]:
    rc, out, _ = cli(capsys, "check", str(page), "--format", "json", "--jobs", "1")
    return rc, json.loads(out)


def test_every_kind_read_has_a_judge(docs_dir: Path) -> None:
    pages = [read_page(p) for d in (docs_dir, docs_dir.parent / "ptx-isa-9.1") if d.is_dir()
             for p in sorted(d.iterdir()) if p.suffix == ".md" and p.name != "README.md"]
    kinds = {s.kind for s in read_statements(pages).statements}
    assert kinds and kinds <= set(JUDGES), sorted(kinds - set(JUDGES))


@pytest.mark.parametrize("name", [WG, T52, PACK])
def test_a_cited_page_alone_is_read_and_says_what_it_judged(docs_dir: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str], name: str) -> None:
    page = _copy(docs_dir, tmp_path, name)
    rc, doc = _check(capsys, page)
    assert rc == 0 and doc["as_expected"] and doc["statements"]
    assert all(s["page"] == str(page) and s["status"] in ("proved", "refuted") for s in doc["statements"])
    rc, out, _ = cli(capsys, "check", str(page))
    assert f"  {page}: {len(doc['statements'])} judged:" in out


@pytest.mark.slow
@pytest.mark.parametrize("name", CITED)
def test_every_cited_page_alone_is_read(docs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        name: str) -> None:
    rc, doc = _check(capsys, _copy(docs_dir, tmp_path, name))
    assert rc == 0 and doc["statements"], name


# one-token changes of the examples: each a finding expected proved at its own line, exit 1
SLOW = pytest.mark.slow  # the rest of each list: CI's slow tier (each case checks a page, 1-5 s on 2 cores)
CHANGED = [
    (WG, 19, "containing four `.f16x2`", "containing two `.f16x2`"),
    pytest.param(WG, 31, "X = N/2\u00a0 -\u00a0 4", "X = N/2\u00a0 -\u00a0 5", marks=SLOW),
    pytest.param(LDM, 48, "| 8x8 |", "| 4x8 |", marks=SLOW),
    (LDM, 85, "provided by eight threads", "provided by four threads"),
    pytest.param(LDM, 56, "16 6-bit elements", "17 6-bit elements", marks=SLOW),
    pytest.param(STM, 49, "1, 2, or 4", "1, 3, or 4", marks=SLOW),
    (PACK, 18, "then 4 consecutive", "then 8 consecutive"),
    (T52, 14, "All except 128B", "Only 128B"),
    pytest.param(T53, 38, "| 8x8 |", "| 4x8 |", marks=SLOW),
    pytest.param(T53, 48, "`128 / sizeof_bits", "`64 / sizeof_bits", marks=SLOW),
    (T53, 49, "(8\\*(128/32))", "(8\\*(64/32))"),
    pytest.param(SMEM, 197, "(LBO) >> 4", "(SBO) >> 4", marks=SLOW),
    pytest.param(SMEM, 299, "51–49", "102–49", marks=SLOW),
    # the exact layout that is no longer the canonical one at its parameters (the check ingest made of it as text
    # is a statement now, compared as a layout: tests/test_shared_pages.py has the others)
    pytest.param(SMEM, 274, "(32,512))", "(32,1024))", marks=SLOW),
]


def _id(c: object) -> str:
    v = c.values if hasattr(c, "values") else c
    return f"{v[0][:12]}:{v[1]}"


@pytest.mark.parametrize("name,line,old,new", CHANGED, ids=[_id(c) for c in CHANGED])
def test_a_changed_statement_fails_at_its_line(docs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                name: str, line: int, old: str, new: str) -> None:
    page = _copy(docs_dir, tmp_path, name, old, new, line)
    rc, doc = _check(capsys, page)
    assert rc == 1 and not doc["as_expected"]
    here = [f for f in doc["findings"] if not f["as_expected"] and f["message"].startswith(f"{page}:{line}:")]
    assert here, [f["message"] for f in doc["findings"]]
    assert any(f["check"] in ("statement", "reviewed") and f["expected"] == "proved" for f in here)


# rewrites that state the same layout: no finding, no warning
EQUIVALENT = [
    pytest.param(SMEM, 159, "Swizzle<0, 4, 3>", "Swizzle<0, 5, 3>", marks=SLOW),  # the identity swizzle another way
    pytest.param(SMEM, 230, "((1,8,64),(8,128))", "((1,16,64),(8,128))", marks=SLOW),  # the stride of a size-1 mode
    (SMEM, 232, "(1T,LBO)", "(T,LBO)"),                                            # a coefficient of one
    pytest.param(SMEM, 163, "((1T,SBO),(1,LBO))", "((T,SBO),(1,LBO))", marks=SLOW),
]


@pytest.mark.parametrize("name,line,old,new", EQUIVALENT, ids=[_id(c) for c in EQUIVALENT])
def test_an_equivalent_rewrite_is_no_finding(docs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             name: str, line: int, old: str, new: str) -> None:
    _, before = _check(capsys, _copy(docs_dir, tmp_path, name))
    rc, after = _check(capsys, _copy(docs_dir, tmp_path, name, old, new, line))
    assert rc == 0 and after["as_expected"]
    assert [f["message"] for f in after["findings"]] == [f["message"] for f in before["findings"]]
    assert [(f["line"], f["message"]) for f in after.get("doc_findings", [])] == \
        [(f["line"], f["message"]) for f in before.get("doc_findings", [])]


def test_map_statements_are_decided_by_both_engines(docs_dir: Path) -> None:
    """'a group of four consecutive threads loads a row' of the reviewed ldmatrix .m8n8: both engines prove it;
    with eight or two threads both refute it, at the same witness lane."""
    from verify import api
    from verify.checks import statement_maps as sm
    [lay] = [x for s in api.load(["specs/ldmatrix.m8n8.toml"]) for x in s.layouts if not x.variant and not x.corrected]
    f = sm.Fragment(lay, {"NUM": 1})
    ok = sm.groups_hold_lines(f, 4, "row", 10.0)
    assert ok.status == "proved" and ok.engines == {"z3": "proved", "enumeration": "proved"}
    for g in (2, 8):
        bad = sm.groups_hold_lines(f, g, "row", 10.0)
        assert bad.status == "refuted" and bad.engines == {"z3": "refuted", "enumeration": "refuted"}
    cells = sm.lane_cells(f, "row", 1, 2, 10.0)
    assert cells.status == "proved" and cells.engines["z3"] == "proved"
    assert sm.lane_cells(f, "row", 2, 2, 10.0).status == "refuted"
    assert sm.point_is(f, 0, 0, (0, 0), 10.0).status == "proved"
    assert sm.point_is(f, 3, 0, (0, 0), 10.0).status == "refuted"


def test_a_known_erratum_stays_known_and_another_value_is_new(docs_dir: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """ldmatrix's 'eight addresses' for every matrix is LDM-2 (a .m16n16 matrix has 16 rows): known; 'nine' is not."""
    rc, doc = _check(capsys, _copy(docs_dir, tmp_path, LDM))
    [known] = [f for f in doc["findings"] if f["message"].startswith(f"{tmp_path / docs_dir.name / LDM}:84:")]
    assert rc == 0 and known["as_expected"] and "LDM-2" in known["message"]
    rc, doc = _check(capsys, _copy(docs_dir, tmp_path, LDM, "The eight addresses", "The nine addresses", 84))
    assert rc == 1 and any(not f["as_expected"] and ":84:" in f["message"] for f in doc["findings"])


def test_a_fixed_erratum_is_no_finding(docs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """movmatrix's d 'a fragment of a column of the result' (MOV-1) fixed to 'a row': the known finding goes."""
    name = "9-7-14-5-17-warp-level-matrix-transpose-instruction-movmatrix.md"
    rc, doc = _check(capsys, _copy(docs_dir, tmp_path, name, "fragment of a column of the result", "fragment of a row of the "
                                   "result", 48))
    assert rc == 0 and not [f for f in doc["findings"] if ":48:" in f["message"]]


def test_the_harness_reads_pages_independently() -> None:
    """benchmarks/page_mutations.py decides what a change means by its own reading: it imports nothing of verify
    (only its runner calls the CLI), and its reading keeps equivalent layouts equal and tells others apart."""
    import ast
    import sys
    root = Path(__file__).resolve().parents[1]
    tree = ast.parse((root / "benchmarks" / "page_mutations.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [n for n in top if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("verify")]
    sys.path.insert(0, str(root / "benchmarks"))
    import page_mutations as pm
    canon = pm.Statement("x", 1, "", "cute")
    a = pm.meaning(canon, "((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) | Swizzle<0, 4, 3>")
    assert a == pm.meaning(canon, "((T,1,m),(8,k)):((1,7T,SBO),(T,LBO)) | Swizzle<0, 5, 3>")
    assert a != pm.meaning(canon, "((T,1,m),(8,k)):((1,T,LBO),(1T,SBO)) | Swizzle<0, 4, 3>")
    assert pm.meaning(pm.Statement("x", 1, "", "nset"), "`N = 8*i where i = {1, 2, ... , 32}`") == frozenset(range(8, 257, 8))


def test_the_json_contract_documents_a_statement() -> None:
    from verify.results import StatementResult
    from test_json_contract import _same, documented
    r = StatementResult("p.md", 3, 7, "registers", "wgmma.m64nNk16.A.f16_bf16", "four", "proved", "proved",
                        "the reviewed specs", "4 registers")
    _same(documented("`statements` (only when doc pages"), r.to_json(), "statement")


def test_a_baseline_sees_a_known_erratum_become_a_new_finding(docs_dir: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """CI's `check PAGES --baseline`: a statement finding is compared by its subject, kind and whether it is known,
    so 'eight threads' (LDM-2, known) changed to 'four' is a difference even though both are refuted."""
    from verify.outputs.baseline import compare
    _, before = _check(capsys, _copy(docs_dir, tmp_path, LDM))
    _, after = _check(capsys, _copy(docs_dir, tmp_path, LDM, "by eight threads", "by four threads", 85))
    d = compare(before, after)
    assert d.count and [c.check for c in d.new_failures] == ["statement:address-threads-per-matrix:new"]
    assert compare(before, before).count == 0
