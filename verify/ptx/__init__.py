"""PTX text -> a syntax tree (``parse_module``): a real grammar with positions in every error, nothing evaluated."""
from __future__ import annotations

from .parser import parse_module
from .syntax import (Addr, FImm, Function, Group, Imm, Instr, Label, Module, Not, Operand, Param, PredPair, Reg,
                     RegDecl, SourceLoc, Special, Sink, Sym, Vec, VarDecl)

__all__ = ["Addr", "FImm", "Function", "Group", "Imm", "Instr", "Label", "Module", "Not", "Operand", "Param",
           "PredPair", "Reg", "RegDecl", "SourceLoc", "Special", "Sink", "Sym", "Vec", "VarDecl", "parse_module"]
