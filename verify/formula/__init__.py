"""The formula language: the doc's pseudo-code, and the form every layout notation is imported into.

``parse_formula(text, prefix)`` turns text into an immutable ``Formula`` AST (``ast``), through a
lexer (``lexer``) and a recursive-descent parser (``parser``).  Nothing is ever evaluated as Python.
``index.parse_index`` reads index code, the code people write, with the same parser (``#`` comments, ``//``
floor division).
"""
from .ast import (MAX_LITERAL, BinOp, BoolOp, Case, Compare, Cond, Definition, Expr, Formula, FormulaError,
                  InSet, Neg, Num, Pos, Ref, Span, Var, render, replace_node, uses_lane_only, walk)
from .lexer import KEYWORDS, Token, tokenize
from .parser import LineParser, parse_expression, parse_formula, parse_lane_expression, split_lines

__all__ = ["MAX_LITERAL", "BinOp", "BoolOp", "Case", "Compare", "Cond", "Definition", "Expr", "Formula",
           "FormulaError", "InSet", "KEYWORDS", "LineParser", "Neg", "Num", "Pos", "Ref", "Span", "Token", "Var",
           "parse_expression", "parse_formula", "parse_lane_expression", "render", "replace_node", "split_lines", "tokenize", "uses_lane_only", "walk"]
