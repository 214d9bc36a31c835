"""Independent references: other tools' layouts, evaluated and conformed to the catalog's spec layouts.

Each reference is one module with the same three parts:

* ``probe() -> str``: '' when it can run here, else why not (the optional extra to install);
* ``evaluate(specs, timeout, path) -> CrosscheckReport``: its layouts evaluated into the model and
  paired with their spec layouts (``crosscheck.Row``: agree, differ, malformed, unmatched);
* its ``ORIGIN``: references that derive from the same source (CuTe compiled and CuTe read as text)
  count once when the agreement matrix asks whether two independent references agree.

| name | what | origin | extra |
| --- | --- | --- | --- |
| ``cute`` | CuTe's traits compiled host-only with g++ and the CUDA headers | CUTLASS CuTe | ``refs`` |
| ``cute-text`` | CuTe's ``mma_traits_sm*.hpp`` read as text (the original ``crosscheck``) | CUTLASS CuTe | ``refs`` |
| ``triton`` | Gluon's ``to_linear_layout`` of NVMMA (v2, v3) and dot-operand layouts, in a subprocess | Triton | ``triton`` |
| ``tensor-layouts`` | the ``tensor-layouts`` package's NVIDIA MMA and copy atoms | tensor-layouts | ``refs`` |
| ``tilelang`` | TileLang's layout functions, read with ``ast`` and evaluated (never imported) | TileLang | see below |
| ``mosaic`` | JAX Mosaic GPU's ``TiledLayout``/``TMEMLayout`` objects, read with ``ast`` (``tiled``) | JAX Mosaic GPU | below |
| ``flashinfer`` | FlashInfer's sm_120 scale-factor loads and selectors, CUDA read as text (``cexpr``) | FlashInfer | below |
| ``trtllm`` | TensorRT-LLM's ``get_sf_out_offset_128x4``, CUDA read as text (``cexpr``) | TensorRT-LLM | below |
| ``tinygrad`` | tinygrad's tensor-core emulator (CUDA), read with ``ast`` | tinygrad | below |

The last five are read from their files, never imported (TileLang and FlashInfer need torch, Mosaic GPU jaxlib):
``pyproject.toml``'s ``refs-files`` pins them, installed with ``pip install --no-deps`` (``.ci/run`` does).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMES = ("cute", "cute-text", "triton", "tensor-layouts", "tilelang", "mosaic", "flashinfer", "trtllm", "tinygrad")
ORIGINS = {"cute": "CUTLASS CuTe", "cute-text": "CUTLASS CuTe", "triton": "Triton", "tensor-layouts": "tensor-layouts",
           "tilelang": "TileLang", "mosaic": "JAX Mosaic GPU", "flashinfer": "FlashInfer", "trtllm": "TensorRT-LLM",
           "tinygrad": "tinygrad"}
_MODULES = {"cute": "cute", "cute-text": "cute_text", "triton": "triton", "tensor-layouts": "tensor_layouts",
            "tilelang": "tilelang", "mosaic": "mosaic", "flashinfer": "flashinfer", "trtllm": "trtllm",
            "tinygrad": "tinygrad"}


@dataclass(frozen=True)
class Reference:
    name: str
    origin: str
    module: Any

    def probe(self) -> str:
        return self.module.probe()

    def evaluate(self, specs: list, timeout: float, path: str | Path | None = None) -> Any:
        return self.module.evaluate_default(specs, timeout, path)


def reference(name: str) -> Reference:
    """The reference called ``name`` (``KeyError`` with the known names otherwise)."""
    if name not in _MODULES:
        raise KeyError(f"unknown reference {name!r}; known: {', '.join(NAMES)}")
    mod = importlib.import_module(f"{__name__}.{_MODULES[name]}")
    return Reference(name, ORIGINS[name], mod)


def probe_all() -> dict[str, str]:
    """name -> '' (available) or why not."""
    return {n: reference(n).probe() for n in NAMES}

