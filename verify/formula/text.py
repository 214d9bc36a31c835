"""A formula written back as the formula language: ``formula_text(f)`` is text ``parse_formula`` reads as ``f``.

``ast.render`` is for messages (fully parenthesised, every variable but ``%laneid`` shown as ``i``); this is for
spec files a tool writes (``ingest --out`` of the shared-memory pages): each definition on a line, each further
case on a line of its own below it (``expr if cond``), operators parenthesised only where the grammar's
precedence needs it (``verify.formula.parser``: ``|`` < ``^`` < ``&`` < shifts < ``+ -`` < ``* / %``, all
left-associative).  ``tests/test_refused_inputs.py`` reads every formula of the shared-memory pages back to the
same syntax tree.
"""
from __future__ import annotations

from .ast import BinOp, BoolOp, Case, Compare, Formula, InSet, Neg, Num, Ref, Span, Var

_LEVEL = {op: level for level, ops in enumerate((("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%")))
          for op in ops}
_ATOM = 99


def _level(e: object) -> int:
    return _LEVEL[e.op] if isinstance(e, BinOp) else _ATOM


_BITS = {"|", "^", "&", "<<", ">>"}


def _unclear(parent: BinOp, child: object) -> bool:
    """A bitwise or shift operand of another precedence than its operator's: parenthesised for the reader (as C
    compilers ask), though the grammar would not need it (``(a >> 3) & 7``, ``(row << 3) + col``)."""
    return isinstance(child, BinOp) and child.op != parent.op and _LEVEL[child.op] != _LEVEL[parent.op] and \
        (child.op in _BITS or parent.op in _BITS)


def expr_text(e: object) -> str:
    """An expression, parenthesised where precedence needs it."""
    if isinstance(e, Num):
        return str(e.value) if e.value >= 0 else f"(-{-e.value})"
    if isinstance(e, Var):
        return "%laneid" if e.name == "lane" else e.name
    if isinstance(e, Ref):
        return e.name
    if isinstance(e, Neg):
        inner = expr_text(e.operand)
        return f"-({inner})" if isinstance(e.operand, (BinOp, Neg)) else f"-{inner}"
    if isinstance(e, Span):
        return f"[{expr_text(e.first)} ... {expr_text(e.last)}]"
    if isinstance(e, BinOp):
        level = _LEVEL[e.op]
        left, right = expr_text(e.left), expr_text(e.right)
        if _level(e.left) < level or _unclear(e, e.left):
            left = f"({left})"
        if _level(e.right) <= level or _unclear(e, e.right):
            right = f"({right})"
        return f"{left} {e.op} {right}"
    raise TypeError(f"not an expression: {type(e).__name__}")


def cond_text(c: object) -> str:
    """A condition: comparisons, set membership, ``&&`` and ``||``."""
    if isinstance(c, Compare):
        out = expr_text(c.operands[0])
        for op, o in zip(c.ops, c.operands[1:]):
            out += f" {op} {expr_text(o)}"
        return out
    if isinstance(c, InSet):
        return f"{expr_text(c.operand)} = {{{', '.join(str(v) for v in c.values)}}}"
    if isinstance(c, BoolOp):
        parts = [cond_text(o) for o in c.operands]
        if c.op == "and":
            parts = [f"({p})" if isinstance(o, BoolOp) and o.op == "or" else p for p, o in zip(parts, c.operands)]
        return (" || " if c.op == "or" else " && ").join(parts)
    raise TypeError(f"not a condition: {type(c).__name__}")


def case_text(c: Case) -> str:
    return expr_text(c.expr) + ("" if c.cond is None else f" if {cond_text(c.cond)}")


def formula_text(f: Formula) -> str:
    """Every definition of ``f``, one case a line (a case after the first indented under the first's value)."""
    lines = []
    for d in f.definitions:
        head = f"{d.name} = "
        for k, c in enumerate(d.cases):
            lines.append((head if k == 0 else " " * len(head)) + case_text(c))
    return "\n".join(lines) + "\n"


__all__ = ["case_text", "cond_text", "expr_text", "formula_text"]
