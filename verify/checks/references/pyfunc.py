"""A closed integer interpreter for small pure-Python layout functions, read with ``ast`` and never executed.

Some references state their layouts as Python functions (``def f(thread_id, local_id): ... return row,
col``) in packages that cannot be imported here (they need torch or a compiler stack).  This module
reads such a file with ``ast.parse`` and evaluates its functions itself, over this subset only:

* statements: an optional docstring, ``name = expr`` (one plain name target), ``return expr``;
* expressions: integer literals, names bound to the arguments or earlier assignments,
  ``+ - * // % << >> & | ^``, unary ``-``, tuples (a return value), and calls ``f(a, b)`` with
  positional arguments of a module-level ``def`` of the same file, a module-level alias ``g = f``,
  or a name imported from a sibling file (``from pkg.sibling import f``, resolved by the last
  component of the module path among the files given, by name).

Anything else (attribute access, loops, ``if``, comparisons, keyword arguments, ``eval``, a name
bound nowhere, defaults or ``*args``) makes the call refused: ``Refused(reason, file, line, col)``
at the construct, never executed.  Integers are bounded (``|x| < 2**63``, shifts 0..63, no division
by zero, call depth 16), so no input can make the interpreter run away.  No ``eval``, ``exec`` or
``compile`` is used: the project never executes input it reads.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field

LIMIT = 1 << 63
DEPTH = 16


class Refused(Exception):
    """A construct outside the subset (or an out-of-bounds value): the function cannot be evaluated."""

    def __init__(self, reason: str, file: str, line: int, col: int = 0) -> None:
        super().__init__(f"{file}:{line}:{col}: {reason}")
        self.reason, self.file, self.line, self.col = reason, file, line, col


@dataclass(frozen=True)
class Module:
    """One file's module-level functions, aliases and sibling imports (read, not run)."""

    file: str                                   # the name shown in messages (e.g. ``mma_layout.py``)
    functions: Mapping[str, ast.FunctionDef]
    aliases: Mapping[str, tuple[str, int]]      # alias -> (target name, line)
    imports: Mapping[str, tuple[str, str, int]]  # name -> (module's last component, name there, line)
    error: str = ""                             # the file does not parse: why
    lines: Mapping[str, int] = field(default_factory=dict)   # def or alias name -> its line

    def line_of(self, name: str) -> int:
        return self.lines.get(name, 0)


def parse_module(text: str, file: str) -> ast.Module:
    """``text`` parsed by ``ast`` (never run); a text that does not parse, or that the parser refuses (NUL bytes,
    nesting beyond its stack), is ``Refused`` at its position."""
    try:
        return ast.parse(text, filename=file)
    except SyntaxError as e:
        raise Refused(e.msg, file, e.lineno or 0, e.offset or 0) from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise Refused(type(e).__name__, file, 0) from None


def read_module(text: str, file: str) -> Module:
    """The module-level ``def``s, ``a = b`` aliases and ``from x.y import z`` names of ``text``."""
    try:
        tree = ast.parse(text, filename=file)
    except SyntaxError as e:
        return Module(file, {}, {}, {}, f"{file}:{e.lineno or 0}:{e.offset or 0}: {e.msg}")
    except (ValueError, RecursionError, MemoryError) as e:   # NUL bytes; nesting beyond the parser's stack
        return Module(file, {}, {}, {}, f"{file}:0:0: {type(e).__name__}: {e}")
    funcs: dict[str, ast.FunctionDef] = {}
    aliases: dict[str, tuple[str, int]] = {}
    imports: dict[str, tuple[str, str, int]] = {}
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = node
            lines[node.name] = node.lineno
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, ast.Name)):
            aliases[node.targets[0].id] = (node.value.id, node.lineno)
            lines[node.targets[0].id] = node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                imports[a.asname or a.name] = (node.module.rsplit(".", 1)[-1], a.name, node.lineno)
    return Module(file, funcs, aliases, imports, "", lines)


class Interpreter:
    """Evaluates functions of a set of sibling modules (by the module's stem: ``mma_layout``)."""

    def __init__(self, modules: Mapping[str, Module]) -> None:
        self.modules = dict(modules)

    def call(self, module: str, name: str, args: tuple[int, ...]) -> int | tuple[int, ...]:
        """``name(*args)`` of ``module``: an int or a tuple of ints, or ``Refused``."""
        mod = self.modules.get(module)
        at = (mod.file if mod is not None else module, 0, 0)
        try:
            return self._call(module, name, tuple(args), 0, at)
        except RecursionError:   # an expression nested deeper than Python's stack (calls are bounded by DEPTH)
            raise Refused(f"{name}: an expression nests too deep to evaluate", *at) from None

    def resolve(self, module: str, name: str, at: tuple[str, int, int] | None = None, hops: int = 0
                ) -> tuple[str, ast.FunctionDef]:
        """The ``def`` a name of ``module`` stands for (through aliases and sibling imports)."""
        mod = self.modules.get(module)
        file, line, col = at if at is not None else (module, 0, 0)
        if mod is None:
            raise Refused(f"{name!r} comes from module {module!r}, not among the layout files read", file, line, col)
        if mod.error:
            raise Refused(f"the file does not parse: {mod.error}", mod.file, 0)
        if hops > DEPTH:
            raise Refused(f"{name!r}: aliases and imports nest more than {DEPTH} deep", file, line, col)
        if name in mod.functions:
            return module, mod.functions[name]
        if name in mod.aliases:
            target, aline = mod.aliases[name]
            return self.resolve(module, target, (mod.file, aline, 0), hops + 1)
        if name in mod.imports:
            src, orig, iline = mod.imports[name]
            return self.resolve(src, orig, (mod.file, iline, 0), hops + 1)
        raise Refused(f"{name!r} is no function of {mod.file}", file, line, col)

    def _call(self, module: str, name: str, args: tuple[int, ...], depth: int, at: tuple[str, int, int]
              ) -> int | tuple[int, ...]:
        if depth > DEPTH:
            raise Refused(f"calls nest more than {DEPTH} deep", *at)
        where, fn = self.resolve(module, name, at)
        file = self.modules[where].file
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs or fn.decorator_list:
            raise Refused(f"{fn.name}: only plain positional parameters are read (no defaults, *args, "
                          "keyword-only parameters or decorators)", file, fn.lineno, fn.col_offset)
        if len(a.args) != len(args):
            raise Refused(f"{fn.name} takes {len(a.args)} arguments, called with {len(args)}", *at)
        env: dict[str, int | tuple[int, ...]] = {p.arg: v for p, v in zip(a.args, args)}
        body = list(fn.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]   # the docstring
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                env[st.targets[0].id] = self._expr(st.value, env, where, depth)
            elif isinstance(st, ast.Return) and st.value is not None:
                return self._expr(st.value, env, where, depth)
            else:
                raise Refused(f"{type(st).__name__} statement outside the subset (assignments to one name and "
                              "return only)", file, st.lineno, st.col_offset)
        raise Refused(f"{fn.name} returns nothing", file, fn.lineno, fn.col_offset)

    def _expr(self, e: ast.expr, env: dict, module: str, depth: int) -> int | tuple[int, ...]:
        file = self.modules[module].file
        pos = (file, getattr(e, "lineno", 0), getattr(e, "col_offset", 0))
        if isinstance(e, ast.Constant) and type(e.value) is int:
            return _bounded(e.value, pos)
        if isinstance(e, ast.Name):
            if e.id not in env:
                raise Refused(f"name {e.id!r} is bound to no argument or assignment", *pos)
            return env[e.id]
        if isinstance(e, ast.Tuple):
            items = []
            for x in e.elts:
                v = self._expr(x, env, module, depth)
                if isinstance(v, tuple):
                    raise Refused("a tuple inside a tuple", *pos)
                items.append(v)
            return tuple(items)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return _bounded(-_int(self._expr(e.operand, env, module, depth), pos), pos)
        if isinstance(e, ast.BinOp) and type(e.op) in _OPS:
            left = _int(self._expr(e.left, env, module, depth), pos)
            right = _int(self._expr(e.right, env, module, depth), pos)
            return _bounded(_OPS[type(e.op)](left, right, pos), pos)
        if isinstance(e, ast.Call):
            if not isinstance(e.func, ast.Name):
                raise Refused(f"call of {type(e.func).__name__} (only calls of the layout files' functions by "
                              "name)", *pos)
            if e.keywords or any(isinstance(x, ast.Starred) for x in e.args):
                raise Refused(f"call of {e.func.id} with keyword or starred arguments", *pos)
            self.resolve(module, e.func.id, pos)   # an unknown name (``eval``) is refused before its arguments
            args = tuple(_int(self._expr(x, env, module, depth), pos) for x in e.args)
            return self._call(module, e.func.id, args, depth + 1, pos)
        what = type(e).__name__ if not isinstance(e, ast.BinOp) else f"operator {type(e.op).__name__}"
        raise Refused(f"{what} outside the subset (integers, + - * // % << >> & | ^, tuples, calls by name)", *pos)


def _int(v: int | tuple[int, ...], pos: tuple[str, int, int]) -> int:
    if isinstance(v, tuple):
        raise Refused("a tuple where an integer is needed", *pos)
    return v


def _bounded(v: int, pos: tuple[str, int, int]) -> int:
    if not -LIMIT < v < LIMIT:
        raise Refused(f"integer out of bounds ({'-' if v < 0 else ''}2**{abs(v).bit_length() - 1} or more)", *pos)
    return v


def _div(a: int, b: int, pos: tuple[str, int, int]) -> int:
    if b == 0:
        raise Refused("division by zero", *pos)
    return a // b


def _mod(a: int, b: int, pos: tuple[str, int, int]) -> int:
    if b == 0:
        raise Refused("modulo by zero", *pos)
    return a % b


def _shift(a: int, b: int, pos: tuple[str, int, int], left: bool) -> int:
    if not 0 <= b < 64:
        raise Refused(f"shift by {b} (0..63 only)", *pos)
    return a << b if left else a >> b


_OPS = {
    ast.Add: lambda a, b, p: a + b,
    ast.Sub: lambda a, b, p: a - b,
    ast.Mult: lambda a, b, p: a * b,
    ast.FloorDiv: _div,
    ast.Mod: _mod,
    ast.LShift: lambda a, b, p: _shift(a, b, p, True),
    ast.RShift: lambda a, b, p: _shift(a, b, p, False),
    ast.BitAnd: lambda a, b, p: a & b,
    ast.BitOr: lambda a, b, p: a | b,
    ast.BitXor: lambda a, b, p: a ^ b,
}
