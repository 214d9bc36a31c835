"""``ptx-verify kernel``: verify a compiled kernel's tensor-core data path (``verify.kernel``, docs/kernels.md).

    ptx-verify kernel LAUNCH.toml
    ptx-verify kernel FILE.ptx --grid 2,2 --block 128 --computes "C[m, n] = A[m, k] * B[k, n]" --arg A:f16:256x128 ...
    ptx-verify kernel FILE.cu --arch sm_80 ...            (compiled with nvcc -ptx)
    ptx-verify kernel --triton mm.py:matmul_kernel --constexpr BM=128 ... --target sm_80 --grid 1 --arg ...
    ptx-verify kernel LAUNCH.toml --svg c.svg [--full]   (also the picture: every output element's verdict)

Exit 0 proved, 1 refuted (or the engines disagree), 2 bad input (one line naming file, line and column)."""
from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ..errors import UsageError
from ..outputs.json import to_json
from . import options

ARG_HELP = ("a kernel argument, in parameter order: a tensor NAME:TYPE:SHAPE[:STRIDES] (A:f16:256x128, strides in "
            "elements, B:f16:128x256:1x128), a TMA tensor map declaring its tensor NAME:TYPE:SHAPE:tma=BOX[:SWIZZLE] "
            "(A:f16:128x256:tma=128x64:128B; a Triton descriptor's block, its box and swizzle taken from the "
            "compiled kernel), an integer or a float (256, 1.0), a typed scalar TYPE=VALUE (f16=1.0), a struct of one "
            "type TYPE=V,V,... (s32=256,256,128), or {} (an empty struct)")


def _ints(text: str, flag: str, n: int = 3) -> list[int]:
    parts = [p for p in re.split(r"[,x ]", text.strip()) if p]
    try:
        vals = [int(p, 10) for p in parts]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected up to {n} whole numbers, e.g. {flag} 2,2,1") from None
    if not 1 <= len(vals) <= n:
        raise UsageError(f"{flag} {text!r}: expected 1 to {n} whole numbers")
    return vals


def _number(text: str) -> int | float | None:
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        v = float(text)
    except ValueError:
        return None
    return v


def parse_arg(text: str) -> Any:
    """One ``--arg`` as the launch file's value (a dict for a tensor or a typed value, a number)."""
    from ..kernel.launch import ELEMENT_BYTES
    t = text.strip()
    if t == "{}":
        return {}
    n = _number(t)
    if n is not None:
        return n
    if "=" in t and ":" not in t:
        typ, _, vals = t.partition("=")
        if typ not in ELEMENT_BYTES:
            raise UsageError(f"--arg {text!r}: {typ!r} is not a type ({', '.join(ELEMENT_BYTES)})")
        nums = [_number(v) for v in vals.split(",")]
        if not nums or any(v is None for v in nums):
            raise UsageError(f"--arg {text!r}: expected TYPE=VALUE or TYPE=V,V,... with numbers")
        return {"type": typ, "value": nums[0]} if len(nums) == 1 and "," not in vals else {"type": typ, "values": nums}
    parts = t.split(":")
    tma = next((k for k, p in enumerate(parts) if p.startswith("tma=")), None)
    if tma is not None:  # NAME:TYPE:SHAPE[:STRIDES]:tma=BOX[:SWIZZLE]: a tensor map that declares its tensor
        box, swizzle = parts[tma][4:], parts[tma + 1:]
        parts = parts[:tma]
        if len(swizzle) > 1:
            raise UsageError(f"--arg {text!r}: expected NAME:TYPE:SHAPE[:STRIDES]:tma=BOX[:SWIZZLE]")
    if len(parts) not in (3, 4):
        raise UsageError(f"--arg {text!r}: expected NAME:TYPE:SHAPE[:STRIDES][:tma=BOX[:SWIZZLE]], a number, "
                         "TYPE=VALUE or {}")
    name, typ, shape = parts[:3]
    out: dict[str, Any] = {"tensor": name, "type": typ, "shape": _ints(shape, f"--arg {name}: shape", 8)}
    if len(parts) == 4:
        try:
            out["strides"] = [int(p, 10) for p in parts[3].split("x")]
        except ValueError:
            raise UsageError(f"--arg {text!r}: strides are whole numbers separated by x (1x128)") from None
    if tma is not None:
        out = {"tensor_map": out.pop("tensor"), **out, "box": _ints(box, f"--arg {name}: tma box", 5)}
        if swizzle:
            out["swizzle"] = swizzle[0]
    return out


def _constexprs(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
            raise UsageError(f"--constexpr {item!r}: expected NAME=INTEGER, e.g. --constexpr BM=128")
        try:
            out[name.strip()] = int(value, 0)
        except ValueError:
            raise UsageError(f"--constexpr {item!r}: expected NAME=INTEGER, e.g. --constexpr BM=128") from None
    return out


def cmd_kernel(args: argparse.Namespace) -> int:
    from ..kernel.frontdoor import verify
    if args.full and not args.svg:
        raise UsageError("--full is for --svg FILE (the picture)")
    if args.svg:  # an output that cannot be written is refused before any work
        from ..outputs.baseline import PICTURE, check_writable
        check_writable(args.svg, PICTURE)
    fields: dict[str, Any] = dict(entry=args.entry, shared=args.shared, computes=args.computes,
                                  grid=_ints(args.grid, "--grid") if args.grid else None,
                                  block=_ints(args.block, "--block") if args.block else None,
                                  args=[parse_arg(a) for a in args.arg] if args.arg else None)
    given = [k for k, v in fields.items() if v is not None]
    if args.triton:
        if args.file:
            raise UsageError(f"give --triton or {args.file}, not both")
        result = verify(triton=args.triton, constexprs=_constexprs(args.constexpr), target=args.target,
                        num_warps=args.num_warps, num_stages=args.num_stages, where="<command line>", **fields)
    elif args.file is None:
        raise UsageError("give a launch file (LAUNCH.toml), a .ptx or .cu file, or --triton FILE.py:KERNEL")
    else:
        if args.constexpr:
            raise UsageError("--constexpr is for --triton")
        suffix = args.file.rsplit(".", 1)[-1].lower() if "." in args.file else ""
        if suffix == "toml":
            if given or args.arch:
                raise UsageError(f"{args.file} is a launch file: its fields say what {', '.join('--' + g for g in given)}"
                                 " would")
            result = verify(args.file)
        elif suffix in ("ptx", "cu"):
            if suffix == "cu" and not args.arch:
                raise UsageError(f"{args.file}: a .cu file needs --arch sm_80 (or another sm_NN)")
            if suffix == "ptx" and args.arch:
                raise UsageError("--arch is for a .cu file (a PTX file states its .target)")
            key = "ptx" if suffix == "ptx" else "cu"
            result = verify(**{key: args.file}, arch=args.arch, where="<command line>", **fields)
        else:
            raise UsageError(f"{args.file}: expected a launch file (.toml), a .ptx or a .cu file")
    if args.svg:
        from ..outputs.baseline import write_atomic
        from ..outputs.svg_kernel import kernel_svg
        write_atomic(args.svg, kernel_svg(result, full=args.full))
    if args.format == "json":
        sys.stdout.write(to_json(result.to_json()))
    elif args.format == "sarif":
        from ..outputs.kernel import kernel_sarif
        from ..outputs.sarif import to_text
        sys.stdout.write(to_text(kernel_sarif(result)))
    else:
        from ..outputs.kernel import kernel_text
        sys.stdout.write(kernel_text(result))
    return 0 if result.proved else 1


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    k = subparsers.add_parser(
        "kernel", help="verify a compiled kernel's PTX: every thread of every CTA executed exactly, the tensor-core "
                       "instructions by the catalog's layouts; proved, or the first wrong output element and its chain",
        description="Execute a kernel's PTX exactly on the CPU (every thread of every CTA of the launch; data as "
                    "symbolic atoms and exact sums, and again as random integers) and decide whether every output "
                    "element is exactly its einsum sum. docs/kernels.md has the launch file and transcripts.")
    k.add_argument("file", nargs="?", metavar="LAUNCH|FILE", help="a launch file (.toml), or a .ptx or .cu file with "
                                                                  "the launch given by the options below")
    k.add_argument("--triton", metavar="FILE.py:KERNEL", help="a Triton kernel, compiled for --target on the CPU in "
                                                              "a subprocess (needs the triton package)")
    k.add_argument("--constexpr", action="append", default=[], metavar="NAME=VALUE",
                   help="a Triton constexpr (repeat: --constexpr BM=128 --constexpr BN=128)")
    k.add_argument("--target", default="sm_80", help="Triton's target (default sm_80)")
    k.add_argument("--num-warps", type=lambda s: options._integer(s, 1, 32, "from 1 to 32"), default=4,
                   help="Triton's num_warps (default 4)")
    k.add_argument("--num-stages", type=lambda s: options._integer(s, 1, 8, "from 1 to 8"), default=3,
                   help="Triton's num_stages (default 3)")
    k.add_argument("--arch", default=None, help="a .cu file's architecture (sm_80), for nvcc -ptx")
    k.add_argument("--entry", default=None, help="the .entry to run (default: the module's only one)")
    k.add_argument("--grid", default=None, metavar="X[,Y[,Z]]", help="CTAs of the launch")
    k.add_argument("--block", default=None, metavar="X[,Y[,Z]]", help="threads of a CTA (Triton: from --num-warps)")
    k.add_argument("--shared", type=options.nonnegative, default=None, metavar="BYTES",
                   help="dynamic shared memory (default: none beyond what the PTX declares; Triton: its own)")
    k.add_argument("--computes", default=None, metavar="EINSUM", help="what the kernel computes: \"C[m, n] = "
                                                                      "A[m, k] * B[k, n]\"")
    k.add_argument("--arg", action="append", default=[], metavar="ARG", help=ARG_HELP)
    k.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="text (default), json or sarif")
    k.add_argument("--svg", default=None, metavar="FILE", help="also draw the output tensor, every element coloured by "
                                                               "what the verdict says of it, the first wrong one "
                                                               "outlined with its chain (condensed when large)")
    k.add_argument("--full", action="store_true", help="--svg: every cell, even of a large output")
    k.set_defaults(func=cmd_kernel)
