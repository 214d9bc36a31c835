"""The CuTe shared-memory notation against CuTe itself: a host program built with g++ against CUTLASS's CuTe
headers (the optional ``nvidia-cutlass`` wheel, ``pip install -e '.[cutlass]'``) prints, for every GMMA atom
(K/MN x INTER/SW32/SW64/SW128) of 8-, 16- and 32-bit types and the UMMA 128B/32B-atomicity atom, tiled with
``tile_to_shape`` in both orders, CuTe's own ``print`` of the layout and the element offset of every cell as
a swizzled shared-memory pointer computes it (a 1024-byte aligned buffer, and one 128 bytes past it).  The
notation must read CuTe's printed form and give the same offsets at both bases.  Skipped, saying so, without
g++ or the headers."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from verify import api
from verify.layout.named import evaluate_all
from verify.layout.notations.cute_shared import import_cute_shared

pytestmark = pytest.mark.slow

TYPES = {"uint8_t": 8, "half_t": 16, "float": 32}
ATOMS = [(f"GMMA::Layout_{mj}_{kind}_Atom", mj) for mj in ("K", "MN") for kind in ("INTER", "SW32", "SW64", "SW128")]
ATOMS.append(("UMMA::Layout_MN_SW128_32B_Atom", "MN"))


def _cuda_includes() -> list[Path] | None:
    """CUDA's include directory and the one with ``cuda/std`` (CCCL), which CuTe's host code needs."""
    for base in sorted(Path("/usr/local").glob("cuda*/include")):
        for d in (base, base / "cccl"):
            if (d / "cuda" / "std" / "utility").exists() and (base / "cuda_runtime_api.h").exists():
                return [base, d]
    return None


@pytest.fixture(scope="module")
def cute_dump(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    inc = api.cutlass_headers()
    cccl = _cuda_includes()
    gxx = shutil.which("g++")
    if inc is None or cccl is None or gxx is None:
        pytest.skip("needs g++, CuTe's headers (pip install nvidia-cutlass) and CUDA's cuda/std headers")
    lines = []
    for atom, major in ATOMS:
        for t in TYPES:
            for step in ("", ", Step<_2,_1>{}"):
                text = f"tile_to_shape({atom}<{t}>{{}}, SHAPE{{}}{step})"
                lines.append(f'  dump<{t}>("{text}", tile_to_shape({atom}<{t}>{{}}, '
                             f'make_shape(Int<2 * decltype(size<0>({atom}<{t}>{{}}))::value>{{}}, '
                             f'Int<2 * decltype(size<1>({atom}<{t}>{{}}))::value>{{}}){step}));')
    src = r'''
#include <cstdio>
#include <cstdint>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
using namespace cute;
alignas(1024) static unsigned char buf[1 << 20];
template <class T, class L>
void dump(const char* text, L layout) {
  std::printf("{\"text\": \"%s\", \"bits\": %d, \"print\": \"", text, int(sizeof_bits<T>::value));
  print(layout);
  std::printf("\", \"rows\": %d, \"cols\": %d, \"offsets\": [", int(size<0>(layout)), int(size<1>(layout)));
  for (int base : {0, 128}) {
    T* p = reinterpret_cast<T*>(buf + base);
    auto t = make_tensor(make_smem_ptr(p), layout);
    std::printf("%s[", base ? "," : "");
    for (int r = 0; r < size<0>(layout); ++r)
      for (int c = 0; c < size<1>(layout); ++c)
        std::printf("%s%ld", (r || c) ? "," : "", long((reinterpret_cast<uintptr_t>(&t(r, c)) -
                                                         reinterpret_cast<uintptr_t>(buf + base)) * 8 / sizeof_bits<T>::value));
    std::printf("]");
  }
  std::printf("]}\n");
}
int main() {
''' + "\n".join(lines) + "\n}\n"
    d = tmp_path_factory.mktemp("cute")
    (d / "dump.cpp").write_text(src, encoding="utf-8")
    r = subprocess.run([gxx, "-std=c++17", "-O0", f"-I{inc}", *(f"-I{x}" for x in cccl), "dump.cpp", "-o", "dump"], cwd=d,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.skip(f"CuTe host program does not build here: {r.stderr[-400:]}")
    out = subprocess.run([str(d / "dump")], capture_output=True, text=True, timeout=120, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _offsets(lay) -> np.ndarray:
    v = evaluate_all(lay.map)
    assert v.ok.all()
    return np.asarray(v.out["offset"]).reshape(-1)


def test_every_atom_tiling_as_cute_computes_it(cute_dump: list[dict]) -> None:
    assert len(cute_dump) == len(ATOMS) * len(TYPES) * 2
    for rec in cute_dump:
        shape = f"Shape<_{rec['rows']},_{rec['cols']}>"
        text = rec["text"].replace("SHAPE", shape)
        for k, base in enumerate((0, 128)):
            mine = import_cute_shared(text, base=base)
            assert mine.element_bits == rec["bits"] and (mine.rows, mine.cols) == (rec["rows"], rec["cols"]), text
            assert _offsets(mine).tolist() == rec["offsets"][k], f"{text} at base {base}"
            # and CuTe's own printed form of the same layout reads back to the same offsets
            printed = import_cute_shared(rec["print"], base=base)
            assert _offsets(printed).tolist() == rec["offsets"][k], rec["print"]
