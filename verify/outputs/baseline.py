"""``check --baseline FILE``: what changed since a committed ``check --format json`` output.

A pure function of two check JSON documents (schema 1): the baseline (read from FILE) and the
current run (``verify.outputs.json.check_json``).  It reads nothing else, imports no engine and
no checker, so the diff is only as good as, and exactly as stable as, the JSON contract.

Differences, each in a stable order (baseline document order, then the current run's):

* ``new_failures``: a layout check (or a layout's ``syntax``/``hardware`` finding) whose status
  differs from the baseline's, other than a fixed erratum; a check missing on one side counts as
  ``absent``;
* ``fixed_errata``: a check that the baseline shows refuted as expected (a known erratum) and
  that is now proved (the doc, or the spec's formula, was corrected);
* ``layouts_added`` / ``layouts_removed``: layout ids on one side only;
* ``mappings_changed``: a layout whose mapping ``digest`` differs (the map itself changed, even
  if every check still has the same status);
* ``instructions_changed``: an instruction-level check whose status differs;
  ``instructions_added`` / ``instructions_removed``: instruction ids on one side only.

Bad baseline files (unreadable, not a regular file, nested too deeply, not JSON, not a schema-1 check output, layouts without a
``digest``) raise ``SpecError`` at the file's line and column, which the CLI prints as one line
and exits 2.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import SpecError
from ..files import MAX_NESTING, Owns, check_output_file, check_writable_file, json_text, nesting_error, output_error, read_text

SCHEMA = 1
ABSENT = "absent"
# statuses of the checks that are findings, not layout checks: no finding means "proved"
_FINDING_CHECKS = ("syntax", "reviewed", "register_facts", "doc_text", "evaluation", "hardware", "statement")


@dataclass(frozen=True)
class CheckChange:
    """One check of one layout or instruction whose status is not the baseline's."""

    id: str
    check: str
    was: str
    now: str
    expected: str  # what the spec expects now ("" when the check is absent now)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "check": self.check, "was": self.was, "now": self.now, "expected": self.expected}

    def text(self) -> str:
        exp = f" (expected {self.expected})" if self.expected and self.expected != self.now else ""
        return f"{self.id} {self.check}: {self.was} -> {self.now}{exp}"


@dataclass(frozen=True)
class MappingChange:
    id: str
    was: str
    now: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "was": self.was, "now": self.now}

    def text(self) -> str:
        return f"{self.id} ({_short(self.was)} -> {_short(self.now)})"


@dataclass(frozen=True)
class BaselineDiff:
    """Every difference between a baseline and the current run (empty: nothing changed)."""

    new_failures: tuple[CheckChange, ...] = ()
    fixed_errata: tuple[CheckChange, ...] = ()
    layouts_added: tuple[str, ...] = ()
    layouts_removed: tuple[str, ...] = ()
    mappings_changed: tuple[MappingChange, ...] = ()
    instructions_changed: tuple[CheckChange, ...] = ()
    instructions_added: tuple[str, ...] = ()
    instructions_removed: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return sum(len(getattr(self, k)) for k in KINDS)

    def __bool__(self) -> bool:
        return self.count > 0

    def changed_checks(self) -> set[tuple[str, str]]:
        """(layout or instruction id, check) of every check-level difference."""
        return {(c.id, c.check) for c in self.new_failures + self.fixed_errata + self.instructions_changed}

    def added_ids(self) -> set[str]:
        """Layout and instruction ids the baseline does not have (every result of them is new)."""
        return set(self.layouts_added) | set(self.instructions_added)

    def differs(self, sid: str, check: str) -> bool:
        """Whether the result of ``check`` on layout or instruction ``sid`` is a difference."""
        return sid in self.added_ids() or (sid, check) in self.changed_checks()

    def to_json(self, file: str) -> dict[str, Any]:
        out: dict[str, Any] = {"file": file, "differences": self.count}
        for k in KINDS:
            out[k] = [x if isinstance(x, str) else x.to_json() for x in getattr(self, k)]
        return out

    def lines(self) -> list[str]:
        """One line per difference, in the order of ``KINDS``."""
        out = []
        for c in self.new_failures:
            out.append(f"changed check: {c.text()}")
        for c in self.fixed_errata:
            out.append(f"fixed erratum: {c.text()}")
        out += [f"layout added: {x}" for x in self.layouts_added]
        out += [f"layout removed: {x}" for x in self.layouts_removed]
        out += [f"mapping changed: {m.text()}" for m in self.mappings_changed]
        out += [f"instruction check changed: {c.text()}" for c in self.instructions_changed]
        out += [f"instruction added: {x}" for x in self.instructions_added]
        out += [f"instruction removed: {x}" for x in self.instructions_removed]
        return out


KINDS = ("new_failures", "fixed_errata", "layouts_added", "layouts_removed", "mappings_changed",
         "instructions_changed", "instructions_added", "instructions_removed")


def _short(digest: str) -> str:
    return digest.split(":", 1)[-1][:12] if digest else ABSENT


# ----------------------------------------------------------------------------- reading

def _locate(text: str, needle: str) -> tuple[int, int]:
    """Line and column of the first occurrence of ``needle`` in ``text`` (1:1 if absent)."""
    k = text.find(needle)
    if k < 0:
        return 1, 1
    line = text.count("\n", 0, k) + 1
    return line, k - (text.rfind("\n", 0, k) + 1) + 1


def parse(text: str, path: str) -> dict[str, Any]:
    """A baseline document from its text, validated as a schema-1 ``check --format json`` output."""
    deep = nesting_error(text, "json")
    if deep is not None:  # json recurses per level: refuse before it does
        raise SpecError(path, *deep, f"baseline: arrays or objects nested deeper than {MAX_NESTING} levels")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(path, e.lineno, e.colno, f"baseline is not valid JSON: {e.msg}") from None

    def bad(message: str, needle: str = "") -> SpecError:
        line, col = _locate(text, needle) if needle else (1, 1)
        return SpecError(path, line, col, f"baseline: {message} (write one with `ptx-verify check "
                                          "--baseline FILE --update-baseline`)")

    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    if isinstance(doc.get("schema"), bool) or doc.get("schema") != SCHEMA:  # JSON true is no schema 1
        raise bad(f"schema is {json_text(doc.get('schema'))}, expected {SCHEMA}", '"schema"')
    layouts = doc.get("layouts")
    if not isinstance(layouts, list):
        raise bad('no "layouts" list')
    for k, lay in enumerate(layouts):
        if not isinstance(lay, dict) or not isinstance(lay.get("id"), str):
            raise bad(f"layouts[{k}] has no id")
        needle = json.dumps(lay["id"], ensure_ascii=False)
        if not isinstance(lay.get("digest"), str):
            raise bad(f"layout {lay['id']} has no \"digest\" (an output older than the mapping digest)", needle)
        _checks(lay, f"layout {lay['id']}", lambda m, n=needle: bad(m, n))
    for key in ("findings", "instructions"):
        if not isinstance(doc.get(key, []), list):
            raise bad(f'"{key}" is not a list', f'"{key}"')
    for k, ins in enumerate(doc.get("instructions", [])):
        if not isinstance(ins, dict) or not isinstance(ins.get("id"), str):
            raise bad(f"instructions[{k}] has no id", '"instructions"')
        _checks(ins, f"instruction {ins['id']}", lambda m, n=json.dumps(ins["id"]): bad(m, n))
    for k, f in enumerate(doc.get("findings", [])):
        if not isinstance(f, dict) or not all(isinstance(f.get(x), str) for x in ("layout", "check", "status")):
            raise bad(f"findings[{k}] lacks layout, check or status", '"findings"')
    return doc


def _checks(obj: Mapping[str, Any], what: str, bad: Any) -> None:
    checks = obj.get("checks")
    if not isinstance(checks, dict) or not all(isinstance(c, dict) and isinstance(c.get("status"), str)
                                               for c in checks.values()):
        raise bad(f"{what} has no checks with a status")


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a baseline file (``SpecError`` for a missing, unreadable or malformed one)."""
    p = str(path)
    if p != "-" and not os.path.lexists(p):
        raise SpecError(p, 1, 1, "no such file (create the baseline with --update-baseline)")
    return parse(read_text(p), p)


SVG_MARK = '^<svg xmlns="http://www.w3.org/2000/svg"'  # how every picture ptx-verify draws begins
BASELINE = Owns("a baseline (check --format json)", (("*", "^{"),))  # a JSON object: a broken baseline is replaced
PICTURE = Owns("an SVG picture", (("*", SVG_MARK),))


def check_writable(path: str | os.PathLike[str], owns: Owns | None = None) -> Path:
    """The directory ``path`` would be written in (``OutputError`` when it cannot be written, or, with ``owns``,
    when it is a file that command did not write: ``files.check_output_file``)."""
    return check_writable_file(path) if owns is None else check_output_file(path, owns)


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file beside it, then rename): a baseline, a picture.
    Nothing is left behind when the write fails or is interrupted; a failure is an ``OutputError``
    naming ``path``."""
    p = Path(path)
    parent = check_writable(p)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=parent)
    except OSError as e:
        raise output_error(path, e) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise output_error(path, e) from None
        raise


# ----------------------------------------------------------------------------- comparing

def _statuses(obj: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    return {str(k): (str(c.get("status", "")), str(c.get("expected", c.get("status", ""))))
            for k, c in (obj.get("checks") or {}).items()}


def _finding_statuses(doc: Mapping[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    """(layout, check) -> (status, expected) for the findings that are not layout or instruction checks."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for f in doc.get("findings", []):
        if f.get("check") in _FINDING_CHECKS:
            check = f["check"]
            if check == "statement":  # a page's statement: by its subject, kind, and whether it is a known erratum
                check += ":" + str((f.get("counterexample") or {}).get("kind", "")) + (
                    ":known" if f.get("status") == f.get("expected") else ":new")
            out.setdefault((f["layout"], check), []).append((str(f["status"]), str(f.get("expected", ""))))
    return {k: ("|".join(sorted({s for s, _ in v})), "|".join(sorted({e for _, e in v}))) for k, v in out.items()}


def _by_id(items: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {str(x["id"]): x for x in items}


def _compare_checks(sid: str, old: Mapping[str, tuple[str, str]], new: Mapping[str, tuple[str, str]],
                    changed: list[CheckChange], fixed: list[CheckChange] | None) -> None:
    for name in list(old) + [n for n in new if n not in old]:
        was, was_exp = old.get(name, (ABSENT, ""))
        now, now_exp = new.get(name, (ABSENT, ""))
        if was == now:
            continue
        change = CheckChange(sid, name, was, now, now_exp)
        if fixed is not None and was == "refuted" and was_exp == "refuted" and now == "proved":
            fixed.append(change)
        else:
            changed.append(change)


def compare(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> BaselineDiff:
    """Every difference between two schema-1 check documents (see the module docstring)."""
    old_l, new_l = _by_id(baseline.get("layouts", [])), _by_id(current.get("layouts", []))
    changed: list[CheckChange] = []
    fixed: list[CheckChange] = []
    mappings: list[MappingChange] = []
    for lid, old in old_l.items():
        new = new_l.get(lid)
        if new is None:
            continue
        _compare_checks(lid, _statuses(old), _statuses(new), changed, fixed)
        if old.get("digest") != new.get("digest"):
            mappings.append(MappingChange(lid, str(old.get("digest") or ""), str(new.get("digest") or "")))
    # a formula that does not parse (syntax) or a GPU observation (hardware) is a finding of its own:
    # no finding means the property holds ("proved")
    old_f, new_f = _finding_statuses(baseline), _finding_statuses(current)
    for key in list(old_f) + [k for k in new_f if k not in old_f]:
        lid, check = key
        _compare_checks(lid, {check: old_f.get(key, ("proved", "proved"))},
                        {check: new_f.get(key, ("proved", "proved"))}, changed, fixed)
    old_i, new_i = _by_id(baseline.get("instructions", [])), _by_id(current.get("instructions", []))
    ins_changed: list[CheckChange] = []
    for iid, old in old_i.items():
        if iid in new_i:
            _compare_checks(iid, _statuses(old), _statuses(new_i[iid]), ins_changed, None)
    return BaselineDiff(
        new_failures=tuple(changed), fixed_errata=tuple(fixed),
        layouts_added=tuple(x for x in new_l if x not in old_l),
        layouts_removed=tuple(x for x in old_l if x not in new_l),
        mappings_changed=tuple(mappings), instructions_changed=tuple(ins_changed),
        instructions_added=tuple(x for x in new_i if x not in old_i),
        instructions_removed=tuple(x for x in old_i if x not in new_i))


__all__ = ["BASELINE", "KINDS", "PICTURE", "SVG_MARK", "BaselineDiff", "CheckChange", "MappingChange", "check_writable", "compare", "parse", "read", "write_atomic"]
