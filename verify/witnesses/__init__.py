"""Counterexamples as typed, frozen witnesses: each owns its JSON (``to_json``: the keys and values of the
JSON contract, in order) and its words (``lines``: the counterexample in the doc's terms, one statement a
line; ``describe``: the same on one line).  Checks build them; results carry them; renderers read them
through these methods and their fields, never by guessing a dict's keys.

A witness also reads as a mapping of its JSON form (``w["lane"]``, ``dict(w)``, ``{**w}``), so proof scripts
that read counterexamples by key keep working.  ``at_member(w, params)`` is ``w`` at a family's member
(``"params"`` its first key).

Any map and any fragment (``core``):

* ``PointOutside``: a map's input point that is undefined or lands outside the output box (``in_range``);
* ``PointsCollide``: two input points of a map that land on one output point (``injective``);
* ``OutputUnreached``: an output point of a map that no input point reaches (``surjective``);
* ``CellOutside``, ``ElementsCollide``, ``CellUnreached``: the same three for a register fragment, in the
  doc's terms (lane, element, cell, MMA computation);
* ``PointDiffers``: the first input point where two maps differ (``same``);
* ``BankConflict``: two lanes of one wavefront group touching different words of one bank;
* ``TextPosition``: a place in a file (a formula that does not parse, an error in the doc's text).

The other checks (``checks``):

* ``FragmentDiffers``, ``DomainDiffers``, ``ParamsDiffer``: two fragments that differ (``equal``, ``diff``,
  ``conform``, relations between instructions);
* ``SpecGivenDiffer``, ``NotPermuted``, ``ReplicaDiffers``, ``TileDiffers``, ``CellCoverage``: why a given
  layout does not conform to its spec;
* ``RegisterCount``, ``RegisterPacking``, ``ElementList``: a fragment's register arithmetic;
* ``OperandRegisters``, ``OperandExtent``, ``AxisCoverage``, ``KCoverage``, ``LaneGroups``: an instruction's
  operands against its shape;
* ``CellHeldBy``: a cell a lane needs and who holds it (``handoff``);
* ``ReductionLanes``: the lane pair that breaks a butterfly reduction inside a fragment (``handoff --reduce``);
* ``SparseRange``, ``SparseMetadata``, ``MetadataField``, ``MetadataBudget``: sparse A and its metadata;
* ``LaneAddress``: a lane's shared-memory access that is unplaced or misaligned;
* ``BufferPlace``: where a writer's and a reader's maps of one buffer disagree (``consistency``);
* ``TmemLane``: a warp reaching a TMEM lane outside its quarter (``tmem_lanes``);
* ``ReviewedFacts``: a page's register facts that differ from the reviewed spec's (``register_facts``).

``Facts`` is the fallback for a mapping with no class of its own (a user's or a proof script's, handed to a
result): its JSON is the mapping as given.  No check builds one (``tests/test_witnesses.py`` runs the checks on
broken layouts and asserts it).

The words of a verdict (``CheckResult.message``) stay the check's: they need context a witness does not
hold (the output box, the family binding, the matrix's extent).
"""
from __future__ import annotations

from .checks import (BufferPlace, CellCoverage, CellHeldBy, CheckWitness, DomainDiffers, ElementList, FragmentDiffers,
                     LaneAddress, NotPermuted, ParamsDiffer, RegisterCount, ReductionLanes, RegisterPacking, ReplicaDiffers,
                     ReviewedFacts, SpecGivenDiffer, TileDiffers, at_member)
from .core import (BankConflict, CellOutside, CellUnreached, Element, ElementsCollide, Facts, OutputUnreached,
                   PointDiffers, PointOutside, PointsCollide, TextPosition, Witness, as_witness, fragment_witness,
                   witness_json)
from .instruction import (AxisCoverage, KCoverage, LaneGroups, MetadataBudget, MetadataField, OperandExtent,
                          OperandRegisters, SparseMetadata, SparseRange, TmemLane)

__all__ = ["AxisCoverage", "BankConflict", "BufferPlace", "CellCoverage", "CellHeldBy", "CellOutside", "CellUnreached",
           "CheckWitness", "DomainDiffers", "Element", "ElementList", "ElementsCollide", "Facts", "FragmentDiffers",
           "KCoverage", "LaneAddress", "LaneGroups", "MetadataBudget", "MetadataField", "NotPermuted", "OperandExtent",
           "OperandRegisters", "OutputUnreached", "ParamsDiffer", "PointDiffers", "PointOutside", "PointsCollide",
           "ReductionLanes", "RegisterCount", "RegisterPacking", "ReplicaDiffers", "ReviewedFacts", "SparseMetadata", "SparseRange",
           "SpecGivenDiffer", "TextPosition", "TileDiffers", "TmemLane", "Witness", "as_witness", "at_member",
           "fragment_witness", "witness_json"]
