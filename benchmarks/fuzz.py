"""Fuzz the tool the way a hostile or careless input would: no traceback, no run over 5 s, no silent pass.

    .venv/bin/python benchmarks/fuzz.py [--pages ../shared/ptx-isa-9.0] [--n 200] [--seed 1]

Kinds of input (``--n`` of each):

* ``page``: a real doc page with one random change (a number, an operator, a name, a bracket, a
  comparison, a line deleted or duplicated, a table cell, a byte) -> ``check`` text/JSON/SARIF/JUnit,
  ``ingest``, ``report``;
* ``spec``: a bundled spec file with one random change -> ``check``, ``list``, ``table``;
* ``formula``: a random formula (grammar-generated, then mutated at the byte level) in a spec;
* ``notation``: CuTe / Triton / table text mutated -> ``conform``;
* ``banks``: random tiles (padded, swizzled, column-major), accesses and lane patterns (strided, with gaps)
  -> ``banks``, against an independent enumeration of every placement (``_bank_reference``);
* ``handoff``: every pair the catalog's relations prove, and random pairs of catalog fragments and members,
  -> ``handoff``, against an independent enumeration (``_handoff_reference``);
* ``index``: index code generated as a tree (helpers, ``#`` comments, ``//`` floor division through negative
  values, ``lane``/``tid``/``%laneid``, rewrites and small mutations) in every place that takes it (``conform``
  and ``table --formula`` of a fragment and of a family member with ``--param``, ``conform`` of a ``[[layout]]``
  map with ``--param``, ``banks``/``descriptor --formula``, ``banks --addresses``, ``consistent index:`` as a
  shared tile, a storage map and a family over ``VS``, a ``[[layout]]``'s formula through ``table`` and
  ``check``), each answer judged against the fuzzer's own interpreter of the tree (``WRONG ANSWER`` otherwise);
* ``param``: ``--param`` on every command that takes a layout (``table``, ``conform``, ``handoff``, ``check``,
  ``consistent``, ``banks``, ``descriptor``, ``probe``): names of index code's own and a family's parameters bound
  (judged by the fuzzer's interpreter, the scalar oracle of a catalog member, ``_handoff_reference``, or the same
  layout with the value written in) and the bindings that must be refused (a name no side has, a value a family
  does not take, a name the code reads that nothing binds: one line naming what is valid);
* ``signal`` (``max(2, n // 10)`` runs, Linux): ``check --jobs 2`` or ``report`` in a real process, then
  ``SIGINT`` (to the process or, as a terminal's Ctrl-C does, to its whole group), ``SIGTERM`` or
  ``SIGKILL`` after a random delay: the exit code must be 130 / 143 / -9 (or 0/1 if it finished first),
  stderr one line, no worker process may survive, no partial report may be left;
* ``special``: ``/dev/zero``, a FIFO with no writer and a directory wherever a command reads a file
  (``check``, ``list``, ``table``, ``diff``, ``ingest``, ``--baseline``, ``--against``, ``conform
  --formula/--triton/--table``, ``report``), each in a real process with a 60 s timeout: exit 2 with
  one line, never a hang;
* ``readonly``: every command that writes (``table --out``, ``pictures``, ``report``, ``ingest --out``,
  ``probe --emit``, ``confirm --out``, ``check --update-baseline``) into a read-only directory (run
  as ``nobody`` through ``setpriv`` when this is root) and under a regular file: exit 2, one line naming
  the path given, no temporary name, nothing written.

For every run: the exit code must be 0, 1 or 2; on exit 2 stderr must be one line with ``error:``; a
Python traceback anywhere is a failure; a run over 5 s is a failure (in-process kinds; the process
kinds have their own time limits).  Each kind's figures are printed on a line of their own: cases, runs,
failures, the slowest run and what it was.  For pages, a *silent pass* is a change that gives a layout
another map, other register facts, makes a fragment unbuildable, or adds an ``error`` to the text (an
erratum ingest reports that the original page does not have), while ``check`` exits 0: also a
failure.  Prints a summary; exit 1 if anything failed.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify.cli import main  # noqa: E402
from verify.layout.model import cell_at  # noqa: E402

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
    except BaseException:
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


def _nth(rng: random.Random, s: str, pattern: str, repl) -> str:
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
    def error_keys(found) -> set[str]:
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
            except Exception:
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


def fuzz_maps(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    """The commands over map layouts and block tiles: shared-memory layouts (CuTe swizzles, TTGIR shared
    attributes, index code) through descriptor, banks and conform; TTGIR block tiles through conform
    --triton/--block/--warps; index code over tid with --threads; Tensor Memory and storage through
    consistent."""
    cute = "Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)"
    swz = (ROOT / "examples" / "shared" / "swizzle128.txt").read_text(encoding="utf-8")
    nvmma = (ROOT / "examples" / "shared" / "nvmma128.ttgir").read_text(encoding="utf-8")
    ttgir = (ROOT / "tests" / "data" / "ttgir" / "ampere_matmul_f16.ttgir").read_text(encoding="utf-8")
    twelve = (ROOT / "examples" / "layouts" / "twelve_warps.txt").read_text(encoding="utf-8")
    c32 = "mma.m16n8k16.float.C.f32"
    for k in range(n):
        mut = lambda s: rng.choice(MUTATIONS)(rng, s) if rng.random() < 0.7 else s  # noqa: E731
        text = mut(cute)
        _judge(["descriptor", "--cute", text, "--instr", "wgmma", "--major", "K", "--format", "json"],
               f"descriptor --cute {text!r}", fails, stats)
        _judge(["conform", "wgmma.shared.atom.K.128B", "--cute", text], f"conform shared --cute {text!r}", fails, stats)
        p = work / f"swz{k}.txt"
        p.write_text(mut(swz), encoding="utf-8")
        _judge(["banks", "--formula", str(p), "--tile", rng.choice(["128x64", "8x64", "64x8", "3x5"]), "--type",
                rng.choice(["f16", "tf32", "e4m3"]), "--access", rng.choice(["ld.shared.v4", "ldmatrix.x4",
                "stmatrix.x4", "ld.shared.b32"])], f"banks {p.name}", fails, stats)
        p = work / f"nvmma{k}.ttgir"
        p.write_text(mut(nvmma), encoding="utf-8")
        _judge(["descriptor", "--triton", str(p), "--instr", "wgmma", "--format", "json"], f"descriptor --triton {p.name}",
               fails, stats)
        p = work / f"block{k}.ttgir"
        p.write_text(mut(ttgir), encoding="utf-8")
        extra = rng.choice([[], ["--block", rng.choice(["128x256", "16x104", "0x8"])], ["--warps", "2x4"]])
        _judge(["conform", c32, "--triton", str(p), "--tensor", "#mma", *extra], f"block --triton {p.name} {extra}",
               fails, stats)
        p = work / f"twelve{k}.txt"
        p.write_text(mut(twelve), encoding="utf-8")
        _judge(["conform", c32, "--formula", str(p), "--threads", rng.choice(["384", "32", "33", "0"])],
               f"index --threads {p.name}", fails, stats)
        w, r = rng.sample(["storage.sf.cutlass.128x4.tile", "storage.sf.cutlass.128x4.quantizer",
                           "storage.sf.flat_batch_padding", "tcgen05.sf.A.4x1", "tcgen05.cp.source.32x128b",
                           "wgmma.shared.atom.K.128B", c32], 2)
        _judge(["consistent", "--writer", w, "--reader", r], f"consistent {w} {r}", fails, stats)


# ----------------------------------------------------------------------------- banks placements, handoff pairs

BANK_TYPES = {"f16": 16, "f32": 32, "e4m3": 8}
BANK_ACCESSES = {"ld.shared.b32": (4, 32), "ld.shared.v2.b32": (8, 16), "ld.shared.v4": (16, 8), "ldmatrix.x4": (16, 8),
                 "ldmatrix.x2": (16, 8), "ldmatrix.x1": (16, 8), "st.shared.b32": (4, 32)}


def _bank_case(rng: random.Random) -> dict:
    """A random shared-memory tile (index code and the same layout as a Python function, in bytes), an access
    and a lane pattern (as text and as a Python function): row-major with a padded row and an XOR swizzle on
    16-byte chunks, or column-major (a vector runs down the rows)."""
    t = rng.choice(list(BANK_TYPES))
    eb = BANK_TYPES[t] // 8
    access = rng.choice(list(BANK_ACCESSES))
    nbytes, _ = BANK_ACCESSES[access]
    per = nbytes // eb
    lanes = {"ldmatrix.x1": 8, "ldmatrix.x2": 16}.get(access, 32)
    major = rng.choice(["row", "row", "col"])
    if major == "row":
        rows = rng.choice([8, 12, 16, 24, 32])
        cols = per * rng.choice([1, 2, 4, 8]) if per * 8 * eb <= 256 else per * rng.choice([1, 2])
        stride = cols * eb + rng.choice([0, 0, 16, 4 * rng.randint(1, 8)])
        swz = rng.choice([0, 0, 1, 3, 7]) if stride % 128 == 0 else 0
        code = f"off = row * {stride} + col * {eb}\nswz = off ^ (((off >> 7) & {swz}) << 4)\n"
        fn = lambda r, c: (r * stride + c * eb) ^ ((((r * stride + c * eb) >> 7) & swz) << 4)  # noqa: E731
        k = rng.choice([1, 2, 4, 8])  # lanes along a row
        step = rng.choice([1, 1, 2, 3])  # rows between lane groups: a strided pattern has gaps
        k = min(k, max(1, cols // per))
        if (lanes // k - 1) * step + 1 > rows:
            step = 1
        if lanes // k > rows:
            k = max(1, lanes // rows)
            k = 1 << (k - 1).bit_length()
        pat = f"row = {step} * (%laneid / {k})\ncol = (%laneid % {k}) * {per}\n"
        pfn = lambda lane: (step * (lane // k), (lane % k) * per)  # noqa: E731
    else:
        cols = rng.choice([8, 16, 32])
        rows = per * rng.choice([1, 2, 4])
        stride = rows * eb + rng.choice([0, 0, 16])
        code = f"off = col * {stride} + row * {eb}\n"
        fn = lambda r, c: c * stride + r * eb  # noqa: E731
        k = rng.choice([1, 2])
        k = min(k, rows // per)
        if lanes // k > cols:
            k = max(1, lanes // cols)
        pat = f"row = (%laneid % {k}) * {per}\ncol = %laneid / {k}\n"
        pfn = lambda lane: ((lane % k) * per, lane // k)  # noqa: E731
    return {"type": t, "eb": eb, "access": access, "bytes": nbytes, "group": BANK_ACCESSES[access][1], "lanes": lanes,
            "rows": rows, "cols": cols, "code": code, "fn": fn, "pat": pat, "pfn": pfn, "per": per}


def _bank_reference(case: dict) -> dict | str:
    """Bank conflicts by plain loops over the case's Python functions, sharing nothing with the tool but the
    definitions (docs/shared-memory.md): the footprint and the vector's step from the cells one lane's vector
    covers, every origin on that grid inside the tile, per placement the degree of every wavefront group, and the
    first conflicting pair (first placement in row-major order, first lane l2 with an earlier l1 of its group)."""
    R, C, eb, per = case["rows"], case["cols"], case["eb"], case["per"]
    where = {case["fn"](r, c): (r, c) for r in range(R) for c in range(C)}
    cells, fr, fc, sr, sc = {}, 1, 1, 1, 1
    for lane in range(case["lanes"]):
        r0, c0 = case["pfn"](lane)
        if not (r0 < R and c0 < C):
            return "outside"
        vec = [where.get(case["fn"](r0, c0) + k * eb) for k in range(per)]
        if any(v is None for v in vec):
            return "outside"
        cells[lane] = (r0, c0)
        fr, fc = max(fr, max(v[0] for v in vec) + 1), max(fc, max(v[1] for v in vec) + 1)
        sr = max(sr, max(v[0] for v in vec) - min(v[0] for v in vec) + 1)
        sc = max(sc, max(v[1] for v in vec) - min(v[1] for v in vec) + 1)
    if fr > R or fc > C:
        return "small"
    words_per = max(1, case["bytes"] // 4)
    degree, first, placements, aligned = 1, None, 0, True
    for a in range((R - fr) // sr + 1):
        for b in range((C - fc) // sc + 1):
            placements += 1
            addr = {lane: case["fn"](r + a * sr, c + b * sc) for lane, (r, c) in cells.items()}
            if any(x % min(case["bytes"], 16) for x in addr.values()):
                aligned = False
            words = {lane: {x // 4 + j for j in range(words_per)} for lane, x in addr.items()}
            for g0 in range(0, case["lanes"], case["group"]):
                grp = [lane for lane in range(g0, min(g0 + case["group"], case["lanes"]))]
                banks: dict[int, set[int]] = {}
                for lane in grp:
                    for w in words[lane]:
                        banks.setdefault(w % 32, set()).add(w)
                degree = max(degree, max(len(v) for v in banks.values()))
                if first is None:
                    for l2 in grp:
                        l1 = next((l1 for l1 in grp if l1 < l2 and any(p % 32 == q % 32 and p != q for p in words[l1]
                                                                         for q in words[l2])), None)
                        if l1 is not None:
                            first = {"origin": [a * sr, b * sc], "lanes": [l1, l2]}
                            break
    return {"placements": placements, "degree": degree, "first": first, "aligned": aligned}


def fuzz_banks(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    """``banks`` over random tiles, accesses and lane patterns (strided ones with gaps included) against
    ``_bank_reference``: the same number of placements, the same degree, the same first conflicting pair, the
    same alignment verdict; both engines agreeing on every property."""
    for k in range(n):
        case = _bank_case(rng)
        ref = _bank_reference(case)
        code, pat = work / f"banks{k}.txt", work / f"lanes{k}.txt"
        code.write_text(case["code"], encoding="utf-8")
        pat.write_text(case["pat"], encoding="utf-8")
        argv = ["banks", "--formula", str(code), "--tile", f"{case['rows']}x{case['cols']}", "--type", case["type"],
                "--access", case["access"], "--addresses", str(pat), "--format", "json"]
        what = f"banks #{k}: {' '.join(argv[1:])}"
        rc, out, err, secs, tb = run(argv)
        _count(rc, secs, tb, out, err, what, fails, stats)
        if isinstance(ref, str):
            if rc != 2:
                fails.append(f"WRONG: {what}: the pattern is {ref} the tile, exit {rc}")
            continue
        stats["banks_compared"] = stats.get("banks_compared", 0) + 1
        if rc not in (0, 1):
            fails.append(f"WRONG: {what}: exit {rc}: {err.strip()[:160]}")
            continue
        doc = json.loads(out)
        checks = doc["checks"]
        engines_ok = all(c["engines"]["z3"] == c["engines"]["enumeration"] == c["status"] for c in checks.values())
        cex = checks["conflict_free"]["counterexample"]
        got = {"placements": doc["placements"], "degree": doc["degree"], "aligned": checks["aligned"]["status"] == "proved",
               "first": None if cex is None else {"origin": cex["origin"], "lanes": cex["lanes"]}}
        if got != ref or not engines_ok:
            fails.append(f"WRONG: {what}: tool {got}, reference {ref}, engines agree {engines_ok}")
        stats["banks_conflicts"] = stats.get("banks_conflicts", 0) + (ref["first"] is not None)


def _slowest(stats: dict, secs: float, what: str) -> None:
    """The kind's slowest in-process run and what it was (the figures ``main_`` prints per kind)."""
    stats["max_s"] = max(stats["max_s"], secs)
    if secs >= stats.get("slowest_s", 0.0):
        stats["slowest_s"], stats["slowest"] = secs, what


def _count(rc: int, secs: float, tb: str, out: str, err: str, what: str, fails: list[str], stats: dict) -> None:
    """``_judge``'s bookkeeping for a run already made (exit code, one-line errors, tracebacks, time)."""
    stats["runs"] += 1
    _slowest(stats, secs, what)
    stats[f"exit{rc}"] = stats.get(f"exit{rc}", 0) + 1
    if tb or "Traceback (most recent call last)" in out + err:
        fails.append(f"TRACEBACK: {what}: {(tb or err).strip().splitlines()[-1]}")
    elif rc == 2 and (len(err.strip().splitlines()) != 1 or "error:" not in err):
        fails.append(f"BAD ERROR LINE: {what}: {err.strip()[:200]!r}")
    if secs > LIMIT_S:
        fails.append(f"SLOW {secs:.1f}s: {what}")
# ----------------------------------------------------------------------------- index code, every place, checked

# Index code is generated as a tree, rendered as text (random spellings, ``#`` comments, ``//`` floor division,
# helper definitions, precedence-minimal brackets), and evaluated by this file's own interpreter (``_ix_eval``:
# C's ``/`` and ``%``, Python's ``//``, arithmetic ``>>``), never by the tool's engines.  Each place that takes
# index code is then judged against that enumeration: a verdict (``conform``'s ``equal``, ``consistent``'s six
# properties, ``check``'s ``in_range``/``injective``), a table (``table --formula``, a ``[[layout]]``'s table), or,
# where the answer is the tool's own computation on the layout (``banks``, ``descriptor``, ``--addresses``), the
# same answer for the same layout written as a literal table of the interpreter's values.

_IX_LEVEL = {"|": 0, "^": 1, "&": 2, "<<": 3, ">>": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "//": 5}


def _ix_n(v: int, fixed: bool = False) -> tuple:
    return ("num", v, fixed)


def _ix_op(op: str, a: tuple, b: tuple) -> tuple:
    return ("op", op, a, b)


def _ix_v(name: str) -> tuple:
    return ("var", name)


def _ix_eval(e: tuple, env: dict, defs: dict) -> int:
    """The documented semantics of index code, in Python: ``/`` and ``%`` truncate (C), ``//`` floors."""
    kind = e[0]
    if kind == "num":
        return e[1]
    if kind == "var":
        return env[e[1]]
    if kind == "ref":
        return _ix_eval(defs[e[1]], env, defs)
    if kind == "neg":
        return -_ix_eval(e[1], env, defs)
    op, a, b = e[1], _ix_eval(e[2], env, defs), _ix_eval(e[3], env, defs)
    if op in ("/", "%", "//") and b == 0:
        raise ZeroDivisionError
    if op == "/":
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q
    if op == "%":
        q = abs(a) // abs(b)
        return a - b * (q if (a >= 0) == (b > 0) else -q)
    return {"+": a + b, "-": a - b, "*": a * b, "//": a // b if op == "//" else 0, ">>": a >> b if op == ">>" else 0,
            "<<": a << b if op == "<<" else 0, "&": a & b, "|": a | b, "^": a ^ b}[op]


def _ix_render(rng: random.Random, e: tuple, names: dict, parent: int = -1, right: bool = False) -> str:
    kind = e[0]
    if kind == "num":
        v = e[1]
        s = rng.choice([str(abs(v)), f"{abs(v):_}" if abs(v) >= 1000 else str(abs(v)), hex(abs(v)) if abs(v) > 9 else str(abs(v))])
        return ("(-" + s + ")" if parent >= 0 else "-" + s) if v < 0 else s
    if kind == "var":
        return names.get(e[1], e[1]) if not callable(names.get(e[1])) else names[e[1]]()
    if kind == "ref":
        return e[1]
    if kind == "neg":
        inner = _ix_render(rng, e[1], names, 99)
        return "-" + (inner if e[1][0] in ("num", "var", "ref") else "(" + inner + ")")
    lvl = _IX_LEVEL[e[1]]
    text = (_ix_render(rng, e[2], names, lvl, False) + rng.choice([" ", ""]) + e[1] + rng.choice([" ", ""])
            + _ix_render(rng, e[3], names, lvl, True))
    if lvl < parent or (lvl == parent and right) or rng.random() < 0.15:
        return "(" + text + ")"
    return text


def _ix_nodes(e: tuple, path: tuple = ()) -> list:
    out = [(path, e)]
    if e[0] == "op":
        out += _ix_nodes(e[2], path + (2,)) + _ix_nodes(e[3], path + (3,))
    elif e[0] == "neg":
        out += _ix_nodes(e[1], path + (1,))
    return out


def _ix_replace(e: tuple, path: tuple, new: tuple) -> tuple:
    if not path:
        return new
    k = path[0]
    return e[:k] + (_ix_replace(e[k], path[1:], new),) + e[k + 1:]


def _ix_rewrite(rng: random.Random, e: tuple) -> tuple:
    """Another spelling of ``e`` (mostly the same map: a power-of-two ``//`` as ``>>``, ``%`` as ``&``, operands
    swapped, ``x // c`` as ``(x - x % c) / c`` or through negative values as ``(x - c m) // c + m``, ``x % c`` as
    ``((x - c m) % c + c) % c``); the interpreter judges whatever comes out."""
    for _ in range(rng.randint(0, 8)):
        ops = [(p, n) for p, n in _ix_nodes(e) if n[0] == "op"]
        if not ops:
            break
        path, node = rng.choice(ops)
        op, a, b = node[1], node[2], node[3]
        const = b[0] == "num" and b[1] > 0
        pow2 = const and b[1] & (b[1] - 1) == 0
        m = rng.randint(1, 40)
        options = []
        if op == "//" and pow2:
            options.append(_ix_op(">>", a, _ix_n(b[1].bit_length() - 1, True)))
        if op == ">>" and b[0] == "num":
            options.append(_ix_op("//", a, _ix_n(1 << b[1], True)))
        if op == "%" and pow2:
            options.append(_ix_op("&", a, _ix_n(b[1] - 1, True)))
        if op in ("+", "*", "^", "&", "|"):
            options.append(_ix_op(op, b, a))
        if op == "//" and const:
            options.append(_ix_op("/", _ix_op("-", a, _ix_op("%", a, b)), b))
            # floor division through negative values: (a - b m) // b + m
            options += [_ix_op("+", _ix_op("//", _ix_op("-", a, _ix_n(b[1] * m, True)), b), _ix_n(m, True))] * 2
        if op == "%" and const:  # C's remainder of a negative value: ((a - b m) % b + b) % b
            options.append(_ix_op("%", _ix_op("+", _ix_op("%", _ix_op("-", a, _ix_n(b[1] * m, True)), b), b), b))
        new = rng.choice(options) if options else node
        e = _ix_replace(e, path, new)
    return e


def _ix_mutate(rng: random.Random, e: tuple) -> tuple:
    """A small change that usually gives another map: a constant moved, an operator swapped."""
    nodes = [(p, n) for p, n in _ix_nodes(e) if (n[0] == "num" and not n[2]) or (n[0] == "op" and n[1] in "+-^|")]
    if not nodes:
        return e
    path, node = rng.choice(nodes)
    if node[0] == "num":
        return _ix_replace(e, path, _ix_n(node[1] + rng.choice([1, -1, 2, 8]), False))
    return _ix_replace(e, path, _ix_op(rng.choice([o for o in "+-^|" if o != node[1]]), node[2], node[3]))


def _ix_code(rng: random.Random, outs: dict, names: dict) -> tuple[str, dict, dict]:
    """Text for definitions ``outs`` (name -> tree, in order; the last is the output a shared tile reads), with
    helper definitions, comments and blank lines; returns (text, the trees, the helpers)."""
    defs: dict = {}
    trees = {}
    for name, tree in outs.items():
        if rng.random() < 0.4:  # a helper for a subtree
            ops = [(p, n) for p, n in _ix_nodes(tree) if n[0] == "op" and p]
            if ops:
                path, node = rng.choice(ops)
                h = f"t{len(defs)}"
                defs[h] = node
                tree = _ix_replace(tree, path, ("ref", h))
        trees[name] = tree
    lines = []
    for h, t in defs.items():
        lines.append(f"{h} = {_ix_render(rng, t, names)}")
    for name, t in trees.items():
        lines.append(f"{name} = {_ix_render(rng, t, names)}")
    out = []
    for ln in lines:
        if rng.random() < 0.2:
            out.append(rng.choice(["# a note", "", "#", "   # indented // not a division"]))
        out.append(ln + (rng.choice(["  # the " + ln.split()[0], " #x // y"]) if rng.random() < 0.3 else ""))
    if rng.random() < 0.3:
        out.insert(0, "# index code generated by the fuzzer: // is floor division here")
    return "\n".join(out) + "\n", trees, defs


def _ix_values(trees: dict, defs: dict, env: dict) -> dict | None:
    """Every definition's value at ``env`` (a definition may read the helpers and the other definitions)."""
    every = {**defs, **trees}
    try:
        return {k: _ix_eval(t, env, every) for k, t in trees.items()}
    except ZeroDivisionError:
        return None


def _ix_variant(rng: random.Random, tree: tuple) -> tuple:
    t = _ix_rewrite(rng, tree)
    return _ix_mutate(rng, t) if rng.random() < 0.4 else t


def _ix_literal(values: dict, rows: int, cols: int, name: str = "off", a: str = "row", b: str = "col") -> str:
    """The map as a literal table of index code (cases on ``a`` and ``b``), no arithmetic."""
    lines = []
    for r in range(rows):
        cases = [f"{values[(r, c)]} if {b} == {c}" for c in range(cols)]
        lines.append(f"r{r} = " + "\n     ".join(cases))
    lines.append(f"{name} = " + "\n     ".join(f"r{r} if {a} == {r}" for r in range(rows)))
    return "\n".join(lines) + "\n"


def _ix_consistent_oracle(points: list, w, r, box: int) -> dict:
    """The six properties of ``consistent`` by enumeration (one copy): ``w``/``r`` point -> location or None."""
    wv = {p: w(p) for p in points}
    rv = {p: r(p) for p in points}
    inside = lambda v: v is not None and 0 <= v < box  # noqa: E731
    owners: dict = {}
    for p in points:
        if inside(wv[p]):
            owners.setdefault(wv[p], []).append(p)
    once = all(len(v) == 1 for v in owners.values())
    out = {
        "writer_in_range": all(v is None or inside(v) for v in wv.values()),
        "reader_in_range": all(v is None or inside(v) for v in rv.values()),
        "written_once": once,
        "same_place": all(rv[p] is None or wv[p] is None or rv[p] == wv[p] for p in points),
        "no_foreign_read": all(not inside(rv[p]) or all(q == p for q in owners.get(rv[p], ())) for p in points),
        "no_padding_read": all(rv[p] is None or wv[p] is not None for p in points),
    }
    return {k: "proved" if v else "refuted" for k, v in out.items()}


def _ix_status(props: dict) -> str:
    kinds = {"same_place": "mismatch", "no_foreign_read": "mismatch", "reader_in_range": "out_of_range",
             "writer_in_range": "out_of_range", "written_once": "overwrite", "no_padding_read": "padding_read"}
    bad = {kinds[k] for k, v in props.items() if v != "proved"}
    return next((k for k in ("mismatch", "out_of_range", "overwrite", "padding_read") if k in bad), "consistent")


def _ix_strip(out: str):
    try:
        return json.loads(out, object_hook=lambda d: {k: v for k, v in d.items() if k not in ("text", "source")})
    except ValueError:
        return out


def _ix_judge(argv: list[str], what: str, fails: list[str], stats: dict) -> tuple[int, str, str]:
    """``_judge``'s rules (exit code, one error line, no traceback, 5 s), keeping the output; the slowest case."""
    rc, out, err, secs, tb = run(argv)
    stats["runs"] += 1
    stats["index_runs"] = stats.get("index_runs", 0) + 1
    _slowest(stats, secs, what)
    if secs > stats.get("index_max_s", 0.0):
        stats["index_max_s"], stats["index_slowest"] = round(secs, 2), what
    stats[f"exit{rc}"] = stats.get(f"exit{rc}", 0) + 1
    if tb or "Traceback (most recent call last)" in out + err:
        stats["index_tracebacks"] = stats.get("index_tracebacks", 0) + 1
        fails.append(f"TRACEBACK: {what}: {(tb or err).strip().splitlines()[-1]}")
    elif rc not in (0, 1, 2):
        fails.append(f"EXIT {rc}: {what}")
    elif rc == 2 and (len(err.strip().splitlines()) != 1 or "error:" not in err):
        fails.append(f"BAD ERROR LINE: {what}: {err.strip()[:200]!r}")
    if secs > LIMIT_S:
        fails.append(f"SLOW {secs:.1f}s: {what}")
    return rc, out, err


STACKS = ("ldmatrix", "stmatrix")


def _handoff_reference(src, dst) -> tuple[str, tuple[int, int] | None, list]:
    """handoff by plain loops over the scalar evaluator of each layout (``map.point``): a stack taller than the
    other side placed as the relations place it (stacked row s at (s % rows, cols (s / rows) + col)), FROM
    tiled row-major over TO (element t N + j of a lane is tile t's element j), then for every (lane, i) of TO
    whether its lane holds the cell: (status, the first (lane, i) that does not, the element each takes)."""
    def cells(lay, fold):
        out = {}
        for t in range(lay.threads):
            for i in range(lay.n_elements):
                p = cell_at(lay, t, i)
                if p is not None:
                    r, c = p
                    if fold:
                        r, c = r % fold, lay.cols * (r // fold) + c
                    out[(t, i)] = (lay.group_of(t), r, c)
        return out
    fold_s = dst.rows if src.instruction in STACKS and src.rows > dst.rows and src.rows % dst.rows == 0 else 0
    fold_d = src.rows if dst.instruction in STACKS and dst.rows > src.rows and dst.rows % src.rows == 0 else 0
    s_rows, s_cols = (fold_s, src.cols * src.rows // fold_s) if fold_s else (src.rows, src.cols)
    d_rows, d_cols = (fold_d, dst.cols * dst.rows // fold_d) if fold_d else (dst.rows, dst.cols)
    if src.threads != dst.threads or src.groups != dst.groups or d_rows % s_rows or d_cols % s_cols:
        return "bad input", None, []
    gr, gc = d_rows // s_rows, d_cols // s_cols
    have: dict[int, dict] = {}
    anywhere: set = set()
    for (t, j), (g, r, c) in sorted(cells(src, fold_s).items()):
        for tile in range(gr * gc):
            key = (g, r + s_rows * (tile // gc), c + s_cols * (tile % gc))
            have.setdefault(t, {}).setdefault(key, tile * src.n_elements + j)
            anywhere.add(key)
    first, mapping = None, []
    for (t, i), key in sorted(cells(dst, fold_d).items()):
        j = have.get(t, {}).get(key)
        mapping.append(((t, i), j))
        if j is None and first is None:
            first = (t, i)
    if first is None:
        return "free", None, mapping
    return ("missing" if any(key not in anywhere for key in cells(dst, fold_d).values()) else "shuffle"), first, mapping


def _relation_pairs(layouts: dict) -> list[tuple[str, str, dict[str, int], dict[str, int], str]]:
    """(FROM, TO, FROM's binding, TO's, the relation) for every relation of the catalog that states a producer
    feeding a consumer lane for lane; the others (a transpose, wgmma D against C per warp: other threads, the
    Tensor Memory data paths: one fragment) are no handoff."""
    from verify.catalog.relations import relations
    out = []
    for rel in relations(layouts):
        ops = rel.operands
        if rel.id == "ldmatrix_x4_is_mma_a" or rel.id == "ldmatrix_x2_trans_is_mma_b":
            out.append((ops[0].id, ops[1].id, dict(ops[0].params_bound), {}, rel.id))
        elif rel.id == "stmatrix_x4_accumulator_pair":
            out.append((ops[1].id, ops[0].id, {}, dict(ops[0].params_bound), rel.id))
        elif rel.id == "movmatrix_transpose":  # its claim "source": ldmatrix .x1 is movmatrix's a
            out.append(("ldmatrix.m8n8.R.b16", ops[0].id, {"NUM": 1}, {}, rel.id + " (source)"))
        elif rel.id.startswith("tcgen05_16x256b_is_mma_c"):
            for num in ops[0].domain.params[0].values if ops[0].is_family else ():
                out.append((ops[1].id, ops[0].id, {}, {"NUM": num}, rel.id))
    return out


def fuzz_handoff(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    """``handoff`` on every pair the catalog's relations prove (each must be ``free``, element for element what
    ``_handoff_reference`` says), then ``n`` random pairs of catalog fragments (members of families drawn at
    random) against the same reference: status, first (lane, i), and for ``free`` the element mapping."""
    from verify import api
    specs = api.load(str(ROOT / "specs"))
    layouts = {lay.id: lay for s in specs for lay in (*s.layouts, *s.maps)}
    pairs = [(a, b, pa, pb, why) for a, b, pa, pb, why in _relation_pairs(layouts)]
    frags = [lay for lay in layouts.values() if isinstance(lay, api.Layout) and not lay.unspecified
             and lay.threads <= 128 and not lay.sparse]
    stats["handoff_relation_pairs"] = len(pairs)
    for _ in range(n):
        for _try in range(20):  # mostly pairs whose extents tile (the others are bad input: a few of them)
            a = rng.choice(frags)
            b = rng.choice([b for b in frags if b.threads == a.threads])
            pa = {p.name: rng.choice(p.values) for p in a.domain.params}
            pb = {p.name: rng.choice(p.values) for p in b.domain.params}
            src, dst = (a.instance(**pa) if pa else a), (b.instance(**pb) if pb else b)
            fold = src.rows if src.instruction in STACKS and src.rows > dst.rows else dst.rows
            tiles = not (dst.rows % min(fold, src.rows) or dst.cols % src.cols)
            if tiles or rng.random() < 0.1:
                break
        pairs.append((a.id, b.id, pa, pb, "random"))
    for a, b, pa, pb, why in pairs:
        src = layouts[a].instance(**pa) if pa else layouts[a]
        dst = layouts[b].instance(**pb) if pb else layouts[b]
        argv = ["handoff", a, b, *[f"--from-param={k}={v}" for k, v in pa.items()],
                *[f"--to-param={k}={v}" for k, v in pb.items()], "--format", "json"]
        what = f"handoff ({why}) {' '.join(argv[1:-2])}"
        rc, out, err, secs, tb = run(argv)
        _count(rc, secs, tb, out, err, what, fails, stats)
        status, first, mapping = _handoff_reference(src, dst)
        stats["handoff_compared"] = stats.get("handoff_compared", 0) + 1
        stats[f"handoff_{status.replace(' ', '_')}"] = stats.get(f"handoff_{status.replace(' ', '_')}", 0) + 1
        if why != "random" and status != "free":
            fails.append(f"WRONG REFERENCE: {what}: the relation proves it, the reference says {status}")
        if status == "bad input":
            if rc != 2:
                fails.append(f"WRONG: {what}: extents that cannot be tiled, exit {rc}")
            continue
        if rc not in (0, 1):
            fails.append(f"WRONG: {what}: exit {rc}: {err.strip()[:160]}")
            continue
        doc = json.loads(out)["handoff"]
        got = doc["status"]
        if got == "shared":  # the reference does not tell warps apart: shared is a shuffle across warps
            got = "shuffle"
        cex = doc["counterexample"]
        got_first = None if cex is None else (cex["lane"], cex["i"])
        bad = got != status or got_first != first
        if not bad and status == "free":
            plan = {(s["lane"], s["i"]): s["src_i"] for s in doc["plan"]}
            bad = any(plan.get(pt) != j for pt, j in mapping)
        if bad or doc["engines"].get("z3") != doc["engines"].get("enumeration"):
            fails.append(f"WRONG: {what}: tool {got} at {got_first}, reference {status} at {first}")


def _ix_wrong(fails: list[str], stats: dict, what: str, detail: str) -> None:
    stats["index_wrong"] = stats.get("index_wrong", 0) + 1
    fails.append(f"WRONG ANSWER: {what}: {detail}")


def fuzz_index_code(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    """Index code in every place that takes it, against this file's own enumeration (``_ix_eval``)."""
    for k in range(n):
        stats["index_cases"] = stats.get("index_cases", 0) + 1
        for place in (_ix_fragment, _ix_family_table, _ix_map, _ix_shared, _ix_addresses, _ix_consistent_shared,
                      _ix_consistent_storage, _ix_consistent_param, _ix_spec_layout):
            place(rng, k, work, fails, stats)


def _thread_names(rng: random.Random) -> dict:
    return {"lane": rng.choice(["lane", "tid", "laneid", "%laneid"])}


_V, _N, _O = _ix_v, _ix_n, _ix_op
A_ROW = _O("+", _O("//", _V("lane"), _N(4, True)), _O("*", _N(8), _O("%", _O("//", _V("i"), _N(2, True)), _N(2, True))))
A_COL = _O("+", _O("+", _O("*", _O("%", _V("lane"), _N(4, True)), _N(2)), _O("%", _V("i"), _N(2, True))),
           _O("*", _N(8), _O("//", _V("i"), _N(4, True))))


def _ix_fragment(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """conform / table --formula of mma.m16n8k16 A: equal exactly when every (lane, i) is the spec's cell."""
    spec = {(lane, i): (lane // 4 + 8 * ((i // 2) % 2), (lane % 4) * 2 + i % 2 + 8 * (i // 4))
            for lane in range(32) for i in range(8)}
    text, trees, defs = _ix_code(rng, {"row": _ix_variant(rng, A_ROW), "col": _ix_variant(rng, A_COL)}, _thread_names(rng))
    p = work / f"ix_frag{k}.txt"
    p.write_text(text, encoding="utf-8")
    got = {pt: _ix_values(trees, defs, {"lane": pt[0], "i": pt[1]}) for pt in spec}
    what = f"conform --formula {p.name} {text!r}"
    rc, out, _ = _ix_judge(["conform", "mma.m16n8k16.A.f16_bf16", "--formula", str(p), "--format", "json"], what, fails, stats)
    if any(v is None for v in got.values()):
        return
    same = all((got[pt]["row"], got[pt]["col"]) == spec[pt] for pt in spec)
    if rc == 2:
        _ix_wrong(fails, stats, what, "refused (exit 2) code the enumeration evaluates everywhere")
        return
    status = json.loads(out)["conform"]["status"]
    if (status == "equal") != same or (rc == 0) != same:
        _ix_wrong(fails, stats, what, f"{status} (exit {rc}), the enumeration says {'equal' if same else 'not equal'}")
    rc, out, _ = _ix_judge(["table", "mma.m16n8k16.A.f16_bf16", "--formula", str(p), "--format", "json"],
                           f"table --formula {p.name}", fails, stats)
    inside = all(0 <= v["row"] < 16 and 0 <= v["col"] < 16 for v in got.values())
    if rc == 0 and inside:
        entries = {(e["lane"], e["i"]): (e["row"], e["col"]) for e in json.loads(out)["entries"]}
        if entries != {pt: (v["row"], v["col"]) for pt, v in got.items()}:
            _ix_wrong(fails, stats, f"table --formula {p.name} {text!r}", "the table is not the enumeration's")


LD_ROW = _O("%", _O("+", _O("*", _N(8), _O("//", _V("i"), _N(2, True))), _O("//", _V("lane"), _N(4, True))),
            _O("*", _N(8), _V("NUM")))
LD_COL = _O("+", _O("*", _O("%", _V("lane"), _N(4, True)), _N(2)), _O("%", _V("i"), _N(2, True)))


def _ix_family_table(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """table FAMILY --formula CODE --param NUM=V (the code reads NUM): the table is the enumeration's."""
    num = rng.choice([1, 2, 4])
    text, trees, defs = _ix_code(rng, {"row": _ix_variant(rng, LD_ROW), "col": _ix_variant(rng, LD_COL)}, _thread_names(rng))
    p = work / f"ix_ld{k}.txt"
    p.write_text(text, encoding="utf-8")
    what = f"table ldmatrix --formula {p.name} --param NUM={num} {text!r}"
    rc, out, _ = _ix_judge(["table", "ldmatrix.m8n8.R.b16", "--formula", str(p), "--param", f"NUM={num}", "--format",
                            "json"], what, fails, stats)
    got = {(lane, i): _ix_values(trees, defs, {"lane": lane, "i": i, "NUM": num}) for lane in range(32)
           for i in range(2 * num)}
    if any(v is None for v in got.values()) or not all(0 <= v["row"] < 8 * num and 0 <= v["col"] < 8 for v in got.values()):
        return
    if rc != 0:
        _ix_wrong(fails, stats, what, f"exit {rc} on code the enumeration evaluates inside the tile")
        return
    entries = {(e["lane"], e["i"]): (e["row"], e["col"]) for e in json.loads(out)["entries"]}
    if entries != {pt: (v["row"], v["col"]) for pt, v in got.items()}:
        _ix_wrong(fails, stats, what, "the table is not the enumeration's")


ATOM_LIN = _O("+", _O("*", _O("*", _V("row"), _N(8, True)), _V("T")), _V("col"))
ATOM_OFF = _O("+", _O("*", _O("^", _O("//", ("ref", "lin"), _V("T")), _O("%", _O("//", _O("//", ("ref", "lin"), _V("T")),
                                                                                   _N(8, True)), _N(8, True))), _V("T")),
              _O("%", ("ref", "lin"), _V("T")))


def _ix_map(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """conform wgmma.shared.atom.K.128B --formula CODE --param T=V, the code reading T: equal exactly when every
    cell is the atom's (the atom's formula, evaluated here)."""
    t = rng.choice([4, 8, 16])
    lt = {4: 2, 8: 3, 16: 4}[t]

    def atom(r: int, c: int) -> int:
        lin = (r << (lt + 3)) + c
        return (((lin >> lt) ^ (((lin >> lt) >> 3) & 7)) << lt) + (lin & ((1 << lt) - 1))

    lin, off = _ix_variant(rng, ATOM_LIN), _ix_variant(rng, ATOM_OFF)
    text, trees, defs = _ix_code(rng, {"lin": lin, "offset": off}, {})
    p = work / f"ix_atom{k}.txt"
    p.write_text(text, encoding="utf-8")
    what = f"conform atom --formula {p.name} --param T={t} {text!r}"
    rc, out, _ = _ix_judge(["conform", "wgmma.shared.atom.K.128B", "--formula", str(p), "--param", f"T={t}", "--format",
                            "json"], what, fails, stats)
    got = {}
    for r in range(8):
        for c in range(8 * t):
            v = _ix_values(trees, defs, {"row": r, "col": c, "T": t})
            if v is None:
                return
            got[(r, c)] = v["offset"]
    same = all(got[(r, c)] == atom(r, c) for r, c in got)
    if rc == 2:
        _ix_wrong(fails, stats, what, "refused (exit 2) code the enumeration evaluates everywhere")
        return
    status = json.loads(out)["conform"]["status"]
    if (status == "equal") != same:
        _ix_wrong(fails, stats, what, f"{status}, the enumeration says {'equal' if same else 'not equal'}")


SWZ_OFF = _O("+", _O("*", _V("row"), _N(128)), _O("*", _V("col"), _N(2)))
SWZ_SWZ = _O("^", ("ref", "off"), _O("<<", _O("&", _O(">>", ("ref", "off"), _N(7, True)), _N(7)), _N(4, True)))


def _ix_tile(rng: random.Random, k: int, work: Path, stem: str, rows: int, cols: int, off: tuple = SWZ_OFF,
             swz: tuple = SWZ_SWZ, env: dict | None = None, prefix: str = "ix") -> tuple[Path, Path, str, dict] | None:
    """A shared-memory tile as generated code (over ``off`` and ``swz``, reading the names of ``env`` at their
    values) and as the literal table of its values (bytes)."""
    text, trees, defs = _ix_code(rng, {"off": _ix_variant(rng, off), "swz": _ix_variant(rng, swz)}, {})
    values = {}
    for r in range(rows):
        for c in range(cols):
            v = _ix_values(trees, defs, {"row": r, "col": c, **(env or {})})
            if v is None:
                return None
            values[(r, c)] = v["swz"]
    p, q = work / f"{prefix}_{stem}{k}.txt", work / f"{prefix}_{stem}{k}_literal.txt"
    p.write_text(text, encoding="utf-8")
    q.write_text(_ix_literal(values, rows, cols), encoding="utf-8")
    return p, q, text, values


def _ix_same(argv_code: list[str], argv_literal: list[str], what: str, fails: list[str], stats: dict) -> None:
    rc1, out1, err1 = _ix_judge(argv_code, what, fails, stats)
    rc2, out2, err2 = _ix_judge(argv_literal, what + " (literal table)", fails, stats)
    if rc1 != rc2 or (rc1 != 2 and _ix_strip(out1) != _ix_strip(out2)):
        _ix_wrong(fails, stats, what, f"exit {rc1} vs {rc2} for the same layout as a literal table: "
                                      f"{(out1 + err1)[:160]!r} / {(out2 + err2)[:160]!r}")


def _ix_shared(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """banks and descriptor --formula: the generated code and the literal table of its values give one answer."""
    made = _ix_tile(rng, k, work, "tile", 8, 64)
    if made is None:
        return
    p, q, text, _ = made
    access = rng.choice(["ld.shared.v4", "ldmatrix.x2", "ld.shared.b32", "stmatrix.x1"])
    for cmd in (["banks", "--tile", "8x64", "--type", "f16", "--access", access, "--format", "json"],
                ["descriptor", "--tile", "8x64", "--type", "f16", "--format", "json"]):
        _ix_same([cmd[0], "--formula", str(p), *cmd[1:]], [cmd[0], "--formula", str(q), *cmd[1:]],
                 f"{cmd[0]} --formula {p.name} {text!r}", fails, stats)


ADDR_ROW = _O("//", _V("lane"), _N(8, True))
ADDR_COL = _O("*", _O("%", _V("lane"), _N(8, True)), _N(8))


def _ix_lanes_literal(vals: list) -> str:
    """Lane addresses as a literal table of index code (a case per lane), no arithmetic."""
    return ("row = " + "\n      ".join(f"{v['row']} if lane == {n}" for n, v in enumerate(vals)) + "\ncol = "
            + "\n      ".join(f"{v['col']} if lane == {n}" for n, v in enumerate(vals)) + "\n")


def _ix_addresses(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """banks --addresses CODE: the same answer as the literal lane table of its values."""
    names = _thread_names(rng)
    text, trees, defs = _ix_code(rng, {"row": _ix_variant(rng, ADDR_ROW), "col": _ix_variant(rng, ADDR_COL)}, names)
    vals = [_ix_values(trees, defs, {"lane": lane}) for lane in range(32)]
    if any(v is None for v in vals):
        return
    p, q = work / f"ix_addr{k}.txt", work / f"ix_addr{k}_literal.txt"
    p.write_text(text, encoding="utf-8")
    q.write_text(_ix_lanes_literal(vals), encoding="utf-8")
    base = ["banks", "--formula", str(ROOT / "examples" / "shared" / "swizzle128.txt"), "--tile", "64x64", "--type", "f16",
            "--access", "ld.shared.v4", "--format", "json", "--addresses"]
    _ix_same([*base, str(p)], [*base, str(q)], f"banks --addresses {p.name} {text!r}", fails, stats)


def _ix_consistent_shared(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """consistent index:W index:R --type f16 --tile 8x64: the six properties by enumeration (bytes -> elements,
    the buffer the tile)."""
    w = _ix_tile(rng, k, work, "w", 8, 64)
    r = _ix_tile(rng, k, work, "r", 8, 64)
    if w is None or r is None:
        return
    if rng.random() < 0.5:  # often the same map spelled differently
        r = (r[0], r[1], r[2], r[3])
        text, trees, defs = _ix_code(rng, {"off": _ix_rewrite(rng, SWZ_OFF), "swz": _ix_rewrite(rng, SWZ_SWZ)}, {})
        vals = {(a, b): _ix_values(trees, defs, {"row": a, "col": b}) for a in range(8) for b in range(64)}
        if all(v is not None for v in vals.values()):
            r[0].write_text(text, encoding="utf-8")
            r = (r[0], r[1], text, {pt: v["swz"] for pt, v in vals.items()})
    elem = lambda v: v // 2 if v % 2 == 0 else None  # noqa: E731 - a byte offset that is a whole 16-bit element
    points = [(a, b) for a in range(8) for b in range(64)]
    want = _ix_consistent_oracle(points, lambda pt: elem(w[3][pt]), lambda pt: elem(r[3][pt]), 8 * 64)
    what = f"consistent index:{w[0].name} index:{r[0].name} {w[2]!r} {r[2]!r}"
    rc, out, _ = _ix_judge(["consistent", "--writer", f"index:{w[0]}", "--reader", f"index:{r[0]}", "--type", "f16",
                            "--tile", "8x64", "--format", "json"], what, fails, stats)
    _ix_compare(rc, out, want, what, fails, stats)


def _ix_compare(rc: int, out: str, want: dict, what: str, fails: list[str], stats: dict) -> None:
    if rc == 2:
        _ix_wrong(fails, stats, what, "refused (exit 2) code the enumeration evaluates everywhere")
        return
    doc = json.loads(out)
    got = {name: c["status"] for name, c in doc["checks"].items()}
    if got != want or doc["status"] != _ix_status(want) or (rc == 0) != (doc["status"] == "consistent"):
        diff = {name: (got.get(name), v) for name, v in want.items() if got.get(name) != v}
        _ix_wrong(fails, stats, what, f"{doc['status']} (tool, enumeration per property: {diff})")


SF_OFF = _O("+", _O("+", _O("*", _N(16), _O("%", _V("row"), _N(32, True))), _O("*", _N(4), _O("//", _V("row"), _N(32, True)))),
            _V("kb"))


def _ix_sf(rng: random.Random) -> tuple[str, list, dict] | None:
    """Code over the scale-factor tile's (row, kb): its text, the points and its offsets (None: a division by 0)."""
    text, trees, defs = _ix_code(rng, {"offset": _ix_variant(rng, SF_OFF)}, {})
    points = [(a, b) for a in range(128) for b in range(4)]
    vals = {pt: _ix_values(trees, defs, {"row": pt[0], "kb": pt[1]}) for pt in points}
    return None if any(v is None for v in vals.values()) else (text, points, vals)


def _ix_consistent_storage(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """consistent storage.sf.cutlass.128x4.tile index:R: R over (row, kb), judged by enumeration."""
    made = _ix_sf(rng)
    if made is None:
        return
    text, points, vals = made
    p = work / f"ix_sf{k}.txt"
    p.write_text(text, encoding="utf-8")
    want = _ix_consistent_oracle(points, lambda pt: 16 * (pt[0] % 32) + 4 * (pt[0] // 32) + pt[1],
                                 lambda pt: vals[pt]["offset"], 512)
    what = f"consistent storage.sf.cutlass.128x4.tile index:{p.name} {text!r}"
    rc, out, _ = _ix_judge(["consistent", "--writer", "storage.sf.cutlass.128x4.tile", "--reader", f"index:{p}",
                            "--format", "json"], what, fails, stats)
    _ix_compare(rc, out, want, what, fails, stats)


VS_BYTE = _O("+", _O("*", _V("VS"), _O("//", _V("kb"), _V("VS"))), _O("%", _V("kb"), _V("VS")))


def _ix_consistent_param(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """consistent index:W tcgen05.sf.A.4x1: W reads the family's VS (free, or bound by --param); every VS judged
    by enumeration."""
    byte = _ix_variant(rng, VS_BYTE)
    text, trees, defs = _ix_code(rng, {"tmem_lane": _V("row"), "tmem_col": _O("//", _V("row"), _N(32, True)),
                                       "byte": byte}, {})
    p = work / f"ix_vs{k}.txt"
    p.write_text(text, encoding="utf-8")
    bound = rng.choice([None, 1, 2, 4])
    points = [(a, b) for a in range(128) for b in range(4)]
    want = {name: "proved" for name in ("writer_in_range", "reader_in_range", "written_once", "same_place",
                                        "no_foreign_read", "no_padding_read")}
    for vs in ([bound] if bound else [1, 2, 4]):
        vals = {pt: _ix_values(trees, defs, {"row": pt[0], "kb": pt[1], "VS": vs}) for pt in points}
        if any(v is None for v in vals.values()):
            return
        key = lambda v: None if not (0 <= v["tmem_lane"] < 128 and 0 <= v["tmem_col"] < 4 and 0 <= v["byte"] < 4) \
            else (v["tmem_lane"] * 4 + v["tmem_col"]) * 4 + v["byte"]  # noqa: E731
        loc = lambda v: key(v) if key(v) is not None else -1  # noqa: E731 - outside the box: an out-of-range place
        reader = lambda pt: (pt[0] * 4 + pt[0] // 32) * 4 + vs * (pt[1] // vs) + pt[1] % vs  # noqa: E731
        one = _ix_consistent_oracle(points, lambda pt: loc(vals[pt]), reader, 128 * 4 * 4)
        want = {name: "refuted" if "refuted" in (want[name], one[name]) else "proved" for name in want}
    what = f"consistent index:{p.name} tcgen05.sf.A.4x1 VS={bound} {text!r}"
    rc, out, _ = _ix_judge(["consistent", "--writer", f"index:{p}", "--reader", "tcgen05.sf.A.4x1", "--format", "json",
                            *(["--param", f"VS={bound}"] if bound else [])], what, fails, stats)
    _ix_compare(rc, out, want, what, fails, stats)


def _ix_spec_layout(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """A ``[[layout]]`` whose formula is generated index code: its table, in_range and injective by enumeration."""
    made = _ix_sf(rng)
    if made is None:
        return
    text, points, vals = made
    spec = ('schema = 1\n[source]\nsection = "0.0"\ntitle = "fuzz"\n\n[[layout]]\nid = "fuzz.sf"\nkind = "storage"\n'
            'inputs = { row = 128, kb = 4 }\noutputs = { offset = 512 }\nchecks = ["in_range", "injective"]\n'
            "formula = '''\n" + text.replace("'''", "") + "'''\n")
    p = work / f"ix_spec{k}.toml"
    p.write_text(spec, encoding="utf-8")
    what = f"[[layout]] {p.name} {text!r}"
    rc, out, _ = _ix_judge(["table", "fuzz.sf", "--specs", str(p), "--format", "json"], "table " + what, fails, stats)
    if rc != 0:
        _ix_wrong(fails, stats, "table " + what, f"exit {rc}")
    elif {(e["row"], e["kb"]): e["offset"] for e in json.loads(out)["entries"]} != {pt: v["offset"] for pt, v in vals.items()}:
        _ix_wrong(fails, stats, "table " + what, "the table is not the enumeration's")
    rc, out, _ = _ix_judge(["check", str(p), "--format", "json"], "check " + what, fails, stats)
    offs = [v["offset"] for v in vals.values()]
    want = {"in_range": all(0 <= o < 512 for o in offs), "injective": len(set(offs)) == len(offs)}
    if rc == 2:
        _ix_wrong(fails, stats, "check " + what, "exit 2")
        return
    checks = json.loads(out)["maps"][0]["checks"]
    got = {name: checks[name]["status"] == "proved" for name in want}
    if got != want:
        _ix_wrong(fails, stats, "check " + what, f"tool {got}, enumeration {want}")


# ----------------------------------------------------------------------------- --param on every command, checked

# ``--param`` means one thing in every command (docs/layouts.md, "Parameters: --param").  Each case binds a
# family's parameter, a name index code reads, or both, in every command that takes a layout, and judges the
# answer against this file's own enumeration (``_ix_eval``, the scalar oracle ``map.point`` of a catalog member,
# ``_handoff_reference``) or against the same layout with the value written in; and the bindings that must be
# refused (a name no side has, a value a family does not take, a name the code reads that nothing binds) by their
# one line naming what is valid.

def _pm_judge(argv: list[str], what: str, fails: list[str], stats: dict) -> tuple[int, str, str]:
    stats["param_runs"] = stats.get("param_runs", 0) + 1
    return _ix_judge(argv, what, fails, stats)


def _pm_wrong(fails: list[str], stats: dict, what: str, detail: str) -> None:
    stats["param_wrong"] = stats.get("param_wrong", 0) + 1
    fails.append(f"WRONG ANSWER: {what}: {detail}")


def _pm_binds(values: dict) -> list[str]:
    return [x for k, v in values.items() for x in ("--param", f"{k}={v}")]


def _pm_refused(argv: list[str], what: str, words: list[str], fails: list[str], stats: dict) -> None:
    """A binding that must be refused: exit 2, one line holding every one of ``words``."""
    rc, out, err = _pm_judge(argv, what, fails, stats)
    stats["param_refusals"] = stats.get("param_refusals", 0) + 1
    if rc != 2 or any(w not in err for w in words):
        _pm_wrong(fails, stats, what, f"exit {rc}, {err.strip()[:200]!r}: expected a refusal saying {words}")


def _pm_scenario(rng: random.Random, names: list[str]) -> tuple[str, str | None]:
    """bind (every name), unknown (one more name no side has) or unbound (one name the code reads left out)."""
    how = rng.choice(["bind", "bind", "bind", "unknown", "unbound"])
    return how, (rng.choice(names) if how == "unbound" else None)


def _pm_errors(argv: list[str], values: dict, how: str, left: str | None, what: str, fails: list[str],
               stats: dict, have: tuple[str, ...] = ()) -> bool:
    """Run the refused scenarios (True when one ran): ``have`` the names the message must list."""
    if how == "unknown":
        _pm_refused([*argv, *_pm_binds(values), "--param", "ZZ=1"], what + " --param ZZ=1",
                    ["--param ZZ=1: no parameter ZZ here (parameters: ", *have], fails, stats)
        return True
    if how == "unbound":
        _pm_refused([*argv, *_pm_binds({k: v for k, v in values.items() if k != left})], what + f" without {left}",
                    [f"unknown identifier '{left}'", f"--param {left}=VALUE"], fails, stats)
        return True
    return False


PM_OFF = _O("+", _O("*", _V("row"), _V("S")), _O("*", _V("col"), _N(2)))
PM_SWZ = _O("^", ("ref", "off"), _O("<<", _O("&", _O(">>", ("ref", "off"), _N(7, True)), _V("M")), _N(4, True)))


def _pm_tile(rng: random.Random, k: int, work: Path, stem: str, rows: int, cols: int, values: dict):
    """A shared tile as code over S (row stride in bytes) and M (the XOR mask), and the literal table of its values."""
    return _ix_tile(rng, k, work, stem, rows, cols, PM_OFF, PM_SWZ, values, "pm")


def _pm_shared(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """banks/descriptor --formula CODE --param S=.. --param M=..: the answer of the literal table of its values."""
    values = {"S": rng.choice([128, 136, 144, 256]), "M": rng.choice([0, 1, 3, 7])}
    made = _pm_tile(rng, k, work, "tile", 8, 64, values)
    if made is None:
        return
    p, q, text, got = made
    how, left = _pm_scenario(rng, ["S", "M"])
    access = rng.choice(["ld.shared.v4", "ldmatrix.x2", "ld.shared.b32", "stmatrix.x1"])
    for cmd in (["banks", "--tile", "8x64", "--type", "f16", "--access", access, "--format", "json"],
                ["descriptor", "--tile", "8x64", "--type", "f16", "--format", "json"]):
        what = f"{cmd[0]} --formula {p.name} {_pm_binds(values)} {text!r}"
        if not _pm_errors([cmd[0], "--formula", str(p), *cmd[1:]], values, how, left, what, fails, stats, ("S", "M")):
            _ix_same([cmd[0], "--formula", str(p), *cmd[1:], *_pm_binds(values)],
                     [cmd[0], "--formula", str(q), *cmd[1:]], what, fails, stats)
    if how == "bind":  # the tile the code states at these values, cell for cell: against the literal table
        elem = lambda v: v // 2 if v % 2 == 0 else None  # noqa: E731
        points = [(a, b) for a in range(8) for b in range(64)]
        want = _ix_consistent_oracle(points, lambda pt: elem(got[pt]), lambda pt: elem(got[pt]), 8 * 64)
        what = f"consistent index:{p.name} {_pm_binds(values)} index:(its literal table) {text!r}"
        rc, out, _ = _pm_judge(["consistent", "--writer", f"index:{p}", "--reader", f"index:{q}", "--type", "f16",
                                "--tile", "8x64", *_pm_binds(values), "--format", "json"], what, fails, stats)
        _ix_compare(rc, out, want, what, fails, stats)


PM_ADDR_ROW = _O("%", _V("lane"), _V("R"))
PM_ADDR_COL = _O("*", _O("//", _V("lane"), _V("R")), _N(8))


def _pm_addresses(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """banks --formula TILE --addresses CODE: R read by the address code only, S and M by the tile's (each name
    binds the side that has it); the same answer as both written as literal tables."""
    tv = {"S": rng.choice([128, 144]), "M": rng.choice([0, 7])}
    made = _pm_tile(rng, k, work, "atile", 8, 64, tv)
    if made is None:
        return
    r = rng.choice([1, 2, 4, 8])
    text, trees, defs = _ix_code(rng, {"row": _ix_variant(rng, PM_ADDR_ROW), "col": _ix_variant(rng, PM_ADDR_COL)},
                                 _thread_names(rng))
    vals = [_ix_values(trees, defs, {"lane": lane, "R": r}) for lane in range(32)]
    if any(v is None for v in vals):
        return
    p, q = work / f"pm_addr{k}.txt", work / f"pm_addr{k}_literal.txt"
    p.write_text(text, encoding="utf-8")
    q.write_text(_ix_lanes_literal(vals), encoding="utf-8")
    values = {**tv, "R": r}
    base = ["banks", "--tile", "8x64", "--type", "f16", "--access", "ld.shared.v4", "--format", "json"]
    what = f"banks --formula {made[0].name} --addresses {p.name} {_pm_binds(values)} {text!r}"
    how, left = _pm_scenario(rng, ["S", "M", "R"])
    if not _pm_errors([*base, "--formula", str(made[0]), "--addresses", str(p)], values, how, left, what, fails, stats,
                      ("S", "M", "R")):
        _ix_same([*base, "--formula", str(made[0]), "--addresses", str(p), *_pm_binds(values)],
                 [*base, "--formula", str(made[1]), "--addresses", str(q)], what, fails, stats)


PM_A_ROW = _O("+", _O("//", _V("lane"), _V("G")), _O("*", _N(8), _O("%", _O("//", _V("i"), _N(2, True)), _N(2, True))))
PM_A_COL = _O("+", _O("+", _O("*", _O("%", _V("lane"), _V("G")), _N(2)), _O("%", _V("i"), _N(2, True))),
              _O("*", _N(8), _O("//", _V("i"), _N(4, True))))
A_SPEC = {(lane, i): (lane // 4 + 8 * ((i // 2) % 2), (lane % 4) * 2 + i % 2 + 8 * (i // 4))
          for lane in range(32) for i in range(8)}


def _pm_fragment(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """conform / table / check --formula of mma.m16n8k16 A over a name of the code's own (G: 4 is the spec's), and
    handoff C -> the code: judged by the enumeration (handoff: the same code with G written in)."""
    g = rng.choice([1, 2, 4, 4, 8])
    text, trees, defs = _ix_code(rng, {"row": _ix_variant(rng, PM_A_ROW), "col": _ix_variant(rng, PM_A_COL)},
                                 _thread_names(rng))
    p = work / f"pm_frag{k}.txt"
    p.write_text(text, encoding="utf-8")
    got = {pt: _ix_values(trees, defs, {"lane": pt[0], "i": pt[1], "G": g}) for pt in A_SPEC}
    if any(v is None for v in got.values()):
        return
    how, left = _pm_scenario(rng, ["G"])
    a16, binds = "mma.m16n8k16.A.f16_bf16", _pm_binds({"G": g})
    what = f"conform --formula {p.name} --param G={g} {text!r}"
    if _pm_errors(["conform", a16, "--formula", str(p)], {"G": g}, how, left, what, fails, stats, ("G",)):
        return
    rc, out, _ = _pm_judge(["conform", a16, "--formula", str(p), *binds, "--format", "json"], what, fails, stats)
    same = all((v["row"], v["col"]) == A_SPEC[pt] for pt, v in got.items())
    if rc == 2:
        _pm_wrong(fails, stats, what, "refused (exit 2) code the enumeration evaluates everywhere")
    elif (json.loads(out)["conform"]["status"] == "equal") != same or (rc == 0) != same:
        _pm_wrong(fails, stats, what, f"exit {rc}, the enumeration says {'equal' if same else 'not equal'}")
    inside = all(0 <= v["row"] < 16 and 0 <= v["col"] < 16 for v in got.values())
    rc, out, _ = _pm_judge(["table", a16, "--formula", str(p), *binds, "--format", "json"], "table " + what, fails, stats)
    if rc == 0 and inside:
        entries = {(e["lane"], e["i"]): (e["row"], e["col"]) for e in json.loads(out)["entries"]}
        if entries != {pt: (v["row"], v["col"]) for pt, v in got.items()}:
            _pm_wrong(fails, stats, "table " + what, "the table is not the enumeration's")
    rc, out, _ = _pm_judge(["check", "--formula", str(p), "--tile", "16x16", *binds, "--format", "json"],
                           "check " + what, fails, stats)
    cells = [(v["row"], v["col"]) for v in got.values()]
    want = {"in_range": all(0 <= r < 16 and 0 <= c < 16 for r, c in cells), "injective": len(set(cells)) == len(cells)}
    want["surjective"] = want["in_range"] and len(set(cells)) == 256
    if rc == 2 and inside:
        _pm_wrong(fails, stats, "check " + what, "exit 2 on a layout inside its tile")
    elif rc != 2:
        checks = json.loads(out)["checks"]
        tool = {name: checks[name]["status"] == "proved" for name in want}
        if tool != want:
            _pm_wrong(fails, stats, "check " + what, f"tool {tool}, enumeration {want}")
    inlined = work / f"pm_frag{k}_inlined.txt"
    inlined.write_text(re.sub(r"\bG\b", str(g), text), encoding="utf-8")
    c32 = "mma.m16n8k16.float.C.f32"
    rc1, out1, _ = _pm_judge(["handoff", c32, a16, "--to-formula", str(p), *binds, "--format", "json"],
                             "handoff " + what, fails, stats)
    rc2, out2, _ = _pm_judge(["handoff", c32, a16, "--to-formula", str(inlined), "--format", "json"],
                             "handoff (inlined) " + what, fails, stats)
    pick = lambda out: {k: json.loads(out)["handoff"].get(k) for k in ("status", "counterexample", "plan")}  # noqa: E731
    if rc1 != rc2 or (rc1 != 2 and pick(out1) != pick(out2)):
        _pm_wrong(fails, stats, "handoff " + what, f"exit {rc1} vs {rc2} with G written in")


PM_ATOM_LIN = _O("+", _O("*", _O("*", _V("row"), _V("Z")), _V("T")), _V("col"))


def _pm_map(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """conform / table of wgmma.shared.atom.K.128B --formula CODE reading the family's T and its own Z (8 is the
    atom's): T bound or free (then every T is decided), judged by the enumeration."""
    z, t = rng.choice([8, 8, 4, 16]), rng.choice([None, 4, 8, 16])
    text, trees, defs = _ix_code(rng, {"lin": _ix_variant(rng, PM_ATOM_LIN), "offset": _ix_variant(rng, ATOM_OFF)}, {})
    p = work / f"pm_atom{k}.txt"
    p.write_text(text, encoding="utf-8")
    values = {"Z": z, **({"T": t} if t else {})}
    what = f"conform atom --formula {p.name} {_pm_binds(values)} {text!r}"
    how, left = _pm_scenario(rng, ["Z"])
    argv = ["conform", "wgmma.shared.atom.K.128B", "--formula", str(p)]
    if _pm_errors(argv, values, how, left, what, fails, stats, ("T = 4..8 step 4, 16", "Z")):
        return
    same, table = True, {}
    for tv in ([t] if t else [4, 8, 16]):
        lt = {4: 2, 8: 3, 16: 4}[tv]
        for r in range(8):
            for c in range(8 * tv):
                v = _ix_values(trees, defs, {"row": r, "col": c, "T": tv, "Z": z})
                if v is None:
                    return
                lin = (r << (lt + 3)) + c
                atom = (((lin >> lt) ^ (((lin >> lt) >> 3) & 7)) << lt) + (lin & ((1 << lt) - 1))
                same = same and v["offset"] == atom
                if tv == t:
                    table[(r, c)] = v["offset"]
    rc, out, _ = _pm_judge([*argv, *_pm_binds(values), "--format", "json"], what, fails, stats)
    if rc == 2:
        _pm_wrong(fails, stats, what, "refused (exit 2) code the enumeration evaluates everywhere")
    elif (json.loads(out)["conform"]["status"] == "equal") != same:
        _pm_wrong(fails, stats, what, f"{json.loads(out)['conform']['status']}, the enumeration says "
                                      f"{'equal' if same else 'not equal'}")
    if t is None:
        _pm_refused(["table", "wgmma.shared.atom.K.128B", "--formula", str(p), *_pm_binds(values)], "table " + what,
                    ["is a family: name its member with --param T=VALUE"], fails, stats)
        return
    rc, out, _ = _pm_judge(["table", "wgmma.shared.atom.K.128B", "--formula", str(p), *_pm_binds(values), "--format",
                            "json"], "table " + what, fails, stats)
    if rc == 2:
        if all(0 <= v < 8 * 8 * t for v in table.values()):
            _pm_wrong(fails, stats, "table " + what, "exit 2 on code inside the atom")
    elif {(e["row"], e["col"]): e["offset"] for e in json.loads(out)["entries"]} != table:
        _pm_wrong(fails, stats, "table " + what, "the table is not the enumeration's")


def _pm_consistent(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """consistent index:W index:R --type f16 --tile 8x64: both read S and M (one value binds both sides), judged by
    the six properties' enumeration."""
    values = {"S": rng.choice([128, 144]), "M": rng.choice([0, 3, 7])}
    w = _pm_tile(rng, k, work, "cw", 8, 64, values)
    r = _pm_tile(rng, k, work, "cr", 8, 64, values)
    if w is None or r is None:
        return
    elem = lambda v: v // 2 if v % 2 == 0 else None  # noqa: E731
    points = [(a, b) for a in range(8) for b in range(64)]
    want = _ix_consistent_oracle(points, lambda pt: elem(w[3][pt]), lambda pt: elem(r[3][pt]), 8 * 64)
    what = f"consistent index:{w[0].name} index:{r[0].name} {_pm_binds(values)} {w[2]!r} {r[2]!r}"
    argv = ["consistent", "--writer", f"index:{w[0]}", "--reader", f"index:{r[0]}", "--type", "f16", "--tile", "8x64"]
    how, left = _pm_scenario(rng, ["S", "M"])
    if _pm_errors(argv, values, how, left, what, fails, stats, ("S", "M")):
        return
    rc, out, _ = _pm_judge([*argv, *_pm_binds(values), "--format", "json"], what, fails, stats)
    _ix_compare(rc, out, want, what, fails, stats)


def _pm_member_table(lay) -> dict:
    """(lane, i) -> (row, col) by the scalar oracle (``map.point``), one point at a time."""
    out = {}
    for t in range(lay.threads):
        for i in range(lay.n_elements):
            p = cell_at(lay, t, i)
            if p is not None:
                out[(t, i)] = tuple(p)
    return out


def _pm_catalog(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict, layouts: dict) -> None:
    """A catalog family, a random member: table --param (the scalar oracle's cells), conform --table (the member's
    own table, given: equal at the member --param names, and at the member its extent fixes without it), handoff
    between two families sharing the name (``_handoff_reference``), and the refused bindings (a name it lacks, a
    value it does not take) with the exact line that names its parameters."""
    fams = [lay for lay in layouts.values() if getattr(lay, "threads", 0) and lay.is_family and not lay.unspecified
            and not lay.sparse and lay.threads <= 128]
    lay = rng.choice(fams)
    b = {p.name: rng.choice(p.values) for p in lay.domain.params}
    member = lay.instance(**b)
    have = ", ".join(f"{p.name} = {p.describe()}" for p in lay.domain.params)
    what = f"{lay.id} {_pm_binds(b)}"
    _pm_refused(["table", lay.id, *_pm_binds(b), "--param", "ZZ=1"], "table " + what + " ZZ",
                [f"--param ZZ=1: no parameter ZZ here (parameters: {have})"], fails, stats)
    p0 = lay.domain.params[0]
    bad = next(v for v in (p0.values[-1] + 1, p0.values[0] + 3, 10**6) if v not in p0.values)
    want = _pm_member_table(member)
    given = work / f"pm_member{k}.json"  # the member's table, written from the scalar oracle
    given.write_text(json.dumps({"entries": [  # every point, undefined ones "row": null (the table's domain)
        {"lane": t, "i": i, "row": want.get((t, i), (None, None))[0], "col": want.get((t, i), (None, None))[1]}
        for t in range(member.threads) for i in range(member.n_elements)]}), encoding="utf-8")
    _pm_refused(["conform", lay.id, "--table", str(given), "--param", f"{p0.name}={bad}"], "conform " + what + " bad",
                [f"--param {p0.name}={bad}: not a value of {p0.name} ({p0.describe()})"], fails, stats)
    rc, out, _ = _pm_judge(["table", lay.id, *_pm_binds(b), "--format", "json"], "table " + what, fails, stats)
    if rc != 0 or {(e["lane"], e["i"]): (e["row"], e["col"]) for e in json.loads(out)["entries"]
                   if e.get("row") is not None} != want:
        _pm_wrong(fails, stats, "table " + what, f"exit {rc}, or the table is not the scalar oracle's")
    for binds in (_pm_binds(b), []):
        rc, out, err = _pm_judge(["conform", lay.id, "--table", str(given), *binds, "--format", "json"],
                                 f"conform {lay.id} --table (member {b}) {binds}", fails, stats)
        if not binds and rc == 2 and "fits every member" in err:
            continue  # several members of this extent: the tool asks which (documented)
        doc = json.loads(out)["conform"] if rc in (0, 1) else {}
        if rc != 0 or doc.get("status") != "equal" or doc.get("params", b) != b:
            _pm_wrong(fails, stats, f"conform {lay.id} --table {binds}", f"exit {rc} {doc.get('status')} "
                                                                          f"{doc.get('params')}, the member {b}")
    pairs = [(a, c) for a in fams for c in fams if a.threads == c.threads and a.domain.params == c.domain.params]
    a, c = rng.choice(pairs)
    hb = {p.name: rng.choice(p.values) for p in a.domain.params}
    src, dst = a.instance(**hb), c.instance(**hb)
    argv = ["handoff", a.id, c.id, *_pm_binds(hb), "--format", "json"]
    hw = f"handoff {a.id} {c.id} {_pm_binds(hb)}"
    rc, out, err = _pm_judge(argv, hw, fails, stats)
    status, first, _ = _handoff_reference(src, dst)
    if status == "bad input":
        if rc != 2:
            _pm_wrong(fails, stats, hw, f"extents that cannot be tiled, exit {rc}")
        return
    if rc not in (0, 1):
        _pm_wrong(fails, stats, hw, f"exit {rc}: {err.strip()[:160]}")
        return
    doc = json.loads(out)["handoff"]
    got = "shuffle" if doc["status"] == "shared" else doc["status"]
    cex = doc["counterexample"]
    if got != status or (None if cex is None else (cex["lane"], cex["i"])) != first:
        _pm_wrong(fails, stats, hw, f"tool {got} at {cex}, reference {status} at {first}")


def _pm_shared_ids(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """banks/descriptor --id of a shared family: --param T=V is the tile of the element type of 128 / V bits
    (--type, the value written in another way), and the other parameters bound or every member decided."""
    lid = rng.choice(["wgmma.shared.atom.K.128B", "wgmma.shared.atom.MN.64B", "wgmma.shared.K.32B",
                      "tcgen05.shared.atom.K.128B", "wgmma.shared.MN.none"])
    t = rng.choice([4, 8, 16])
    typ = {4: "tf32", 8: "f16", 16: "e4m3"}[t]
    extra = {"Rm": rng.choice([1, 2, 3]), "Rk": rng.choice([1, 2])} if ".atom." not in lid and rng.random() < 0.7 else {}
    for cmd in (["banks", "--access", rng.choice(["ld.shared.b32", "ldmatrix.x1", "ld.shared.v2"])], ["descriptor"]):
        what = f"{cmd[0]} --id {lid} --param T={t} {_pm_binds(extra)}"
        a = _pm_judge([cmd[0], "--id", lid, *cmd[1:], "--param", f"T={t}", *_pm_binds(extra), "--format", "json"], what,
                      fails, stats)
        b = _pm_judge([cmd[0], "--id", lid, *cmd[1:], "--type", typ, *_pm_binds(extra), "--format", "json"],
                      what + f" (--type {typ})", fails, stats)
        if a[0] != b[0] or (a[0] != 2 and _ix_strip(a[1]) != _ix_strip(b[1])):
            _pm_wrong(fails, stats, what, f"exit {a[0]} vs {b[0]} with --type {typ}: {(a[1] + a[2])[:120]!r}")
        if rng.random() < 0.3:
            _pm_refused([cmd[0], "--id", lid, *cmd[1:], "--param", f"T={t}", "--param", "ZZ=2"], what + " ZZ",
                        ["--param ZZ=2: no parameter ZZ here (parameters: T = "], fails, stats)


def _pm_probe(rng: random.Random, k: int, work: Path, fails: list[str], stats: dict) -> None:
    """probe FAMILY --param NUM=V: the member's probes, the instruction's .xV (and every probe of a layout without
    NUM, as without --param); a value no member takes refused with the values."""
    lid = rng.choice(["ldmatrix.m8n8.R.b16", "stmatrix.m8n8.R.b16", "tcgen05.ld.16x64b.R.b32", "ldmatrix.m8n16.R.b8x16"])
    other = rng.choice([[], ["mma.m16n8k16.A.f16_bf16"]])
    num = rng.choice([1, 2, 4])
    out_all, out_one = work / f"pm_probe{k}_all", work / f"pm_probe{k}_one"
    what = f"probe {lid} {other} --param NUM={num}"
    rc1, _, _ = _pm_judge(["probe", lid, *other, "--emit", str(out_all)], what + " (every member)", fails, stats)
    rc2, _, _ = _pm_judge(["probe", lid, *other, "--param", f"NUM={num}", "--emit", str(out_one)], what, fails, stats)
    if rc1 != 0 or rc2 != 0:
        _pm_wrong(fails, stats, what, f"exit {rc1} / {rc2}")
        return
    every = {p.name for p in out_all.glob("*.cu")}
    want = {n for n in every if not n.startswith(lid.split(".R.")[0] + ".") or f".x{num}." in n}
    if {p.name for p in out_one.glob("*.cu")} != want:
        _pm_wrong(fails, stats, what, f"{sorted(p.name for p in out_one.glob('*.cu'))} instead of {sorted(want)}")
    shutil.rmtree(out_all, ignore_errors=True)
    shutil.rmtree(out_one, ignore_errors=True)
    _pm_refused(["probe", lid, "--param", "NUM=3", "--emit", str(work / f"pm_probe{k}_bad")], what + " NUM=3",
                ["--param NUM=3: not a value of NUM ("], fails, stats)


def fuzz_params(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    """``--param`` on every command that takes a layout (the section comment above)."""
    from verify import api
    layouts = {lay.id: lay for s in api.load(str(ROOT / "specs")) for lay in s.layouts}
    for k in range(n):
        stats["param_cases"] = stats.get("param_cases", 0) + 1
        for place in (_pm_shared, _pm_addresses, _pm_fragment, _pm_map, _pm_consistent, _pm_shared_ids):
            place(rng, k, work, fails, stats)
        _pm_catalog(rng, k, work, fails, stats, layouts)
        if k % 4 == 0:  # probe writes files: every fourth case
            _pm_probe(rng, k, work, fails, stats)


# ----------------------------------------------------------------------------- processes: signals, special files

def _proc(argv: list[str], timeout: float = 60, as_nobody: bool = False, **kw) -> tuple[int | None, str, str, float]:
    """``python -m verify ARGV`` in its own process: (exit code or None on a hang, stdout, stderr, seconds)."""
    cmd = [sys.executable, "-m", "verify", *argv]
    if as_nobody:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    t = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env, **kw)
    except subprocess.TimeoutExpired as e:
        return None, str(e.stdout or ""), str(e.stderr or ""), time.perf_counter() - t
    return r.returncode, r.stdout, r.stderr, time.perf_counter() - t


def _judge_proc(argv: list[str], what: str, fails: list[str], stats: dict, must: tuple[int, ...] = (2,),
                words: tuple[str, ...] = (), **kw) -> int | None:
    rc, out, err, secs = _proc(argv, **kw)
    stats["runs"] += 1
    stats["process_runs"] = stats.get("process_runs", 0) + 1
    stats["max_process_s"] = max(stats.get("max_process_s", 0.0), secs)
    if secs >= stats.get("slowest_process_s", 0.0):
        stats["slowest_process_s"], stats["slowest_process"] = secs, what
    stats[f"exit{rc}"] = stats.get(f"exit{rc}", 0) + 1
    if rc is None:
        fails.append(f"HANG (killed after {secs:.0f} s): {what}")
    elif "Traceback (most recent call last)" in out + err:
        fails.append(f"TRACEBACK: {what}: {err.strip().splitlines()[-1] if err.strip() else ''}")
    elif rc not in must:
        fails.append(f"EXIT {rc} (expected {must}): {what}: {err.strip()[:200]!r}")
    elif rc == 2 and (len(err.strip().splitlines()) != 1 or "error:" not in err or out):
        fails.append(f"BAD ERROR LINE: {what}: {err.strip()[:200]!r}")
    elif any(w not in err for w in words):
        fails.append(f"MESSAGE: {what}: {err.strip()[:200]!r} lacks {words}")
    return rc


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d.name))
    return out


def _running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def fuzz_signals(rng: random.Random, n: int, work: Path, fails: list[str], stats: dict) -> None:
    """Interrupt ``check``/``report`` at a random moment; every worker must go, nothing may be half-written."""
    if not Path("/proc/self/stat").exists():
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for k in range(n):
        out = work / f"sig{k}" / "report"
        out.parent.mkdir()
        argv = rng.choice([["check", "--jobs", "2", "--format", rng.choice(["text", "json"])],
                           ["report", str(ROOT / "specs"), "--out", str(out)]])
        how = rng.choice(["SIGINT", "SIGINT-group", "SIGTERM", "SIGKILL"])
        p = subprocess.Popen([sys.executable, "-m", "verify", *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        delay = rng.uniform(0.3, 6.0)  # a Ctrl-C in the first ~0.1 s meets Python's own start-up, before any code of ours
        kids: set[int] = set()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < delay and p.poll() is None:
            kids.update(_children(p.pid))
            time.sleep(0.02)
        sig = signal.SIGKILL if how == "SIGKILL" else signal.SIGTERM if how == "SIGTERM" else signal.SIGINT
        if p.poll() is None:
            (os.killpg if how == "SIGINT-group" else os.kill)(p.pid, sig)
        what = f"{how} after {delay:.1f} s to {' '.join(argv[:2])} #{k}"
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            fails.append(f"HANG: {what}: the command (or a worker holding its pipes) did not end in 60 s")
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            continue
        stats["runs"] += 1
        stats["signal_runs"] = stats.get("signal_runs", 0) + 1
        rc = p.returncode
        expected = {"SIGINT": 130, "SIGINT-group": 130, "SIGTERM": 143, "SIGKILL": -9}[how]
        stats[f"exit{rc}"] = stats.get(f"exit{rc}", 0) + 1
        if rc not in (expected, 0, 1):
            fails.append(f"EXIT {rc} (expected {expected}): {what}: {err.strip()[-200:]!r}")
        if "Traceback" in err:
            fails.append(f"TRACEBACK: {what}")
        if rc == expected and how != "SIGKILL" and len(err.strip().splitlines()) != 1:
            fails.append(f"BAD LINE: {what}: {err.strip()[-300:]!r}")
        deadline = time.perf_counter() + 10
        while any(_running(c) for c in kids) and time.perf_counter() < deadline:
            time.sleep(0.05)
        alive = sorted(c for c in kids if _running(c))
        stats["workers_seen"] = stats.get("workers_seen", 0) + len(kids)
        if alive:
            fails.append(f"SURVIVORS: {what}: worker processes {alive} outlived the command")
            for c in alive:
                with contextlib.suppress(OSError):
                    os.kill(c, signal.SIGKILL)
        left = sorted(x.name for x in out.parent.iterdir())
        if rc == expected and left:
            fails.append(f"HALF-WRITTEN: {what}: {left} left in the output directory")
        shutil.rmtree(out.parent, ignore_errors=True)


def fuzz_special(pages: Path, work: Path, fails: list[str], stats: dict) -> None:
    """Special files wherever a file is read: refused in one line, never a hang or an endless read."""
    if not hasattr(os, "mkfifo") or not Path("/dev/zero").exists():
        return
    fifo = work / "fifo.toml"
    os.mkfifo(fifo)
    empty = work / "empty-dir"
    empty.mkdir()
    page = pages / "9-7-14-5-3-matrix-fragments-for-mma-m8n8k16.md"
    small = str(ROOT / "specs" / "mma.m8n8k16.toml")
    a16 = "mma.m16n8k16.A.f16_bf16"
    for path in ("/dev/zero", str(fifo), str(empty)):
        argvs = [["check", path], ["ingest", path], ["check", small, "--baseline", path],
                 ["conform", a16, "--formula", path], ["conform", a16, "--triton", path],
                 ["conform", a16, "--table", path], ["report", path, "--out", str(work / "special-report")],
                 ["crosscheck", "--cute", path]]
        if path != str(empty):  # an empty directory is a legitimate (empty) spec set for these
            argvs += [["list", "--specs", path], ["table", a16, "--specs", path], ["diff", path, small],
                      ["diff", small, path]]
            if page.is_file():
                argvs.append(["check", str(page), "--against", path])
        for argv in argvs:
            _judge_proc(argv, f"special {' '.join(argv)}", fails, stats, timeout=60)
    with open("/dev/zero", "rb") as zero:
        _judge_proc(["conform", a16, "--formula", "-"], "special stdin=/dev/zero", fails, stats, timeout=60,
                    stdin=zero, words=("larger than the limit",))


def fuzz_readonly(pages: Path, work: Path, fails: list[str], stats: dict) -> None:
    """Every writer, into a read-only directory and under a regular file: one line, the path given."""
    page = pages / "9-7-14-5-3-matrix-fragments-for-mma-m8n8k16.md"
    small = str(ROOT / "specs" / "mma.m8n8k16.toml")
    a16 = "mma.m16n8k16.A.f16_bf16"
    root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    base = Path(tempfile.mkdtemp(prefix="ptx-fuzz-ro-"))  # readable by nobody (the work dir may not be)
    os.chmod(base, 0o755)
    ro = base / "ro"
    ro.mkdir()
    os.chmod(ro, 0o555)
    blocker = base / "a-file"
    blocker.write_text("x", encoding="utf-8")
    try:
        for where, nobody in ((ro, root and shutil.which("setpriv") is not None), (blocker, False)):
            if where == ro and root and not nobody:
                continue  # root ignores permissions and there is no setpriv to drop them
            argvs = [["table", a16, "--format", "svg", "--out", str(where / "x.svg")],
                     ["pictures", small, "--out", str(where / "pics")],
                     ["report", small, "--out", str(where / "report")],
                     ["probe", a16, "--emit", str(where / "probes")],
                     ["confirm", a16, "--device", "cuda", "--out", str(where / "obs")],
                     ["check", small, "--baseline", str(where / "b.json"), "--update-baseline"]]
            if page.is_file():
                argvs.append(["ingest", str(page), "--out", str(where / "specs"), "--no-check"])
            for argv in argvs:
                rc = _judge_proc(argv, f"readonly {' '.join(argv)}", fails, stats, timeout=300, as_nobody=nobody,
                                 words=("cannot write", str(where)))
                if rc == 2:
                    stats["readonly_refused"] = stats.get("readonly_refused", 0) + 1
        if list(ro.iterdir()):
            fails.append(f"WRITTEN: the read-only directory holds {sorted(p.name for p in ro.iterdir())}")
    finally:
        os.chmod(ro, 0o755)
        shutil.rmtree(base, ignore_errors=True)


def _judge(argv: list[str], what: str, fails: list[str], stats: dict, ok: tuple[int, ...] = (0, 1, 2)) -> int:
    rc, out, err, secs, tb = run(argv)
    stats["runs"] += 1
    _slowest(stats, secs, what)
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


KINDS = ("page", "spec", "formula", "notation", "map", "index", "param", "banks", "handoff", "signal", "special",
         "readonly")


def _run_kind(kind: str, rng: random.Random, args: argparse.Namespace, work: Path, fails: list[str], stats: dict) -> int:
    """One kind's inputs; returns how many cases it made."""
    n = args.n
    runs = {"page": lambda: fuzz_pages(rng, Path(args.pages), n, work, fails, stats) if Path(args.pages).is_dir() else None,
            "spec": lambda: fuzz_specs(rng, n, work, fails, stats),
            "formula": lambda: fuzz_formulas(rng, n, work, fails, stats),
            "notation": lambda: fuzz_notations(rng, n, work, fails, stats),
            "map": lambda: fuzz_maps(rng, n, work, fails, stats),
            "index": lambda: fuzz_index_code(rng, n, work, fails, stats),
            "param": lambda: fuzz_params(rng, n, work, fails, stats),
            "banks": lambda: fuzz_banks(rng, n, work, fails, stats),
            "handoff": lambda: fuzz_handoff(rng, n, work, fails, stats),
            "signal": lambda: fuzz_signals(rng, max(2, n // 10), work, fails, stats),
            "special": lambda: fuzz_special(Path(args.pages), work, fails, stats),
            "readonly": lambda: fuzz_readonly(Path(args.pages), work, fails, stats)}
    runs[kind]()
    if kind == "page" and not Path(args.pages).is_dir():
        return 0
    if kind == "handoff":
        return n + stats.get("handoff_relation_pairs", 0)
    if kind == "signal":
        return max(2, n // 10)
    if kind in ("special", "readonly"):
        return stats["runs"]  # each run is its own case
    return n


def main_() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default=str(ROOT.parent / "shared" / "ptx-isa-9.0"))
    ap.add_argument("--n", type=int, default=100, help="inputs of each kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--keep", default=None, metavar="DIR", help="copy inputs that fail here")
    args = ap.parse_args()
    global KEEP
    KEEP = Path(args.keep) if args.keep else None
    rng = random.Random(args.seed)
    fails: list[str] = []
    total = {"runs": 0, "max_s": 0.0, "silent": 0}
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        ap.error(f"unknown kinds {unknown} (known: {', '.join(KINDS)})")
    per_kind = []
    with tempfile.TemporaryDirectory(prefix="ptx-fuzz-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        for kind in (k for k in KINDS if k in kinds):  # the documented order, whatever --kinds says
            stats: dict = {"runs": 0, "max_s": 0.0, "silent": 0}
            mine: list[str] = []
            t = time.perf_counter()
            cases = _run_kind(kind, rng, args, work, mine, stats)
            line = {"kind": kind, "cases": cases, "runs": stats["runs"], "failures": len(mine),
                    "slowest_s": round(stats.get("slowest_s", 0.0), 2), "slowest": stats.get("slowest", "")[:300],
                    "seconds": round(time.perf_counter() - t, 1)}
            if stats.get("process_runs"):
                line.update(slowest_process_s=round(stats["slowest_process_s"], 2),
                            slowest_process=stats["slowest_process"][:300])
            per_kind.append({**line, **{k: v for k, v in stats.items() if k not in line and k not in (
                "runs", "max_s", "slowest_s", "slowest", "slowest_process_s", "slowest_process")}})
            fails += mine
            for key, v in stats.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and key not in ("slowest_s", "slowest_process_s"):
                    total[key] = max(total.get(key, 0), v) if key.startswith("max") else total.get(key, 0) + v
        seconds = time.perf_counter() - t0
    for line in per_kind:
        print(json.dumps(line))
    print(json.dumps({**total, "max_s": round(total["max_s"], 2),
                      "max_process_s": round(total.get("max_process_s", 0.0), 2),
                      "seconds": round(seconds, 1), "failures": len(fails)}))
    for f in fails[:50]:
        print(f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main_())
