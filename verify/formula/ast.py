"""The AST of the formula language: immutable, typed, with source positions.

The formula language is the doc's pseudo-code (``row = groupID + 8 for ai where i >= 4``) and
also the intermediate form every other notation (CuTe, Triton, tables, index code) is
imported into, so both engines only ever evaluate this AST.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Union

MAX_LITERAL = 2**31 - 1

# What the language accepts.  Doc formulas use a few definitions, nesting of 3 and chains of a
# few terms; the limits are far above that and far below what would make the recursive parser,
# the evaluators or hashing overflow the stack, or make a check slow.
MAX_TEXT = 65_536        # characters of formula text
MAX_LINE = 2_000         # characters on one line
MAX_NESTING = 32         # parentheses, brackets and unary signs inside one another
MAX_DEPTH = 64           # depth of one expression or condition tree (a + b + c ... counts each +)
MAX_INLINE_DEPTH = 160   # depth with every referenced definition inlined (what evaluation recurses over)
MAX_DEFINITIONS = 256
MAX_CASES = 256          # cases of one piecewise definition


class FormulaError(ValueError):
    """A formula that cannot be parsed or resolved; carries a source position."""

    def __init__(self, message: str, line: int, col: int, text: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.text = text


@dataclass(frozen=True)
class Pos:
    """1-based line and column in the formula text (not in the spec file)."""

    line: int
    col: int


# ----------------------------------------------------------------------------- AST

@dataclass(frozen=True)
class Num:
    value: int
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Var:
    """A free variable: ``lane`` (``%laneid``) or ``i`` (the element index)."""

    name: str
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Ref:
    """A reference to a named definition (``groupID``, ``firstcol``...)."""

    name: str
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / % << >> & | ^
    left: "Expr"
    right: "Expr"
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Span:
    """``[firstcol ... lastcol]``: the sparse-A column range of the doc."""

    first: "Expr"
    last: "Expr"
    pos: Pos = field(compare=False, default=Pos(0, 0))


Expr = Union[Num, Var, Ref, BinOp, Neg, Span]


@dataclass(frozen=True)
class Compare:
    """A comparison chain ``e0 op0 e1 op1 e2`` (``0 <= i < 2``)."""

    ops: tuple[str, ...]  # each one of < <= > >= == !=
    operands: tuple[Expr, ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class InSet:
    """``i = {0,..,3}`` or ``for a0 and a2`` (membership in a finite set)."""

    operand: Expr
    values: tuple[int, ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or"
    operands: tuple["Cond", ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


Cond = Union[Compare, InSet, BoolOp]


@dataclass(frozen=True)
class Case:
    """One line of a piecewise definition; ``cond is None`` means always/otherwise."""

    expr: Expr
    cond: Cond | None
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Definition:
    name: str
    cases: tuple[Case, ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Formula:
    """All definitions of one fragment, in source order; ``row`` and ``col`` required."""

    definitions: tuple[Definition, ...]
    element_prefix: str

    def __hash__(self) -> int:
        """Hashed once: formulas key the evaluation caches, and a deep AST costs a walk to hash."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.definitions, self.element_prefix))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}  # str hashes differ between processes

    def get(self, name: str) -> Definition:
        for d in self.definitions:
            if d.name == name:
                return d
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.definitions)



# ----------------------------------------------------------------------------- traversal

def walk(node: object) -> Iterator[object]:
    """Every AST node below ``node`` (pre-order), without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def children(node: object) -> tuple[object, ...]:
    """The direct sub-nodes of an AST node (one level; ``walk`` is the recursive form)."""
    if isinstance(node, BinOp):
        return (node.left, node.right)
    if isinstance(node, Neg):
        return (node.operand,)
    if isinstance(node, Span):
        return (node.first, node.last)
    if isinstance(node, (Compare,)):
        return node.operands
    if isinstance(node, InSet):
        return (node.operand,)
    if isinstance(node, BoolOp):
        return node.operands
    if isinstance(node, Case):
        return (node.expr,) if node.cond is None else (node.expr, node.cond)
    if isinstance(node, Definition):
        return node.cases
    return ()


def deepest(node: object) -> tuple[int, object]:
    """(depth, deepest node) of a tree, computed without recursion (any depth is safe here)."""
    best = (1, node)
    stack = [(node, 1)]
    while stack:
        n, d = stack.pop()
        if d > best[0]:
            best = (d, n)
        stack.extend((c, d + 1) for c in children(n))
    return best


def replace_node(node: object, target: object, new: object) -> object:
    """Rebuild a frozen AST with ``target`` (by identity) replaced by ``new`` (for mutations
    and fix searches); untouched subtrees are shared."""
    if node is target:
        return new
    if isinstance(node, tuple):
        items = tuple(replace_node(x, target, new) for x in node)
        return items if any(a is not b for a, b in zip(items, node)) else node
    if dataclasses.is_dataclass(node) and not isinstance(node, (type, Pos)):
        changes = {}
        for f in dataclasses.fields(node):
            old = getattr(node, f.name)
            nv = replace_node(old, target, new)
            if nv is not old:
                changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node
    return node


def uses_lane_only(expr: object) -> bool:
    """True when the node mentions no element index (used for lane-group formulas)."""
    return not any(isinstance(n, Var) and n.name == "i" for n in walk(expr))


def render(node: object) -> str:
    """Canonical text of an AST node (fully parenthesised), for messages and tests."""
    if isinstance(node, Num):
        return str(node.value)
    if isinstance(node, Var):
        return "%laneid" if node.name == "lane" else "i"
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, BinOp):
        return f"({render(node.left)} {node.op} {render(node.right)})"
    if isinstance(node, Neg):
        return f"-{render(node.operand)}"
    if isinstance(node, Span):
        return f"[{render(node.first)} ... {render(node.last)}]"
    if isinstance(node, Compare):
        out = render(node.operands[0])
        for op, o in zip(node.ops, node.operands[1:]):
            out += f" {op} {render(o)}"
        return out
    if isinstance(node, InSet):
        return f"{render(node.operand)} = {{{', '.join(map(str, node.values))}}}"
    if isinstance(node, BoolOp):
        sep = " || " if node.op == "or" else " && "
        return "(" + sep.join(render(o) for o in node.operands) + ")"
    if isinstance(node, Case):
        body = render(node.expr)
        return body if node.cond is None else f"{body} if {render(node.cond)}"
    if isinstance(node, Definition):
        return f"{node.name} = " + " ; ".join(render(c) for c in node.cases)
    raise TypeError(type(node))
