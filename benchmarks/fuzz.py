"""Fuzz the tool the way a hostile or careless input would: no traceback, no run over 5 s, no silent pass.

    .venv/bin/python benchmarks/fuzz.py [--pages ../shared/ptx-isa-9.0] [--n 200] [--seed 1]

Kinds of input (``--n`` of each):

* ``page``: a real doc page with one random change (a number, an operator, a name, a bracket, a
  comparison, a line deleted or duplicated, a table cell, a byte) -> ``check`` text/JSON/SARIF/JUnit,
  ``ingest``, ``report``;
* ``spec``: a bundled spec file with one random change -> ``check``, ``list``, ``table``;
* ``formula``: a random formula (grammar-generated, then mutated at the byte level) in a spec;
* ``notation``: CuTe / Triton / table text mutated -> ``conform``.

For every run: the exit code must be 0, 1 or 2; on exit 2 stderr must be one line with ``error:``; a
Python traceback anywhere is a failure; a run over 5 s is a failure.  For pages, a *silent pass* is
a change that gives a layout another map, other register facts, makes a fragment unbuildable, or adds
an ``error`` to the text (an erratum ingest reports that the original page does not have), while
``check`` exits 0: also a failure.  Prints a summary; exit 1 if anything failed.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify.cli import main  # noqa: E402

LIMIT_S = 5.0


def run(argv: list[str]) -> tuple[int, str, str, float, str]:
    """In process: (exit code, stdout, stderr, seconds, traceback or '')."""
    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    tb = ""
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except SystemExit as e:
        rc = int(e.code or 0)
    except BaseException:  # noqa: BLE001 - a traceback is exactly what is being hunted
        import traceback
        tb = traceback.format_exc()
        rc = -1
    return rc, out.getvalue(), err.getvalue(), time.perf_counter() - t, tb


MUTATIONS = [
    lambda rng, s: re.sub(r"\b\d+\b", lambda m: str(int(m.group()) + rng.choice([-1, 1, 2, 8])), s, count=1) if rng.random() < 0.5
    else _nth(rng, s, r"\b\d+\b", lambda m: str(rng.choice([0, 1, 3, 7, 32, 64, 2**40]))),
    lambda rng, s: _nth(rng, s, r"[-+*/%&|^]", lambda m: rng.choice(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"])),
    lambda rng, s: _nth(rng, s, r"\b(groupID|threadID_in_group|row|col|i)\b", lambda m: rng.choice(["groupID", "threadID_in_group", "i", "x", "%laneid"])),
    lambda rng, s: _nth(rng, s, r"[()\[\]]", lambda m: rng.choice(["", "(", ")", "((", "[", "]"])),
    lambda rng, s: _nth(rng, s, r"<=|>=|<|>|==", lambda m: rng.choice(["<", "<=", ">", ">=", "==", "!="])),
    lambda rng, s: _line_op(rng, s),
    lambda rng, s: _nth(rng, s, r"\b(two|four|eight|single|one)\b", lambda m: rng.choice(["two", "four", "eight", "one", "sixteen"])),
    lambda rng, s: _nth(rng, s, r"\b[abcde]\d+\b", lambda m: m.group()[0] + str(rng.randint(0, 140))),
    lambda rng, s: _byte(rng, s),
]


def _nth(rng: random.Random, s: str, pattern: str, repl) -> str:  # noqa: ANN001
    hits = list(re.finditer(pattern, s))
    if not hits:
        return s
    m = rng.choice(hits)
    return s[: m.start()] + repl(m) + s[m.end():]


def _line_op(rng: random.Random, s: str) -> str:
    lines = s.split("\n")
    k = rng.randrange(len(lines))
    if rng.random() < 0.5:
        del lines[k]
    else:
        lines.insert(k, lines[k])
    return "\n".join(lines)


def _byte(rng: random.Random, s: str) -> str:
    k = rng.randrange(len(s))
    return s[:k] + rng.choice(["\x00", "\u2026", "'''", '"', "\\", "{", "=", "\t", "é", "%laneid"]) + s[k + 1:]


# ----------------------------------------------------------------------------- kinds

def fuzz_pages(rng: random.Random, pages: Path, n: int, work: Path, fails: list[str], stats: dict) -> None:
    from verify import api
    from verify.checks.diff import diff, errata_key
    originals = sorted(pages.glob("9-7-14-[56]-*matrix-fragments*.md"))
    base = {p.name: api.load_with_doc_findings([p]) for p in originals}
    base_specs = {name: specs for name, (specs, _) in base.items()}
    def error_keys(found) -> set[str]:  # noqa: ANN001 - an erratum without its position and its section number
        return {errata_key(f).split(" ", 1)[-1] for f in found if f.severity == "error"}

    base_errors = {name: error_keys(found) for name, (_, found) in base.items()}
    for k in range(n):
        src = rng.choice(originals)
        text = src.read_text(encoding="utf-8")
        body_from = text.find("```")  # most changes land in formulas and tables
        region = text[body_from:] if body_from > 0 and rng.random() < 0.8 else text
        mutated = text.replace(region, rng.choice(MUTATIONS)(rng, region), 1)
        if mutated == text:
            continue
        d = work / f"page{k}"
        d.mkdir()
        page = d / src.name
        page.write_text(mutated, encoding="utf-8")
        results = {}
        for fmt in ("text", "json", "sarif", "junit"):
            results[fmt] = _judge(["check", str(page), "--format", fmt], f"page {src.name} #{k} ({fmt})", fails, stats)
        _judge(["ingest", str(page), "--out", str(d / "specs")], f"ingest {src.name} #{k}", fails, stats)
        if k % 10 == 0:
            _judge(["report", str(page), "--out", str(d / "report"), "--max-delta", "1"], f"report {src.name} #{k}", fails, stats)
        rc = results["text"]
        # silent pass: the page now says something else, and check is happy
        if rc == 0:
            try:
                new, found = api.load_with_doc_findings([page])
            except Exception:  # noqa: BLE001 - loading failed: check should have said so
                fails.append(f"SILENT: {src.name} #{k}: the page no longer loads but check exits 0")
                continue
            changed = diff(base_specs[src.name], new)
            unbuilt = [u for s in new for u in s.unbuilt]
            errors = sorted(error_keys(found) - base_errors[src.name])
            if errors:
                kept = _keep(page, f"silent-error-{k}")
                fails.append(f"SILENT: {src.name} #{k}: a new error in the text ({errors[0]}) but check exits 0 "
                             f"(input kept: {kept})")
                stats["silent"] += 1
            elif changed.changed or changed.removed or changed.added or unbuilt:
                kept = _keep(page, f"silent-{k}")
                fails.append(f"SILENT: {src.name} #{k}: {changed.text_lines()[:2]} unbuilt={len(unbuilt)} but check "
                             f"exits 0 (input kept: {kept})")
                stats["silent"] += 1
        shutil.rmtree(d, ignore_errors=True)


KEEP: Path | None = None


def _keep(path: Path, tag: str) -> str:
    """Copy a failing input out of the scratch directory, so that it can be re-run by hand."""
    if KEEP is None:
        return "not kept (no --keep)"
    dest = KEEP / tag / path.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, dest)
    return str(dest)


def fuzz_specs(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    originals = sorted((ROOT / "specs").glob("mma*.toml"))
    for k in range(n):
        src = rng.choice(originals)
        text = src.read_text(encoding="utf-8")
        mutated = rng.choice(MUTATIONS)(rng, text)
        p = work / f"spec{k}.toml"
        p.write_text(mutated, encoding="utf-8")
        _judge(["check", str(p), "--format", rng.choice(["text", "json"])], f"spec {src.name} #{k}", fails, stats)
        _judge(["list", "--specs", str(p)], f"list {src.name} #{k}", fails, stats)
        m = re.search(r'operand = "([ABC])"', mutated)
        if m:
            _judge(["table", f".{m.group(1)}.", "--specs", str(p)], f"table {src.name} #{k}", fails, stats, ok=(0, 2))


def fuzz_formulas(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    spec = (ROOT / "specs" / "mma.m8n8k16.toml").read_text(encoding="utf-8")
    head = spec[: spec.index("[[fragment]]")]
    ops = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"]

    def expr(d: int) -> str:
        r = rng.random()
        if d <= 0 or r < 0.3:
            return rng.choice(["%laneid", "i", "g", str(rng.choice([0, 1, 2, 4, 8, 31, 63, 64, 1000, 2**31 - 1]))])
        if r < 0.4:
            return "-" + expr(d - 1)
        if r < 0.5:
            return "(" * 40 + expr(d - 1) + ")" * 40 if rng.random() < 0.1 else "(" + expr(d - 1) + ")"
        return f"{expr(d - 1)} {rng.choice(ops)} {expr(d - 1)}"

    for k in range(n):
        f = (f"g = {expr(2)}\nrow = {expr(3)} for ci where i {rng.choice(['<', '>=', '=='])} {rng.randint(0, 3)}\n"
             f"      {expr(3)} Otherwise\ncol = {expr(3)}")
        if rng.random() < 0.3:
            f = rng.choice(MUTATIONS)(rng, f)
        body = (head + '[[fragment]]\noperand = "C"\ntypes = ["s32"]\nregisters = 2\nregister_type = "s32"\n'
                'elements_per_register = 1\nformula = """\n' + f.replace("\\", "\\\\").replace('"', '\\"') + '\n"""\n')
        p = work / f"formula{k}.toml"
        p.write_text(body, encoding="utf-8")
        _judge(["check", str(p), "--format", "json"], f"formula #{k}", fails, stats)


def fuzz_notations(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    cute = "((4,8),(2,2,2)):((32,1),(16,8,128))"
    triton = (ROOT / "tests" / "data" / "notations" / "triton_mma_v2_f16_a_16x16.json").read_text(encoding="utf-8")
    for k in range(n):
        text = rng.choice(MUTATIONS)(rng, cute) if rng.random() < 0.5 else cute
        _judge(["conform", "mma.m16n8k16.A.f16_bf16", "--cute", text], f"cute #{k} {text!r}", fails, stats)
        t = rng.choice(MUTATIONS)(rng, triton)
        p = work / f"triton{k}.json"
        p.write_text(t, encoding="utf-8")
        _judge(["conform", "mma.m16n8k16.A.f16_bf16", "--triton", str(p)], f"triton #{k}", fails, stats)


def _judge(argv: list[str], what: str, fails: list[str], stats: dict, ok: tuple[int, ...] = (0, 1, 2)) -> int:
    rc, out, err, secs, tb = run(argv)
    stats["runs"] += 1
    stats["max_s"] = max(stats["max_s"], secs)
    stats[f"exit{rc}"] = stats.get(f"exit{rc}", 0) + 1
    if tb:
        fails.append(f"TRACEBACK: {what}: {tb.strip().splitlines()[-1]}")
    elif rc not in ok:
        fails.append(f"EXIT {rc}: {what}")
    elif rc == 2 and (len(err.strip().splitlines()) != 1 or "error:" not in err):
        fails.append(f"BAD ERROR LINE: {what}: {err.strip()[:200]!r}")
    if "Traceback (most recent call last)" in out + err:
        fails.append(f"TRACEBACK PRINTED: {what}")
    if secs > LIMIT_S:
        fails.append(f"SLOW {secs:.1f}s: {what}")
    if argv[-1] == "json" and rc in (0, 1):
        try:
            json.loads(out)
        except ValueError:
            fails.append(f"NOT JSON: {what}")
    return rc


def main_() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default=str(ROOT.parent / "shared" / "ptx-isa-9.0"))
    ap.add_argument("--n", type=int, default=100, help="inputs of each kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default="page,spec,formula,notation")
    ap.add_argument("--keep", default=None, metavar="DIR", help="copy inputs that fail here")
    args = ap.parse_args()
    global KEEP
    KEEP = Path(args.keep) if args.keep else None
    rng = random.Random(args.seed)
    fails: list[str] = []
    stats = {"runs": 0, "max_s": 0.0, "silent": 0}
    kinds = args.kinds.split(",")
    with tempfile.TemporaryDirectory(prefix="ptx-fuzz-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        if "page" in kinds and Path(args.pages).is_dir():
            fuzz_pages(rng, Path(args.pages), args.n, work, fails, stats)
        if "spec" in kinds:
            fuzz_specs(rng, args.n, work, fails, stats)
        if "formula" in kinds:
            fuzz_formulas(rng, args.n, work, fails, stats)
        if "notation" in kinds:
            fuzz_notations(rng, args.n, work, fails, stats)
        total = time.perf_counter() - t0
    print(json.dumps({**stats, "max_s": round(stats["max_s"], 2), "seconds": round(total, 1), "failures": len(fails)}))
    for f in fails[:50]:
        print(f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main_())
