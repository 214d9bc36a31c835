"""Assembling probe programs for the tests: all of one architecture in one translation unit, as
``confirm --device cuda`` builds them, through ``nvcc -ptx`` and ``ptxas`` at that architecture."""
from __future__ import annotations

import subprocess
from pathlib import Path

from verify.hardware import batch, kinds
from verify.hardware.cuda import find_nvcc, find_ptxas

NVCC = find_nvcc()
PTXAS = find_ptxas(NVCC)


def assemble(probes: list, arch: str, cu: Path) -> tuple[int, str, str]:
    """(exit code, the tail of the tools' messages, the PTX text) of ``probes`` built for ``arch`` in ``cu``."""
    cu.write_text(batch.batch_program([(p.id, kinds.program(p)) for p in probes]))
    ptx = cu.with_suffix(".ptx")
    r = subprocess.run([str(NVCC), f"-arch={arch}", "-ptx", "-o", str(ptx), str(cu)], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([str(PTXAS), f"-arch={arch}", "-o", str(cu.with_suffix(".cubin")), str(ptx)],
                           capture_output=True, text=True)
    return r.returncode, (r.stderr + r.stdout)[-2000:], ptx.read_text() if ptx.exists() else ""
