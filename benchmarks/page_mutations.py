"""Seeded one-token changes of the doc pages the catalog cites, judged by an independent reading (issue 41).

For each page, ``STATEMENTS`` lists the statements it makes about a layout (page line, the span of the line the
statement is, and how to read it).  Every one-token change of a statement's span is a *mutant*: a number changed
(``8x8`` -> ``9x8``, ``X = N/2 - 4`` -> ``- 5``), a number word (``four`` -> ``two``), a word of the layout
vocabulary (``row`` -> ``column``, ``LBO`` -> ``SBO``, ``MN`` -> ``K``, ``.f16`` -> ``.f32``), a coefficient of one
written or dropped (``1T`` <-> ``T``).  A seeded sample of them is drawn per statement.

Whether a mutant changes what the statement says is decided here, by this file's own reading of the statement
(nothing of ``verify`` is imported): a CuTe layout is evaluated at every point and parameter value
(``Swizzle<0,4,3>`` and ``Swizzle<0,5,3>`` are both the identity; the stride of a size-1 mode is no part of the
map), an element list with its ``X = N/2 - 4`` names is expanded for every N, a set of valid N is expanded; any
other statement means its words, so every change of a number or a word changes it.

Each mutant page is then given alone to ``ptx-verify check PAGE --format json`` (in this process, the tree of
``--root``) and its answer classified:

* a changed statement is **noticed** when the run exits 1 with a finding at the changed line; **fixes an erratum**
  when the run exits 0 and a known erratum the original page has at that line is no longer reported (the change
  made the statement say what the reviewed record says); **warning** when
  it exits 0 with a new warning there; **elsewhere** when it exits 1 with no finding at that line; **unnoticed**
  when it exits 0 and nothing new is said; **refused** when it exits 2;
* an equivalent change is **quiet** when the run exits 0 and says nothing the original page does not; else a
  **false alarm**.

    .venv/bin/python benchmarks/page_mutations.py [--docs ../shared/ptx-isa-9.0] [--per 3] [--seed 41]
                                                  [--page NAME ...] [--root DIR] [--json] [--show]

``--root DIR`` checks with the source tree at DIR (e.g. an export of the tree before a change) in a child
process, so a before and an after are measured alike.  Prints the figures per page; ``--show`` lists every
mutant that was not noticed (or that raised a false alarm).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT.parent / "shared" / "ptx-isa-9.0"

# ----------------------------------------------------------------------------- the pages' statements

WG = "9-7-15-5-1-1-register-fragments.md"
LDM = "9-7-14-5-15-warp-level-matrix-load-instruction-ldmatrix.md"
STM = "9-7-14-5-16-warp-level-matrix-store-instruction-stmatrix.md"
MOV = "9-7-14-5-17-warp-level-matrix-transpose-instruction-movmatrix.md"
PACK = "9-7-16-10-4-packing-formats-of-elements-in-tensor-and-shared-memory.md"
T52 = "9-7-16-10-3-valid-combinations-of-type-size-major-ness-and-swizzling.md"
T53 = "9-7-16-10-6-shared-memory-layout-and-swizzling.md"
SMEM = "9-7-15-5-1-2-shared-memory-matrix-layout.md"
WGSP1 = "9-7-15-6-2-1-matrix-fragments-for-sparse-wgmma-mma-async-m64nnk32.md"
WGSP2 = "9-7-15-6-2-2-matrix-fragments-for-sparse-wgmma-mma-async-m64nnk16.md"
WGSP3 = "9-7-15-6-2-3-matrix-fragments-for-sparse-wgmma-mma-async-m64nnk64.md"
TMEM = "9-7-16-2-3-1-memory-layout.md"


@dataclass(frozen=True)
class Statement:
    page: str
    line: int
    span: str          # a regular expression: its first match on the line is the statement's text
    reading: str = "words"  # how the statement is read: words | elements | nset | cute | exact:BITS


def _rows(page: str, spec: list[tuple[int, str] | tuple[int, str, str]]) -> list[Statement]:
    return [Statement(page, s[0], s[1], s[2] if len(s) > 2 else "words") for s in spec]  # type: ignore[misc]


_D_LIST = r"d0, d1, d2, d3, …, dX, dY, dZ, dW\s+where\s+`X = N/2\s*-\s*4`\s+`Y = N/2\s*-\s*3`\s+`Z = N/2\s*-\s*2`\s+`W = N/2\s*-\s*1`"
_NSET = r"`N = 8\*i where i = \{[^}]*\}`(?:\s+`= 16\*i where i = \{[^}]*\}`)?"

STATEMENTS: list[Statement] = [
    # wgmma register fragments (9.7.15.5.1.1)
    *_rows(WG, [
        (6, r"wgmma\.mma_async\.m64nNk16(?=`\]\()"), (8, r"`wgmma\.mma_async\.m64nNk16`"), (9, r"`\.m64nNk16`"),
        (15, r"Multiplicand A"), (17, r"\.atype"),
        (19, r"`\.f16`/`\.bf16`(?= \|)"),
        (19, r"containing four `\.f16x2` registers, with each register containing two `\.f16`/ `\.bf16` elements from matrix A"),
        (19, r"a0, a1, a2, a3, a4, a5, a6, a7", "elements"),
        (26, r"WGMMA \.m64nNk16 register fragment layout for matrix A"),
        (27, r"Accumulator D"), (29, r"\.dtype"),
        (31, r"(?<=\| )`\.f16`"), (31, r"containing N/4 number of `\.f16x2` registers, with each register containing two `\.f16` elements from matrix D"),
        (31, _D_LIST, "elements"), (31, _NSET, "nset"),
        (32, r"`\.f32`"), (32, r"containing N/2 number of `\.f32` registers"),
        (39, r"WGMMA \.m64nNk16 register fragment layout for accumulator matrix D"),
        (41, r"wgmma\.mma_async\.m64nNk8(?=`\]\()"), (43, r"`wgmma\.mma_async\.m64nNk8`"),
        (49, r"Multiplicand A"),
        (53, r"`\.tf32`(?= \|)"), (53, r"containing four `\.b32` registers containing four `\.tf32` elements from matrix A"),
        (53, r"a0, a1, a2, a3", "elements"),
        (60, r"WGMMA \.m64nNk8 register fragment layout for matrix A"),
        (61, r"Accumulator D"),
        (65, r"`\.f32`(?= \|)"), (65, r"containing N/2 number of `\.f32` registers"),
        (65, _D_LIST, "elements"), (65, _NSET, "nset"),
        (74, r"wgmma\.mma_async\.m64nNk32(?=`\]\()"), (77, r"`\.m64nNk32`"),
        (83, r"Multiplicand A"),
        (87, r"`\.s8`/`\.u8`"), (87, r"containing four `\.b32` registers, with each register containing four `\.u8`/ `\.s8` elements from matrix A"),
        (87, r"a0, a1, a2, a3, … , a14, a15", "elements"),
        (88, r"`\.e4m3`/ `\.e5m2`(?= \|)"),
        (88, r"containing four `\.b32` registers, with each register containing four `\.e4m3`/ `\.e5m2` elements from matrix A"),
        (96, r"Accumulator D"),
        (100, r"`\.s32`"), (100, r"containing N/2 number of `\.s32` registers"), (100, _D_LIST, "elements"),
        (100, _NSET, "nset"),
        (101, r"`\.f32`"), (101, r"containing N/2 number of `\.f32` registers"), (101, _NSET, "nset"),
        (102, r"`\.f16`"), (102, r"containing N/4 number of `\.f16x2` registers, with each register containing two `\.f16` elements from matrix D"),
        (109, r"WGMMA \.m64nNk32 register fragment layout for accumulator matrix D"),
        (111, r"wgmma\.mma_async\.m64nNk256(?=`\]\()"), (113, r"`wgmma\.mma_async\.m64nNk256`"),
        (124, r"`\.b1`"), (124, r"containing four `\.b32` registers, with each register containing thirty two `\.b1` element from matrix A"),
        (124, r"a0, a1, a2, …, a127", "elements"),
        (131, r"WGMMA \.m64nNk256 register fragment layout for matrix A"),
        (136, r"`\.s32`"), (136, r"containing N/2 number of `\.s32` registers"), (136, _D_LIST, "elements"),
        (136, _NSET, "nset"),
    ]),
    # ldmatrix (9.7.14.5.15)
    *_rows(LDM, [
        (14, r"ldmatrix\.sync\.aligned\.m8n16\.num\{\.ss\}\.dst_fmt\.src_fmt"),
        (16, r"ldmatrix\.sync\.aligned\.m16n16\.num\.trans\{\.ss\}\.dst_fmt\.src_fmt"),
        (20, r"\.shape += \{[^}]*\}"), (22, r"\.num += \{[^}]*\}"), (26, r"\.type += \{[^}]*\}"),
        (28, r"\.dst_fmt = \{[^}]*\}"), (30, r"\.src_fmt = \{[^}]*\}"),
        (42, r"holds 16-bit or 8-bit or 6-bit or 4-bit data"),
        (48, r"`\.m8n8` \| 8x8 \| 16-bit"), (49, r"`\.m16n16` \| 16x16 \| 8-bit or 6-bit or 4-bit"),
        (50, r"`\.m8n16` \| 8x16 \| 6-bit or 4-bit"),
        (56, r"`\.b6x16_p32` \| `\.m8n16` \| 16 6-bit elements \| 32 bits \| `\.b8x16` \(16 8-bit elements\)"),
        (57, r"`\.m16n16`"),
        (58, r"`\.b4x16_p64` \| `\.m8n16` \| 16 4-bit elements \| 64 bits"), (59, r"`\.m16n16`"),
        (61, r"For `\.b6x16_p32` format source data is 16 unsigned 6-bit elements with 32 bits padding"),
        (62, r"For `\.b4x16_p64` format source data is 16 unsigned 4-bit elements with 64 bits padding"),
        (64, r"`\.x1`, `\.x2` and `\.x4` for `\.num` indicate one, two or four matrices"),
        (65, r"When `\.shape` is `\.m16n16`, only `\.x1` and `\.x2` are valid values for `\.num`"),
        (78, r"consisting of 1, 2, or 4 32-bit"),
        (84, r"The eight addresses required"), (85, r"provided by eight threads"),
        (86, r"Addresses addr0–addr7"), (87, r"addresses addr8–addr15"),
        (92, r"`\.x1` \| addr0–addr7 \| – \| – \| –"), (93, r"`\.x2` \| addr0–addr7 \| addr8–addr15 \| – \| –"),
        (94, r"`\.x4` \| addr0–addr7 \| addr8–addr15 \| addr16–addr23 \| addr24–addr31"),
        (90, r"Threads 0–7 \| Threads 8–15 \| Threads 16–23 \| Threads 24–31"),
        (102, r"When reading 8x8 matrices, a group of four consecutive threads loads 16 bytes"),
        (105, r"with thread 0 receiving the first fragment"), (106, r"A group of four threads loads an entire row"),
        (112, r"(?<=one )8x8 Matrix with 16-bit elements"),
        (114, r"When `\.num` = `\.x2`, the elements of the second matrix are loaded in the next destination"),
        (115, r"when `\.num` = `\.x4`"), (116, r"elements of the third and fourth matrices"),
        (119, r"For matrix shape 16x16, two destination registers `r0` and `r1` of type `\.b32`"),
        (120, r"in each register four 8-bit elements are loaded\. For 4-bit or 6-bit data, 8-bit"),
        (121, r"element will have 4 bits or 2 bits of padding"),
        (125, r"a group of four consecutive and aligned threads"),
        (126, r"loads 4 consecutive columns across 2 rows"),
        (132, r"(?<=one )16x16 matrix with 8-bit elements"),
        (134, r"For matrix shape 8x16, one destination register `r0` of type `\.b32` must be specified where four"),
        (135, r"8-bit elements are loaded in the register\. For 4-bit or 6-bit data, 8-bit element will have 4 bits"),
        (136, r"or 2 bits of padding"),
        (138, r"a group of four consecutive and aligned threads"), (139, r"loads 4 consecutive columns"),
        (144, r"(?<=one )8x16 matrix with 8-bit elements containing 4-bit/6-bit data"),
        (146, r"the matrix is loaded in column-major format"), (147, r"for 16x16 matrices, `\.trans` is mandatory"),
        (206, r"Load a single 8x8 matrix using 64-bit addressing"), (208, r"\.reg \.b64 addr"),
        (210, r"\.reg \.b32 d"), (212, r"ldmatrix\.sync\.aligned\.m8n8\.x1\.shared::cta\.b16 \{d\}"),
        (216, r"Load two 8x8 matrices in column-major format"), (220, r"\.reg \.b32 d<2>"),
        (222, r"ldmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared\.b16 \{d0, d1\}"),
        (226, r"Load four 8x8 matrices"), (230, r"\.reg \.b32 d<4>"),
        (232, r"ldmatrix\.sync\.aligned\.m8n8\.x4\.b16 \{d0, d1, d2, d3\}"),
        (236, r"Load one 16x16 matrices of 64-bit elements and transpose them"), (240, r"\.reg \.b32 d<2>"),
        (242, r"ldmatrix\.sync\.aligned\.m16n16\.x1\.trans\.shared\.b8 \{d0, d1\}"),
        (246, r"Load two 16x16 matrices of 64-bit elements and transpose them"), (250, r"\.reg \.b32 d<4>"),
        (252, r"ldmatrix\.sync\.aligned\.m16n16\.x2\.trans\.shared::cta\.b8 \{d0, d1, d2, d3\}"),
        (256, r"Load two 16x16 matrices of 6-bit elements and transpose them"), (260, r"\.reg \.b32 d<4>"),
        (262, r"ldmatrix\.sync\.aligned\.m16n16\.x2\.trans\.shared::cta\.b8x16\.b6x16_p32 \{d0, d1, d2, d3\}"),
    ]),
    # stmatrix (9.7.14.5.16)
    *_rows(STM, [
        (14, r"\.shape += \{[^}]*\}"), (16, r"\.num += \{[^}]*\}"), (20, r"\.type += \{[^}]*\}"),
        (31, r"holds 16-bit or 8-bit data"), (33, r"`\.m16n8` shape is valid only for `\.b8` type"),
        (35, r"`\.x1`, `\.x2` and `\.x4` for `\.num` indicate one, two or four matrices"),
        (49, r"consisting of 1, 2, or 4 32-bit"),
        (55, r"The eight addresses required"), (56, r"provided by eight threads"),
        (57, r"Addresses addr0–addr7"), (58, r"addresses addr8–addr15"),
        (61, r"Threads 0–7 \| Threads 8–15 \| Threads 16–23 \| Threads 24–31"),
        (63, r"`\.x1` \| addr0–addr7 \| – \| – \| –"), (64, r"`\.x2` \| addr0–addr7 \| addr8–addr15 \| – \| –"),
        (65, r"`\.x4` \| addr0–addr7 \| addr8–addr15 \| addr16–addr23 \| addr24–addr31"),
        (67, r"When storing 8x8 matrices, a group of four consecutive threads stores 16 bytes"),
        (70, r"with thread 0 storing the first fragment"), (71, r"A group of four threads stores an entire row"),
        (77, r"(?<=one )8x8 matrix with 16-bit elements"),
        (79, r"When `\.num` = `\.x2`, the elements of the second matrix are storedd from the next source register"),
        (80, r"when `\.num` = `\.x4`, elements of the"), (81, r"third and fourth matrices"),
        (83, r"For 16x8 matrix shape, each of the 32 threads in the warp provides four elements of data per matrix"),
        (85, r"of type `\.b32` and contains four 8 bit elements `e0`"), (86, r"`e1`, `e2`, `e3` with `e0` and `e3` containing the LSB and MSB"),
        (91, r"(?<=one )16x8 matrix with 8 bit elements"),
        (93, r"the matrix is stored in column-major format"), (94, r"for 16x8 matrices, `\.trans` is mandatory"),
        (137, r"Store a single 8x8 matrix using 64-bit addressing"), (139, r"\.reg \.b64 addr"),
        (141, r"\.reg \.b32 r"), (143, r"stmatrix\.sync\.aligned\.m8n8\.x1\.shared\.b16 \[addr\], \{r\}"),
        (147, r"Store two 8x8 matrices in column-major format"), (151, r"\.reg \.b32 r<2>"),
        (153, r"stmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared::cta\.b16 \[addr\], \{r0, r1\}"),
        (157, r"Store four 8x8 matrices"), (161, r"\.reg \.b32 r<4>"),
        (163, r"stmatrix\.sync\.aligned\.m8n8\.x4\.b16 \[addr\], \{r0, r1, r2, r3\}"),
        (167, r"Store a single 16x8 matrix"), (171, r"\.reg \.b32 r"),
        (173, r"stmatrix\.sync\.aligned\.m16n8\.x1\.trans\.shared\.b8 \[addr\], \{r\}"),
        (177, r"Store two 16x8 matrices"), (181, r"\.reg \.b32 r<2>"),
        (183, r"stmatrix\.sync\.aligned\.m16n8\.x2\.trans\.shared::cta\.b8 \[addr\],\{r0, r1\}"),
        (187, r"Store four 16x8 matrices"), (191, r"\.reg \.b32 r<4>"),
        (193, r"stmatrix\.sync\.aligned\.m16n8\.x4\.b8 \[addr\], \{r0, r1, r2, r3\}"),
    ]),
    # movmatrix (9.7.14.5.17)
    *_rows(MOV, [
        (10, r"movmatrix\.sync\.aligned\.shape\.trans\.type"), (14, r"\.shape += \{[^}]*\}"), (16, r"\.type += \{[^}]*\}"),
        (21, r"Move a row-major matrix"), (25, r"element holds 16-bit data"),
        (35, r"Operands `a` and `d` are 32-bit registers"), (36, r"The mandatory qualifier `\.trans`"),
        (39, r"Each thread in a warp holds a fragment of a row of the input matrix, with thread 0 holding the first"),
        (40, r"A group of four threads holds an entire row of the input"),
        (48, r"Each thread in a warp holds a fragment of a column of the result matrix, with thread 0 holding the"),
        (49, r"A group of four threads holds an entire column of the"),
        (68, r"\.reg \.b32 d, a"), (70, r"movmatrix\.sync\.aligned\.m8n8\.trans\.b16 d, a"),
    ]),
    # Tensor Memory packing (9.7.16.10.4, its subsections on one page)
    *_rows(PACK, [
        (5, r"The sub-word elements of matrix `D` are expected not to be packed within a 32-bit Tensor Memory word"),
        (6, r"if the type of elements of the matrix `D` is 16 bits then a Tensor Memory word"),
        (7, r"would contain a single 16-bit element in its lower 16 bits"),
        (11, r"The 6-bit and 4-bit floating point types"),
        (14, r"Packing format used for matrix A by `\.kind::mxf8f6f4` in Tensor Memory(?=\])"),
        (16, r"The individual 4-bit and the 6-bit floating point type elements must be packed in an 8-bit container"),
        (17, r"The 8-bit containers must be contiguously packed in a 32-bit Tensor"),
        (18, r"if the type of elements of the matrix `A` is 6 bits then 4 consecutive"),
        (19, r"`A` elements should be packed in one 32-bit Tensor Memory word"),
        (21, r"4-bit packing format"), (26, r"4-bit packing format with type E2M1"),
        (27, r"6-bit packing format"), (34, r"6-bit packing format with type E3M2"), (40, r"6-bit packing format with type E2M3"),
        (44, r"The 4-bit and 6-bit floating point elements"),
        (47, r"4-bit packing format"), (52, r"4-bit packing format"), (53, r"6-bit packing format"), (58, r"6-bit packing format"),
        (60, r"Packing format used for matrix A by `\.kind::mxf4` and `\.kind::mxf4nvf4` in Tensor Memory(?=\])"),
        (62, r"Two 4-bit floating point type elements must be packed in an 8-bit container in Tensor memory"),
        (68, r"4-bit packing format with type E2M1"),
        (72, r"The packing format for 4-bit floating point elements in shared memory is to pack two 4-bit"),
        (73, r"elements in a 8-bit container, with no padding"),
    ]),
    # Table 52 (9.7.16.10.3)
    *_rows(T52, [
        (12, r"4-bit, 6-bit, 8-bit, 16-bit, 32-bit \| Row \| A \| All swizzling modes"), (13, r"Column \| B"),
        (14, r"8-bit  16-bit \| Column \(transpose\) \| A \| All except 128B swizzling with 32B atomicity"),
        (15, r"Row \(transpose\) \| B"),
        (16, r"32-bit \| Column \(transpose\) \| A \| Only 128B swizzling with 32B atomicity"), (17, r"Row \(transpose\) \| B"),
    ]),
    # Table 53 and its arithmetic (9.7.16.10.6)
    *_rows(T53, [
        (17, r"A \| K-major \| M-major"), (18, r"B \| K-major \| N-major"),
        (36, r"128B Swizzling with 32B atomicity \| M/N \| 8x4"),
        (38, r"128B Swizzling with 16B atomicity \| M/N \| 8x8"), (39, r"K \| 8x8"),
        (40, r"64B Swizzling Mode \| M/N \| 4x8"), (41, r"K \| 8x4"),
        (42, r"32B Swizzling Mode \| M/N \| 2x8"), (43, r"K \| 8x2"),
        (44, r"None \| M/N \| 1x8"), (45, r"K \| 8x1"),
        (47, r"The above shapes are for elements of size 128 bits"),
        (48, r"multiplied along the leading dimension by a factor of `128 / sizeof_bits\(Element\)`"),
        (49, r"128B MN major swizzle atom would have a shape of \(8\\\*\(128/32\)\)x8 = 32x8"), (50, r"tf32"),
        (67, r"MN major 128B swizzling with 32B atomicity"), (73, r"MN major 128B swizzling"), (79, r"K major 128B swizzling"),
        (85, r"MN major 64B swizzling"), (91, r"K major 64B swizzling"), (97, r"MN major 32B swizzling"),
        (103, r"K major 32B swizzling"), (109, r"MN major no-swizzling"), (115, r"K major no-swizzling"),
    ]),
    # the wgmma shared-memory page (9.7.15.5.1.2)
    *_rows(SMEM, [
        (14, r"A \| K-major \| M-major"), (15, r"B \| K-major \| N-major"),
        (33, r"128B Swizzling Mode \| M/N \| 8x8"), (34, r"K \| 8x8"), (35, r"64B Swizzling Mode \| M/N \| 4x8"),
        (36, r"K \| 8x4"), (37, r"32B Swizzling Mode \| M/N \| 2x8"), (38, r"K \| 8x2"), (39, r"None \| M/N \| 1x8"),
        (40, r"K \| 8x1"),
        (42, r"The above shapes are for elements of size 128 bits"),
        (43, r"by a factor of `128/sizeof_bits\(Element\)`"), (44, r"`\(8\*\(128/32\)\)x8 = 32x8`"), (45, r"`tf32`"),
        (64, r"MN major 128B swizzling"), (70, r"K major 128B swizzling"), (76, r"MN major 64B swizzling"),
        (82, r"K major 64B swizzling"), (88, r"MN major 32B swizzling"), (94, r"K major 32B swizzling"),
        (100, r"MN major interleaved"), (106, r"K major interleaved"),
        (138, r"the offset from the first column to the second columns   of the 8x2 tile"),
        (138, r"Swizzled layouts: not used, assumed to be 1"),
        (139, r"Interleave: offset from the first 8 columns to the next 8 columns"),
        (139, r"offset from the first \(swizzle-byte-size/16\) rows   to the next \(swizzle-byte-size/16\) rows"),
        (149, r"The offset from the first 8 rows to the next 8 rows"),
        (150, r"Interleave: offset from the first row to the next row"),
        (150, r"Swizzled layout: offset from the first 8 columns to the next 8   columns"),
        *[(n, r"\|[^|]*\| \(\(.*", "cute") for n in (159, 163)],
        *[(n, r"\| \(\(.*", "cute") for n in (160, 161, 162, 164, 165, 166)],
        (170, r"T = 128 / sizeof-elements-in-bits"),
        (177, r"K-Major, no-swizzling and tf32 type"), (182, r"K major, no-swizzling and tf32 type"),
        (186, r"Swizzle<0,4,3> o \(\(8,2\),\(4,4\)\):\(\(4,32\),\(1,64\)\)", "exact:32"),
        (188, r"Swizzle<0,4,3> o \(\(8,m\),\(T,2k\)\):\(\(1T,SBO\),\(1,LBO\)\)", "cute"),
        (192, r"T \| 4"), (193, r"m \| 2"), (194, r"k \| 2"), (195, r"LBO \| 64\\\*sizeof\(tf32\)"),
        (196, r"SBO \| 32\\\*sizeof\(tf32\)"), (197, r"Encoding of LBO in descriptor \| \(LBO\) >> 4 = 16"),
        (198, r"Encoding of SBO in descriptor \| \(SBO\) >> 4 = 8"),
        (199, r"K-Major, 32B swizzling and tf32 type"), (204, r"K major, 32B swizzling and tf32 type"),
        (208, r"Swizzle<1,4,3> o \(\(8,2\),\(4,4\)\):\(\(8,64\),\(1,4\)\)", "exact:32"),
        (210, r"Swizzle<1,4,3> o \(\(8,m\),\(T,2k\)\):\(\(2T,SBO\),\(1,T\)\)", "cute"),
        (214, r"T \| 4"), (215, r"m \| 2"), (216, r"k \| 2"), (218, r"SBO \| 64\\\*sizeof\(tf32\)"),
        (219, r"Encoding of LBO in descriptor \| 1 \(assumed\)"), (220, r"Encoding of SBO in descriptor \| \(SBO\) >> 4 = 16"),
        (221, r"MN-Major, no-swizzling and bf16 type"), (226, r"MN major, no-swizzling and bf16 type"),
        (230, r"Swizzle<0,4,3> o \(\(8,1,2\),\(8,2\)\):\(\(1,8,64\),\(8,128\)\)", "exact:16"),
        (232, r"Swizzle<0,4,3> o \(\(T,1,m\),\(8,k\)\):\(\(1,T,SBO\),\(1T,LBO\)\)", "cute"),
        (236, r"T \| 8"), (237, r"m \| 2"), (238, r"k \| 2"), (239, r"LBO \| 128\\\*sizeof\(bf16\)"),
        (240, r"SBO \| 64\\\*sizeof\(bf16\)"), (241, r"Encoding of LBO in descriptor \| \(LBO\) >> 4 = 16"),
        (242, r"Encoding of SBO in descriptor \| \(SBO\) >> 4 = 8"),
        (243, r"MN-Major, 32B swizzling and bf16 type"), (248, r"MN major, 32B swizzling and bf16 type"),
        (252, r"Swizzle<1,4,3> o \(\(8,2,2\),\(8,2\)\):\(\(1,8,128\),\(16,256\)\)", "exact:16"),
        (254, r"Swizzle<1,4,3> o \(\(T,2,m\),\(8,k\)\):\(\(1,T,LBO\),\(2T,SBO\)\)", "cute"),
        (258, r"T \| 8"), (259, r"m \| 2"), (260, r"k \| 2"), (261, r"LBO \| 128\\\*sizeof\(bf16\)"),
        (262, r"SBO \| 256\\\*sizeof\(bf16\)"), (263, r"Encoding of LBO in descriptor \| \(LBO\) >> 4 = 16"),
        (264, r"Encoding of SBO in descriptor \| \(SBO\) >> 4 = 32"),
        (265, r"MN-Major, 64B swizzling and bf16 type"), (270, r"MN major, 64B swizzling and bf16 type"),
        (274, r"Swizzle<2,4,3> o \(\(8,4,2\),\(8,2\)\):\(\(1,8,256\),\(32,512\)\)", "exact:16"),
        (276, r"Swizzle<2,4,3> o \(\(T,4,m\),\(8,k\)\):\(\(1,T,LBO\),\(4T,SBO\)\)", "cute"),
        (280, r"T \| 8"), (281, r"m \| 2"), (282, r"k \| 2"), (283, r"LBO \| 256\\\*sizeof\(bf16\)"),
        (284, r"SBO \| 512\\\*sizeof\(bf16\)"), (285, r"Encoding of LBO in descriptor \| \(LBO\) >> 4 = 32"),
        (286, r"Encoding of SBO in descriptor \| \(SBO\) >> 4 = 64"),
        (291, r"It is a 64-bit value"),
        (296, r"13–0 \| 14 \| matrix-descriptor-encode\(Matrix start address\)"),
        (297, r"29–16 \| 14 \| matrix-descriptor-encode \(\[Leading dimension byte offset\]"),
        (298, r"45–32 \| 14 \| matrix-descriptor-encode \(\[Stride dimension byte offset\]"),
        (299, r"51–49 \| 3 \| Matrix base offset"),
        (300, r"63–62 \| 2 \| Specifies the swizzling mode to be used:   \* 0: No swizzle \* 1: 128-Byte swizzle \* 2: 64-Byte swizzle \* 3: 32-Byte swizzle"),
        (305, r"matrix-descriptor-encode\(x\) = \(x & 0x3FFFF\) >> 4"),
        (313, r"128-Byte swizzle \| 1024-Byte boundary"), (314, r"64-Byte swizzle \| 512-Byte boundary"),
        (315, r"32-Byte swizzle \| 256-Byte boundary"),
        (320, r"base offset = \(pattern start addr >> 0x7\) & 0x7"),
    ]),
    # sparse wgmma fragments (9.7.15.6.2.1-3)
    *_rows(WGSP1, [
        (1, r"m64nNk32"), (3, r"`wgmma\.mma_async\.m64nNk32`"), (4, r"`\.m64nNk32`"), (12, r"Multiplicand A, from registers"),
        (16, r"`\.f16` /  `\.bf16`(?= \|)"),
        (16, r"containing four `\.b32`  registers, with each register containing two  non-zero `\.f16` /`\.bf16` elements out of 4  "
             r"consecutive elements from matrix A"),
        (16, r"a0, a1, a2, a3, a4, a5, a6, a7", "elements"), (23, r"WGMMA \.m64nNk32 fragment layout for matrix A"),
        (24, r"Accumulator D"), (33, r"a `\.b32` register containing 16 2-bit vectors"), (34, r"non-zero element of a 4-wide chunk"),
    ]),
    *_rows(WGSP2, [
        (1, r"m64nNk16"), (3, r"`wgmma\.mma_async\.m64nNk16`"), (4, r"`\.m64nNk16`"), (12, r"Multiplicand A, from registers"),
        (16, r"`\.tf32`(?= \|)"),
        (16, r"containing four `\.b32`  registers, containing four non-zero `\.tf32`  elements out of eight consecutive elements  "
             r"from matrix A"),
        (16, r"a0, a1, a2, a3", "elements"), (23, r"WGMMA \.m64nNk16 fragment layout for matrix A"),
        (33, r"a `\.b32` register containing eight 4-bit vectors"), (34, r"non-zero element of a 2-wide chunk"),
    ]),
    *_rows(WGSP3, [
        (1, r"m64nNk64"), (3, r"`wgmma\.mma_async\.m64nNk64`"), (4, r"`\.m64nNk64`"), (12, r"Multiplicand A, from registers"),
        (16, r"`\.e4m3` /  `\.e5m2`(?= \|)"),
        (16, r"containing four `\.b32`  registers, with each register containing four  non-zero `\.e4m3` /`\.e5m2` elements out of  "
             r"eight consecutive elements from matrix A"),
        (16, r"a0, a1, a2, … , a15", "elements"),
        (17, r"`\.s8` /  `\.u8`(?= \|)"),
        (17, r"containing four `\.b32`  registers, with each register containing four  non-zero `\.s8` /`\.u8` elements out of  "
             r"eight consecutive elements from matrix A"),
        (24, r"WGMMA \.m64nNk64 fragment layout for matrix A"), (25, r"Accumulator D"),
        (35, r"two non-zero elements of a 4-wide chunk"),
    ]),
    # tcgen05.ld / st fragments (9.7.16.2.3.1)
    *_rows(TMEM, [x for n, shape, lanes, bits in ((5, "32x32b", 32, 32), (22, "16x64b", 16, 64), (39, "16x128b", 16, 128),
                                                   (56, "16x256b", 16, 256), (73, "16x32bx2", 16, 32))
                  for x in ((n, rf"shape \.{shape}(?=\])"), (n + 2, rf"`tcgen05\{{\.ld,\.st\}}\.{shape}`"),
                            (n + 6, r"containing `\.num` number of `\.b32` registers"),
                            (n + 8, rf"`tcgen05\{{\.ld,\.st\}}\.{shape}` will access {lanes} lanes"),
                            (n + 9, rf"\({bits} \\\* \.num\)-bits"))]),
]

PAGES = tuple(dict.fromkeys(s.page for s in STATEMENTS))

# ----------------------------------------------------------------------------- the independent reading

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "sixteen": 16, "thirty": 30}


class Unreadable(ValueError):
    """The statement no longer reads as one (a changed statement, whatever it was)."""


def _words(text: str) -> str:
    return " ".join(text.split())


def _expand_set(body: str) -> list[int]:
    """``1, 2, ... , 32`` -> 1..32 (an ellipsis continues the step of the two values before it)."""
    items = [x.strip() for x in body.split(",")]
    out: list[int] = []
    k = 0
    while k < len(items):
        it = items[k]
        if it in ("...", "…"):
            if len(out) < 2 or k + 1 >= len(items) or not items[k + 1].isdigit():
                raise Unreadable("an ellipsis with no run around it")
            step, end = out[-1] - out[-2], int(items[k + 1])
            if step <= 0 or (end - out[-1]) % step:
                raise Unreadable("an ellipsis whose run does not reach its end")
            out.extend(range(out[-1] + step, end, step))
        elif it.isdigit():
            out.append(int(it))
        else:
            raise Unreadable(f"{it!r} is not a number")
        k += 1
    return out


def read_nset(text: str) -> frozenset[int]:
    out: set[int] = set()
    if not re.match(r"`?N = ", text):
        raise Unreadable("a set of something else than N")
    for coef, body in re.findall(r"(\d+)\\?\*i where i = \{([^}]*)\}", text):
        out |= {int(coef) * v for v in _expand_set(body)}
    if not out:
        raise Unreadable("no set of N")
    return frozenset(out)


def read_elements(text: str) -> tuple[tuple[str, ...], ...]:
    """An element list for every N = 8, 16, ..., 256: ``dX`` with ``X = N/2 - 4`` named, ellipses filled."""
    head, _, where = text.partition("where")
    defs = {}
    for name, a, b in re.findall(r"([A-Z]) = N/(\d+)\s*-\s*(\d+)", where):
        defs[name] = (int(a), int(b))
    if where and len(defs) != len(re.findall(r"[A-Z] =", where)):
        raise Unreadable("a name whose value does not read")
    out = []
    for n in range(8, 257, 8):
        items = [x.strip() for x in re.split(r",", head) if x.strip()]
        names: list[int | str] = []
        for it in items:
            if it in ("…", "...", "… "):
                names.append("…")
                continue
            m = re.fullmatch(r"([a-z])(\d+|[A-Z])", it)
            if not m:
                raise Unreadable(f"{it!r} names no element")
            v = m.group(2)
            if v.isdigit():
                names.append(f"{m.group(1)}{int(v)}")
            elif v in defs:
                a, b = defs[v]
                names.append(f"{m.group(1)}{n // a - b}")
            else:
                raise Unreadable(f"{v} is not defined")
        full: list[str] = []
        for k, x in enumerate(names):
            if x == "…" and full and k + 1 < len(names):
                lo, hi = int(full[-1][1:]), int(str(names[k + 1])[1:])
                full.extend(f"{full[-1][0]}{j}" for j in range(lo + 1, hi))
            elif x != "…":
                full.append(str(x))
        out.append(tuple(full))
    return tuple(out)


_SYM = re.compile(r"(\d*)(T|m|k|LBO|SBO)?$")


def _leaf(tok: str, env: dict[str, int]) -> int:
    m = _SYM.match(tok.strip())
    if not m or (not m.group(1) and not m.group(2)):
        raise Unreadable(f"{tok!r} is no term")
    c = int(m.group(1)) if m.group(1) else 1
    return c * (env[m.group(2)] if m.group(2) else 1)


def _tuple(text: str) -> Any:
    """``((T,8,m),(8,k))`` -> nested lists of leaf strings."""
    stack: list[list[Any]] = [[]]
    tok = ""
    for ch in text.replace(" ", ""):
        if ch == "(":
            stack.append([])
        elif ch in ",)":
            if tok:
                stack[-1].append(tok)
                tok = ""
            if ch == ")":
                if len(stack) < 2:
                    raise Unreadable("unbalanced")
                done = stack.pop()
                stack[-1].append(done)
        else:
            tok += ch
    if tok or len(stack) != 1 or len(stack[0]) != 1:
        raise Unreadable("unbalanced")
    return stack[0][0]


def _flat(t: Any) -> list[str]:
    return [x for s in t for x in _flat(s)] if isinstance(t, list) else [t]


def _layout(text: str) -> tuple[Any, Any, tuple[int, int, int] | None]:
    sw = re.search(r"Swizzle\s*<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>", text)
    lay = re.search(r"(\(\(.*?\)\))\s*:\s*(\(\(.*\)\))", text)
    if not lay:
        raise Unreadable("no layout")
    shape, stride = _tuple(lay.group(1)), _tuple(lay.group(2))
    if not (isinstance(shape, list) and isinstance(stride, list) and len(shape) == 2 == len(stride)):
        raise Unreadable("not two modes")
    for s, d in zip(shape, stride):
        if len(_flat(s)) != len(_flat(d)):
            raise Unreadable("shape and stride are not congruent")
    return shape, stride, (int(sw.group(1)), int(sw.group(2)), int(sw.group(3))) if sw else None


def _offsets(shape: Any, stride: Any, env: dict[str, int]) -> list[int]:
    """Offsets of every (row, col) in order, coordinates split first mode fastest (CuTe's colexicographic order)."""
    modes = []
    for s, d in zip(shape, stride):
        sizes = [_leaf(x, env) for x in _flat(s)]
        strides = [_leaf(x, env) for x in _flat(d)]
        total = 1
        for z in sizes:
            total *= z
        if total > 1 << 14:
            raise Unreadable("too big")
        offs = []
        for c in range(total):
            o, rest = 0, c
            for z, st in zip(sizes, strides):
                o += (rest % z) * st
                rest //= z
            offs.append(o)
        modes.append(offs)
    return [r + c for r in modes[0] for c in modes[1]]


def _swizzled(offs: list[int], sw: tuple[int, int, int] | None, bytes_per: float) -> tuple[int, ...]:
    out = []
    for o in offs:
        x = int(o * bytes_per)
        if sw is not None:
            b, m, s = sw
            x ^= (x >> s) & (((1 << b) - 1) << m)
        out.append(x)
    return tuple(out)


def read_cute(text: str) -> tuple[Any, ...]:
    """A canonical layout (with its swizzle, on byte addresses) at every T, m, k of the catalog's families, LBO and
    SBO free (two values each); LBO of a K-major swizzled layout is 'not used, assumed 1': 16 bytes."""
    shape, stride, sw = _layout(text)
    out = []
    for T in (4, 8, 16):
        for m in (1, 2, 3):
            for k in (1, 2, 3, 4, 5):
                for lbo, sbo in ((997, 1999), (1999, 997)):
                    env = {"T": T, "m": m, "k": k, "LBO": lbo * T, "SBO": sbo * T}
                    out.append(_swizzled(_offsets(shape, stride, env), sw, 16 / T))
    return tuple(out)


def read_exact(text: str, bits: int) -> tuple[int, ...]:
    shape, stride, sw = _layout(text)
    return _swizzled(_offsets(shape, stride, {}), sw, bits / 8)


def read(statement: Statement, text: str) -> Any:
    kind = statement.reading
    if kind == "words":
        return _words(text)
    if kind == "elements":
        return read_elements(text)
    if kind == "nset":
        return read_nset(text)
    if kind == "cute":
        return read_cute(text)
    if kind.startswith("exact:"):
        return read_exact(text, int(kind.split(":")[1]))
    raise AssertionError(kind)


def meaning(statement: Statement, text: str) -> Any:
    try:
        return read(statement, text)
    except (Unreadable, ZeroDivisionError, KeyError, ValueError, IndexError) as e:
        return ("unreadable", type(e).__name__)


# ----------------------------------------------------------------------------- one-token changes

SWAPS = {
    "row": ("column",), "rows": ("columns",), "column": ("row",), "columns": ("rows",), "Row": ("Column",),
    "Column": ("Row",), "first": ("second",), "second": ("third",), "next": ("previous",), "lower": ("upper",),
    "LSB": ("MSB",), "MSB": ("LSB",), "LBO": ("SBO",), "SBO": ("LBO",), "MN": ("K",), "K": ("MN",), "M/N": ("K",),
    "A": ("B",), "B": ("A",), "D": ("C",), "All": ("Only",), "Only": ("All",), "except": ("and",),
    "f16": ("f32",), "bf16": ("f16",), "f32": ("f16",), "tf32": ("bf16",), "s32": ("f32",), "b32": ("b16",),
    "b16": ("b32",), "b8": ("b16",), "s8": ("u4",), "u8": ("s8",), "e4m3": ("e5m2",), "e5m2": ("e4m3",),
    "b1": ("b8",), "f16x2": ("f32",), "trans": ("cta",), "mandatory": ("optional",), "transpose": ("natural",),
    "consecutive": ("alternate",), "single": ("double",), "N": ("M",), "m": ("k",), "k": ("m",), "T": ("2T",),
    "E2M1": ("E3M2",), "E3M2": ("E2M1",), "E2M3": ("E2M1",), "not": ("also",),
    **{w: tuple(x for x in ("two", "four", "eight") if x != w)[:2] for w in ("one", "two", "four", "eight")},
    "thirty": ("sixteen",), "sixteen": ("eight",),
}


@dataclass(frozen=True)
class Mutant:
    statement: Statement
    col: int        # 0-based column of the token on the line
    old: str
    new: str

    def label(self) -> str:
        return f"{self.statement.page}:{self.statement.line}:{self.col + 1}: {self.old!r} -> {self.new!r}"


def _numbers(n: int) -> list[int]:
    out = [n + 1, n - 1 if n > 1 else n + 2, n * 2 if n > 1 else n + 3]
    return list(dict.fromkeys(v for v in out if v != n and v >= 0))


def candidates(statement: Statement, line: str) -> list[Mutant]:
    m = re.search(statement.span, line)
    if m is None:
        raise AssertionError(f"{statement.page}:{statement.line}: the span {statement.span!r} is not on the line {line!r}")
    start, text = m.start(), m.group(0)
    out: list[Mutant] = []
    for t in re.finditer(r"\d+|[A-Za-z][A-Za-z0-9/]*", text):
        tok, col = t.group(0), start + t.start()
        if tok.isdigit():
            out += [Mutant(statement, col, tok, str(v)) for v in _numbers(int(tok))]
            continue
        sub = re.fullmatch(r"([a-z]+)(\d+)", tok)  # a type or an element name: change its number
        if sub and tok not in SWAPS:
            base = col + len(sub.group(1))
            out += [Mutant(statement, base, sub.group(2), str(v)) for v in _numbers(int(sub.group(2)))[:2]]
        after = text[t.end():t.end() + 2]
        if tok in ("A", "B", "D") and re.fullmatch(r" [a-z]", after):
            continue  # the article ("A group of four threads"), not a matrix
        out += [Mutant(statement, col, tok, new) for new in SWAPS.get(tok, ())]
        if tok.endswith("T") and re.fullmatch(r"1T", tok):  # a coefficient of one, written or not
            out.append(Mutant(statement, col, "1T", "T"))
    if statement.reading == "cute":  # the coefficient one of a bare T, and the numbers of the swizzle, all kept
        for t in re.finditer(r"(?<=[(,])T(?=[,)])", text):
            out.append(Mutant(statement, start + t.start(), "T", "1T"))
    seen: set[tuple[int, str, str]] = set()
    uniq = []
    for mu in out:
        if (mu.col, mu.old, mu.new) not in seen and line[mu.col:mu.col + len(mu.old)] == mu.old:
            seen.add((mu.col, mu.old, mu.new))
            uniq.append(mu)
    return uniq


def mutants(docs: Path, per: int, seed: int, pages: tuple[str, ...] = PAGES) -> Iterator[tuple[Mutant, bool]]:
    """(mutant, whether it changes its statement), ``per`` drawn per statement (every equivalent one of a layout's
    statement kept), in page and line order."""
    rng = random.Random(seed)
    for st in STATEMENTS:
        if st.page not in pages:
            continue
        line = (docs / st.page).read_text(encoding="utf-8").splitlines()[st.line - 1]
        cands = candidates(st, line)
        m0 = re.search(st.span, line)
        assert m0 is not None
        before = meaning(st, m0.group(0))
        assert not (isinstance(before, tuple) and before[:1] == ("unreadable",)), f"{st}: {before}"
        judged = []
        for mu in cands:
            changed_line = line[:mu.col] + mu.new + line[mu.col + len(mu.old):]
            text = changed_line[m0.start(): m0.end() + len(mu.new) - len(mu.old)]
            judged.append((mu, meaning(st, text) != before))
        breaking = [x for x in judged if x[1]]
        same = [x for x in judged if not x[1]]
        chosen = rng.sample(breaking, min(per, len(breaking))) + (same if st.reading != "words" else [])
        yield from sorted(chosen, key=lambda x: (x[0].col, x[0].new))


# ----------------------------------------------------------------------------- running the tool

def _check(argv: list[str], root: Path) -> tuple[int, str]:
    if root == ROOT:
        from verify.cli import main
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:  # argparse
                rc = int(e.code or 0)
            except Exception as e:
                return -1, f"{type(e).__name__}: {e}"
        return rc, out.getvalue() if rc != 2 else err.getvalue()
    raise AssertionError("another tree is checked in a child process")


def _said(rc: int, out: str, page: str) -> set[tuple[str, int, str]]:
    """(severity, line, what) of everything the run says about ``page``: unexpected findings (error), doc findings."""
    if rc in (2, -1) or not out.strip().startswith("{"):
        return {("refused" if rc == 2 else "crash", 0, out.strip()[:200])}
    doc = json.loads(out)
    said: set[tuple[str, int, str]] = set()
    for f in doc.get("findings", []):
        m = re.match(r"^(.*?):(\d+):(\d+): ", f.get("message", ""))
        line = int(m.group(2)) if m and m.group(1).endswith(Path(page).name) else 0
        cex = f.get("counterexample") or {}
        if not line and isinstance(cex, dict) and str(cex.get("file", "")).endswith(Path(page).name):
            line = int(cex.get("line", 0))
        sev = "known" if f.get("as_expected") else "error"
        said.add((sev, line, re.sub(r"^.*?:\d+:\d+: ", "", f.get("message", ""))[:300]))
    for f in doc.get("doc_findings", []):
        said.add((f["severity"], int(f["line"]), f"{f['kind']}: {f['message']}"[:300]))
    return said


def quoted_back(what: str, changed: str, original: str, mu: Mutant) -> str:
    """``what`` (said at the changed line) with the line's text it quotes around the change put back as the page wrote
    it: a finding that quotes its statement (a warning naming the layout as written) is the same finding after an equivalent
    rewrite.  The quote is the longest run of the changed line around the change that ``what`` holds."""
    a, b = mu.col, mu.col + len(mu.new)
    if changed[a:b] not in what:
        return what
    while a > 0 and changed[a - 1:b] in what:
        a -= 1
    while b < len(changed) and changed[a:b + 1] in what:
        b += 1
    if b - a <= len(mu.new) + 2:  # too little context to be a quote of this statement
        return what
    return what.replace(changed[a:b], original[a:b - len(mu.new) + len(mu.old)])


def classify(mu: Mutant, breaks: bool, rc: int, said: set[tuple[str, int, str]], base: set[tuple[str, int, str]]) -> str:
    new = said - base
    line = mu.statement.line
    if rc == 2:
        return "refused"
    if rc == -1:
        return "crash"
    if breaks:
        if rc == 1 and any(s == "error" and ln == line for s, ln, _ in new):
            return "noticed"
        gone = base - said
        if rc == 0 and not new and any(s == "known" and ln == line for s, ln, _ in gone):
            return "fixes an erratum"  # a known erratum at that line is no longer said: the change made it right
        if rc == 1:
            return "elsewhere"
        if any(ln == line for _, ln, _ in new):
            return "warning"
        return "unnoticed"
    return "quiet" if rc == 0 and not new else "false alarm"


def run_tree(docs: Path, per: int, seed: int, pages: tuple[str, ...], show: bool) -> dict[str, Any]:
    """Every mutant of ``pages`` checked with this tree; figures per page (and the mutants, with ``show``)."""
    results: dict[str, dict[str, int]] = {}
    shown: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / docs.name  # the release is the directory's (ptx-isa-9.0)
        work.mkdir()
        for page in pages:
            original = (docs / page).read_text(encoding="utf-8")
            target = work / page
            target.write_text(original, encoding="utf-8")
            rc0, out0 = _check(["check", str(target), "--format", "json", "--jobs", "1"], ROOT)
            base = _said(rc0, out0, page)
            counts = results.setdefault(page, {"original_exit": rc0})
            lines = original.split("\n")
            for mu, breaks in mutants(docs, per, seed, (page,)):
                ln = mu.statement.line - 1
                changed = lines[:ln] + [lines[ln][:mu.col] + mu.new + lines[ln][mu.col + len(mu.old):]] + lines[ln + 1:]
                target.write_text("\n".join(changed), encoding="utf-8")
                rc, out = _check(["check", str(target), "--format", "json", "--jobs", "1"], ROOT)
                said = {(sev, n, quoted_back(what, changed[ln], lines[ln], mu) if n == ln + 1 else what)
                        for sev, n, what in _said(rc, out, page)}
                verdict = classify(mu, breaks, rc, said, base)
                counts[verdict] = counts.get(verdict, 0) + 1
                if show and verdict not in ("noticed", "quiet", "fixes an erratum"):
                    shown.append(f"{verdict:11} {mu.label()}")
            target.write_text(original, encoding="utf-8")
    return {"pages": results, "shown": shown}


CHANGED = ("noticed", "fixes an erratum", "warning", "elsewhere", "unnoticed", "refused", "crash")


def summary(results: dict[str, Any]) -> list[str]:
    rows = ["page                                                     changed: noticed fixed warning elsewhere unnoticed refused"
            " crash  | equivalent: quiet false-alarm"]
    tot: dict[str, int] = {}
    for page, c in results["pages"].items():
        for k, v in c.items():
            if k != "original_exit":
                tot[k] = tot.get(k, 0) + v
        changed = sum(c.get(k, 0) for k in CHANGED)
        same = c.get("quiet", 0) + c.get("false alarm", 0)
        rows.append(f"{page[:56]:56} {c.get('noticed', 0):4}/{changed:<4} {c.get('fixes an erratum', 0):5} {c.get('warning', 0):7} {c.get('elsewhere', 0):9} "
                    f"{c.get('unnoticed', 0):9} {c.get('refused', 0):7} {c.get('crash', 0):5}  | {c.get('quiet', 0):5}/{same:<4} "
                    f"{c.get('false alarm', 0):5}")
    changed = sum(tot.get(k, 0) for k in CHANGED)
    same = tot.get("quiet", 0) + tot.get("false alarm", 0)
    rows.append(f"{'all':56} {tot.get('noticed', 0):4}/{changed:<4} {tot.get('fixes an erratum', 0):5} {tot.get('warning', 0):7} {tot.get('elsewhere', 0):9} "
                f"{tot.get('unnoticed', 0):9} {tot.get('refused', 0):7} {tot.get('crash', 0):5}  | {tot.get('quiet', 0):5}/{same:<4} "
                f"{tot.get('false alarm', 0):5}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", default=str(DOCS))
    ap.add_argument("--per", type=int, default=3, help="changes drawn per statement (default 3)")
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--page", action="append", default=None, help="only this page (file name); repeat for more")
    ap.add_argument("--root", default=str(ROOT), help="the source tree to check with (default: this checkout)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", action="store_true", help="list every change not noticed, and every false alarm")
    a = ap.parse_args()
    docs = Path(a.docs).resolve()
    if not docs.is_dir():
        print(f"page_mutations: no pages at {docs}", file=sys.stderr)
        return 2
    pages = tuple(a.page) if a.page else PAGES
    root = Path(a.root).resolve()
    if root != ROOT:  # another tree: this file's reading, that tree's tool, in a child process
        env = {k: v for k, v in os.environ.items() if k != "PTX_DOCS_DIR"}
        env["PYTHONPATH"] = str(root)
        child = [sys.executable, "-c", _CHILD, str(Path(__file__).resolve()), str(root), str(docs), str(a.per), str(a.seed),
                 json.dumps(pages), "1" if a.show else "0"]
        r = subprocess.run(child, capture_output=True, text=True, env=env, cwd=str(root), check=False)
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            return 1
        results = json.loads(r.stdout)
    else:
        results = run_tree(docs, a.per, a.seed, pages, a.show)
    if a.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"pages: {docs}   tree: {root}   {a.per} change(s) per statement, seed {a.seed}")
    print("\n".join(summary(results)))
    for s in results["shown"]:
        print("  " + s)
    return 0


# the child that checks with another tree: ``verify`` there, this file's reading and mutants
_CHILD = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("page_mutations", sys.argv[1])
pm = importlib.util.module_from_spec(spec); sys.modules["page_mutations"] = pm; spec.loader.exec_module(pm)
from pathlib import Path
pm.ROOT = Path(sys.argv[2])
print(json.dumps(pm.run_tree(Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), tuple(json.loads(sys.argv[6])), sys.argv[7] == "1")))
"""


if __name__ == "__main__":
    sys.exit(main())
