"""Where a kernel's PTX comes from: a ``.ptx`` file (the safe reader), a ``.cu`` file compiled with ``nvcc -ptx``,
or a Triton kernel compiled for a target on the CPU (``triton.compile(...).asm["ptx"]``, in a subprocess, with the
optional ``triton`` extra).  The kernel chosen is the launch's ``entry``, or the module's only ``.entry``."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import SpecError, UsageError
from ..files import read_text
from ..hardware.cuda import find_nvcc
from ..ptx import parse_module
from ..ptx.syntax import Function, Module
from .launch import Arg, Launch, Scalar, Tensor, TensorMap

COMPILE_TIMEOUT = 600.0


class ToolchainError(UsageError):
    """A compiler the launch needs is missing or failed (exit 2, one line)."""


def pick_entry(module: Module, entry: str | None, where: tuple[str, int, int]) -> Function:
    entries = [f for f in module.entries() if f.body]
    if entry:
        for f in entries:
            if f.name == entry:
                return f
        names = ", ".join(f.name for f in entries) or "none"
        raise SpecError(*where, f"no .entry {entry} in {module.path} (its entries: {names})")
    real = [f for f in entries if any(getattr(s, "base", "") != "ret" for s in f.body)]
    if len(real) == 1:
        return real[0]
    if not real:
        raise SpecError(module.path, 1, 1, "the module has no .entry with a body")
    names = ", ".join(f.name for f in real)
    raise SpecError(*where, f"{module.path} has {len(real)} entries: name one with entry = \"...\" ({names})")


def load_ptx(path: str) -> Module:
    return parse_module(read_text(path), path)


def compile_cu(path: str, arch: str) -> tuple[str, str]:
    """(PTX text, the command that made it) of ``nvcc -ptx -arch ARCH -lineinfo`` on ``path``."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise ToolchainError(f"{path}: nvcc is not found (PATH, CUDA_HOME, or pip install nvidia-cuda-nvcc-cu12); "
                             "compile it with nvcc -ptx elsewhere and give the .ptx")
    read_text(path)  # a regular, readable file, by the safe reader
    with tempfile.TemporaryDirectory(prefix="ptx-verify-") as tmp:
        out = Path(tmp) / "kernel.ptx"
        cmd = [nvcc, "-ptx", f"-arch={arch}", "-lineinfo", "-std=c++17", "--expt-relaxed-constexpr"]
        cutlass = _cutlass_include()
        if cutlass:
            cmd += [f"-I{cutlass}"]
        cmd += [path, "-o", str(out)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT, env=compiler_env("NVCC_"))
        except subprocess.TimeoutExpired:
            raise ToolchainError(f"{path}: nvcc did not finish in {COMPILE_TIMEOUT:.0f} s") from None
        if p.returncode != 0:
            first = next((ln for ln in p.stderr.splitlines() if "error" in ln), p.stderr.strip()[:300])
            raise ToolchainError(f"{path}: nvcc failed: {first}")
        text = out.read_text(encoding="utf-8")
    shown = ["nvcc", "-ptx", f"-arch={arch}", "-lineinfo", "-std=c++17", "--expt-relaxed-constexpr"] + \
        (["-I<cutlass>/include"] if cutlass else []) + [os.path.basename(path)]
    return text, " ".join(shown)


def _cutlass_include() -> str | None:
    """CuTe's headers from the ``nvidia-cutlass`` wheel, when it is installed (for CuTe kernels)."""
    try:
        import cutlass_library
    except ImportError:
        return None
    inc = Path(cutlass_library.__file__).parent / "source" / "include"
    return str(inc) if inc.is_dir() else None


def load(launch: Launch) -> tuple[Module, Function]:
    """The launch's module and kernel (a ``cu`` launch is compiled first)."""
    where = (launch.path, *launch.at("entry" if launch.entry else "ptx" if launch.ptx else "cu"))
    if launch.ptx:
        module = load_ptx(launch.ptx)
    elif launch.cu:
        text, _ = compile_cu(launch.cu, launch.arch or "sm_80")
        module = parse_module(text, launch.cu.rsplit(".", 1)[0] + ".ptx")
    else:
        raise SpecError(launch.path, 1, 1, "missing field 'ptx' (or 'cu' with 'arch')")
    return module, pick_entry(module, launch.entry, where)


# ----------------------------------------------------------------------------- Triton

TRITON_TYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "tf32": "fp32", "f64": "fp64", "s8": "i8", "u8": "u8",
                "s16": "i16", "s32": "i32", "u32": "u32", "s64": "i64", "e4m3": "fp8e4nv", "e5m2": "fp8e5",
                "e2m1": "u8"}

_TRITON_SCRIPT = r'''
import importlib.util, json, sys, warnings
warnings.simplefilter("ignore")
req = json.load(sys.stdin)
import triton
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget
spec = importlib.util.spec_from_file_location("ptx_verify_kernel_source", req["file"])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
fn = getattr(mod, req["kernel"], None)
if fn is None or not hasattr(fn, "arg_names"):
    print(json.dumps({"error": "%s has no @triton.jit function %s" % (req["file"], req["kernel"])})); sys.exit(0)
names = list(fn.arg_names)
unknown = [k for k in req["constexprs"] if k not in names]
if unknown:
    print(json.dumps({"error": "%s has no parameter %s (its parameters: %s)" % (req["kernel"], unknown[0], ", ".join(names))})); sys.exit(0)
sig, consts, attrs, runtime = {}, {}, {}, []
args = list(req["args"])
for i, n in enumerate(names):
    if n in req["constexprs"]:
        sig[n] = "constexpr"; consts[n] = req["constexprs"][n]; continue
    if not args:
        print(json.dumps({"error": "no argument for %s's parameter %s" % (req["kernel"], n)})); sys.exit(0)
    a = args.pop(0)
    if a["kind"] == "tensordesc":
        sig[n] = "tensordesc<%s[%s]>" % (a["type"], ",".join(str(x) for x in a["block"])); runtime.append(len(runtime))
    elif a["kind"] == "pointer":
        sig[n] = "*" + a["type"]; attrs[(i,)] = [["tt.divisibility", 16]]; runtime.append(len(runtime))
    elif a["kind"] == "int" and a["value"] == 1:
        sig[n] = "constexpr"; consts[n] = 1
    elif a["kind"] == "int":
        sig[n] = "i64" if not -2**31 <= a["value"] < 2**31 else "i32"
        if a["value"] % 16 == 0:
            attrs[(i,)] = [["tt.divisibility", 16]]
        runtime.append(len(runtime))
    else:
        sig[n] = "fp32"; runtime.append(len(runtime))
if args:
    print(json.dumps({"error": "%d arguments more than %s's parameters" % (len(args), req["kernel"])})); sys.exit(0)
opts = {"num_warps": req["num_warps"], "num_stages": req["num_stages"]}
k = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", req["cc"], 32), options=opts)
dropped = [i for i, n in enumerate([n for n in names if n not in req["constexprs"]]) if sig[n] == "constexpr"]
meta = [{"swizzle": d["swizzle"], "block": list(d["block_size"])} for d in (getattr(k.metadata, "tensordesc_meta", None) or [])]
print(json.dumps({"ptx": k.asm["ptx"], "shared": k.metadata.shared, "num_warps": k.metadata.num_warps,
                  "name": k.metadata.name, "dropped": dropped, "triton": triton.__version__, "tensordesc": meta}))
'''


@dataclass(frozen=True)
class TritonKernel:
    ptx: str
    shared: int
    num_warps: int
    name: str
    dropped: tuple[int, ...]  # launch arguments Triton specialised away (integers equal to 1)
    version: str
    tensordesc: tuple[tuple[str, tuple[int, ...]], ...] = ()  # each tensor descriptor's TMA swizzle and box, as Triton's
    # launcher encodes its tensor map (cuTensorMapEncodeTiled with the kernel's metadata.tensordesc_meta)


def compile_triton(source: str, constexprs: dict[str, Any], args: tuple[Any, ...], target: str = "sm_80",
                   num_warps: int = 4, num_stages: int = 3) -> TritonKernel:
    """``source`` ``FILE.py:KERNEL`` compiled by Triton for ``target`` on the CPU, in a subprocess (the file is the
    user's own Python: it is run there, never in this process).  Arguments specialise as Triton's launcher does:
    pointers and integers divisible by 16 are marked so, an integer equal to 1 becomes a constant."""
    m = re.fullmatch(r"(.+\.py):([A-Za-z_][A-Za-z0-9_]*)", source)
    if not m:
        raise UsageError(f"--triton {source}: give FILE.py:KERNEL")
    path, kernel = m.group(1), m.group(2)
    read_text(path)
    t = re.fullmatch(r"sm_(\d+)[af]?", target)
    if not t:
        raise UsageError(f"--target {target}: give sm_NN (sm_80)")
    req_args: list[dict[str, object]] = []
    for a in args:
        if isinstance(a, TensorMap):
            if a.tensor is None:
                raise UsageError(f"tensor map {a.name}: a Triton tensor descriptor declares its tensor (type, shape)")
            req_args.append({"kind": "tensordesc", "type": TRITON_TYPES.get(a.tensor.type, "fp16"),
                             "block": list(a.box)})
        elif isinstance(a, Tensor):
            req_args.append({"kind": "pointer", "type": TRITON_TYPES.get(a.type, "fp16")})
        elif isinstance(a, Scalar) and isinstance(a.value, int):
            req_args.append({"kind": "int", "value": a.value})
        elif isinstance(a, Scalar):
            req_args.append({"kind": "float", "value": a.value})
        else:
            raise UsageError("a Triton kernel takes tensors and scalars, not structs")
    req = {"file": path, "kernel": kernel, "constexprs": constexprs, "args": req_args,
           "cc": int(t.group(1)), "num_warps": num_warps, "num_stages": num_stages}
    try:
        p = subprocess.run([sys.executable, "-c", _TRITON_SCRIPT], input=json.dumps(req), capture_output=True,
                           text=True, timeout=COMPILE_TIMEOUT, env=compiler_env("TRITON_"))
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{source}: Triton did not finish in {COMPILE_TIMEOUT:.0f} s") from None
    out = p.stdout.strip().splitlines()
    if p.returncode != 0 or not out:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        if "No module named 'triton'" in p.stderr:
            tail = "Triton is not installed (pip install 'ptx-layout-verify[refs]' or triton)"
        raise ToolchainError(f"{source}: Triton's compile failed: {tail}")
    res = json.loads(out[-1])
    if "error" in res:
        raise ToolchainError(f"{source}: {res['error']}")
    swz = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
    return TritonKernel(res["ptx"], int(res["shared"]), int(res["num_warps"]), res["name"], tuple(res["dropped"]),
                        res["triton"], tuple((swz.get(int(d["swizzle"]), "none"), tuple(int(x) for x in d["block"]))
                                             for d in res.get("tensordesc", [])))


def compiler_env(*prefixes: str) -> dict[str, str]:
    """A compiler subprocess's environment: this one without the variables that change what the compiler emits
    (``TRITON_*``, ``NVCC_*``), so no variable changes a verdict or an output (the compiler's version and the
    files do).  Triton's FP-fusion default is stated: 3.9 warns when it is unset, and keeps fusion on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    if "TRITON_" in prefixes:
        env["TRITON_DEFAULT_FP_FUSION"] = "1"
    return env


def triton_launch(launch: Launch, kernel: TritonKernel) -> Launch:
    """The launch of a compiled Triton kernel: its block from the warps, its dynamic shared memory, and the
    arguments Triton specialised away dropped.  A tensor descriptor becomes what Triton's launcher passes (its
    ``make_tensordesc_arg``): the tensor map, encoded with the box and swizzle of the kernel's
    ``metadata.tensordesc_meta`` (the box Triton chose, which may split the descriptor's block), then the tensor's
    shape (32-bit) and strides (64-bit)."""
    kept = [a for k, a in enumerate(launch.args) if k not in kernel.dropped]
    args: list[Arg] = []
    metas = list(kernel.tensordesc)
    for a in kept:
        if isinstance(a, TensorMap) and a.tensor is not None:
            swizzle, box = metas.pop(0) if metas else (a.swizzle, a.box)
            args.append(replace(a, box=box, swizzle=swizzle))
            args.extend(Scalar(int(x), "s32", a.line, a.col) for x in a.tensor.shape)
            args.extend(Scalar(int(x), "s64", a.line, a.col) for x in a.tensor.strides)
        else:
            args.append(a)
    return replace(launch, args=tuple(args), block=(32 * kernel.num_warps, 1, 1), shared=kernel.shared,
                   entry=kernel.name)


__all__ = ["TRITON_TYPES", "ToolchainError", "TritonKernel", "compile_cu", "compile_triton", "compiler_env", "load", "load_ptx",
           "pick_entry", "triton_launch"]
