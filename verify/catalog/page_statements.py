"""Every statement the cited doc pages make about a layout, read section by section (issue 41).

``read(pages)`` finds the sections the readers know (``verify.catalog.known``: by anchor or title, never by number)
and hands each to its reader; the readers return ``verify.layout.statements.Statement``s, one value at its words,
and judge nothing (``verify.checks.statements`` does):

* register fragments shown only as figures: wgmma, sparse wgmma, tcgen05.ld/st (``statements_fragments``);
* ldmatrix, stmatrix, movmatrix (``statements_matrix``);
* tcgen05's packing formats, Table 52 and Table 53, the wgmma shared-memory page (``statements_shared``).

``SUBJECT_PREFIXES`` says which reviewed specs a page's statements are judged by (``verify.catalog.pages``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..layout.statements import Statement
from .page_model import Page, Section
from .known import SectionIndex
from .statement_text import Sink
from .statements_fragments import read_fragment_section, read_tmem_section
from .statements_matrix import read_matrix_section
from .statements_other import read_block_scaling, read_datapath, read_scale_factor_a, read_wmma
from .statements_shared import read_atoms, read_canonical, read_definitions, read_descriptor, read_examples, read_packing, read_valid


def _wgmma(sink: Sink, sec: Section) -> None:
    read_fragment_section(sink, sec, "wgmma")


def _wgmma_sparse(sink: Sink, sec: Section) -> None:
    read_fragment_section(sink, sec, "wgmma.sp", sparse=True)


def _canonical(sink: Sink, sec: Section) -> None:
    read_atoms(sink, sec, "wgmma")
    read_canonical(sink, sec)
    read_examples(sink, sec)


# (known section, its reader, the ids of the reviewed layouts and maps its statements are judged by: prefixes)
READERS: tuple[tuple[str, Callable[[Sink, Section], None], tuple[str, ...]], ...] = (
    ("wgmma.fragments", _wgmma, ("wgmma.m",)),
    ("wgmma.sp.fragments", _wgmma_sparse, ("wgmma.sp.",)),
    ("tcgen05.fragments", read_tmem_section, ("tcgen05.ld.", "tcgen05.st.")),
    ("ldmatrix", lambda sink, sec: read_matrix_section(sink, sec, "ldmatrix"), ("ldmatrix.",)),
    ("stmatrix", lambda sink, sec: read_matrix_section(sink, sec, "stmatrix"), ("stmatrix.",)),
    ("movmatrix", lambda sink, sec: read_matrix_section(sink, sec, "movmatrix"), ("movmatrix.",)),
    ("tcgen05.packing.part", read_packing, ("tcgen05.packing",)),
    ("tcgen05.valid", read_valid, ("tcgen05.valid", "tcgen05.shared")),
    ("tcgen05.swizzle", lambda sink, sec: read_atoms(sink, sec, "tcgen05"), ("tcgen05.shared",)),
    ("wgmma.shared", lambda sink, sec: read_atoms(sink, sec, "wgmma"), ("wgmma.shared",)),
    ("wgmma.shared.lbo", lambda sink, sec: read_definitions(sink, sec, "LBO"), ("wgmma.shared",)),
    ("wgmma.shared.sbo", lambda sink, sec: read_definitions(sink, sec, "SBO"), ("wgmma.shared",)),
    ("wgmma.shared.canonical", lambda sink, sec: _canonical(sink, sec), ("wgmma.shared",)),
    ("wgmma.shared.descriptor", read_descriptor, ("wgmma.shared",)),
    ("wmma.fragments", read_wmma, ("wmma.",)),
    ("mma.block_scaling", read_block_scaling, ("mma.block_scale.",)),
    ("tcgen05.datapath", read_datapath, ("tcgen05.datapath",)),
    ("tcgen05.datapath.layout", read_datapath, ("tcgen05.datapath",)),
    ("tcgen05.scale_a", read_scale_factor_a, ("tcgen05.mma.",)),
)


@dataclass(frozen=True)
class Read:
    statements: tuple[Statement, ...]
    prefixes: frozenset[str]  # the ids of the reviewed specs they are judged by start so


def read(pages: Sequence[Page]) -> Read:
    """The statements of the known sections of ``pages`` (each section once), in page order."""
    index = SectionIndex(pages)
    out: list[Statement] = []
    prefixes: set[str] = set()
    done: set[tuple[str, str]] = set()
    for role, reader, wanted in READERS:
        for found in index.all(role):
            if (found.number, role) in done:
                continue
            done.add((found.number, role))
            sink = Sink(found.page, found.number)
            reader(sink, found.section)
            out += sink.out
            prefixes |= set(wanted)
    return Read(tuple(sorted(out, key=lambda s: (s.page, s.line, s.col, s.kind, s.subject))), frozenset(prefixes))


__all__ = ["READERS", "Read", "read"]
