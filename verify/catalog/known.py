"""The doc sections the tool reads, found by what they say, not by their number or their file's name.

Section numbers move from release to release (tcgen05 is 9.7.16 in PTX ISA 9.0, 9.7.17 in 9.3, 9.7.18 in 9.4),
and file names are whatever an export chose; a section's *anchor* (``#asynchronous-warpgroup-level-canonical-
layouts``) is the steadiest name it has, then its *title*.  A ``Known`` section is one the readers use (the wgmma
canonical layouts, the tcgen05 descriptor page, the ldmatrix instruction ...): found by one of its anchors, or,
where a page gives a heading no anchor, by its title, squeezed to letters and digits so that an export that
lost the spaces around code (``usingmmainstruction``) still matches.  A title several chapters share
(``Canonical Layouts`` is wgmma's and tcgen05's) names its chapter: ``within`` is a known section whose number
the section's number extends, in the same release (numbers are compared only inside one release).

``SectionIndex`` holds the sections of a set of pages (one release): each section number once (its first copy),
a bare heading given the anchor another page links it by (a per-section page and its parent).  Nothing here
reads a file; the callers pass parsed pages.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from .docpage import Page, Section


def squeeze(title: str) -> str:
    """A title as letters and digits only, lower case: ``Matrix multiply-accumulate operation usingmmainstruction``
    and ``... using mma instruction`` are one title."""
    return re.sub(r"[^a-z0-9]+", "", title.replace("\uf0c1", "").lower())


@dataclass(frozen=True)
class Known:
    """A section the readers use: its anchors (any release's), its title, and the known section it lies in
    where the title alone is ambiguous.  ``prefix``: the title is a prefix (a family of sections)."""

    role: str
    anchors: tuple[str, ...] = ()
    title: str = ""
    within: str = ""
    prefix: bool = False

    def title_matches(self, title: str) -> bool:
        want, got = squeeze(self.title), squeeze(title)
        return bool(want) and (got.startswith(want) if self.prefix else got == want)


KNOWN: dict[str, Known] = {k.role: k for k in (
    # mma (9.7.14.x in 9.0 and 9.1)
    Known("wmma.fragments", ("warp-level-matrix-fragment",), "Matrix Fragments for WMMA"),
    Known("wmma.load", ("warp-level-matrix-instructions-wmma-ld",), "Warp-level Matrix Load Instruction: wmma.load"),
    Known("wmma.store", ("warp-level-matrix-instructions-wmma-st",), "Warp-level Matrix Store Instruction: wmma.store"),
    Known("wmma.mma", ("warp-level-matrix-instructions-wmma-mma",),
          "Warp-level Matrix Multiply-and-Accumulate Instruction: wmma.mma"),
    Known("ldmatrix", ("warp-level-matrix-instructions-ldmatrix",), "Warp-level matrix load instruction: ldmatrix"),
    Known("stmatrix", ("warp-level-matrix-instructions-stmatrix",), "Warp-level matrix store instruction: stmatrix"),
    Known("movmatrix", ("warp-level-matrix-instructions-movmatrix",),
          "Warp-level matrix transpose instruction: movmatrix"),
    # wgmma (9.7.15.x)
    Known("wgmma.mma_async", ("asynchronous-warpgroup-level-matrix-instructions-wgmma-mma",),
          "Asynchronous Multiply-and-Accumulate Instruction: wgmma.mma_async"),
    Known("wgmma.mma_async.sp", ("asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-sp",),
          "Asynchronous Multiply-and-Accumulate Instruction: wgmma.mma_async.sp"),
    Known("wgmma.sp.fragments", (), "Matrix Fragments for sparse wgmma.mma_async", prefix=True),
    Known("wgmma.shared", ("asynchronous-warpgroup-level-matrix-shared-memory-layout",), "Shared Memory Matrix Layout"),
    Known("wgmma.shared.lbo", ("asynchronous-warpgroup-level-leading-dimension-byte-offset",),
          "Leading Dimension Byte Offset", within="wgmma.shared"),
    Known("wgmma.shared.sbo", ("asynchronous-warpgroup-level-stride-dimension-byte-offset",),
          "Stride Dimension Byte Offset", within="wgmma.shared"),
    Known("wgmma.shared.canonical", ("asynchronous-warpgroup-level-canonical-layouts",), "Canonical Layouts",
          within="wgmma.shared"),
    Known("wgmma.shared.descriptor", ("asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor",),
          "Matrix Descriptor Format", within="wgmma.shared"),
    # tcgen05 (9.7.16.x in 9.0 and 9.1)
    Known("tcgen05.valid", ("tcgen05-matrix-layout-organization-valid-comb-type-size-majorness-swizzle",),
          "Valid Combinations of Type-Size, Major-ness and Swizzling"),
    Known("tcgen05.swizzle", ("tcgen05-shared-memory-layout-swizzling",), "Shared Memory Layout and Swizzling"),
    Known("tcgen05.descriptors", ("tcgen05-matrix-descriptors",), "Matrix Descriptors"),
    Known("tcgen05.descriptor", ("tcgen05-shared-memory-descriptor",), "Shared memory descriptor"),
    Known("tcgen05.lbo", ("tcgen05-leading-dimension-byte-offset",),
          "Leading Dimension Stride: relative offset or absolute address"),
    Known("tcgen05.lbo.absolute", ("tcgen05-leading-dimension-byte-offset-absolute-address-restriction",),
          "Restrictions on the Leading Dimension Absolute Address Stride"),
    # titles wgmma's sections share: found by anchor only
    Known("tcgen05.sbo", ("tcgen05-stride-dimension-byte-offset",)),
    Known("tcgen05.canonical", ("tcgen05-canonical-layouts",)),
    Known("tcgen05.scale_b", ("tcgen05-mma-scale-factor-b",), "Scale Factor B ID"),
    Known("tcgen05.scale_b.layouts", (), "Layout of the Scale Factor B Matrix", prefix=True),
    # the release's version page
    Known("version", ("ptx-isa-version",), "PTX ISA Version", prefix=True),
)}


def _parent(number: str) -> str:
    return number.rsplit(".", 1)[0] if "." in number else ""


@dataclass(frozen=True)
class Found:
    """A section of the pages with the page it is on."""

    section: Section
    page: Page

    @property
    def number(self) -> str:
        return self.section.number


class SectionIndex:
    """The sections of the pages of one release, each number once (its first copy), a bare heading given the
    anchor another page links the same number by."""

    def __init__(self, pages: Iterable[Page]) -> None:
        first: dict[str, Found] = {}
        anchors: dict[str, str] = {}
        for p in pages:
            for s in p.sections:
                first.setdefault(s.number, Found(s, p))
                if s.heading.anchor:
                    anchors.setdefault(s.number, s.heading.anchor)
        for n, f in list(first.items()):
            if not f.section.heading.anchor and n in anchors:
                heading = dataclasses.replace(f.section.heading, anchor=anchors[n])
                first[n] = Found(dataclasses.replace(f.section, heading=heading), f.page)
        self.sections = first

    def __iter__(self) -> Iterator[Found]:
        return iter(self.sections.values())

    def is_(self, found: Found, role: str) -> bool:
        """Does this section say it is the known section ``role``?  Its anchor, else its title (and, for a
        title of several chapters, a number under the chapter's)."""
        k = KNOWN[role]
        if found.section.heading.anchor in k.anchors:
            return True
        if not k.title_matches(found.section.heading.title):
            return False
        if not k.within:
            return True
        return any(found.number.startswith(up.number + ".") for up in self.all(k.within))

    def all(self, role: str) -> list[Found]:
        return [f for f in self if self.is_(f, role)]

    def find(self, role: str) -> Found | None:
        """The first section (in number order) that is ``role``, or None."""
        hits = self.all(role)
        return min(hits, key=lambda f: _number_key(f.number)) if hits else None

    def under(self, found: Found) -> list[Found]:
        """The sections whose numbers extend ``found``'s, in number order."""
        return sorted((f for f in self if f.number.startswith(found.number + ".")), key=lambda f: _number_key(f.number))

    def parent(self, found: Found) -> Found | None:
        return self.sections.get(_parent(found.number))


def _number_key(number: str) -> tuple[int, ...]:
    return tuple(int(x) for x in number.split(".") if x.isdigit())


def release_of(pages: Iterable[Page]) -> str:
    """The release the pages state: the title of their version page (``1.3. PTX ISA Version 9.1``); where no
    version page is among them, the ``ptx-isa-X.Y`` of a page's directory (how the exports here are saved);
    else ""."""
    pages = list(pages)
    for p in pages:
        for s in p.sections:
            m = re.fullmatch(r"PTX ISA Version (\d+\.\d+)", s.heading.title.replace("\uf0c1", "").strip())
            if m:
                return m.group(1)
    for p in pages:
        m = re.search(r"ptx-isa-(\d+\.\d+)", p.path)
        if m:
            return m.group(1)
    return ""


__all__ = ["KNOWN", "Found", "Known", "SectionIndex", "release_of", "squeeze"]
