"""The records a layout is identified and traced by: its ``Shape`` (M, N, K or a data-movement shape), its
``Source`` (the doc section and page line), its ``Provenance`` (the spec file, the formula's place, the reviewed
erratum, what the doc does not state) and a fragment's ``RegisterFacts`` (count, type, packing, the doc's element
list).  Immutable; ``verify.layout.model`` builds layouts of them."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .family import Extent


# ----------------------------------------------------------------------------- identity

@dataclass(frozen=True)
class Shape:
    """M, N, K of one MMA computation; a dimension may be a family's parameter (wgmma ``m64nNk16``)."""

    m: int | str
    n: int | str
    k: int | str

    text: str = ""  # a shape that is not mMnNkK (tcgen05 ``32x32b``): printed as written

    @staticmethod
    def parse(text: str) -> "Shape | None":
        """``m16n8k16`` (``m64nNk16`` in a family), ``m8n8`` (ldmatrix, stmatrix, movmatrix: no K) or a
        tcgen05 data-movement shape ``lanes x bits`` (``32x32b``, ``16x32bx2``: m = lanes, n = bits)."""
        m = re.fullmatch(r"m(\d+|[A-Z])n(\d+|[A-Z])k(\d+|[A-Z])", text)
        if m is not None:
            m_, n_, k_ = (int(x) if x.isdigit() else x for x in (m[1], m[2], m[3]))
            return Shape(m_, n_, k_)
        m = re.fullmatch(r"m(\d+)n(\d+)", text)
        if m is not None:
            return Shape(int(m[1]), int(m[2]), None)  # type: ignore[arg-type]
        m = re.fullmatch(r"(\d+)x(\d+)b(x2)?", text)
        if m is not None:
            return Shape(int(m[1]), int(m[2]), None, text)  # type: ignore[arg-type]
        return None

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(x for x in (self.m, self.n, self.k) if isinstance(x, str))

    def __str__(self) -> str:
        if self.text:
            return self.text
        if self.k is None:
            return f"m{self.m}n{self.n}"
        return f"m{self.m}n{self.n}k{self.k}"


@dataclass(frozen=True)
class Source:
    """Where a layout is stated: the doc section and page line (or the file it was written in)."""

    file: str
    line: int
    section: str
    title: str = ""
    document: str = "PTX ISA"
    version: str = ""
    anchor: str = ""
    seed: str = ""


@dataclass(frozen=True)
class Provenance:
    """Where a layout comes from: the doc section and page line it is stated at (``source``), the spec file and
    the place of its formula text there (a doc page's layout: the page position of each formula line,
    ``text_map``), the reviewed words of a known erratum, and what the doc does not state itself (``derived``:
    a figure, CUTLASS...; ``figure``), with the architecture it applies to."""

    source: Source
    spec_path: str = ""
    formula_line: int = 0  # line of the spec file where the formula text starts
    formula_text: str = ""
    text_map: tuple[tuple[int, int], ...] = ()  # doc-page layouts: page (line, column) of each formula line
    erratum: str = ""
    derived: str = ""  # provenance when the layout is not stated by the doc
    figure: str = ""
    arch: str = ""


@dataclass(frozen=True)
class RegisterFacts:
    """What the doc says of a fragment's registers: what the count, packing and element-list checks read."""

    count: Extent  # registers per thread (a family's: an extent over its parameters)
    type: str  # the register's PTX type (``b32``, ``f16x2``, ...)
    elements_per_register: int
    element_list: tuple[str, ...] | None = None  # the doc's list, verbatim tokens; None if absent
    elements_text: str | None = None  # the list as the doc writes it (a family's: a template)
    element_bits: int | None = None
