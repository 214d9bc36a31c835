"""The agreement matrix: for every catalog layout, what each reference says of it.

A cell is one of

* ``agrees``: the reference states this layout (every member it states, for a family) and ``conform``
  finds it equal, with both engines;
* ``differs``: the reference states it differently (or states something that is no layout); the first
  difference is a finding about the reference, with the reference's file and line.  A doc layout
  whose reviewed correction (``ID@corrected``) the reference agrees with differs too, and says so:
  that difference is the doc's erratum, already a finding of ``check``;
* ``absent``: the reference runs here but states no such layout;
* ``unavailable``: the reference does not run here (the reason says which extra to install).

References of the same origin (CuTe compiled and CuTe read as text) count once when the matrix asks
whether a layout is backed by two independent references.

A layout with fewer than two is *explained* when a finding says why: the doc leaves it unspecified, it
models a program, it is the doc's erratum (its correction is compared), a reference differs in a reviewed
way, one reference agrees and a reviewed reason says why no second can state it (``SINGLE``), no reference
states it and a reviewed reason says why (``UNREFERENCED``: only a GPU can confirm it), or it is the
same map as a layout two references back (``equal_maps``: proved with both engines;
``mma.sp``'s B is ``mma``'s).  The coverage counts each kind apart.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...layout.ids import CORRECTED_RX
from ...layout.fragment_maps import UnspecifiedMap
from ...results import Finding
from ..crosscheck import CrosscheckReport, Row
from . import NAMES, ORIGINS
from .equal_maps import equal_backed
from .reviewed_more import KNOWN_MORE, MODELED_MORE, SINGLE_MORE, UNSETTLED

STATUSES = ("agrees", "differs", "absent", "unavailable")

# Differences that are the reference's own, reviewed: (references, trait pattern, explanation).
KNOWN: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("cute", "cute-text", "tensor-layouts"), r"SM80_16x8x32_S32[SU]4[SU]4S32_TN(_SATURATE)?",
     "CUTLASS 4.2's int4 B layout (Stride<_32,_1>), fixed at CUTLASS main by PR #3140 (Stride<_64,_1>); "
     "tensor-layouts transcribes 4.2's"),
    (("cute", "cute-text"), r"SM80_16x8x128_S32U1U1S32_TN_(XOR|AND)POPC",
     "ALayout's stride is not congruent with its shape (CUTLASS 4.2 and main); the compiler accepts the type, "
     "CuTe's layout algebra cannot use it"),
    (("cute",), r"SM100_U8x(8|16)_LDSM_T",
     "CuTe's DstLayout is the register order after the byte shuffle of cute/arch/copy_sm100.hpp, not ldmatrix's "
     "raw order (the spec's derived note undoes the shuffle)"),
    (("tilelang",), r"shared_(16x64_to_mma_a_32x32_layout|64x16_to_mma_a_32x32_layout_trans)",
     "TileLang 0.1.15's e2m1 A reverse map (mma_layout.py:208, :215) is not the inverse of its own forward map "
     "(mma_load_a_32x32_to_shared_16x64_layout, :257) nor of its ldmatrix addresses (:236), which agree with PTX"),
    (("cute",), r"UMMA::tmem_frg<float, uint32_t, 2> M=64 N=\d+ b=32 for SM100_MMA_F16BF16_2x1SM_SS_SPARSE",
     "CuTe 4.2's 2x1SM sparse MMAs allocate D with tmem_frg_2sm (the 2x2 atom of Layout B, 64 rows per CTA); the "
     "table's Layout C is 4x1 with half the datapath, and CuTe has no 2-SM allocator for it"),
    (("tilelang",), r"shared_4x16_to_mma_b_32x4_layout",
     "TileLang 0.1.15 mma_sm70_layout.py:8 reads `8 * col // 4` as (8 * col) // 4 (threads past 31); with "
     "8 * (col // 4) it agrees"),
)


# Catalog layouts that model a program rather than hardware or a library (writers and readers kept for
# ``consistent``): no reference can state them.  Reviewed, with the reason.
MODELED = {
    "storage.sf.cutlass.128x4.quantizer": "CUTLASS's 128 x 4 layout (storage.sf.cutlass.128x4, compared) restricted "
                                          "to the real scale factors: what a quantization kernel writes",
    "storage.sf.flat_batch_padding": "a modelled host packer with a bug (padding over the flattened batch)",
    "storage.sf.linear": "a modelled loader with a bug (scale factors read row-major)",
    "storage.fp4.rows.packed": "a modelled host packer (FP4 rows back to back)",
    "storage.fp4.rows.aligned128": "a modelled kernel's reading (FP4 rows at a 128-byte pitch)",
    "tcgen05.sf.A.4x1.sfa_id0": "a modelled kernel with a bug (every MMA of the tile given SFA_ID = 0)",
    "tcgen05.cp.source.32x128b": "the dense 32 x 16-byte block CUTLASS's block-scaled kernels give tcgen05.cp (a "
                                 "descriptor's choice: tcgen05.cp reads whatever block its descriptor names)",
}


# Layouts a second independent reference cannot state, reviewed: (id pattern, why).  Each reason names what
# the references that run here have instead (and where that was checked), never merely that they lack it.
SINGLE: tuple[tuple[str, str], ...] = (
    (r"wgmma\.shared\.(K|MN)\.none|wgmma\.shared\.example\.(K\.none\.tf32|MN\.none\.bf16)",
     "Triton's swizzle-0 NVMMASharedLayout is row-major over the block (nvmmaSharedToLinearLayout), not the "
     "core-matrix tiling of the no-swizzle canonical layouts: it is compared at the 8 x 16-byte atoms, where it "
     "agrees (wgmma.shared.atom.*.none); tensor-layouts and TileLang state no shared-memory layouts, Mosaic GPU builds its "
     "descriptors from strides (mma_utils.create_descriptor), not from a layout object"),
    (r"wgmma\.shared\.example\.MN\.(32B|64B)\.bf16",
     "Triton stacks MN-major swizzle tiles along K first: its tile of this shape holds the same atoms in the "
     "other order (LBO and SBO exchanged), and its atoms agree (wgmma.shared.atom.MN.*)"),
    (r"tcgen05\.shared\.atom\.MN\.128B_base32B",
     "the 128-byte swizzle with 32-byte atomicity is sm_100's alone: Triton's NVMMASharedLayout has swizzle "
     "widths 0, 32, 64 and 128 only (gluon _layouts.py asserts it); tensor-layouts and TileLang state no "
     "shared-memory atoms, Mosaic GPU none in a layout object"),
    (r"ldmatrix\.m8n16\.R\.b8x16|stmatrix\.m16n8\.R\.b8\.trans",
     "sm_100's 8-bit ldmatrix/stmatrix forms: tensor-layouts has the SM75 LDSM and SM90 STSM atoms of 16- and "
     "32-bit elements only, TileLang's ldmatrix maps are 16-bit (its ldsm.h wraps stmatrix.m16n8 .trans without a "
     "layout), Triton lowers to them internally and exposes no layout, Mosaic GPU issues no ldmatrix "
     "(fragmented_array.py: a TODO); FlashInfer 0.7.4 states the stmatrix one (references/flashinfer_stsm.py) and "
     "issues the .m8n16 ldmatrix (.b4x16_p64) in XQA (csrc/xqa/utils.cuh:585, ldmatrix_8x16_4x_unpack_4b), whose use "
     "into an MMA operand is not read yet"),
    (r"ldmatrix\.m16n16\.R\.b8_b8x16\.trans(" + CORRECTED_RX + ")?",
     "FlashInfer's fp8 prefill relies on it (.x2: the registers it loads from a [candidate, dim] tile are an "
     "mma.m16n8k32 A, references/flashinfer_ldsm.py); CuTe's SM100_U8x16_LDSM_T states it after its byte shuffle "
     "(a reviewed difference); tensor-layouts, TileLang and Triton expose no sm_100 8-bit ldmatrix layout, Mosaic GPU "
     "issues no ldmatrix"),
    (r"mma\.sp\.m16n8k32\.B\.f16_bf16" + CORRECTED_RX,
     "an SM80 sparse B operand: CuTe 4.2 has no SM80 sparse traits (tensor-layouts transcribes CuTe's) and "
     "Triton no sparse dot"),
)


# Derived layouts no reference states at all, reviewed: (id pattern, what the references have instead).  Only
# a GPU can confirm them; each has its probe (``ptx-verify probe ID``) where a probe kind reads its form.
UNREFERENCED = (
    (r"mma\.sp\.m16n8k128\.B\..*",
     "the 4-bit sparse B (k = 128): CuTe 4.2 has no SM80 sparse traits, Triton no sparse dot, TileLang's "
     "mma_sp_layout.py stops at 16 x 64 (8-bit)"),
    (r"wgmma\.m64nNk256\.A\.b1",
     "binary wgmma: CuTe 4.2's GMMA traits have no b1 type; Triton and TileLang have no binary MMA, Mosaic "
     "GPU's wgmma takes 16- and 8-bit and tf32 inputs only (wgmma.py _supported_wgmma_types)"),
    (r"tcgen05\.packing\.A\.mxf4",
     "4-bit A in Tensor Memory: CuTe 4.2 has no _TS MMA for kind::mxf4 (cute/arch/mma_sm100_umma.hpp has them for "
     "tf32, f16/bf16, s8 and f8f6f4 only); Triton's fp4 operand is an 8-bit tensor of K/2 columns whose nibble "
     "order is the element type's packing, not a TensorMemoryLayout's; Mosaic GPU refuses A in Tensor Memory for "
     "block-scaled MMAs (tcgen05.py mma: \"A in TMEM unsupported for block-scaled matmuls\")"),
    (r"tcgen05\.packing\.smem\.mxf8f6f4\.b[46]",
     "4- and 6-bit elements in a 16-byte unit of shared memory: the libraries name the padded form and leave its "
     "bits to the TMA data type that writes it: CuTe maps float_e2m1_unpacksmem_t to "
     "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B and the 6-bit unpacksmem types to 16U6_ALIGN16B "
     "(cute/arch/copy_sm90_desc.hpp:229-233), Triton's NVMMASharedLayout has an fp4_padded flag "
     "(gluon _layouts.py:366); none states which bits of the unit hold which element. No probe kind reads a "
     "16-byte unit's bits yet (the shared-memory probes read (row, col) tiles); the kernel verifier follows this "
     "layout (tests/test_kernel_mxf8f6f4_fp4.py)"),
)

MODELED = {**MODELED, **MODELED_MORE}   # reviewed_more.py: the rasterisations, descriptors, blockwise storages
SINGLE = SINGLE + SINGLE_MORE
KNOWN = KNOWN + KNOWN_MORE


@dataclass(frozen=True)
class Cell:
    status: str
    detail: str = ""
    where: str = ""                    # the reference's file:line of the first difference
    atom: str = ""                     # the reference's name for the layout that decided the cell
    members: tuple[str, ...] = ()      # the family members compared (``N=64``), when a family
    known: str = ""                    # the reviewed explanation of a difference, if any
    erratum: bool = False              # differs only as the doc's layout whose correction agrees

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        for key in ("detail", "where", "atom", "known"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.members:
            out["members"] = list(self.members)
        if self.erratum:
            out["erratum"] = True
        return out


@dataclass(frozen=True)
class Matrix:
    references: tuple[str, ...]
    versions: Mapping[str, str]          # name -> what ran (root / version), '' when unavailable
    unavailable: Mapping[str, str]       # name -> why not
    layouts: tuple[str, ...]
    derived: frozenset[str]
    cells: Mapping[str, Mapping[str, Cell]]
    unspecified: frozenset[str] = frozenset()   # the doc leaves the layout open (wmma): check's n/a
    equal_to: Mapping[str, str] = dataclasses.field(default_factory=dict)  # id -> a backed id, the same map
    corrections: Mapping[str, str] = dataclasses.field(default_factory=dict)  # doc id -> its correction's id

    def status(self, layout_id: str) -> dict[str, str]:
        return {r: self.cells[layout_id][r].status for r in self.references}

    def origins(self, layout_id: str) -> list[str]:
        """The independent origins that agree with the layout."""
        return sorted({ORIGINS[r] for r in self.references if self.cells[layout_id][r].status == "agrees"})

    def explained(self, layout_id: str) -> str:
        """Why the layout cannot have two agreeing references, when a finding says so: the doc leaves it
        unspecified, it models a program, it is the doc's erratum (its correction is compared), a reference
        differs in a reviewed way, one agrees and no second can state it (reviewed, ``SINGLE``), none can and
        only a GPU can confirm it (reviewed, ``UNREFERENCED``), or it is the same map as a backed layout
        (``equal_maps``); '' otherwise."""
        return self._explanation(layout_id)[1]

    def _explained_kind(self, layout_id: str) -> str:
        """The kind of the explanation (``finding``, ``single``, ``unreferenced``, ``equal_map``), '' if none."""
        return self._explanation(layout_id)[0]

    def _explanation(self, layout_id: str) -> tuple[str, str]:
        if layout_id in self.unspecified:
            return "finding", "the doc leaves it unspecified (check: n/a); a reference's map cannot agree with no map"
        if layout_id in MODELED:
            return "finding", f"not a hardware or library layout: {MODELED[layout_id]}"
        cells = self.cells[layout_id].values()
        if any(c.erratum for c in cells):
            return "finding", "the doc's erratum: the references are compared with its correction"
        known = next((c.known for c in cells if c.known), "")
        if known:
            return "finding", f"a reference differs (reviewed): {known}"
        single = next((why for pat, why in SINGLE if re.fullmatch(pat, layout_id)), "")
        if single and self.origins(layout_id):
            return "single", f"one reference agrees; no second can state it (reviewed): {single}"
        alone = next((why for pat, why in UNREFERENCED if re.fullmatch(pat, layout_id)), "")
        if alone and not self.origins(layout_id):
            return "unreferenced", (f"no reference states it (reviewed): {alone}; only a GPU can confirm it "
                                    f"(ptx-verify probe {layout_id})")
        unsettled = next(((why, how) for pat, why, how in UNSETTLED if re.fullmatch(pat, layout_id)), None)
        if unsettled and not self.origins(layout_id):
            return "unreferenced", (f"no reference states it (reviewed): {unsettled[0]}; what would settle it: "
                                    f"{unsettled[1]}")
        other = self.equal_to.get(layout_id)
        if other:
            return "equal_map", (f"the same map as {other} (proved, both engines), which "
                                 f"{', '.join(self.origins(other))} agree with; no reference states {layout_id} itself")
        return "", ""

    def coverage(self) -> dict[str, Any]:
        n = len(self.layouts)
        two = [lid for lid in self.layouts if len(self.origins(lid)) >= 2]
        one = [lid for lid in self.layouts if len(self.origins(lid)) == 1]
        explained = [lid for lid in self.layouts if len(self.origins(lid)) < 2 and self.explained(lid)]
        by_equal = [lid for lid in explained if self._explained_kind(lid) == "equal_map"]
        single = [lid for lid in explained if self._explained_kind(lid) == "single"]
        alone = [lid for lid in explained if self._explained_kind(lid) == "unreferenced"]
        der = [lid for lid in self.layouts if lid in self.derived]
        der_two = [lid for lid in der if len(self.origins(lid)) >= 2]
        der_expl = [lid for lid in der if len(self.origins(lid)) < 2 and self.explained(lid)]
        return {"layouts": n, "two_or_more": len(two), "one": len(one), "none": n - len(two) - len(one),
                "explained_below_two": len(explained), "explained_by_equal_map": len(by_equal),
                "explained_single_source": len(single), "explained_unreferenced": len(alone),
                "percent_two_or_more": round(100.0 * len(two) / n, 1) if n else 0.0,
                "percent_two_or_more_or_explained": round(100.0 * (len(two) + len(explained)) / n, 1) if n else 0.0,
                "derived": len(der), "derived_two_or_more": len(der_two),
                "derived_two_or_more_or_explained": len(der_two) + len(der_expl),
                "origins_ran": len({ORIGINS[r] for r in self.references if r not in self.unavailable}),
                "corrections_preferred": self._preferred_coverage()}

    def preferred(self) -> list[str]:
        """The layouts with each reviewed correction in place of its doc layout (the layout the hardware has,
        where the doc is wrong): what the hardware-truth figures count."""
        ids = set(self.layouts)
        return [lid for lid in self.layouts if self.corrections.get(lid) not in ids]

    def _preferred_coverage(self) -> dict[str, Any]:
        """Coverage over ``preferred()``: all of them, the ``derived`` ones, and the ``statable`` ones (those a
        reference can state at all: not the layouts the doc leaves unspecified, nor the modelled programs)."""
        pref = self.preferred()
        two = {lid for lid in pref if len(self.origins(lid)) >= 2}
        der = [lid for lid in pref if lid in self.derived]
        stat = [lid for lid in pref if lid not in self.unspecified and lid not in MODELED]

        def pct(a: int, b: int) -> float:
            return round(100.0 * a / b, 1) if b else 0.0
        return {"layouts": len(pref), "two_or_more": len(two), "percent_two_or_more": pct(len(two), len(pref)),
                "derived": len(der), "derived_two_or_more": sum(lid in two for lid in der),
                "percent_derived_two_or_more": pct(sum(lid in two for lid in der), len(der)),
                "statable": len(stat), "statable_two_or_more": sum(lid in two for lid in stat),
                "percent_statable_two_or_more": pct(sum(lid in two for lid in stat), len(stat)),
                "unspecified": sum(lid in self.unspecified for lid in pref),
                "modelled": sum(lid in MODELED for lid in pref)}

    def findings(self) -> list[Finding]:
        """One finding per differing cell (not the doc's errata: those are ``check``'s own findings);
        expected when the difference is a reviewed one of the reference's (``KNOWN``)."""
        out = []
        for lid in self.layouts:
            for r in self.references:
                c = self.cells[lid][r]
                if c.status != "differs" or c.erratum:
                    continue
                msg = f"{r}: {c.atom} ({c.where}) differs: {c.detail}" + (f" [known: {c.known}]" if c.known else "")
                out.append(Finding(lid, "reference", "differs", "differs" if c.known else "agrees", msg))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "references": {
            "names": list(self.references),
            "origins": {r: ORIGINS[r] for r in self.references},
            "ran": {r: self.versions.get(r, "") for r in self.references if r not in self.unavailable},
            "unavailable": dict(self.unavailable),
            "coverage": self.coverage(),
            "layouts": [{"id": lid, "derived": lid in self.derived, "origins_agreeing": self.origins(lid),
                         **({"explained": self.explained(lid)} if len(self.origins(lid)) < 2 and self.explained(lid)
                            else {}),
                         "cells": {r: self.cells[lid][r].to_json() for r in self.references}}
                        for lid in self.layouts]}}

    def exit_code(self) -> int:
        """1 when a reference differs in a way not reviewed (``KNOWN``), else 0."""
        return 1 if any(not f.as_expected for f in self.findings()) else 0


def build(layouts: Iterable[Any], reports: Mapping[str, CrosscheckReport | str],
          versions: Mapping[str, str] | None = None) -> Matrix:
    """The matrix of the catalog ``layouts`` (fragment and map layouts) from each reference's report, or
    the reason it is unavailable (a string); ``versions`` names what ran (default: each report's root)."""
    lays = list(layouts)
    ids = tuple(lay.id for lay in lays)
    said = {lay.id: str(getattr(getattr(lay, "provenance", None), "derived", "") or "") for lay in lays}
    derived = frozenset(lid for lid, d in said.items() if d and not d.startswith("same as"))
    unspecified = frozenset(lay.id for lay in lays if isinstance(getattr(lay, "map", None), UnspecifiedMap))
    corrections = {lay.id: lay.correction.id for lay in lays if getattr(lay, "correction", None) is not None}
    names = tuple(n for n in NAMES if n in reports)
    by: dict[str, dict[str, list[Row]]] = {}
    versions_in = versions
    versions, unavailable = {}, {}
    for name in names:
        rep = reports[name]
        if isinstance(rep, str):
            unavailable[name] = rep
            continue
        versions[name] = (versions_in or {}).get(name) or rep.root
        for row in rep.rows:
            if row.spec:
                by.setdefault(name, {}).setdefault(row.spec, []).append(row)
    cells: dict[str, dict[str, Cell]] = {}
    for lid in ids:
        cells[lid] = {}
        for name in names:
            cells[lid][name] = _cell(name, lid, corrections.get(lid) if corrections.get(lid) in ids else None,
                                     by.get(name, {}), name in unavailable, unavailable.get(name, ""))
    m = Matrix(names, versions, unavailable, ids, derived, cells, unspecified, corrections=corrections)
    unbacked = [lay for lay in lays if len(m.origins(lay.id)) < 2 and not m.explained(lay.id)]
    backed = [lay for lay in lays if len(m.origins(lay.id)) >= 2]
    return dataclasses.replace(m, equal_to=equal_backed(unbacked, backed))


def _members(rows: list[Row]) -> tuple[str, ...]:
    seen: list[str] = []
    for r in rows:
        m = ",".join(f"{k}={v}" for k, v in r.params)
        if m and m not in seen:
            seen.append(m)
    return tuple(sorted(seen, key=lambda s: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]))


def _cell(name: str, lid: str, corrected: str | None, rows_by_spec: Mapping[str, list[Row]], unavailable: bool,
          why: str) -> Cell:
    """Reference ``name``'s cell of layout ``lid`` (``corrected``: the id of its correction in the matrix)."""
    if unavailable:
        return Cell("unavailable", why)
    rows = rows_by_spec.get(lid, [])
    bad = [r for r in rows if r.kind in ("differ", "malformed")]
    if bad:
        r = bad[0]
        known = next((text for refs, pat, text in KNOWN if name in refs and re.fullmatch(pat, r.trait)), "")
        members = ",".join(f"{k}={v}" for k, v in r.params)
        detail = (f"[{members}] " if members else "") + (r.detail or r.status)
        return Cell("differs", detail, f"{r.header}:{r.line}" if r.line else r.header,
                    r.trait + (f".{r.operand}" if r.operand else ""), _members(rows), known)
    if any(r.kind == "agree" for r in rows):
        first = next(r for r in rows if r.kind == "agree")
        return Cell("agrees", where=f"{first.header}:{first.line}" if first.line else first.header,
                    atom=first.trait + (f".{first.operand}" if first.operand else ""), members=_members(rows))
    if corrected is not None and any(r.kind == "agree" for r in rows_by_spec.get(corrected, [])):
        return Cell("differs", f"agrees with {corrected}: this is the doc's layout (a known erratum)", erratum=True)
    return Cell("absent")
