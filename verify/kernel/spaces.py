"""The state spaces a launch sets up before the kernel's first instruction: the addresses of its shared
variables (static, then dynamic), of the module's ``.global``/``.const`` variables and of each thread's ``.local``
ones, and the parameter space's bytes (each argument encoded as its parameter's type, at its offset).
"""
from __future__ import annotations

from ..errors import SpecError
from ..ptx.syntax import Function, Module, VarDecl
from .launch import Scalar, Struct, Tensor, TensorMap, encode_scalar
from .machine import Program


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def layout_shared(module: Module, fn: Function, dynamic: int | None) -> tuple[dict[str, int], int]:
    """Addresses of the shared variables (static in declaration order, then the dynamic ones after them) and the
    total size (static + ``dynamic`` bytes)."""
    addr: dict[str, int] = {}
    off = 0
    decls: list[VarDecl] = [v for v in (*module.variables, *fn.variables) if v.space.startswith("shared")]
    for v in decls:
        if v.count is not None:
            off = _align(off, v.align)
            addr[v.name] = off
            off += v.size
    static = off
    dyn_align = max([v.align for v in decls if v.count is None] or [1])
    start = _align(static, max(dyn_align, 16))
    for v in decls:
        if v.count is None:
            addr[v.name] = start
    size = start + (dynamic or 0) if any(v.count is None for v in decls) else static
    return addr, size


GLOBALS_WINDOW = 0x7B00_0000_0000  # the addresses given to a module's .global and .const variables


def layout_globals(module: Module) -> dict[str, int]:
    """Addresses of the module's ``.global``/``.const`` variables, outside every tensor."""
    addr: dict[str, int] = {}
    off = 0
    for v in module.variables:
        if v.space.split("::")[0] in ("global", "const"):
            off = _align(off, max(v.align, 1))
            addr[v.name] = GLOBALS_WINDOW + off
            off += max(v.size, 1)
    return addr


def layout_local(fn: Function) -> tuple[dict[str, int], int]:
    """Addresses of the function's ``.local`` variables (each thread's own) and their total size."""
    addr: dict[str, int] = {}
    off = 0
    for v in fn.variables:
        if v.space.startswith("local") and v.count is not None:
            off = _align(off, v.align)
            addr[v.name] = off
            off += v.size
    return addr, off


def build_params(prog: Program) -> None:
    """The parameter space: each argument encoded as its parameter's type, at its offset and alignment."""
    fn, launch = prog.fn, prog.launch
    buf = bytearray()
    args = list(launch.args)
    if len(args) > len(fn.params):
        a = args[len(fn.params)]
        raise SpecError(launch.path, a.line or 1, a.col or 1,
                        f"{len(args)} arguments for {len(fn.params)} parameters of {fn.name}")
    gmem = prog.gmem
    assert gmem is not None
    for k, p in enumerate(fn.params):
        off = _align(len(buf), p.align)
        buf.extend(b"\0" * (off - len(buf)))
        prog.param_off[p.name] = (off, p.size)
        if k >= len(args):
            if p.size != 8:
                raise SpecError(launch.path, 1, 1, f"parameter {k} of {fn.name} ({p.name}, .{p.type}) is not given: "
                                                   "only trailing pointers (Triton's scratch pointers) may be left out")
            buf.extend(b"\0" * 8)
            continue
        a = args[k]
        where = (launch.path, a.line or 1, a.col or 1)
        if isinstance(a, TensorMap):
            if p.size < 128:
                raise SpecError(*where, f"tensor map {a.name} is given for parameter {k} ({p.name}) of {p.size} bytes, "
                                        "smaller than a 128-byte CUtensorMap")
            prog.tensor_maps[off] = a  # at the parameter's start (CuTe's TMA copy atom: the map, then its own fields)
            buf.extend(b"\0" * p.size)
            continue
        if isinstance(a, Tensor):
            if p.size != 8:
                raise SpecError(*where, f"tensor {a.name} is given for parameter {k} ({p.name}), which is .{p.type} "
                                        f"of {p.size} bytes, not a 64-bit pointer")
            buf.extend(gmem.base_of(a.name).to_bytes(8, "little"))
        elif isinstance(a, Scalar):
            typ = a.type or p.type
            if a.type is None and p.count != 1:
                raise SpecError(*where, f"parameter {k} ({p.name}) is {p.size} bytes: give the scalar's type "
                                        "({ type = \"f16\", value = 1.0 })")
            try:
                data = encode_scalar(a.value, typ if typ not in ("b8", "b16", "b32", "b64") or isinstance(a.value, int)
                                     else {"b16": "f16", "b32": "f32", "b64": "f64"}.get(typ, typ))
            except (ValueError, OverflowError, KeyError) as e:
                raise SpecError(*where, f"parameter {k} ({p.name}): {e}") from None
            if len(data) != p.size:
                raise SpecError(*where, f"parameter {k} ({p.name}) is {p.size} bytes, the scalar {a.value} as .{typ} "
                                        f"is {len(data)}")
            buf.extend(data)
        else:
            assert isinstance(a, Struct)
            packed = bytearray()
            for v in a.values:
                enc = encode_scalar(v, a.type or "b8")
                packed.extend(b"\0" * (_align(len(packed), len(enc)) - len(packed)))
                packed.extend(enc)
            if a.pointer is not None:
                packed.extend(b"\0" * (a.at - len(packed)))
                packed.extend(gmem.base_of(a.pointer.name).to_bytes(8, "little"))
            if len(packed) > p.size:
                raise SpecError(*where, f"parameter {k} ({p.name}) is {p.size} bytes, the struct given is {len(packed)}")
            buf.extend(bytes(packed) + b"\0" * (p.size - len(packed)))
    prog.params = bytes(buf)


__all__ = ["GLOBALS_WINDOW", "build_params", "layout_globals", "layout_local", "layout_shared"]
