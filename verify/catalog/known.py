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
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from ..results.diff import Named

if TYPE_CHECKING:  # pages are parsed by the callers: naming sections costs a spec-file check nothing
    from .page_model import Page, Section


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
    Known("wgmma.fragments", (), "Matrix Fragments for wgmma.mma_async", prefix=True),
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
    Known("tcgen05.zero_column", ("tcgen05-zero-column-mask-descriptor",), "Zero-Column Mask Descriptor"),
    Known("tcgen05.lbo", ("tcgen05-leading-dimension-byte-offset",),
          "Leading Dimension Stride: relative offset or absolute address"),
    Known("tcgen05.lbo.absolute", ("tcgen05-leading-dimension-byte-offset-absolute-address-restriction",),
          "Restrictions on the Leading Dimension Absolute Address Stride"),
    Known("tcgen05.fragments", (), "Matrix fragments for shape", prefix=True),
    Known("tcgen05.packing", ("tcgen05-packing-formats",), "Packing formats of elements in Tensor and Shared memory"),
    Known("tcgen05.packing.part", (), "Packing format", prefix=True),
    Known("mma.block_scaling", ("warp-level-block-scaling",), "Block Scaling", prefix=True),
    Known("tcgen05.datapath", ("tcgen05-data-path-layout-organization",), "Data Path Layout Organization"),
    Known("tcgen05.datapath.layout", (), "Layout", prefix=True, within="tcgen05.datapath"),
    Known("tcgen05.scale_a", ("tcgen05-mma-scale-factor-a",), "Layout of the Scale Factor A Matrix", prefix=True),
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




def release_key(release: str) -> tuple[int, ...]:
    """``"9.1"`` -> (9, 1), for comparing releases ("" is no release: ())."""
    return tuple(int(x) for x in release.split(".") if x.isdigit())


def applies(source: Any, release: str) -> bool:
    """A fact with ``source`` (a ``Source``: its document and version) applies to PTX release ``release``: it was
    stated by then. A fact of another document (CUTLASS, a Triton tutorial: its version is that document's, not a
    PTX release), a fact with no release, or no release asked for always applies."""
    version = source.version
    if source.document != "PTX ISA" or not version or not release:
        return True
    return release_key(version) <= release_key(release)


# ----------------------------------------------------------------------------- two releases' sections paired

def names_of(pages: Iterable[Page]) -> tuple[Named, ...]:
    """Every section of the pages (each number once, anchors resolved as ``SectionIndex`` does), in number order."""
    index = SectionIndex(pages)
    return tuple(sorted((Named(f.number, f.section.heading.title.replace("\uf0c1", "").strip(), f.section.heading.anchor)
                         for f in index), key=lambda n: _number_key(n.number)))


def pair_sections(old: Sequence[Named], new: Sequence[Named]) -> list[tuple[Named, Named]]:
    """The sections of two releases that are one section, matched by what they say: first by anchor (each
    anchor once on each side), then by title where the title is one section's on each side, then a title
    several sections share by its parent's pair (the sections under two paired sections), and last the same
    number on both sides where one title starts the other, or the two differ in digits only (a title still
    shared, one lengthened: "Block Scaling" became "Block Scaling for mma.sync", the version page's "PTX ISA
    Version 9.0"; nothing says otherwise).  In ``old``'s order."""
    pairs: dict[str, str] = {}  # old number -> new number
    taken: set[str] = set()

    def add(a: Named, b: Named) -> None:
        if a.number not in pairs and b.number not in taken:
            pairs[a.number] = b.number
            taken.add(b.number)

    def unique(items: Iterable[Named], key: Callable[[Named], str]) -> dict[str, Named]:
        seen: dict[str, list[Named]] = {}
        for n in items:
            if key(n):
                seen.setdefault(key(n), []).append(n)
        return {k: v[0] for k, v in seen.items() if len(v) == 1}

    anchor = lambda n: n.anchor  # noqa: E731
    title = lambda n: squeeze(n.title)  # noqa: E731
    by_new = unique(new, anchor)
    for k, a in unique(old, anchor).items():
        if k in by_new:
            add(a, by_new[k])
    left_old = [n for n in old if n.number not in pairs]
    left_new = [n for n in new if n.number not in taken]
    by_new = unique(left_new, title)
    for k, a in unique(left_old, title).items():
        if k in by_new:
            add(a, by_new[k])
    changed = True
    while changed:  # a shared title under paired parents
        changed = False
        for a in old:
            if a.number in pairs:
                continue
            up = pairs.get(_parent(a.number))
            if up is None:
                continue
            hits = [b for b in new if b.number not in taken and _parent(b.number) == up and title(b) == title(a)]
            if len(hits) == 1:
                add(a, hits[0])
                changed = True
    new_at = {n.number: n for n in new}
    for a in old:  # the same number, and one title the other's start ("Block Scaling" / "... for mma.sync")
        b = new_at.get(a.number)
        if a.number not in pairs and b is not None and b.number not in taken and title(a) and title(b) and \
                (title(a).startswith(title(b)) or title(b).startswith(title(a))
                 or re.sub(r"\d", "", title(a)) == re.sub(r"\d", "", title(b))):  # "PTX ISA Version 9.0" / "9.1"
            add(a, b)
    return [(a, new_at[pairs[a.number]]) for a in old if a.number in pairs]


__all__ = ["KNOWN", "Found", "Known", "Named", "SectionIndex", "applies", "names_of", "pair_sections", "release_key",
           "release_of", "squeeze"]
