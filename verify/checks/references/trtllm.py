"""The TensorRT-LLM reference: the swizzled 128 x 4 scale-factor layout its quantization kernels write.

``flashinfer-python`` (``pip install --no-deps flashinfer-python==0.7.4``) ships TensorRT-LLM's quantization
kernels (``flashinfer/data/csrc/nv_internal/tensorrt_llm/kernels/quantization_utils.cuh``), which write NVFP4 and
MXFP8 scale factors in the layout CUTLASS's block-scaled GEMMs read: ``get_sf_out_offset_128x4(batchIdx, mIdx,
kIdx, numRows, numColVecs)``, a straight-line function of integer declarations.  It is TensorRT-LLM's own
code for CUTLASS's format (CUTLASS states it as a CuTe layout, ``Sm1xxBlockScaledConfig``): an independent
implementation that has to agree with CUTLASS's kernels on hardware.  The function is read as text and run by
``cexpr`` (C semantics, a closed subset; never compiled) for every member of ``storage.sf.cutlass.128x4``
(``offset(l, m, kb) = get_sf_out_offset_128x4(l, m, kb, M, KB)``) and for one tile,
``storage.sf.cutlass.128x4.tile`` (``(0, row, kb, 128, 4)``).
"""
from __future__ import annotations

import itertools
import time
from pathlib import Path

from ...layout.model import MapLayout
from ..crosscheck import CrosscheckReport
from ..fragment import DEFAULT_TIMEOUT
from . import flashinfer
from .cexpr import function_body, run_function
from .common import Evaluated, conform_rows
from .pyfunc import Refused

NAME = "trtllm"
FILE = "csrc/nv_internal/tensorrt_llm/kernels/quantization_utils.cuh"
FUNC = "get_sf_out_offset_128x4"
SIGNATURE = (r"int64_t\s+get_sf_out_offset_128x4\s*\(\s*int\s+batchIdx\s*,\s*int\s+mIdx\s*,\s*int\s+kIdx\s*,"
             r"\s*int\s+numRows\s*,\s*int\s+numColVecs\s*\)")


def probe() -> str:
    r = flashinfer.root()
    if r is None or not (r / FILE).is_file():
        return f"no TensorRT-LLM kernels: {flashinfer.INSTALL}"
    return ""


def offsets(r: Path, spec: MapLayout, env: dict[str, int]) -> tuple[tuple[tuple[int, ...], ...], int]:
    """The member's rows (inputs..., offset) from the function, and the function's line."""
    text = flashinfer.read(r / FILE, FILE)
    body, line = function_body(text, SIGNATURE, FILE)
    names = [d.name for d in spec.inputs]
    sizes = [d.at(env) for d in spec.inputs]
    rows = []
    for point in itertools.product(*(range(s) for s in sizes)):
        p = dict(zip(names, point))
        if spec.id.endswith(".tile"):
            args = {"batchIdx": 0, "mIdx": p["row"], "kIdx": p["kb"], "numRows": 128, "numColVecs": 4}
        else:
            args = {"batchIdx": p["l"], "mIdx": p["m"], "kIdx": p["kb"], "numRows": env["M"], "numColVecs": env["KB"]}
        rows.append((*point, run_function(body, line, args, FILE)))
    return tuple(rows), line


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None
                     ) -> CrosscheckReport:
    """The TensorRT-LLM kernels of the installed flashinfer-python (or ``path``: a ``flashinfer/data``)."""
    t0 = time.perf_counter()
    r = Path(path) if path is not None else flashinfer.root()
    if r is None or not r.is_dir():
        raise FileNotFoundError(f"no TensorRT-LLM kernels: {flashinfer.INSTALL}")
    items: list[Evaluated] = []
    for spec in specs:
        if not isinstance(spec, MapLayout) or spec.id not in ("storage.sf.cutlass.128x4",
                                                              "storage.sf.cutlass.128x4.tile"):
            continue
        members = [dict(zip([p.name for p in spec.params], vs))
                   for vs in itertools.product(*(p.values for p in spec.params))] or [{}]
        for env in members:
            params = tuple(sorted(env.items()))
            label = (f"{FUNC}(0, row, kb, 128, 4)" if not env else
                     f"{FUNC}(l, m, kb, {env['M']}, {env['KB']})")
            try:
                rows, line = offsets(r, spec, env)
            except Refused as e:
                items.append(Evaluated(label, "", FILE, e.line, spec, params, error=str(e)))
                continue
            items.append(Evaluated(label, "", FILE, line, spec, params, text=label, map_rows=rows))
    rows_out = conform_rows(items, timeout)
    where = (f"flashinfer-python {flashinfer.version()} (TensorRT-LLM kernels)" if path is None
             else f"TensorRT-LLM kernels in {Path(path).name}")
    return CrosscheckReport(where, (FILE,), tuple(rows_out), {}, time.perf_counter() - t0, NAME,
                            "TensorRT-LLM scale-factor layout")
