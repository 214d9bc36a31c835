"""Issue 9: textual errata of the pages beyond mma (verify/catalog/catalog_errata.py): every finding is
computed from the page's own statements; the known errata are found, nothing else is, and a page with
the erratum fixed gives no finding."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verify.catalog.catalog_errata import catalog_findings

from conftest import DOCS

pytestmark = pytest.mark.skipif(not DOCS.is_dir(), reason=f"PTX ISA pages not found at {DOCS}")

# (page prefix, line, kind): every erratum of PTX ISA 9.0 this module reports (docs/catalog.md)
EXPECTED = [
    ("9-7-14-4-1-", 92, "register-count"),          # wmma .f64 C/D: single .f64 register
    ("9-7-14-4-3-", 230, "example-declaration"),    # {x0,..,x5,x,x7}
    ("9-7-14-4-3-", 262, "example-declaration"),    # .reg .b32 x<4>  (no ';')
    ("9-7-14-4-3-", 306, "example-type"),           # .f64 fragment in .b32 registers
    ("9-7-14-4-4-", 144, "example-qualifier"),      # wmma.mma.sync without .aligned
    ("9-7-14-4-4-", 148, "example-qualifier"),      # wmma.store.d.sync without .aligned
    ("9-7-14-4-4-", 166, "example-declaration"),    # .reg .b32 d<2>  (no ';')
    ("9-7-14-4-5-", 234, "example-declaration"),    # a<8> b<8> ... without ','
    ("9-7-14-4-5-", 290, "example-declaration"),    # c<2> d<2> without ',' ...
    ("9-7-14-4-5-", 290, "example-declaration"),    # ... and without ';'
    ("9-7-14-4-5-", 300, "example-declaration"),
    ("9-7-14-4-5-", 300, "example-declaration"),
    ("9-7-14-4-5-", 326, "example-declaration"),    # a2, a3 beyond a<2>
    ("9-7-14-4-5-", 326, "example-declaration"),    # b2, b3 beyond b<2>
    ("9-7-14-5-15-", 78, "register-count"),         # ldmatrix: 1, 2, or 4 registers (.m16n16 needs 2 per matrix)
    ("9-7-14-5-15-", 84, "address-count"),          # eight addresses per matrix (.m16n16 has 16 rows)
    ("9-7-14-5-15-", 236, "example-type"),          # 16x16 matrices of 64-bit elements (.b8)
    ("9-7-14-5-15-", 246, "example-type"),
    ("9-7-14-5-16-", 193, "example-qualifier"),     # stmatrix .m16n8 without .trans
    ("9-7-14-5-17-", 48, "fragment-wording"),       # movmatrix: d a column fragment of the result
    ("9-7-15-5-2-", 152, "shape-list"),             # integer wgmma shapes omit n240, n256
    ("9-7-15-5-2-", 320, "example-declaration"),    # .reg .b32 bf16a<40> (no ';')
    ("9-7-15-5-2-", 336, "example-declaration"),    # f32d40..f32d59 beyond f32d<40>
    ("9-7-15-6-2-3-", 10, "self-reference"),        # sparse k64: "documented in" this very section
    ("9-7-15-6-2-3-", 32, "self-reference"),
    ("9-7-15-6-2-3-", 34, "metadata-bits"),         # 16 4-bit vectors in a .b32
    ("9-7-16-10-7-3-", 69, "figure-caption"),       # SFA_ID in the scale factor B captions
    ("9-7-16-10-7-3-", 149, "figure-caption"),
    ("9-7-16-2-3-1-", 22, "anchor"),                # .16x64b section anchored ...-6464b
    ("9-7-16-2-3-1-", 45, "register-count"),        # .16x128b: .num registers (Table 47: 2 x .num)
    ("9-7-16-2-3-1-", 62, "register-count"),        # .16x256b: .num registers (Table 47: 4 x .num)
]


def _key(f) -> tuple[str, int, str]:
    name = Path(f.page).name
    prefix = next(p for p, _, _ in sorted(EXPECTED, key=lambda e: -len(e[0])) if name.startswith(p))
    return prefix, f.line, f.kind


def test_the_errata_are_found_and_nothing_else() -> None:
    found = catalog_findings(sorted(DOCS.glob("*.md")))
    assert sorted(_key(f) for f in found) == sorted(EXPECTED)
    for f in found:
        assert f.severity == "warning" and f.words and f.message and f.section
        assert f.one_line().startswith(f"{f.page}:{f.line}:{f.column}: warning: {f.kind}: ")
        assert f.to_json()["witness"] and f.to_json()["kind"] == f.kind


def test_witnesses_are_computed_from_the_page() -> None:
    found = {(_key(f)): f for f in catalog_findings(sorted(DOCS.glob("*.md")))}
    tc = dict(found[("9-7-16-2-3-1-", 62, "register-count")].witness)
    assert (tc["lanes"], tc["bits_per_lane"], tc["registers_per_num"]) == (16, 256, 4)
    wm = dict(found[("9-7-14-4-1-", 92, "register-count")].witness)
    assert (wm["total"], wm["matrix"]) == (32, 64)
    sh = found[("9-7-15-5-2-", 152, "shape-list")].to_json()["witness"]
    assert sh["missing"] == ["m64n240k32", "m64n256k32"]
    md = dict(found[("9-7-15-6-2-3-", 34, "metadata-bits")].witness)
    assert (md["vectors"], md["bits"]) == (16, 4)


FIXES = [  # (page prefix, the doc's words, a correct text): the finding must disappear with the fix
    ("9-7-14-4-1-", "| `.f64` | `.m8n8k4` | C or D | A vector expression containing single `.f64` register. |",
     "| `.f64` | `.m8n8k4` | C or D | A vector expression containing two `.f64` registers. |", "register-count"),
    ("9-7-16-2-3-1-", "containing `.num` number of `.b32` registers as mentioned in the [Table 47](#tcgen05-num-shapes-ld). | r0, r1, r2, r3, … |",
     "containing 4 * `.num` number of `.b32` registers as mentioned in the [Table 47](#tcgen05-num-shapes-ld). | r0, r1, r2, r3, … |",
     "register-count"),
    ("9-7-15-6-2-3-", "containing 16 4-bit vectors", "containing eight 4-bit vectors", "metadata-bits"),
    ("9-7-14-5-16-", "stmatrix.sync.aligned.m16n8.x4.b8 [addr]", "stmatrix.sync.aligned.m16n8.x4.trans.b8 [addr]",
     "example-qualifier"),
    ("9-7-15-5-2-", "            .m64n176k32, .m64n192k32, .m64n208k32, .m64n224k32};",
     "            .m64n176k32, .m64n192k32, .m64n208k32, .m64n224k32, .m64n240k32, .m64n256k32};", "shape-list"),
]


@pytest.mark.parametrize("prefix,old,new,kind", FIXES)
def test_a_fixed_page_has_no_finding(tmp_path: Path, prefix: str, old: str, new: str, kind: str) -> None:
    pages = sorted(DOCS.glob(prefix + "*.md")) + sorted(DOCS.glob("9-7-15-2-*.md"))
    for p in pages:
        shutil.copy(p, tmp_path / p.name)
    page = next(tmp_path.glob(prefix + "*.md"))
    before = [f for f in catalog_findings(sorted(tmp_path.glob("*.md"))) if f.kind == kind]
    assert before, (prefix, kind)
    text = page.read_text(encoding="utf-8")
    assert old in text, old
    page.write_text(text.replace(old, new), encoding="utf-8")
    after = [f for f in catalog_findings(sorted(tmp_path.glob("*.md"))) if f.kind == kind]
    assert len(after) == len(before) - 1, (prefix, kind, [f.one_line() for f in after])


def test_other_pages_give_nothing(tmp_path: Path) -> None:
    mma = sorted(DOCS.glob("9-7-14-5-[0-9]-*.md")) + sorted(DOCS.glob("9-7-14-6-*.md"))
    assert mma and catalog_findings(mma) == []
    (tmp_path / "x.md").write_text("not a page at all\n", encoding="utf-8")
    assert catalog_findings([tmp_path / "x.md"]) == []
