"""The launch: which kernel, on what grid, with which arguments, meant to compute what (a TOML file, or the same
fields from the command line or the API).

    ptx = "mm.ptx"                 # or: cu = "mm.cu" with arch = "sm_80" (compiled with nvcc -ptx)
    entry = "matmul_kernel"        # the .entry; optional when the module has one
    grid = [2, 2, 1]
    block = [128, 1, 1]
    shared = 49152                 # bytes of dynamic shared memory (default: what the module declares statically)
    computes = "C[m, n] = A[m, k] * B[k, n]"
    args = [                        # the kernel's parameters, in order
      { tensor = "A", type = "f16", shape = [256, 128] },                  # row-major unless strides = [...]
      { tensor = "B", type = "f16", shape = [128, 256], strides = [1, 128] },
      { tensor = "C", type = "f32", shape = [256, 256] },
      256, 256, 128,                                                        # scalars, as the parameter's type
      { type = "f16", value = 1.0 },                                        # a scalar of a type of its own
      { type = "s32", values = [256, 256, 128] },                           # a struct of one type, packed
      {},                                                                   # an empty struct (CuTe's static layouts)
    ]

Parameters the kernel has beyond those listed are accepted when they are pointers (Triton's trailing scratch
pointers): they are null, and any access through them is out of bounds.  The file is read by the project's safe
reader; every bad field is a ``SpecError`` at its line and column (exit 2).
"""
from __future__ import annotations

import math
import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..errors import SpecError
from ..files import MAX_NESTING, nesting_error, read_text
from .einsum import Einsum, parse_einsum

ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "tf32": 4, "f64": 8, "s8": 1, "u8": 1, "s16": 2, "u16": 2,
                 "s32": 4, "u32": 4, "s64": 8, "u64": 8, "e4m3": 1, "e5m2": 1, "b8": 1, "b16": 2, "b32": 4, "b64": 8}
# types narrower than a byte, packed from the low bits: elements per byte (a tensor of them is stored so)
PACKED = {"s4": 2, "u4": 2, "b1": 8, "e2m1": 2}
FLOAT_TYPES = ("f16", "bf16", "f32", "f64", "tf32")
MAX_THREADS = 1024
MAX_CTAS = 1 << 16
MAX_ELEMENTS = 1 << 26  # elements of one tensor
KEYS = ("ptx", "cu", "arch", "entry", "grid", "block", "cluster", "shared", "computes", "args")


@dataclass(frozen=True)
class Tensor:
    name: str
    type: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    line: int = 0
    col: int = 0
    sparse: tuple[int, tuple[tuple[int, ...], ...]] | None = None  # (chunk, kept positions by row): structured zeros
    zero: bool = False  # ``init = "zero"``: the output starts as zeros (a kernel that adds onto it: split-K's atomics)

    @property
    def element_bytes(self) -> int:
        """Bytes of an element; 1 for a packed type (``s4``, ``u4``, ``b1``: a byte holds ``packed`` elements)."""
        return ELEMENT_BYTES.get(self.type, 1)

    @property
    def packed(self) -> int:
        """Elements per byte: 1, or 2 (``s4``, ``u4``) and 8 (``b1``), consecutive along the last index from the
        byte's low bits."""
        return PACKED.get(self.type, 1)

    def nonzero(self) -> np.ndarray | None:
        """Which elements are inputs (``bool``, the tensor's shape), for a structured-sparse tensor (``sparse = {
        chunk = 4, keep = [[0, 1], [1, 3]] }``: element ``[..., r, k]`` is a structural zero unless ``k % chunk`` is in
        ``keep[r % len(keep)]``); None for a dense one."""
        if self.sparse is None:
            return None
        chunk, keep = self.sparse
        r = np.arange(self.shape[-2])[:, None] if len(self.shape) > 1 else np.zeros((1, 1), np.int64)
        k = np.arange(self.shape[-1])[None, :]
        table = np.zeros((len(keep), chunk), bool)
        for i, ks in enumerate(keep):
            table[i, list(ks)] = True
        return np.broadcast_to(table[r % len(keep), k % chunk], self.shape).copy()

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def span(self) -> int:
        """Bytes from the first element to the end of the last."""
        if not self.size:
            return 0
        return (sum((n - 1) * s for n, s in zip(self.shape, self.strides)) // self.packed + 1) * self.element_bytes

    def describe(self) -> str:
        dims = " x ".join(str(n) for n in self.shape)
        row = self.strides == row_major(self.shape)
        return f"{self.name}: {self.type} {dims}" + ("" if row else f", strides {list(self.strides)}")


@dataclass(frozen=True)
class Scalar:
    """A scalar argument: an integer, or a float; ``type`` given (``{ type = "f16", value = 1.0 }``) or the
    parameter's."""

    value: Union[int, float]
    type: str | None = None
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Struct:
    """A struct argument given as values of one type, packed at their alignment (``{}``: an empty struct), and
    optionally a pointer to a tensor it declares (``pointer``) at byte offset ``at`` (CuTe passes a global tensor
    by value: its layout's shape and strides, then the pointer)."""

    type: str | None
    values: tuple[Union[int, float], ...]
    line: int = 0
    col: int = 0
    pointer: "Tensor | None" = None
    at: int = 0


SWIZZLES = ("none", "32B", "64B", "128B")
SWIZZLE_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128}


@dataclass(frozen=True)
class TensorMap:
    """A TMA tensor map (``CUtensorMap``, a 128-byte parameter) over tensor ``name``: the fields of
    ``cuTensorMapEncodeTiled`` in the map's dimension order, outermost first (``map_order``: the tensor's indices by
    decreasing stride, so a row-major tensor's index order): ``box`` (boxDim),
    ``swizzle``, ``element_strides`` (elementStrides), ``interleave``, ``oob`` (the fill of a box element outside
    the tensor: zero, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE).  ``tensor``: the tensor when the map declares it (``type``,
    ``shape``, ``strides``: the globalDim and globalStrides), None when a tensor argument of that name is the
    map's."""

    name: str
    tensor: Tensor | None
    box: tuple[int, ...]
    swizzle: str = "none"
    element_strides: tuple[int, ...] = ()
    interleave: str = "none"
    oob: str = "zero"
    line: int = 0
    col: int = 0

    def describe(self) -> str:
        return f"tensor map of {self.name}: box {' x '.join(map(str, self.box))}, swizzle {self.swizzle}"


def map_order(tensor: Tensor) -> tuple[int, ...]:
    """The tensor's dimensions in a tensor map's order, outermost first: by decreasing stride (the contiguous one
    last, as cuTensorMapEncodeTiled's dimension 0 is the contiguous one); ties keep the index order."""
    return tuple(sorted(range(len(tensor.shape)), key=lambda d: (-tensor.strides[d], d)))


Arg = Union[Tensor, Scalar, Struct, TensorMap]


@dataclass(frozen=True)
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    computes: Einsum
    args: tuple[Arg, ...]
    entry: str | None = None
    shared: int | None = None
    ptx: str | None = None  # path, resolved against the launch file's folder
    cu: str | None = None
    arch: str | None = None
    path: str = "<launch>"
    positions: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, hash=False)
    cluster: tuple[int, int, int] = (1, 1, 1)  # CTAs per cluster (what %cluster_ctarank and the like read)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    def tensors(self) -> dict[str, Tensor]:
        return {a.name: a for a in self.args if isinstance(a, Tensor)} | \
            {a.tensor.name: a.tensor for a in self.args if isinstance(a, TensorMap) and a.tensor is not None} | \
            {a.pointer.name: a.pointer for a in self.args if isinstance(a, Struct) and a.pointer is not None}

    def tensor_maps(self) -> list[TensorMap]:
        return [a for a in self.args if isinstance(a, TensorMap)]

    def at(self, key: str) -> tuple[int, int]:
        return self.positions.get(key, (1, 1))


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def encode_scalar(value: Union[int, float], typ: str) -> bytes:
    """The bytes of ``value`` as a parameter of PTX type ``typ`` (floats by IEEE rounding; integers two's
    complement, which must fit)."""
    nbytes = ELEMENT_BYTES.get(typ) or {"pred": 1}.get(typ, 0)
    if typ in ("f16", "f32", "f64"):
        return struct.pack({"f16": "<e", "f32": "<f", "f64": "<d"}[typ], float(value))
    if typ == "bf16":
        return struct.pack("<f", float(value))[2:]
    if isinstance(value, float):
        raise ValueError(f"{value} is not an integer, and the parameter is .{typ}")
    lo = -(1 << (8 * nbytes - 1))
    if not lo <= value < (1 << (8 * nbytes)):
        raise ValueError(f"{value} does not fit .{typ}")
    return (value % (1 << (8 * nbytes))).to_bytes(nbytes, "little")


# ----------------------------------------------------------------------------- reading a launch file

class _Where:
    """Lines and columns of a launch file's keys and of the elements of its ``args`` array."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text

    def pos(self, off: int) -> tuple[int, int]:
        return self.text.count("\n", 0, off) + 1, off - (self.text.rfind("\n", 0, off) + 1) + 1

    def key(self, key: str) -> tuple[int, int]:
        m = re.search(rf"(?m)^[ \t]*{re.escape(key)}[ \t]*=", self.text)
        return self.pos(m.start() + len(m.group()) - len(m.group().lstrip())) if m else (1, 1)

    def value(self, key: str) -> tuple[int, int]:
        m = re.search(rf"(?m)^[ \t]*{re.escape(key)}[ \t]*=[ \t]*", self.text)
        return self.pos(m.end()) if m else (1, 1)

    def elements(self, key: str) -> list[tuple[int, int]]:
        """Positions of the top-level elements of the array ``key = [ ... ]``."""
        m = re.search(rf"(?m)^[ \t]*{re.escape(key)}[ \t]*=[ \t]*\[", self.text)
        if not m:
            return []
        out: list[tuple[int, int]] = []
        t, k, depth, expect = self.text, m.end(), 0, True
        while k < len(t):
            c = t[k]
            if c == "#":
                k = t.find("\n", k)
                if k < 0:
                    break
                continue
            if c in " \t\r\n":
                k += 1
                continue
            if depth == 0 and c == "]":
                break
            if depth == 0 and expect:
                out.append(self.pos(k))
                expect = False
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
            elif c == "," and depth == 0:
                expect = True
            elif c in "\"'":
                end = t.find(c, k + 1)
                k = end if end > 0 else len(t)
            k += 1
        return out

    def char_at(self, line: int, col: int) -> str:
        lines = self.text.split("\n")
        return lines[line - 1][col - 1: col] if 0 < line <= len(lines) else ""

    def error(self, at: tuple[int, int], msg: str) -> SpecError:
        return SpecError(self.path, at[0], at[1], msg)


def _int_list(w: _Where, key: str, v: Any, lo: int, hi: int) -> tuple[int, int, int]:
    """1 to 3 integers in lo..hi, padded with 1s to (x, y, z)."""
    n = 3
    at = w.value(key)
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list) or not v or len(v) > n or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise w.error(at, f"'{key}' must be a list of 1 to {n} integers, such as [2, 2, 1]")
    for x in v:
        if not lo <= x <= hi:
            raise w.error(at, f"'{key}': {x} is out of range ({lo}..{hi})")
    x, y, z = [*v, 1, 1][:3]
    return x, y, z


def _tensor(w: _Where, at: tuple[int, int], t: dict[str, Any]) -> Tensor:
    extra = set(t) - {"tensor", "type", "shape", "strides", "sparse", "init"}
    if extra:
        raise w.error(at, f"unknown field '{sorted(extra)[0]}' in a tensor argument (tensor, type, shape, strides, "
                          "sparse, init)")
    name = t["tensor"]
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise w.error(at, f"tensor name {name!r} must be an identifier")
    typ = t.get("type")
    if typ not in ELEMENT_BYTES and typ not in PACKED:
        raise w.error(at, f"tensor {name}: type {typ!r} is not one of {', '.join([*ELEMENT_BYTES, *PACKED])}")
    shape = t.get("shape")
    if not isinstance(shape, list) or not shape or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0
                                                           for x in shape):
        raise w.error(at, f"tensor {name}: 'shape' must be a list of positive integers")
    if math.prod(shape) > MAX_ELEMENTS:
        raise w.error(at, f"tensor {name}: {math.prod(shape)} elements (limit {MAX_ELEMENTS})")
    strides = t.get("strides", list(row_major(tuple(shape))))
    if not isinstance(strides, list) or len(strides) != len(shape) or not all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in strides):
        raise w.error(at, f"tensor {name}: 'strides' must be {len(shape)} non-negative integers (in elements)")
    per = PACKED.get(typ, 1)
    if per > 1 and (strides[-1] != 1 or shape[-1] % per or any(x % per for x in strides[:-1])):
        raise w.error(at, f"tensor {name}: {typ} elements are packed {per} to a byte along the last index: its stride "
                          f"must be 1, its extent and the other strides multiples of {per}")
    init = t.get("init")
    if init is not None and init != "zero":
        raise w.error(at, f"tensor {name}: init {init!r} is \"zero\" (the output starts as zeros)")
    tensor = Tensor(name, typ, tuple(shape), tuple(strides), *at, sparse=_sparse(w, at, name, t.get("sparse")),
                    zero=init == "zero")
    problem = overlap(tensor)
    if problem:
        raise w.error(at, f"tensor {name}: {problem}")
    return tensor


def _sparse(w: _Where, at: tuple[int, int], name: str, sp: Any) -> tuple[int, tuple[tuple[int, ...], ...]] | None:
    """``sparse = { chunk = 4, keep = [[0, 1], [1, 3]] }``: the kept positions of each chunk of the last index, for
    rows (the index before it) ``r % len(keep)``."""
    if sp is None:
        return None
    words = (f"tensor {name}: 'sparse' is {{ chunk = C, keep = [[...], ...] }} (the kept positions of each C-wide "
             "chunk of the last index, a list per row, repeating)")
    if not isinstance(sp, dict) or set(sp) != {"chunk", "keep"}:
        raise w.error(at, words)
    chunk, keep = sp["chunk"], sp["keep"]
    if not isinstance(chunk, int) or isinstance(chunk, bool) or not 1 <= chunk <= 64 or not isinstance(keep, list) \
            or not keep or len(keep) > 4096 or not all(
                isinstance(ks, list) and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < chunk
                                             for x in ks) and len(set(ks)) == len(ks) for ks in keep):
        raise w.error(at, words)
    return chunk, tuple(tuple(ks) for ks in keep)


MAP_FIELDS = ("tensor_map", "type", "shape", "strides", "box", "swizzle", "element_strides", "interleave", "oob")


def _tensor_map(w: _Where, at: tuple[int, int], t: dict[str, Any]) -> TensorMap:
    """``{ tensor_map = "A", box = [64, 64], swizzle = "128B" }`` (the tensor ``A`` given as an argument of its own)
    or with ``type``, ``shape`` and ``strides`` (the map declares the tensor: Triton's tensor descriptors)."""
    extra = set(t) - set(MAP_FIELDS)
    if extra:
        raise w.error(at, f"unknown field '{sorted(extra)[0]}' in a tensor map ({', '.join(MAP_FIELDS)})")
    name = t["tensor_map"]
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise w.error(at, f"tensor map name {name!r} must be an identifier (the tensor it maps)")
    tensor = None
    if "type" in t or "shape" in t or "strides" in t:
        tensor = _tensor(w, at, {"tensor": name, **{k: t[k] for k in ("type", "shape", "strides") if k in t}})
    box = t.get("box")
    if not isinstance(box, list) or not 1 <= len(box) <= 5 or not all(
            isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 256 for x in box):
        raise w.error(at, f"tensor map {name}: 'box' must be 1 to 5 integers of 1 .. 256 (boxDim, outermost first)")
    swizzle = t.get("swizzle", "none")
    if swizzle not in SWIZZLES:
        raise w.error(at, f"tensor map {name}: swizzle {swizzle!r} is not one of {', '.join(SWIZZLES)}")
    es = t.get("element_strides", [1] * len(box))
    if not isinstance(es, list) or len(es) != len(box) or not all(
            isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 8 for x in es):
        raise w.error(at, f"tensor map {name}: 'element_strides' must be {len(box)} integers of 1 .. 8")
    if any(x != 1 for x in es):
        raise w.error(at, f"tensor map {name}: element strides other than 1 are not executed yet")
    interleave = t.get("interleave", "none")
    if interleave != "none":
        raise w.error(at, f"tensor map {name}: interleave {interleave!r} is not executed yet (none)")
    oob = t.get("oob", "zero")
    if oob not in ("zero", "nan"):
        raise w.error(at, f"tensor map {name}: oob {oob!r} is zero or nan")
    problem = map_problem(name, tensor, tuple(box), swizzle) if tensor is not None else ""
    if problem:
        raise w.error(at, problem)
    return TensorMap(name, tensor, tuple(box), swizzle, tuple(es), interleave, oob, *at)


def map_problem(name: str, tensor: Tensor, box: tuple[int, ...], swizzle: str) -> str:
    """Why cuTensorMapEncodeTiled refuses a map ('' when it does not): the innermost dimension must be contiguous,
    the other strides multiples of 16 bytes, the inner box a multiple of 16 bytes and at most the swizzle span."""
    eb = tensor.element_bytes
    if len(tensor.shape) != len(box):
        return f"tensor map {name}: box has {len(box)} dimensions, the tensor {len(tensor.shape)}"
    order = map_order(tensor)
    strides = [tensor.strides[d] for d in order]
    if strides[-1] != 1:
        return f"tensor map {name}: the innermost dimension must be contiguous (stride 1), not {strides[-1]}"
    for s_ in strides[:-1]:
        if s_ * eb % 16:
            return f"tensor map {name}: stride {s_} is {s_ * eb} bytes, not a multiple of 16"
    inner = box[-1] * eb
    if inner % 16:
        return f"tensor map {name}: the inner box dimension is {inner} bytes, not a multiple of 16"
    if swizzle != "none" and inner > SWIZZLE_BYTES[swizzle]:
        return (f"tensor map {name}: the inner box dimension is {inner} bytes, wider than the "
                f"{SWIZZLE_BYTES[swizzle]}-byte span of {swizzle} swizzling")
    return ""


def overlap(t: Tensor) -> str:
    """Why ``t``'s strides place two elements at one address ('' when they do not)."""
    order = sorted(range(len(t.shape)), key=lambda d: (t.strides[d], d))
    reach = 1  # elements spanned by the dimensions placed so far
    for d in order:
        if t.shape[d] == 1:
            continue
        if t.strides[d] < reach:
            return f"strides {list(t.strides)} place two elements at one address"
        reach = t.strides[d] * (t.shape[d] - 1) + reach
    return ""


def _arg(w: _Where, at: tuple[int, int], a: Any) -> Arg:
    if isinstance(a, bool):
        raise w.error(at, "an argument cannot be a boolean")
    if isinstance(a, (int, float)):
        if isinstance(a, float) and not math.isfinite(a):
            raise w.error(at, f"scalar {a} is not finite")
        return Scalar(a, None, *at)
    if not isinstance(a, dict):
        raise w.error(at, f"an argument is a tensor table, a number or a struct table, not {type(a).__name__}")
    if "tensor" in a:
        return _tensor(w, at, a)
    if "tensor_map" in a:
        return _tensor_map(w, at, a)
    extra = set(a) - {"type", "value", "values", "pointer", "at"}
    if extra:
        raise w.error(at, f"unknown field '{sorted(extra)[0]}' in an argument (tensor, or type with value or values)")
    if not a:
        return Struct(None, (), *at)
    if "pointer" in a or "at" in a:
        ptr, off = a.get("pointer"), a.get("at")
        if not isinstance(ptr, dict) or "tensor" not in ptr or not isinstance(off, int) or isinstance(off, bool) \
                or not 0 <= off < 4096 or off % 8:
            raise w.error(at, "a struct's pointer is pointer = { tensor = ..., type = ..., shape = [...] } with at = "
                              "its byte offset (a multiple of 8)")
        tensor = _tensor(w, at, ptr)
        rest = {k: v for k, v in a.items() if k not in ("pointer", "at")}
        inner = _arg(w, at, rest) if rest else Struct(None, (), *at)
        if not isinstance(inner, Struct) or inner.values and inner.type and \
                len(inner.values) * ELEMENT_BYTES[inner.type] > off:
            raise w.error(at, f"the struct's values overlap its pointer at byte {off}")
        return Struct(inner.type, inner.values, *at, pointer=tensor, at=off)
    typ = a.get("type")
    if typ not in ELEMENT_BYTES:
        raise w.error(at, f"argument type {typ!r} is not one of {', '.join(ELEMENT_BYTES)}")
    if ("value" in a) == ("values" in a):
        raise w.error(at, "give either 'value' (a scalar) or 'values' (a struct of one type)")
    vals = [a["value"]] if "value" in a else a["values"]
    if not isinstance(vals, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        raise w.error(at, "'values' must be a list of numbers")
    for v in vals:
        try:
            encode_scalar(v, typ)
        except (ValueError, OverflowError) as e:
            raise w.error(at, str(e)) from None
    if "value" in a:
        return Scalar(vals[0], typ, *at)
    return Struct(typ, tuple(vals), *at)


def parse_launch(text: str, path: str = "<launch>") -> Launch:
    """Launch TOML text -> ``Launch`` (paths of ``ptx``/``cu`` resolved against ``path``'s folder)."""
    w = _Where(path, text)
    deep = nesting_error(text, "toml")
    if deep is not None:
        raise SpecError(path, *deep, f"TOML: arrays or tables nested deeper than {MAX_NESTING} levels")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line, col = (int(m[1]), int(m[2])) if m else (1, 1)
        raise SpecError(path, line, col, "TOML: " + re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))) from None
    return from_fields(doc, w)


class Fields(_Where):
    """Where the fields of a launch given as values (the API, the command line) are: nowhere in a file, so every
    error is at line 1 of ``path`` (``<api>`` or ``<command line>``)."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "")

    def key(self, key: str) -> tuple[int, int]:
        return (1, 1)

    def value(self, key: str) -> tuple[int, int]:
        return (1, 1)

    def elements(self, key: str) -> list[tuple[int, int]]:
        return []


def from_fields(doc: dict[str, Any], w: _Where) -> Launch:
    """A launch from its fields (a TOML document's, or the same given as values), every field checked."""
    path = w.path
    for k in doc:
        if k not in KEYS:
            raise w.error(w.key(k), f"unknown field '{k}' (the fields: {', '.join(KEYS)})")
    where = Path(path).parent if path not in ("<launch>", "-", "<api>", "<command line>") else Path(".")
    ptx = cu = arch = None
    if "ptx" in doc and "cu" in doc:
        raise w.error(w.key("cu"), "give 'ptx' or 'cu', not both")
    for k in ("ptx", "cu", "arch", "entry", "computes"):
        if k in doc and doc[k] is not None and not isinstance(doc[k], str):
            raise w.error(w.value(k), f"'{k}' must be a string")
    if doc.get("ptx") is not None:
        ptx = str(where / doc["ptx"])
    elif doc.get("cu") is not None:
        cu = str(where / doc["cu"])
        arch = doc.get("arch")
        if not arch or not re.fullmatch(r"sm_\d+[af]?", arch):
            raise w.error(w.key("arch") if "arch" in doc else w.key("cu"), "'cu' needs arch = \"sm_80\" (or another sm_NN)")
    elif "ptx" not in doc:
        raise SpecError(path, 1, 1, "missing field 'ptx' (or 'cu' with 'arch')")
    if doc.get("arch") is not None and doc.get("cu") is None:
        raise w.error(w.key("arch"), "'arch' is for 'cu' (a PTX file states its .target)")
    for k in ("grid", "block", "computes", "args"):
        if doc.get(k) is None:
            raise SpecError(path, 1, 1, f"missing field '{k}'")
    grid = _int_list(w, "grid", doc["grid"], 1, MAX_CTAS)
    block = _int_list(w, "block", doc["block"], 1, MAX_THREADS)
    if math.prod(block) > MAX_THREADS:
        raise w.error(w.value("block"), f"a block of {math.prod(block)} threads (limit {MAX_THREADS})")
    if math.prod(grid) > MAX_CTAS:
        raise w.error(w.value("grid"), f"a grid of {math.prod(grid)} CTAs (limit {MAX_CTAS})")
    shared = doc.get("shared")
    if shared is not None and (not isinstance(shared, int) or isinstance(shared, bool) or not 0 <= shared <= 1 << 20):
        raise w.error(w.value("shared"), "'shared' must be the bytes of dynamic shared memory (0 .. 1048576)")
    c_line, c_col = w.value("computes")
    quote = w.char_at(c_line, c_col)
    computes = parse_einsum(doc["computes"], path, c_line, c_col + (1 if quote in "\"'" else 0))
    raw = doc["args"]
    if not isinstance(raw, (list, tuple)):
        raise w.error(w.value("args"), "'args' must be an array of the kernel's arguments, in order")
    at = w.elements("args")
    args = tuple(a if isinstance(a, (Tensor, Scalar, Struct, TensorMap)) else
                 _arg(w, at[k] if k < len(at) else w.value("args"), a) for k, a in enumerate(raw))
    positions = {k: w.key(k) for k in doc}
    positions["computes"] = (c_line, c_col + (1 if quote in "\"'" else 0))
    cluster = _int_list(w, "cluster", doc["cluster"], 1, 16) if doc.get("cluster") is not None else (1, 1, 1)
    if any(g % c for g, c in zip(grid, cluster)):
        raise w.error(w.value("cluster"), f"the grid {list(grid)} is not whole clusters of {list(cluster)}")
    launch = Launch(grid, block, computes, args, doc.get("entry"), shared, ptx, cu, arch, path, positions, cluster)
    check_computes(launch, w.error)
    return launch


def check_computes(launch: Launch, error) -> None:
    """``computes`` names tensors among the arguments, each index with one extent."""
    at = launch.at("computes")
    tensors = launch.tensors()
    names = [a.name for a in launch.args if isinstance(a, Tensor)] + \
        [a.name for a in launch.args if isinstance(a, TensorMap) and a.tensor is not None] + \
        [a.pointer.name for a in launch.args if isinstance(a, Struct) and a.pointer is not None]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise error(at, f"tensor {sorted(dup)[0]} is given twice among the arguments")
    for tm in launch.tensor_maps():
        t = tensors.get(tm.name)
        where = (tm.line, tm.col) if tm.line else at
        if t is None:
            raise error(where, f"tensor map {tm.name} maps no tensor: give it type and shape, or a tensor argument "
                               f"{tm.name}")
        problem = map_problem(tm.name, t, tm.box, tm.swizzle)
        if problem:
            raise error(where, problem)
    for t in tensors.values():
        if t.zero and t.name != launch.computes.output.tensor:
            raise error((t.line, t.col) if t.line else at, f"tensor {t.name}: init = \"zero\" is for the output "
                        f"tensor ({launch.computes.output.tensor}): an input's elements are its atoms")
    extent: dict[str, tuple[int, str]] = {}
    accesses = (launch.computes.output, *launch.computes.factors)
    for acc in accesses:
        t = tensors.get(acc.tensor)
        if t is None:
            raise error(at, f"computes names {acc.tensor}, which is no tensor argument")
        if len(acc.indices) != len(t.shape):
            raise error(at, f"{acc.tensor} has {len(t.shape)} dimensions, computes gives it {len(acc.indices)} indices")
        for k, (ix, n) in enumerate(zip(acc.indices, t.shape)):
            if acc.divisor(k) != 1:
                continue
            if ix in extent and extent[ix][0] != n:
                raise error(at, f"index {ix} is {extent[ix][0]} in {extent[ix][1]} and {n} in {acc.tensor}")
            extent.setdefault(ix, (n, acc.tensor))
    for acc in accesses:  # a divided index: its factor's extent is the blocks of the whole index's
        t = tensors[acc.tensor]
        for k, (ix, n) in enumerate(zip(acc.indices, t.shape)):
            d = acc.divisor(k)
            if d != 1 and n != -(-extent[ix][0] // d):
                raise error(at, f"{acc.tensor}'s dimension {k} is {n}, but {ix} / {d} takes {-(-extent[ix][0] // d)} "
                                f"values ({ix} is {extent[ix][0]} in {extent[ix][1]})")


def read_launch(path: str) -> Launch:
    """A launch file, by the safe reader."""
    return parse_launch(read_text(path), path)


__all__ = ["Arg", "ELEMENT_BYTES", "Fields", "Launch", "SWIZZLES", "Scalar", "Struct", "Tensor", "TensorMap",
           "check_computes", "encode_scalar", "map_order",
           "from_fields", "parse_launch", "read_launch", "row_major"]
