"""JAX Mosaic GPU's layout objects, read from source with ``ast`` and evaluated here (never imported).

Mosaic GPU (``jax/experimental/mosaic/gpu``, pure Python over MLIR) states its register and Tensor Memory
layouts as data: ``TiledLayout(Tiling(((64, 8), (16, 8), (8, 8), (2,))), warp_dims=(-7,), lane_dims=(-3, -2),
vector_dim=-1)`` (``fragmented_array.py``) and functions returning a ``TMEMLayout`` (``tcgen05.py``).  Importing
the package needs jaxlib's MLIR, and Mosaic computes a layout's indices as MLIR operations, so this module
reads the files with ``ast`` and evaluates, over a closed subset, only what builds those objects:

* module-level ``NAME = expr`` and ``NAME: T = expr``, ``def f(a, b=1): ... return expr`` whose body is a
  docstring, ``name = expr`` assignments, ``if ...: raise ...`` guards (passed over: this module calls the
  functions with the arguments Mosaic itself uses, and says which) and one ``return``;
* expressions: integer and string literals, names (arguments, assignments, module names, ``fa.NAME`` through
  ``from . import fragmented_array as fa``), ``+ - * // %``, unary ``-``, tuples, keyword arguments, and calls of
  ``Tiling``, ``Replicated``, ``TiledLayout``, ``TMEMLayout`` (data constructors) or of the files' own functions.

Anything else is refused at its file:line:col (``pyfunc.Refused``); no ``eval``/``exec``/``compile``.

The semantics of a ``TiledLayout`` are Mosaic's docstring's (``fragmented_array.py``, class ``TiledLayout``
and ``Tiling``), implemented here in plain integers:

* a tile of rank k applies to the last k dimensions: each becomes (index // tile, index % tile), the quotients
  in place and the remainders appended; the tiles apply in sequence;
* ``warp_dims`` / ``lane_dims`` (negative indices into the tiled shape, major to minor; ``Replicated(n)`` a
  dimension of n copies) are delinearized from the warp index (thread // 32 within the warpgroup) and the lane;
* the other dimensions, ``vector_dim`` set to 1 too, are the register array (``registers_shape``), in row-major
  (``np.ndindex``) order, which is the order of ``registers.flat`` that ``wgmma.py`` passes to the instruction;
  ``vector_dim`` indexes the elements of one register (a vector, packed into 32 bits low element first);
* a ``TMEMLayout`` reads ``warp_dims`` as the lane quarter and ``lane_dims`` as the lane within it, and "the data
  within each lane is linearized in row-major order, with each vector padded up to 32 bits" (its docstring):
  the register index is the 32-bit column, the vector element the container within it.
"""
from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from .pyfunc import DEPTH, LIMIT, Refused

WARP = 32


@dataclass(frozen=True)
class Tiling:
    tiles: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Replicated:
    times: int


@dataclass(frozen=True)
class TiledLayout:
    """A Mosaic ``TiledLayout`` (``tmem``: a ``TMEMLayout``), as read."""

    tiling: Tiling
    warp_dims: tuple[int | Replicated, ...]
    lane_dims: tuple[int | Replicated, ...]
    vector_dim: int
    tmem: bool = False

    def text(self) -> str:
        def dims(ds: tuple[int | Replicated, ...]) -> str:
            return "(" + ", ".join(f"Replicated({d.times})" if isinstance(d, Replicated) else str(d)
                                   for d in ds) + ("," if len(ds) == 1 else "") + ")"
        tiles = "".join(str(t).replace(" ", "") for t in self.tiling.tiles)
        return (f"{'TMEMLayout' if self.tmem else 'TiledLayout'}(Tiling({tiles}), warp_dims={dims(self.warp_dims)}, "
                f"lane_dims={dims(self.lane_dims)}, vector_dim={self.vector_dim})")


def tile_shape(tiles: tuple[tuple[int, ...], ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape after tiling (``Tiling.tile_shape``); ``ValueError`` when a tile does not divide it."""
    for tile in tiles:
        k = len(tile)
        if k > len(shape) or any(s % t for s, t in zip(shape[-k:], tile)):
            raise ValueError(f"tiling {tiles} does not apply to shape {shape}")
        shape = (*shape[:-k], *(s // t for s, t in zip(shape[-k:], tile)), *tile)
    return shape


def untile_index(tiles: tuple[tuple[int, ...], ...], index: tuple[int, ...]) -> tuple[int, ...]:
    """The logical index of a tiled index (the tiles undone in reverse order)."""
    for tile in reversed(tiles):
        k = len(tile)
        outer, inner = index[-2 * k:-k], index[-k:]
        index = (*index[:-2 * k], *(o * t + i for o, t, i in zip(outer, tile, inner)))
    return index


def _sizes(dims: tuple[int | Replicated, ...], tiled: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d.times if isinstance(d, Replicated) else tiled[d] for d in dims)


def _delinearize(value: int, sizes: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for s in reversed(sizes):
        out.append(value % s)
        value //= s
    return tuple(reversed(out))


def placements(layout: TiledLayout, shape: tuple[int, ...]) -> Iterator[tuple[int, int, int, int, tuple[int, ...]]]:
    """Every (warp, lane, register, element) of the layout over ``shape`` with the logical index it holds
    (a replicated dimension: every copy).  ``warp`` is within the warpgroup (0..3), ``register`` the row-major
    index into the register array, ``element`` the index within the register's vector."""
    tiled = tile_shape(layout.tiling.tiles, shape)
    base = layout.tiling.tiles[0]
    suffix = tile_shape(layout.tiling.tiles, base)[len(base):]
    if any(not isinstance(d, Replicated) and not -len(suffix) <= d < 0 for d in (*layout.warp_dims, *layout.lane_dims)):
        raise ValueError(f"{layout.text()}: a dimension is not a negative index into the tiled tile {suffix}")
    warp_sizes, lane_sizes = _sizes(layout.warp_dims, suffix), _sizes(layout.lane_dims, suffix)
    if _prod(warp_sizes) != 4 or _prod(lane_sizes) != WARP:
        raise ValueError(f"{layout.text()}: warp dims cover {_prod(warp_sizes)} warps and lane dims "
                         f"{_prod(lane_sizes)} lanes (4 and 32 expected)")
    fixed = {d for d in (*layout.warp_dims, *layout.lane_dims) if not isinstance(d, Replicated)}
    bad = [d for d in (*fixed, layout.vector_dim) if not -len(suffix) <= d < 0]
    if bad:
        raise ValueError(f"{layout.text()}: dimension {bad[0]} is not a negative index into the tiled tile "
                         f"{suffix}")
    n = len(tiled)
    fixed_pos = {d % n for d in fixed}
    vec = layout.vector_dim % n
    reg_shape = tuple(1 if k in fixed_pos or k == vec else s for k, s in enumerate(tiled))
    for warp in range(4):
        wcoords = _delinearize(warp, warp_sizes)
        for lane in range(WARP):
            lcoords = _delinearize(lane, lane_sizes)
            index = [0] * n
            for d, v in (*zip(layout.warp_dims, wcoords), *zip(layout.lane_dims, lcoords)):
                if not isinstance(d, Replicated):
                    index[d % n] = v
            for reg, rcoords in enumerate(itertools.product(*(range(s) for s in reg_shape))):
                for k, v in enumerate(rcoords):
                    if k not in fixed_pos and k != vec:
                        index[k] = v
                for e in range(tiled[vec]):
                    index[vec] = e
                    yield warp, lane, reg, e, untile_index(layout.tiling.tiles, tuple(index))


def _prod(xs: tuple[int, ...]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def vector_length(layout: TiledLayout) -> int:
    base = layout.tiling.tiles[0]
    return tile_shape(layout.tiling.tiles, base)[len(base):][layout.vector_dim]


# --- reading the files -------------------------------------------------------------------------------------

CONSTRUCTORS = ("Tiling", "Replicated", "TiledLayout", "TMEMLayout")
_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


@dataclass(frozen=True)
class Source:
    """One file read: its module-level assignments and functions, and the sibling modules it imports."""

    file: str                                          # shown in messages (``tcgen05.py``)
    names: Mapping[str, ast.expr]
    functions: Mapping[str, ast.FunctionDef]
    siblings: Mapping[str, str]                        # alias -> the sibling's stem (``fa`` -> fragmented_array)
    lines: Mapping[str, int]
    error: str = ""


def read_source(text: str, file: str, stems: tuple[str, ...]) -> Source:
    try:
        tree = ast.parse(text, filename=file)
    except SyntaxError as e:
        return Source(file, {}, {}, {}, {}, f"{file}:{e.lineno or 0}:{e.offset or 0}: {e.msg}")
    except (ValueError, RecursionError, MemoryError) as e:
        return Source(file, {}, {}, {}, {}, f"{file}:0:0: {type(e).__name__}: {e}")
    names: dict[str, ast.expr] = {}
    funcs: dict[str, ast.FunctionDef] = {}
    sib: dict[str, str] = {}
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = node
            lines[node.name] = node.lineno
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
            lines[node.targets[0].id] = node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names[node.target.id] = node.value
            lines[node.target.id] = node.lineno
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name in stems:
                    sib[a.asname or a.name] = a.name
    return Source(file, names, funcs, sib, lines)


class Reader:
    """Evaluates the layout objects of a set of sibling files (by stem)."""

    def __init__(self, sources: Mapping[str, Source]) -> None:
        self.sources = dict(sources)
        self._values: dict[tuple[str, str], object] = {}

    def value(self, stem: str, name: str, depth: int = 0) -> object:
        """A module-level name of ``stem``, evaluated once."""
        key = (stem, name)
        if key in self._values:
            return self._values[key]
        src = self._source(stem)
        if name not in src.names:
            raise Refused(f"{name!r} is no module-level name of {src.file}", src.file, 0)
        if depth > DEPTH:
            raise Refused(f"{name}: names nest more than {DEPTH} deep", src.file, src.lines.get(name, 0))
        v = self._expr(src.names[name], {}, stem, depth + 1)
        self._values[key] = v
        return v

    def call(self, stem: str, name: str, *args: object, **kwargs: object) -> object:
        return self._call(stem, name, tuple(args), dict(kwargs), 0, (self._source(stem).file, 0, 0))

    def line(self, stem: str, name: str) -> int:
        return self._source(stem).lines.get(name, 0)

    def function(self, stem: str, name: str) -> ast.FunctionDef:
        src = self._source(stem)
        if name not in src.functions:
            raise Refused(f"{name!r} is no function of {src.file}", src.file, 0)
        return src.functions[name]

    def _source(self, stem: str) -> Source:
        src = self.sources.get(stem)
        if src is None:
            raise Refused(f"module {stem!r} is not among the files read", stem, 0)
        if src.error:
            raise Refused(f"the file does not parse: {src.error}", src.file, 0)
        return src

    def _call(self, stem: str, name: str, args: tuple, kwargs: dict, depth: int, at: tuple[str, int, int]) -> object:
        if name in CONSTRUCTORS:
            return _construct(name, args, kwargs, at)
        src = self._source(stem)
        if name not in src.functions:
            raise Refused(f"{name!r} is no function of {src.file} nor a layout constructor", *at)
        if depth > DEPTH:
            raise Refused(f"calls nest more than {DEPTH} deep", *at)
        fn = src.functions[name]
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise Refused(f"{name}: only plain parameters are read", src.file, fn.lineno, fn.col_offset)
        params = [p.arg for p in a.args]
        if len(args) > len(params):
            raise Refused(f"{name} takes {len(params)} arguments, called with {len(args)}", *at)
        env: dict[str, object] = dict(zip(params, args))
        defaults = dict(zip(params[len(params) - len(a.defaults):], a.defaults))
        for k, v in kwargs.items():
            if k not in params or k in env:
                raise Refused(f"{name}: unexpected or repeated argument {k!r}", *at)
            env[k] = v
        for p in params:
            if p not in env:
                if p not in defaults:
                    raise Refused(f"{name}: no value for {p!r}", *at)
                env[p] = self._expr(defaults[p], {}, stem, depth + 1)
        body = list(fn.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                env[st.targets[0].id] = self._expr(st.value, env, stem, depth + 1)
            elif isinstance(st, ast.If) and not st.orelse and all(isinstance(x, ast.Raise) for x in st.body):
                continue   # a guard: Mosaic's own arguments pass it
            elif isinstance(st, ast.Return) and st.value is not None:
                return self._expr(st.value, env, stem, depth + 1)
            else:
                raise Refused(f"{type(st).__name__} statement outside the subset (assignments, raising guards, "
                              "return)", src.file, st.lineno, st.col_offset)
        raise Refused(f"{name} returns nothing", src.file, fn.lineno, fn.col_offset)

    def _expr(self, e: ast.expr, env: dict, stem: str, depth: int) -> object:
        file = self._source(stem).file
        pos = (file, getattr(e, "lineno", 0), getattr(e, "col_offset", 0))
        if depth > 4 * DEPTH:
            raise Refused("an expression nests too deep", *pos)
        if isinstance(e, ast.Constant) and type(e.value) in (int, str, bool):
            if type(e.value) is int and not -LIMIT < e.value < LIMIT:
                raise Refused("integer out of bounds", *pos)
            return e.value
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            if e.id in self._source(stem).names:
                return self.value(stem, e.id, depth + 1)
            raise Refused(f"name {e.id!r} is bound to no argument, assignment or module name", *pos)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            sib = self._source(stem).siblings.get(e.value.id)
            if sib is None:
                raise Refused(f"attribute of {e.value.id!r}, which names no sibling file read", *pos)
            return self.value(sib, e.attr, depth + 1)
        if isinstance(e, ast.Tuple):
            return tuple(self._expr(x, env, stem, depth + 1) for x in e.elts)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return -_int(self._expr(e.operand, env, stem, depth + 1), pos)
        if isinstance(e, ast.BinOp) and type(e.op) in _BIN:
            a = _int(self._expr(e.left, env, stem, depth + 1), pos)
            b = _int(self._expr(e.right, env, stem, depth + 1), pos)
            if isinstance(e.op, (ast.FloorDiv, ast.Mod)) and b == 0:
                raise Refused("division by zero", *pos)
            v = _BIN[type(e.op)](a, b)
            if not -LIMIT < v < LIMIT:
                raise Refused("integer out of bounds", *pos)
            return v
        if isinstance(e, ast.Call):
            target, where = self._callee(e.func, stem, pos)
            if target not in CONSTRUCTORS and target not in self._source(where).functions:
                raise Refused(f"{target!r} is no function of {self._source(where).file} nor a layout constructor",
                              *pos)   # refused before its arguments are looked at
            if any(isinstance(x, ast.Starred) for x in e.args) or any(k.arg is None for k in e.keywords):
                raise Refused("starred or ** arguments", *pos)
            args = tuple(self._expr(x, env, stem, depth + 1) for x in e.args)
            kwargs = {k.arg: self._expr(k.value, env, stem, depth + 1) for k in e.keywords if k.arg}
            return self._call(where, target, args, kwargs, depth + 1, pos)
        raise Refused(f"{type(e).__name__} outside the subset (integers, strings, + - * // %, tuples, calls of "
                      "layout constructors and the files' functions)", *pos)

    def _callee(self, f: ast.expr, stem: str, pos: tuple[str, int, int]) -> tuple[str, str]:
        if isinstance(f, ast.Name):
            return f.id, stem
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            sib = self._source(stem).siblings.get(f.value.id)
            if sib is not None:
                return f.attr, sib
        raise Refused("a call of something other than a constructor or a function of the files read", *pos)


def _int(v: object, pos: tuple[str, int, int]) -> int:
    if type(v) is not int:
        raise Refused(f"{type(v).__name__} where an integer is needed", *pos)
    return v


def _construct(name: str, args: tuple, kwargs: dict, at: tuple[str, int, int]) -> object:
    fields = {"Tiling": ("tiles",), "Replicated": ("times",),
              "TiledLayout": ("tiling", "warp_dims", "lane_dims", "vector_dim", "_check_canonical"),
              "TMEMLayout": ("tiling", "warp_dims", "lane_dims", "vector_dim", "_check_canonical")}[name]
    if len(args) > len(fields):
        raise Refused(f"{name} with {len(args)} arguments", *at)
    vals = dict(zip(fields, args))
    for k, v in kwargs.items():
        if k not in fields or k in vals:
            raise Refused(f"{name}: unexpected or repeated argument {k!r}", *at)
        vals[k] = v
    try:
        if name == "Tiling":
            tiles = vals["tiles"]
            if not isinstance(tiles, tuple) or not all(isinstance(t, tuple) and t and all(type(x) is int and x > 0
                                                                                       for x in t) for t in tiles):
                raise Refused(f"Tiling of {tiles!r}: tuples of positive integers expected", *at)
            return Tiling(tiles)
        if name == "Replicated":
            return Replicated(_int(vals["times"], at))
        tiling = vals["tiling"]
        if not isinstance(tiling, Tiling) or not tiling.tiles:
            raise Refused(f"{name} without a Tiling", *at)
        for key in ("warp_dims", "lane_dims"):
            ds = vals[key]
            if not isinstance(ds, tuple) or not all(isinstance(d, Replicated) or type(d) is int for d in ds):
                raise Refused(f"{name}: {key} is no tuple of dimensions", *at)
        return TiledLayout(tiling, vals["warp_dims"], vals["lane_dims"], _int(vals["vector_dim"], at),
                           name == "TMEMLayout")
    except KeyError as missing:
        raise Refused(f"{name} without {missing}", *at) from None
