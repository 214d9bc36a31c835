"""Matrix descriptors: encode/decode, the descriptor that reads a layout (on the real CuTe atoms and Triton's
NVMMA encodings), deciding a given descriptor with its first wrong cell, the reasons none exists, families,
and the command's exit codes."""
from __future__ import annotations

import json

import pytest

from verify import api
from verify.checks.descriptor import check, derive
from verify.layout.descriptor import FIELDS, Descriptor, decode, encode14, reader
from verify.layout.shared import MODES

from conftest import cli

TYPES = {"uint8_t": 8, "half_t": 16, "float": 32}
ATOM_K = {"INTER": 1, "SW32": 2, "SW64": 4, "SW128": 8}
MODE_OF = {"INTER": "none", "SW32": "32B", "SW64": "64B", "SW128": "128B"}


def test_encode_decode_round_trip() -> None:
    d = Descriptor("wgmma", 0x400, 16, 1024, MODES["128B"])
    assert d.encode() == 0x4000004000010040 == (1 << 62) | (64 << 32) | (1 << 16) | 0x40
    assert decode("wgmma", d.encode()) == d
    t = Descriptor("tcgen05", 0x400, 128, 1024, MODES["128B_base32B"], base_offset=2)
    v = t.encode()
    assert v >> 61 == 1 and (v >> 46) & 7 == 1 and (v >> 49) & 7 == 2 and (v >> 52) & 1 == 0
    assert decode("tcgen05", v) == t
    a = Descriptor("tcgen05", 0x400, 0x2000, 1024, MODES["128B"], lbo_mode=1)  # an absolute LBO address (sm_103a)
    assert (a.encode() >> 52) & 1 == 1 and decode("tcgen05", a.encode()) == a
    # PTX ISA 9.1 (9.7.16.4.1, 9.7.16.3.1.2.1): the fixed fields, and the absolute mode's restrictions
    with pytest.raises(ValueError, match="bits 48-46 .* fixes them to 0x1"):
        decode("tcgen05", v & ~(1 << 46))
    with pytest.raises(ValueError, match="bits 60-53 .* fixes them to 0x0"):
        decode("tcgen05", v | (0xB << 53))
    with pytest.raises(ValueError, match="absolute mode needs 128B swizzling"):
        decode("tcgen05", v | (1 << 52))
    assert encode14(0x40010) == 1 and encode14(1024) == 64  # (x & 0x3FFFF) >> 4
    with pytest.raises(ValueError, match="bits 14"):
        decode("wgmma", 1 << 14)
    with pytest.raises(ValueError, match="not a tcgen05 swizzle mode"):
        decode("tcgen05", (3 << 61) | (1 << 46))
    with pytest.raises(ValueError, match="multiples of 16"):
        Descriptor("wgmma", 8, 16, 1024, MODES["none"]).encode()


def test_the_field_table_is_the_pages(docs_dir) -> None:
    from verify.catalog.docpage import read_page
    from verify.catalog.page_model import Table
    page = read_page(docs_dir / "9-7-15-5-1-2-shared-memory-matrix-layout.md")
    sec = next(s for s in page.sections if s.number == "9.7.15.5.1.2.2")
    table = next(b for b in sec.blocks if isinstance(b, Table))
    stated = []
    for row in table.rows:
        hi, lo = (int(x) for x in row.cells[0].text.replace("–", "-").split("-"))
        stated.append((lo, int(row.cells[1].text)))
    assert [(f.lo, f.bits) for f in FIELDS["wgmma"]] == stated
    codes = {m.wgmma: m.name for m in MODES.values() if m.wgmma is not None}
    assert codes == {0: "none", 1: "128B", 2: "64B", 3: "32B"}  # line 300: 0 none, 1 128B, 2 64B, 3 32B


def _atom_tile(kind: str, major: str, t: str) -> str:
    bits = TYPES[t]
    w = ATOM_K[kind] * 128 // bits  # the atom's contiguous extent in elements
    kb = 256 // bits
    if major == "K":
        mn, k = 64, max(w, kb)
    else:
        mn, k = max(w, 64), max(8, kb)
    return f"tile_to_shape(GMMA::Layout_{major}_{kind}_Atom<{t}>{{}}, Shape<_{mn},_{k}>{{}})"


@pytest.mark.parametrize("t", sorted(TYPES))
@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("kind", sorted(ATOM_K))
def test_every_gmma_atom_has_its_descriptor(kind: str, major: str, t: str) -> None:
    lay = api.shared_layout("cute", _atom_tile(kind, major, t))
    res = derive(lay)
    assert res.status == "found", res.reasons
    assert (res.major, res.descriptor.mode.name) == (major, MODE_OF[kind])
    assert res.check is not None and res.check.engines == {"z3": "proved", "enumeration": "proved"}
    # and deciding the derived value agrees
    assert check(lay, res.descriptor.encode(), major=major).status == "reads"


def test_tcgen05_modes_and_the_32b_atomicity_atom() -> None:
    lay = api.shared_layout("cute", "tile_to_shape(UMMA::Layout_MN_SW128_32B_Atom<tfloat32_t>{}, Shape<_64,_8>{})")
    res = derive(lay, "tcgen05")
    assert res.status == "found" and res.descriptor.mode.name == "128B_base32B" and res.descriptor.encode() >> 61 == 1
    assert derive(lay, "wgmma").status == "none"  # wgmma has no such mode
    k128 = api.shared_layout("cute", _atom_tile("SW128", "K", "half_t"))
    r = derive(k128, "tcgen05")
    assert r.status == "found" and (r.descriptor.encode() >> 61, (r.descriptor.encode() >> 46) & 3) == (2, 1)


@pytest.mark.parametrize("width", [32, 64, 128])
@pytest.mark.parametrize("transposed", [False, True])
def test_triton_nvmma(width: int, transposed: bool) -> None:
    text = (f"#shared = #ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = {str(transposed).lower()}, "
            "elementBitWidth = 16}>\n!ttg.memdesc<64x64xf16, #shared, #smem>")
    lay = api.shared_layout("triton", text, base=0x2000)
    res = derive(lay)
    assert res.status == "found" and res.major == ("MN" if transposed else "K")
    assert res.descriptor.mode.name == f"{width}B" and res.descriptor.start == 0x2000


def test_a_given_descriptor_and_its_first_wrong_cell() -> None:
    lay = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_MN_SW64_Atom<half_t>{}, Shape<_64,_32>{})")
    good = derive(lay).descriptor
    assert (good.lbo, good.sbo) == (512, 1024)
    assert check(lay, good.encode(), major="MN").status == "reads"
    swapped = Descriptor("wgmma", 0, good.sbo, good.lbo, good.mode).encode()  # LBO and SBO swapped
    r = check(lay, swapped, major="MN")
    assert r.status == "differs" and r.check.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert r.check.counterexample["point"] == {"row": 0, "col": 8}  # the next 8 rows of K, read at LBO
    in_bytes = good.encode() & ~(0x3FFF << 32) | (1024 << 32)  # SBO written in bytes, not >> 4
    assert check(lay, in_bytes, major="MN").status == "differs"
    # the same descriptor for the same tile of 8-bit elements (a B descriptor sized with A's type)
    byte_tile = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_MN_SW64_Atom<uint8_t>{}, Shape<_64,_32>{})")
    assert check(byte_tile, good.encode(), major="MN").status == "differs"
    with pytest.raises(ValueError, match="give --major"):
        check(lay, good.encode())


def test_k_block_advances() -> None:
    k = derive(api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>{})"))
    assert k.advances == (0, 32, 64, 96)
    k2 = derive(api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_128>{})"))
    assert k2.status == "found" and k2.advances == (0, 32, 64, 96, 8192, 8224, 8256, 8288)


def test_reasons_none_exists() -> None:
    odd = api.shared_layout("cute", "(64,16):(16,1)", type="f16", base=8)
    assert any("starts at byte 0x8" in why for why in derive(odd).reasons)
    tri = api.shared_layout("triton", "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
                            "elementBitWidth = 16}>", tile=(64, 64), base=0x80)
    r = derive(tri)
    assert r.status == "none" and any("not aligned to the 1024-byte period" in why for why in r.reasons)
    # the same tile written through CuTe's pointer swizzle (absolute address) is read at any base
    assert derive(api.shared_layout("cute", _atom_tile("SW128", "K", "half_t"), base=0x80)).status == "found"
    # a 128B M/N-major atom is 64 halves wide: an N = 32 tile straddles it
    narrow = api.shared_layout("index", "off = col * 64 + row * 2\nswz = off ^ (((off >> 7) & 7) << 4)",
                               tile=(32, 16), type="f16")
    r = derive(narrow, major="MN")
    assert r.status == "none" and any("straddles" in why for why in r.reasons)
    elem = api.shared_layout("cute", "composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})", type="f16")
    r = derive(elem)
    assert r.status == "none" and "at row 1, col 0" in r.reasons[-1] and r.check.engines["z3"] == "refuted"


def test_shape_restricts_the_rows() -> None:
    lay = api.shared_layout("cute", _atom_tile("SW128", "K", "half_t"))
    r = derive(lay, rows=32)
    assert r.status == "found" and r.tile == (32, 64)
    assert derive(lay, rows=128).reasons == ("the instruction reads 128 rows (M or N), the layout has 64",)


def test_families_are_checked_member_by_member() -> None:
    specs = api.load("specs/wgmma.shared.toml")
    fam = api.shared_from_map(api.layout(specs, "wgmma.shared.MN.128B"), "f16", Rk=2)
    results = api.descriptor(fam)
    assert [env for env, _ in results] == [{"Rm": 1}, {"Rm": 2}, {"Rm": 3}]
    assert all(r.status == "found" and r.descriptor.mode.name == "128B" for _, r in results)
    assert [r.descriptor.lbo for _, r in results] == [1024] * 3  # the next atom along M/N (unused at Rm = 1)


def test_reader_model_spans() -> None:
    d = Descriptor("wgmma", 0, 16, 1024, MODES["128B"])
    hw = reader(d, "K", 16, 64, 16, 16)
    assert [hw.offset(r, 0) for r in range(3)] == [0, 72, 144]


def test_descriptor_command(capsys: pytest.CaptureFixture[str]) -> None:
    tile = "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>{})"
    code, out, _ = cli(capsys, "descriptor", "--cute", tile, "--shape", "m64n128k16")
    assert code == 0 and out.splitlines()[0].startswith("wgmma descriptor 0x4000004000010000 found: K-major 128B")
    code, out, _ = cli(capsys, "descriptor", "--cute", tile, "--check", "0x4000004000010000", "--major", "K")
    assert code == 0 and "reads the layout exactly: proved" in out
    code, out, _ = cli(capsys, "descriptor", "--cute", tile, "--check", "0x8000004000010000", "--major", "K")
    assert code == 1 and "first (row 1, col 0)" in out
    code, out, _ = cli(capsys, "descriptor", "--cute", tile, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["results"][0]["descriptor"]["value"] == "0x4000004000010000"
    code, _, err = cli(capsys, "descriptor", "--cute", tile, "--shape", "m64n128k8")
    assert code == 2 and "k8 is not 32 bytes of 16-bit elements" in err
    code, _, err = cli(capsys, "descriptor", "--cute", "(64,64):(64,1", "--type", "f16")
    assert code == 2 and err.startswith("argument:")
    code, _, err = cli(capsys, "descriptor", "--cute", tile, "--check", "0x1p3")
    assert code == 2 and "is not a number" in err
    code, _, err = cli(capsys, "descriptor", "--formula", "/nonexistent/x", "--tile", "8x8", "--type", "f16")
    assert code == 2 and err.startswith("/nonexistent/x:1:1: error:")
    code, _, err = cli(capsys, "descriptor", "--cute", tile, "--type", "f33")
    assert code == 2 and "unknown element type" in err


# 128B M/N-major atoms of 64 halves (M/N) x 8 columns (K), 1024 bytes each, the next 8 columns 3072 bytes on
MN_ATOMS = ("off = 2 * ((row % 64) + 512 * (row / 64) + 64 * (col % 8) + 1536 * (col / 8))\n"
            "swz = off ^ (((off >> 7) & 7) << 4)")


def test_one_model_decides_with_and_without_check(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    """Issue 35 item 5: a 96-row M/N-major tile that a 128B atom straddles: derive said no descriptor reads it
    (exit 1) while --check 0x400000c000400000 said it reads the layout exactly (exit 0).  The canonical layout
    counts whole atoms, and both answers now follow that one rule."""
    lay = api.shared_layout("index", MN_ATOMS, tile=(96, 16), type="f16")
    straddle = ("MN-major 128B: the tile's 96 rows (M or N) are not whole atoms of 64 (128-byte rows of 16-bit "
                "elements): an atom straddles the tile")
    r = derive(lay, major="MN")
    assert r.status == "none" and r.reasons[0] == straddle
    c = check(lay, 0x400000C000400000, major="MN")
    assert c.status == "differs" and not c.ok and c.reasons == (straddle,) and c.check is None
    with pytest.raises(ValueError, match="an atom straddles the tile"):
        reader(decode("wgmma", 0x400000C000400000), "MN", 16, 96, 16, 16)
    f = tmp_path / "mn96.txt"
    f.write_text(MN_ATOMS + "\n")
    base = ["descriptor", "--formula", str(f), "--tile", "96x16", "--type", "f16", "--major", "MN"]
    code, out, _ = cli(capsys, *base)
    assert code == 1 and straddle in out
    code, out, _ = cli(capsys, *base, "--check", "0x400000c000400000")
    assert code == 1 and out.splitlines() == [
        "wgmma descriptor 0x400000c000400000 (start 0x0, LBO 1024 B (field 64), SBO 3072 B (field 192), base offset 0, "
        "swizzle 128B) does not read the layout as MN-major:", f"  - {straddle}"]
    # whole atoms (128 rows): derived and checked alike, by both engines
    whole = api.shared_layout("index", MN_ATOMS, tile=(128, 16), type="f16")
    found = derive(whole, major="MN")
    assert found.status == "found" and found.descriptor.encode() == 0x400000C000400000
    assert check(whole, 0x400000C000400000, major="MN").check.engines == {"z3": "proved", "enumeration": "proved"}


@pytest.mark.parametrize("major,mode", [(mj, md) for mj in ("K", "MN") for md in ("none", "32B", "64B", "128B")])
def test_stride_roles_are_the_readers(major: str, mode: str) -> None:
    """The role each stride field plays in the page's canonical layouts (``stride_roles``) is where the
    descriptor's reader steps by it: one atom (or 16-byte unit) along M/N, one group of K columns."""
    from verify.layout.descriptor import atom_rows, stride_roles
    md = MODES[mode]
    lbo, sbo = 4096, 8192  # apart from every step inside an atom
    hw = reader(Descriptor("wgmma", 0, lbo, sbo, md), major, 16, 2 * atom_rows(major, md, 16), 16, 16)
    k_group = md.rows if major == "MN" else 8  # the next group of K columns: an atom's K rows; K-major: 8 halves
    steps = {"MN": hw.offset(atom_rows(major, md, 16), 0) * 2, "K": hw.offset(0, k_group) * 2}  # bytes
    roles = stride_roles(major, mode)
    for name, value in (("LBO", lbo), ("SBO", sbo)):
        if roles[name] is None:
            assert value not in steps.values()
        else:
            assert steps[roles[name]] == value, (name, roles[name], steps)
