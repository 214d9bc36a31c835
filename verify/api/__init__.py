"""The Python API for proof scripts; the CLI is a thin shell over it.

    from verify import api
    specs = api.load("specs/")
    lay = api.layout(specs, "mma.m16n8k16.A.f16_bf16")
    lay.evaluate(lane=5, i=3)                 # -> (9, 3)
    res = api.check(lay)                      # -> LayoutResult with counterexamples
    mine = api.layout_from_formula("row = %laneid >> 2\\ncol = (%laneid % 4) * 2 + i",
                                   operand="C", rows=8, cols=8, elements=2)
    given = api.cute("((4,8),(2,2,2)):((32,1),(16,8,128))", like=lay)   # also triton, table, index_code
    api.conform(lay, given).status            # -> "equal" (or permuted, replicated, differs)
    api.handoff("mma.m16n8k16.float.C.f32", "mma.m16n8k16.A.f16_bf16").status   # -> "free"
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.spec import load_spec_text as load_spec_text
from ..checks.family import check_any as check_any
from ..checks.fragment import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from ..errors import SpecError
from ..formula import FormulaError as FormulaError
from ..formula import Span as Span
from ..formula import parse_formula as parse_formula
from ..formula import walk as walk
from ..layout.model import Layout, Spec
from ..layout.model import MapLayout as MapLayout
from ..layout.records import Provenance as Provenance
from ..layout.records import RegisterFacts as RegisterFacts
from ..results import DocFinding, Finding, InstructionResult, LayoutResult, Report
from ..results import MapResult as MapResult
from .catalog import check, check_all, check_size, default_jobs, doc_findings, find_layout, layout
from .catalog import layout_from_formula, layouts, load, load_with_doc_findings, loads
from .catalog import map_layouts as map_layouts
from .catalog import release as release
from .catalog import why_nothing as why_nothing
from .consistency import consistent
from .kernel import verify_kernel
from .proofs import And, If, Implies, Not, Or, Proof, cell, domain, prove, variables
from .refs import crosscheck, cutlass_headers, mma_headers, reference, reference_reasons, references
from .shared import banks, check_given, conform_map, descriptor, given_map, register_banks, shared_from_map
from .shared import shared_layout
from .written import ArchError, _constructor, check_wmma_arch, conform, handoff, map_notations, reduction
from .written import shared_notations, wmma_arch_entry, wmma_arch_layout, wmma_arch_maps
from .written import block_tile as block_tile
from .written import given as given
from .written import notations as notations

if TYPE_CHECKING:  # the lazy names below, for the type checker (``X as X``: re-exported, not imported at run time)
    from ..checks.conform import ConformError as ConformError
    from ..checks.handoff import HandoffError
    from ..checks.reduce import ReduceError as ReduceError
    from ..layout.block import BlockError as BlockError
    from ..layout.notations import NotationError
    from ..layout.params import FamilyError as FamilyError
    from ..results.conform import ConformResult
    from ..results.crosscheck import CrosscheckReport
    from ..results.handoff import HandoffResult
    from ..results.members import FamilyResult as FamilyResult

# The layouts people write (notations, conform, handoff, crosscheck) are imported on first use, so
# that ``check`` of the catalog does not pay for them at start-up; their public names stay here.
_LAZY = {"BlockError": "layout.block", "ConformError": "checks.conform", "ConformResult": "results.conform", "CrosscheckReport": "results.crosscheck",
         "FamilyError": "layout.params", "FamilyResult": "results.members",
         "HandoffError": "checks.handoff", "HandoffResult": "results.handoff", "NotationError": "layout.notations",
         "Given": "checks.consistency_sides", "ReduceError": "checks.reduce", "ReduceResult": "results.reduce"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"..{_LAZY[name]}", __package__), name)
    if not name.startswith("_"):
        from ..layout.notations import notations as _notations
        for n in _notations():  # api.cute, api.triton, ...: one constructor per registered notation
            if n.constructor == name:
                return _constructor(n.name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["And", "ConformResult", "CrosscheckReport", "DocFinding", "Finding", "InstructionResult", "HandoffError", "HandoffResult", "If", "Implies",
           "Layout", "LayoutResult", "Not", "NotationError", "Or", "Proof", "Report", "Spec", "SpecError", "cell",
           "check", "check_all", "check_size", "conform", "consistent", "crosscheck", "cute", "cutlass_headers", "default_jobs", "doc_findings",
           "domain", "handoff", "index_code", "layout", "layout_from_formula", "layouts", "load",
           "load_with_doc_findings", "loads", "mma_headers", "prove", "reference", "reference_reasons", "references",
           "reduction", "table", "triton", "variables", "find_layout", "shared_layout", "map_notations", "shared_notations", "shared_from_map", "conform_map", "given_map", "descriptor", "banks",
           "register_banks", "check_given",
           "Given", "ArchError", "wmma_arch_maps", "wmma_arch_entry", "wmma_arch_layout", "check_wmma_arch", "verify_kernel"]
