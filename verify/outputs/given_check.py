"""``check --triton FILE`` (any notation) as text and JSON: a given layout's own verdicts, plain bijectivity beside
Triton's rule (``verify.checks.validity``)."""
from __future__ import annotations

from typing import Any

from ..results.given import GivenCheck

SCHEMA = 1


def status(r: GivenCheck) -> str:
    """``bijective``; ``valid`` (bijective once the broadcast bits are removed, not before); ``invalid``; or the
    ``valid`` check's ``unknown``/``error``."""
    v = r.get("valid").status
    if v != "proved":
        return "invalid" if v == "refuted" else v
    return "bijective" if r.bijective else "valid"


def _head(r: GivenCheck) -> str:
    lay = r.layout
    s = status(r)
    broadcast = ", ".join(b.text() for b in r.broadcast)
    what = {"bijective": "bijective (and valid: Triton's rule)",
            "valid": f"valid (Triton's rule: bijective once the broadcast bits are removed: {broadcast}), not bijective",
            "invalid": "not valid (Triton's rule)" + ("" if r.bijective else ", not bijective"),
            }.get(s, f"valid {s}")
    return f"check {lay.id}: {lay.threads} threads x {lay.n_elements} elements -> {lay.rows} x {lay.cols}: {what}"


def _engines(c: Any) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.engines.items() if k in ("z3", "enumeration"))


def given_text(r: GivenCheck) -> str:
    out = [_head(r)]
    for c in r.checks:
        mark = "ok" if c.status == "proved" else ("FAIL" if c.status == "refuted" else c.status.upper())
        note = f": {c.message}" if c.message and (c.status != "proved" or c.check == "valid") else ""
        out.append(f"  {c.check:11s} {mark:5s} ({_engines(c)}){note}")
    gone = [b for b in r.bits if b.broadcast]
    out.append("  broadcast   " + (", ".join(b.text() for b in gone) if gone else
                                   "none (every input bit moves some element)")
               + f"; {len(r.bits)} input bits asked, each by both engines")
    return "\n".join(out) + "\n"


def given_json(r: GivenCheck) -> dict[str, Any]:
    lay = r.layout
    return {"schema": SCHEMA, "id": lay.id, "notation": lay.provenance.source.document, "text": lay.provenance.formula_text,
            "threads": lay.threads, "elements": lay.n_elements, "rows": lay.rows, "cols": lay.cols,
            "status": status(r), "broadcast": [{"dim": b.dim, "bit": b.bit} for b in r.broadcast],
            "bits": [{"dim": b.dim, "bit": b.bit, "broadcast": b.check.status, "engines": dict(b.check.engines)}
                     for b in r.bits],
            "checks": {c.check: c.to_json() for c in r.checks}}


__all__ = ["given_json", "given_text", "status"]
