"""How fast hostile notation input is refused (prints numbers; asserts nothing).

    .venv/bin/python benchmarks/hostile.py [--repeat 3]

The tests (``tests/test_notations.py``) assert that every reader refuses these inputs with a
positioned ``NotationError`` or reads them; how long that takes is measured here, never in a test
(the suite runs on loaded machines).  For each reader: the slowest input, median of ``--repeat``
runs, in seconds.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify.layout.notations import NotationError, parse_cute, parse_index_code, parse_table, parse_triton  # noqa: E402
from verify.layout.notations.cute_headers import read_header  # noqa: E402
from verify.layout.notations.errors import load_json  # noqa: E402

HOSTILE: dict[str, tuple[Callable[..., Any], list[Any]]] = {
    "cute": (parse_cute, ["(" * 1_000_000, "(1," * 300_000, "Layout<" + "Shape<" * 150_000, ")" * 1_000_000,
                          "1" * 1_000_000, "(4,8):" + "(" * 400_000, b"\xff" * 1000, "x" * (2 << 20)]),
    "triton": (parse_triton, ["[" * 1_000_000, "DistributedLinearLayout(reg_bases=" + "[" * 500_000,
                              "#ttg.linear<{" * 300_000, "A" * 1_000_000,
                              "DistributedLinearLayout(reg_bases=" + "[" * 50_000 + "]" * 50_000 + ")"]),
    "table": (parse_table, ["[" * 1_000_000, '{"entries": ' + "[" * 500_000, "[" + "1" * 1_000_000 + "]",
                            '"' + "a" * 1_000_000]),
    "index code": (lambda t: parse_index_code(t), ["row = " + "(" * 1_000_000, "row = 1 //" * 20_000,
                                                   "row = " + "-" * 50_000 + "1\ncol = 0"]),
    "json": (load_json, ["[" * 1_000_000, '{"a":' * 300_000, "[" * 100_000 + "]" * 100_000]),
    "cute headers": (lambda t: read_header(t, "h.hpp"), ["template <" * 100_000, "{" * 300_000, "/*" + "x" * 1_000_000,
                                                         "#define X \\\n" * 50_000, "; " * 500_000]),
}


def _once(fn: Callable[..., Any], text: Any) -> float:
    t = time.perf_counter()
    try:
        fn(text)
    except NotationError:
        pass
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for reader, (fn, inputs) in HOSTILE.items():
        times = [statistics.median(_once(fn, x) for _ in range(args.repeat)) for x in inputs]
        k = max(range(len(times)), key=times.__getitem__)
        print(f"{reader:14s} {len(inputs)} inputs, slowest {times[k]:.3f} s (input {k}), total {sum(times):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
