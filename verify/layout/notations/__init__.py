"""Importers for the layout notations kernel engineers write, into the formula AST.

Each importer reads untrusted text with its own bounded grammar and returns a ``TVImport``: the
``Formula`` (``row``/``col`` over ``%laneid`` and ``i``), the domain (threads, values per thread),
the operand extent when the notation states it, the original text and the notation's name — what
``conform`` needs to compare a layout with the spec cell by cell.

- ``cute``: CuTe ``shape:stride`` and ``Layout<Shape<...>,Stride<...>>`` (TV layouts of MMA atoms)
- ``cute_headers``: every ``MMA_Traits`` in CuTe's ``mma_traits_sm*.hpp`` headers
- ``triton``: Triton linear layouts (bases over GF(2)), JSON or printed
- ``table``: explicit (lane, i) -> (row, col) tables, JSON
- ``expr``: index code (the spec formula language with ``lane``/``tid`` and ``//`` floor division)
- ``build``: a ``TVImport`` as a ``Layout`` shaped like a spec layout (``to_layout``, ``import_as``)
- ``registry``: every notation registers itself there once (name, flag, help, reader, options); the
  command line, the API constructors and ``import_as`` follow from the registrations
"""
from .build import import_as, to_layout
from .cute import CuteLayout, import_cute, parse_cute, tv_to_formula
from .cute_headers import (
    HeaderResult,
    Skipped,
    TraitEntry,
    find_mma_headers,
    ptx_type,
    read_header,
    read_headers,
)
from .errors import NeedsMember, NotationError, TVImport
from .expr import import_index_code, parse_index_code
from .table import (
    LayoutTable,
    TableEntry,
    import_table,
    parse_table,
    table_from_entries,
    table_to_formula,
)
from .registry import Notation, Option, notation, notations, register
from .triton import TritonLayout, import_triton, parse_triton, triton_to_formula

__all__ = [
    "CuteLayout", "NeedsMember", "Notation", "Option", "HeaderResult", "LayoutTable", "NotationError", "Skipped", "TVImport", "TableEntry",
    "TraitEntry", "TritonLayout", "find_mma_headers", "import_as", "import_cute", "import_index_code", "import_table",
    "import_triton", "notation", "notations", "parse_cute", "register", "parse_index_code", "parse_table", "parse_triton", "ptx_type", "read_header",
    "read_headers", "table_from_entries", "table_to_formula", "to_layout", "triton_to_formula",
    "tv_to_formula",
]
