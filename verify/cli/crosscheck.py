"""``ptx-verify crosscheck``: an independent reference (CuTe's headers read or compiled, Triton, tensor-layouts,
TileLang)
against the spec, layout by layout, or every reference at once (``--matrix``).

Argument checking and printing only; the work is ``verify.api.crosscheck``, ``api.reference`` and
``api.references``.  A reference that cannot run here is exit 2 with the reason.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import api
from ..errors import UsageError
from ..outputs import json as out_json
from ..outputs import reports_text
from . import inputs, options

CUTLASS_HINT = ("no CuTe headers: give --cute PATH (a CUTLASS checkout, its include/ or include/cute/atom, or an "
                "unzipped nvidia-cutlass wheel), or install them with: pip install 'ptx-layout-verify[cutlass]' "
                "(the nvidia-cutlass wheel ships cute/atom/mma_traits_sm*.hpp)")


def _spec_layouts(path: str | None) -> list:
    return api.load(inputs.paths_or_bundled([path] if path is not None else None))


def _emit(fmt: str, result, text) -> None:
    sys.stdout.write(out_json.to_json(result.to_json()) if fmt == "json" else text(result))


def cmd_crosscheck(args: argparse.Namespace) -> int:
    if args.matrix:
        matrix = api.references(_spec_layouts(args.specs), args.timeout, cute=args.cute)
        _emit(args.format, matrix, reports_text.matrix_text)
        return matrix.exit_code()
    if args.reference != "cute-text":
        return _crosscheck_reference(args)
    root = args.cute if args.cute is not None else api.cutlass_headers()
    if root is None:
        raise UsageError(CUTLASS_HINT)
    if not Path(root).exists():
        raise UsageError(f"--cute {root}: no such file or directory")
    if not api.mma_headers(root):
        raise UsageError(f"no mma_traits_sm*.hpp under {root}; {CUTLASS_HINT}")
    specs = _spec_layouts(args.specs)
    try:
        report = api.crosscheck(root, specs, args.timeout)
    except api.NotationError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{e.filename or root}:1:1: error: {e.strerror or 'cannot read'}", file=sys.stderr)
        return 2
    _emit(args.format, report, reports_text.crosscheck_text)
    return report.exit_code()


def _crosscheck_reference(args: argparse.Namespace) -> int:
    """``crosscheck --reference NAME``: one independent reference against the spec (exit 2 with the reason
    when it cannot run here)."""
    if args.cute is not None and not Path(args.cute).exists():
        raise UsageError(f"--cute {args.cute}: no such file or directory")
    path = args.cute if args.reference == "cute" else None
    if path is None:
        why = api.reference_reasons()[args.reference]
        if why:
            raise UsageError(f"reference {args.reference} is unavailable: {why}")
    try:
        report = api.reference(args.reference, _spec_layouts(args.specs), args.timeout, path)
    except (FileNotFoundError, RuntimeError) as e:
        raise UsageError(f"reference {args.reference} is unavailable: {e}") from None
    _emit(args.format, report, reports_text.crosscheck_text)
    return report.exit_code()


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``crosscheck``."""
    x = subparsers.add_parser("crosscheck", help="an independent reference (CuTe, Triton, tensor-layouts, TileLang) "
                                                 "against the spec, layout by layout")
    x.add_argument("--reference", choices=("cute", "cute-text", "triton", "tensor-layouts", "tilelang", "mosaic",
                                           "flashinfer", "trtllm", "tinygrad"),
                   default="cute-text",
                   help="cute: CuTe's traits compiled host-only (g++ and the CUDA headers); cute-text (default): "
                        "mma_traits_sm*.hpp read as text; triton: Gluon linear layouts; tensor-layouts: its atoms; "
                        "tilelang: TileLang's layout functions, read from source; mosaic: JAX Mosaic GPU's layouts, "
                        "read from source; flashinfer, trtllm: FlashInfer's headers and the TensorRT-LLM kernels it "
                        "ships, read as text; tinygrad: its tensor-core emulator, read from source")
    x.add_argument("--matrix", action="store_true",
                   help="every reference that runs here: the agreement matrix of the catalog (exit 1 on a "
                        "difference not reviewed)")
    x.add_argument("--cute", metavar="PATH", default=None,
                   help="a CUTLASS checkout or include dir, or an unzipped nvidia-cutlass wheel "
                        "(default: the installed nvidia-cutlass)")
    x.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    x.add_argument("--specs", default=None, help="spec files or directory (default: the bundled specs)")
    x.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    x.set_defaults(func=cmd_crosscheck)
