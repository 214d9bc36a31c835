"""Results -> text, for the results of one instruction and of the layouts-people-write commands
(``conform``, ``handoff``, a family's members): the checks make the data (``verify.results``,
``verify.checks``), this module only words it."""
from __future__ import annotations

from ..results import InstructionResult

_MARK = {"proved": "ok", "refuted": "FAIL", "unknown": "??", "error": "ERR"}


def instruction_lines(ins: InstructionResult) -> list[str]:
    """An instruction's (or a relation's) line of ``check``, and one line per check not plainly proved."""
    # metadata_invalid is refuted by design (the doc calls those values invalid): as expected it reads ok
    marks = " ".join(f"{c.check}:{'ok' if c.check == 'metadata_invalid' and c.as_expected else _MARK.get(c.status, c.status)}"
                     for c in ins.checks)
    tag = "" if ins.as_expected else "  <-- UNEXPECTED"
    known = "  (known erratum)" if ins.as_expected and any(
        c.expected == "refuted" and c.check != "metadata_invalid" for c in ins.checks) else ""
    out = [f"{ins.id:44s} {marks}{known}{tag}"]
    for c in ins.checks:
        if c.check == "metadata_invalid" and c.as_expected:
            continue  # the collision the doc predicts; its witness is in JSON
        if c.status != "proved" or c.expected != "proved":
            exp = "" if c.as_expected else f" [expected {c.expected}]"
            out.append(f"    {c.check} {c.status}{exp}: {c.message}")
    reasons: dict[str, list[str]] = {}
    for name, why in sorted(ins.derived.items()):
        reasons.setdefault(why, []).append(name)
    for why, names in reasons.items():
        short = why.split(" (")[0].split(": ")[0]
        out.append(f"    derived, not stated by the doc text: {', '.join(names)} ({short[:110]}; see JSON 'derived')")
    return out


__all__ = ["instruction_lines"]
