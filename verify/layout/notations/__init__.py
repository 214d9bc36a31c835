"""Importers for the layout notations kernel engineers write, into the formula AST.

Each importer reads untrusted text with its own bounded grammar and returns a ``TVImport``: the
``Formula`` (``row``/``col`` over ``%laneid`` and ``i``), the domain (threads, values per thread),
the operand extent when the notation states it, the original text and the notation's name — what
``conform`` needs to compare a layout with the spec cell by cell.

- ``cute``: CuTe TV layouts of MMA atoms as formulas (``shape:stride`` and ``Layout<Shape<...>,Stride<...>>``);
  ``cute_layout`` the layout value (``CuteLayout``), ``cute_parse`` its two grammars (``parse_cute``)
- ``cute_headers``: every ``MMA_Traits`` in CuTe's ``mma_traits_sm*.hpp`` headers
- ``triton``: Triton linear layouts (bases over GF(2)), JSON or printed
- ``table``: explicit (lane, i) -> (row, col) tables, JSON
- ``tilelang``: TileLang ``Fragment`` prints, (row, col, rep) -> (thread, index), inverted
- ``expr``: index code (the spec formula language with ``lane``/``tid`` and ``//`` floor division)
- ``build``: a ``TVImport`` as a ``Layout`` shaped like a spec layout (``to_layout``, ``import_as``)
- ``registry``: every notation registers itself there once (name, flag, help, reader, options); the
  command line, the API constructors and ``import_as`` follow from the registrations
"""
from typing import TYPE_CHECKING

from .build import import_as, to_layout
from .errors import NeedsMember, NotationError, TVImport
from .registry import Notation, Option, notation, notations, register

if TYPE_CHECKING:  # the lazy names below as the type checker sees them (at run time: ``__getattr__``); in __all__
    from .cute import import_cute, tv_to_formula  # noqa: F401
    from .cute_layout import CuteLayout  # noqa: F401
    from .cute_parse import parse_cute  # noqa: F401
    from .cute_headers import HeaderResult, Skipped, TraitEntry, find_mma_headers, ptx_type  # noqa: F401
    from .cute_headers import read_header, read_headers  # noqa: F401
    from .expr import import_index_code, parse_index_code  # noqa: F401
    from .table import LayoutTable, TableEntry, import_table, parse_table  # noqa: F401
    from .table import table_from_entries, table_to_formula  # noqa: F401
    from .triton import TritonLayout, import_triton, parse_triton, triton_to_formula  # noqa: F401

# The readers' own names load with their module on first use (the CuTe header reader is large and only
# ``crosscheck`` needs it).
_LAZY = {
    "cute_layout": ("CuteLayout",),
    "cute": ("import_cute", "tv_to_formula"),
    "cute_parse": ("parse_cute",),
    "cute_headers": ("HeaderResult", "Skipped", "TraitEntry", "find_mma_headers", "ptx_type", "read_header",
                     "read_headers"),
    "expr": ("import_index_code", "parse_index_code"),
    "table": ("LayoutTable", "TableEntry", "import_table", "parse_table", "table_from_entries", "table_to_formula"),
    "triton": ("TritonLayout", "import_triton", "parse_triton", "triton_to_formula"),
}


def __getattr__(name: str) -> object:
    import importlib
    for module, names in _LAZY.items():
        if name in names:
            return getattr(importlib.import_module(f"{__name__}.{module}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["NeedsMember", "Notation", "NotationError", "Option", "TVImport", "import_as", "notation", "notations",
           "register", "to_layout", *(n for names in _LAZY.values() for n in names)]
