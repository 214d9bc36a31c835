"""``ptx-verify kernel``'s outputs: the verdict in words, as JSON (``KernelResult.to_json``, written by
``results.dumps``) and as SARIF 2.1.0 (one result per finding at its PTX line and column, the chain's instructions
as related locations, the kernel's source line where the PTX's ``.loc`` gives it).  Deterministic: the same input
gives the same bytes."""
from __future__ import annotations

import os
from typing import Any

from .. import __version__
from ..kernel.result import Finding, KernelResult
from .sarif import FINGERPRINT, SCHEMA_URI, TOOL, uri

RULE_PREFIX = "ptx-layout/kernel/"
KINDS: dict[str, tuple[str, str]] = {
    "wrong_element": ("WrongElement", "An output element is not exactly its einsum sum: a product is wrong, missing, "
                      "or counted twice. The chain names the instruction that stored it, the mma that multiplied the "
                      "wrong factor (warp, lane, register), and the loads and copies that brought the factor there."),
    "never_written": ("NeverWritten", "An output element that no instruction of the launch wrote."),
    "written_twice": ("WrittenTwice", "An output element written more than once."),
    "global_out_of_bounds": ("GlobalOutOfBounds", "An access to global memory outside every tensor of the launch (or "
                             "between a strided tensor's elements)."),
    "input_written": ("InputWritten", "A store to an input tensor: nothing but the output may be written."),
    "shared_out_of_bounds": ("SharedOutOfBounds", "An access to shared memory outside the CTA's allocation."),
    "unwritten_read": ("UnwrittenRead", "A read of memory that nothing wrote."),
    "read_in_flight": ("ReadInFlight", "A read of shared memory that a cp.async still in flight writes: no "
                       "cp.async.wait_group completes the copy before the read."),
    "race": ("SharedRace", "Shared memory written by one warp and read (or written) by another with no bar.sync "
             "between."),
    "engines_disagree": ("EnginesDisagree", "The symbolic and the numeric engine disagree: no verdict is given."),
}


def _name(name: str) -> str:
    """A kernel's name as the text shows it: a long mangled C++ name cut in the middle."""
    return name if len(name) <= 64 else f"{name[:40]}...{name[-16:]}"


def _n(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _head(r: KernelResult) -> str:
    grid = "x".join(str(x) for x in r.grid)
    block = "x".join(str(x) for x in r.block)
    return f"{_name(r.kernel)} ({os.path.basename(r.ptx)}), grid {grid}, block {block}: {r.computes}"


def _src(s: str) -> str:
    if not s:
        return ""
    path, _, line = s.rpartition(":")
    return f" [{os.path.basename(path)}:{line}]"


def finding_lines(f: Finding) -> list[str]:
    where = f", line {f.line}{_src(f.source)}" if f.line and f.kind != "wrong_element" else ""
    head = f"{f.element}: {f.words}" if f.element else f"{f.words}{where}"
    more = f" ({f.count} such)" if f.count > 1 else ""
    out = [f"{f.kind.replace('_', ' ')}{more}: {head}"]
    for k, link in enumerate(f.chain):
        arrow = "  " if k == 0 else "  <- "
        out.append(f"{arrow}{link.opcode} at line {link.line}{_src(link.source)} {link.words}".rstrip())
    return out


def kernel_text(r: KernelResult) -> str:
    lines = [_head(r)]
    if r.status == "proved":
        s = r.stats
        lines.append(f"proved: every one of the {s.get('output_elements', 0)} output elements is exactly its sum, each "
                     f"product once, nothing else written ({_n(s.get('ctas', 0), 'CTA')} of {s.get('threads', 0)} "
                     f"threads, {s.get('instructions', 0)} instructions executed)")
    else:
        lines.append(f"{r.status}: {_n(len(r.findings), 'finding')}")
        for f in r.findings:
            lines.extend(finding_lines(f))
    e = r.engines
    sym, num = e.get("symbolic", {}), e.get("numeric", {})
    lines.append(f"engines: symbolic {sym.get('verdict')} ({sym.get('wrong_elements', 0)} wrong), numeric "
                 f"{num.get('verdict')} ({num.get('wrong_elements', 0)} wrong, modulo 2^{num.get('modulo_bits')})")
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines) + "\n"


def _rule(kind: str) -> dict[str, Any]:
    name, text = KINDS.get(kind, ("".join(p.title() for p in kind.split("_")), kind))
    return {"id": RULE_PREFIX + kind, "name": name, "shortDescription": {"text": text.split(". ")[0].rstrip(".") + "."},
            "fullDescription": {"text": text}, "help": {"text": text}, "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["ptx-layout", "kernel"]}}


def _phys(path: str, line: int, col: int) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": uri(path)}}
    if line:
        phys["region"] = {"startLine": line, **({"startColumn": col} if col else {})}
    return {"physicalLocation": phys}


def _source_location(source: str) -> dict[str, Any] | None:
    path, _, line = source.rpartition(":")
    if not path or not line.isdigit():
        return None
    return {"physicalLocation": {"artifactLocation": {"uri": uri(path)}, "region": {"startLine": int(line)}}}


def kernel_sarif(r: KernelResult) -> dict[str, Any]:
    kinds = sorted({f.kind for f in r.findings}, key=lambda k: (list(KINDS).index(k) if k in KINDS else len(KINDS), k))
    index = {k: n for n, k in enumerate(kinds)}
    results = []
    for f in r.findings:
        text = "\n".join(finding_lines(f))
        loc = _phys(r.ptx, f.line, f.col)
        loc["logicalLocations"] = [{"fullyQualifiedName": r.kernel, "kind": "function"}]
        res: dict[str, Any] = {"ruleId": RULE_PREFIX + f.kind, "ruleIndex": index[f.kind], "level": "error",
                               "message": {"text": text}, "locations": [loc]}
        related: list[dict[str, Any]] = []
        for link in f.chain:
            rel = _phys(r.ptx, link.line, link.col)
            rel["id"] = len(related)
            rel["message"] = {"text": f"{link.opcode}: {link.words}"}
            related.append(rel)
            src = _source_location(link.source)
            if src is not None:
                src["id"] = len(related)
                src["message"] = {"text": f"source of {link.opcode} at PTX line {link.line}"}
                related.append(src)
        if related:
            res["relatedLocations"] = related
        res["partialFingerprints"] = {FINGERPRINT: f"{r.kernel}:{f.kind}:{f.element or f.line}"}
        res["properties"] = f.to_json()
        results.append(res)
    run = {"tool": {"driver": {"name": TOOL, "fullName": "ptx-layout-verify: PTX warp-level fragment layout verifier",
                               "version": __version__, "semanticVersion": __version__,
                               "rules": [_rule(k) for k in kinds]}},
           "columnKind": "unicodeCodePoints", "results": results,
           "properties": {"status": r.status, "kernel": r.kernel, "engines": r.engines, "stats": r.stats}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


__all__ = ["KINDS", "finding_lines", "kernel_sarif", "kernel_text"]
