"""Layout facts the doc text does not state, each with its provenance, and reviewed errata.

* ``DERIVED_METADATA``: which lane and nibble of the sparse metadata register hold which (row,
  chunk) index field (figures only in the doc), from CUTLASS CuTe's sparse ``ELayout``s.
* ``DERIVED_B``: the sparse B layouts the doc gives only as figures, from CuTe's ``BLayout``s.
* ``REVIEWED_ERRATA``: doc formulas that are wrong in a way no mechanical repair can fix,
  with the correction a reviewer checked; each applies only while the doc text still matches.
"""
from __future__ import annotations

import re

from typing import Any, Sequence

# Which lane and nibble of the metadata register hold the index field of which (row, chunk).
# The doc shows this only in figures; these are read from CUTLASS CuTe's sparse ELayouts
# (include/cute/atom/mma_traits_sm80_sparse.hpp, NVIDIA CUTLASS, BSD-3-Clause) and are emitted
# with that provenance, never as doc-stated facts.  Key: (shape, type family of A).
_CUTE = "CUTLASS CuTe include/cute/atom/mma_traits_sm80_sparse.hpp (NVIDIA CUTLASS, BSD-3-Clause)"
_HALVES = ("groupID = %laneid >> 2\nrow = groupID          for ei where i < 4\n"
           "      groupID + 8      for ei where i >= 4\n")
_WHOLE_ROW = "groupID = %laneid >> 2\nrow = groupID + (8 * (%laneid % 2))\n"
DERIVED_METADATA: dict[tuple[str, str], dict[str, Any]] = {
    ("m16n8k16", "16bit"): {"selectors": [0, 1, 2, 3], "selector": "%laneid % 4",
                            "metadata": _HALVES + "col = i % 4\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x16_F16F16F16F16_TN>::ELayout = ((4,8),(16,2)):((0,1),(0,8)): "
                                   "one lane of each group of four (any, by the selector), row groupID in the low 16 bits, "
                                   "groupID + 8 in the high 16 bits"},
    ("m16n8k8", "tf32"): {"selectors": [0, 1, 2, 3], "selector": "%laneid % 4",
                          "metadata": _HALVES + "col = i % 4\n",
                          "why": "MMA_Traits<SM80_SPARSE_16x8x8_F32TF32TF32F32_TN>::ELayout = ((4,8),(8,2)):((0,1),(0,8)): "
                                 "one lane of each group of four, row groupID in the low 16 bits, groupID + 8 in the high"},
    ("m16n8k32", "16bit"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                            "metadata": _HALVES + "col = (i % 4) + (4 * (%laneid % 2))\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x32_F16F16F16F16_TN>::ELayout = ((2,2,8),(16,2)):((256,0,1),(0,8)): "
                                   "lane bit 0 selects the K half, lane bit 1 (the selector pair) has stride 0, the high "
                                   "16 bits hold row groupID + 8"},
    ("m16n8k16", "tf32"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                           "metadata": _HALVES + "col = (i % 4) + (4 * (%laneid % 2))\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x16_F32TF32TF32F32_TN>::ELayout = ((2,2,8),(8,2)):((128,0,1),(0,8)): "
                                  "lane bit 0 selects the K half, lane bit 1 (the selector pair) has stride 0, the high "
                                  "16 bits hold row groupID + 8"},
    ("m16n8k32", "8bit"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                           "metadata": _WHOLE_ROW + "col = i                          for ei where i = {0,..,7}\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x32_S32S8S8S32_TN>::ELayout = ((2,2,8),32):((8,0,1),0): "
                                  "lane bit 0 adds 8 to the row, lane bit 1 (the selector pair) has stride 0, one word "
                                  "covers a whole row"},
    ("m16n8k64", "4bit"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                           "metadata": _WHOLE_ROW + "col = i                          for ei where i = {0,..,7}\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x64_S32S4S4S32_TN>::ELayout = ((2,2,8),64):((8,0,1),0): "
                                  "lane bit 0 adds 8 to the row, lane bit 1 (the selector pair) has stride 0, one word "
                                  "covers a whole row"},
    ("m16n8k64", "8bit"): {"selectors": [0], "selector": "0",
                           "metadata": _WHOLE_ROW + "col = i + (8 * ((%laneid >> 1) % 2))\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x64_S32S8S8S32_TN>::ELayout = ((2,2,8),32):((8,512,1),0): "
                                  "all four lanes of a group, lane bit 0 adds 8 to the row, lane bit 1 selects the K half"},
    ("m16n8k128", "4bit"): {"selectors": [0], "selector": "0",
                            "metadata": _WHOLE_ROW + "col = i + (8 * ((%laneid >> 1) % 2))\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x128_S32S4S4S32_TN>::ELayout = ((2,2,8),64):((8,1024,1),0): "
                                   "all four lanes of a group, lane bit 0 adds 8 to the row, lane bit 1 selects the K half"},
}


# Sparse B layouts the doc gives only as figures, from CuTe's BLayouts (same provenance as above).
_B_HEAD = "groupID = %laneid >> 2\nthreadID_in_group = %laneid % 4\n"
DERIVED_B: dict[tuple[str, str], dict[str, str]] = {
    ("m16n8k32", "16bit"): {"formula": _B_HEAD + "row = (threadID_in_group * 2) + (i & 0x1) + (8 * (i >> 1))\ncol = groupID\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x32_F16F16F16F16_TN>::BLayout = ((4,8),(2,4)):((16,1),(8,64))"},
    ("m16n8k64", "8bit"): {"formula": _B_HEAD + "row = (threadID_in_group * 4) + (i & 0x3) + (16 * (i >> 2))\ncol = groupID\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x64_S32S8S8S32_TN>::BLayout = ((4,8),(4,4)):((32,1),(8,128))"},
    ("m16n8k128", "4bit"): {"formula": _B_HEAD + "row = (threadID_in_group * 8) + (i & 0x7) + (32 * (i >> 3))\ncol = groupID\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x128_S32S4S4S32_TN>::BLayout = ((4,8),(8,4)):((64,1),(8,256))"},
    ("m16n8k16", "tf32"): {"formula": _B_HEAD + "row = threadID_in_group + (i * 4) for bi where i < 4\ncol = groupID\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x16_F32TF32TF32F32_TN>::BLayout = ((4,8),4):((8,1),32)"},
}


def _b_family(types: Sequence[str], per_register: int | None) -> str:
    """B's storage family, from its types and how many share a .b32 (fp4 is 8-bit under
    kind::f8f6f4, 4-bit under mxf4)."""
    if set(types) <= {"f16", "bf16"}:
        return "16bit"
    if set(types) <= {"tf32"}:
        return "tf32"
    return {4: "8bit", 8: "4bit"}.get(per_register or 0, "") if set(types) <= {
        "u8", "s8", "u4", "s4", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1"} else ""


def _type_family(types: Sequence[str], kept: int, chunk: int) -> str:
    """Storage family of A: the fp8/fp6/fp4 kinds share the 8-bit (2:4) or 4-bit (4:8) scheme."""
    if set(types) <= {"f16", "bf16"}:
        return "16bit"
    if set(types) <= {"tf32"}:
        return "tf32"
    if set(types) <= {"u8", "s8", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1"} and (kept, chunk) == (2, 4):
        return "8bit"
    if set(types) <= {"u4", "s4", "e2m1"} and (kept, chunk) == (4, 8):
        return "4bit"
    return ""


def derived_metadata(shape: str, types: Sequence[str], kept: int, chunk: int) -> tuple[tuple[str, Any], ...]:
    """The derived metadata keys of a sparse A fragment's ``[fragment.sparse]`` table (or none)."""
    d = DERIVED_METADATA.get((shape, _type_family(types, kept, chunk)))
    if d is None:
        return ()
    return (("selectors", list(d["selectors"])), ("selector", d["selector"]), ("metadata", d["metadata"]),
            ("metadata_derived", f"{_CUTE}: {d['why']}. The order of chunks inside a word (LSB first) is our "
                                 "reading; the doc shows the mapping only in a figure."))


# ----------------------------------------------------------------------------- reviewed errata

# Errata that the text checks cannot repair by themselves, reviewed by reading the page against
# the figures and the neighbouring shapes.  An entry names its section by what the section states (the
# instruction and shape of its title, never its number, which moves between releases); "doc" must occur in the
# doc formula (spaces compared as runs: exports differ in how they keep the formula's alignment); when the doc
# is fixed the entry no longer applies and an info finding says so.
REVIEWED_ERRATA: tuple[dict[str, Any], ...] = (
    {
        "instruction": "mma", "shape": "m16n8k256", "operand": "A",
        "doc": "(threadID_in_group * 32) + i for ai where i < 64",
        "fixed": "(threadID_in_group * 32) + (i & 0x1F) for ai where i < 64",
        "expect": {"injective": "refuted", "surjective": "refuted"},
        "erratum": "col of a32..a63 lacks '& 0x1F' (compare a64..a127 and mma.m16n8k128): lanes collide "
                   "and columns 0..31 of rows groupID + 8 are never covered",
    },
)


def find_doc_text(formula: str, doc: str) -> re.Match[str] | None:
    """Where the reviewed words ``doc`` occur in a doc formula, each run of spaces matching any run."""
    return re.search(r"\s+".join(re.escape(w) for w in doc.split()), formula)
