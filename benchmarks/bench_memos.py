"""What each per-process memo store buys: the whole-catalog check (``check_all``, one process, cold caches)
with every store working, then with each store in turn made to forget everything it is given (the store
replaced by a dict that never keeps an entry; an ``lru_cache`` function by its unwrapped function).

Prints, per store, CPU seconds (median of ``--runs``) and the difference from all stores on.  A store whose
removal costs nothing measurable should go; the others stay, with this measurement as their reason
(docs/architecture.md, "Caches").  Memos held on their objects (``layout.memo.held``: a layout's family members,
a fragment's cell spans, a formula's variables, a sparse map's evaluations) are not module stores and are not
listed; no module store is keyed by ``id()`` (tests/test_architecture.py).

    .venv/bin/python benchmarks/bench_memos.py [--runs 3] [--only NAME]
"""
from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (module, attribute, what it keeps)
STORES = [
    ("verify.checks.fragment", "_ENGINE_MEMO", "a fragment's decided engine results, by its map and domain"),
    ("verify.checks.family", "_FAMILY_MEMO", "a family's decided engine results"),
    ("verify.layout.model", "_CELLS_BY_MAP", "a layout's cells, by its map's value"),
    ("verify.layout.model", "_DIGEST_BY_MAP", "a layout's digest, by its map's value and matrix"),
    ("verify.engines.smt", "_IN_DOMAIN", "the domain constraint per variables"),
    ("verify.engines.smt", "_BV", "bit-vector constants"),
]
LRU = [
    ("verify.layout.named", "_mux_trees", "TableMap's multiplexer trees per table and width"),
    ("verify.layout.model", None, "every lru_cache of layout.model"),
    ("verify.formula.bounds", None, "every lru_cache of formula.bounds"),
    ("verify.layout.family", None, "every lru_cache of layout.family"),
    ("verify.layout.sparse", None, "every lru_cache of layout.sparse"),
    ("verify.catalog.spec", None, "every lru_cache of catalog.spec"),
]


class Forget(dict):
    """A dict that keeps nothing: every lookup misses."""

    def __setitem__(self, key, value):
        pass

    def setdefault(self, key, default=None):
        return default


def _clear() -> None:
    from verify.checks.fragment import clear_caches
    try:
        clear_caches()
    except AttributeError:  # an lru_cache function replaced by its unwrapped self (the LRU rows)
        pass
    for mod, attr, _ in STORES:
        store = getattr(importlib.import_module(mod), attr)
        store.clear()
    for mod, fn, _ in LRU:
        m = importlib.import_module(mod)
        for v in vars(m).values():
            if hasattr(v, "cache_clear") and (fn is None or getattr(v, "__name__", "") == fn):
                v.cache_clear()


def _once(specs) -> float:
    from verify.checks.run import check_all
    _clear()
    t0 = time.process_time()
    check_all(specs, jobs=1)
    return time.process_time() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=None, help="one store (module.attribute)")
    args = ap.parse_args()
    from verify import api
    specs = api.load(str(ROOT / "specs"))
    _once(specs)  # imports and first-use costs out of the way
    base = statistics.median(_once(specs) for _ in range(args.runs))
    print(json.dumps({"all_stores_cpu_s": round(base, 2)}), file=sys.stderr, flush=True)
    rows = []
    for mod, attr, what in STORES:
        name = f"{mod}.{attr}"
        if args.only and args.only != name:
            continue
        m = importlib.import_module(mod)
        saved = getattr(m, attr)
        setattr(m, attr, Forget())
        try:
            t = statistics.median(_once(specs) for _ in range(args.runs))
        finally:
            setattr(m, attr, saved)
        rows.append({"store": name, "keeps": what, "cpu_s_without": round(t, 2), "costs_s": round(t - base, 2)})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    for mod, fn, what in LRU:
        m = importlib.import_module(mod)
        cached = {k: v for k, v in vars(m).items() if hasattr(v, "cache_clear") and hasattr(v, "__wrapped__")
                  and (fn is None or k == fn)}
        name = f"{mod}.{fn or '*lru_cache'}"
        if args.only and args.only != name:
            continue
        for k, v in cached.items():
            setattr(m, k, v.__wrapped__)
        try:
            t = statistics.median(_once(specs) for _ in range(args.runs))
        finally:
            for k, v in cached.items():
                setattr(m, k, v)
        rows.append({"store": name, "keeps": what, "cpu_s_without": round(t, 2), "costs_s": round(t - base, 2),
                     "note": "module-level name replaced; callers that imported the function keep the cache"})
    print(json.dumps({"all_stores_cpu_s": round(base, 2), "runs": args.runs, "stores": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
