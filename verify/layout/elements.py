"""The doc's element lists (``a0, a1, ..., a7``): split, expanded and read back to names.

The count and elements checks compare them with the register counts; ingest reports their
typos.  Lists are tolerant of stray punctuation and of ellipses with or without a comma.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

MAX_ELEMENTS = 1024

_ELLIPSIS = ("\u2026", "...", "..")


def split_element_list(text: str) -> list[str]:
    """The doc's list split at commas, with ``a0, a1, ..., a31`` expanded (verbatim otherwise)."""
    parts: list[str] = []
    for p in text.strip().split(","):
        p = p.strip()
        m = re.fullmatch(r"(\u2026|\.\.\.?)\s+([A-Za-z]+\d+)", p)  # "… a30": comma after the ellipsis omitted
        parts.extend([m[1], m[2]] if m else [p])
    out: list[str] = []
    for k, p in enumerate(parts):
        if p in _ELLIPSIS and out and k + 1 < len(parts):
            a = re.fullmatch(r"([A-Za-z]+)(\d+)", out[-1])
            b = re.fullmatch(r"([A-Za-z]+)(\d+)", parts[k + 1])
            if a and b and a[1] == b[1] and int(a[2]) < int(b[2]) <= int(a[2]) + MAX_ELEMENTS:
                out.extend(f"{a[1]}{j}" for j in range(int(a[2]) + 1, int(b[2])))
                continue
        out.append(p)
    return out


def parse_element_list(text: str) -> tuple[str, ...]:
    """The element names of the doc's list, tolerant of stray punctuation and ellipses."""
    return tuple(n for p in split_element_list(text) for n in re.findall(r"[A-Za-z]+\d+", p))




_WHERE = re.compile(r"\s+where\s+", re.I)
_BINDING = re.compile(r"([A-Z][A-Za-z0-9_]*)\s*=")


def list_and_bindings(text: str) -> tuple[str, list[tuple[str, str, int]]]:
    """A family's element list, ``d0, d1, ..., dX, dY where X = N/2 - 2  Y = N/2 - 1``: the list part
    and the bindings (name, expression text, offset of the expression in ``text``)."""
    m = _WHERE.search(text)
    if m is None:
        return text, []
    head, rest = text[: m.start()], text[m.end():]
    marks = list(_BINDING.finditer(rest))
    out = []
    for k, b in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(rest)
        out.append((b.group(1), rest[b.end():end].strip().rstrip(",;"), m.end() + b.end()))
    return head, out


def element_list_at(text: str, env: dict[str, int] | object, params: tuple[str, ...]) -> tuple[str, ...]:
    """The element names of a family's list for one parameter binding (``dX`` -> ``d44`` when
    ``X = N/2 - 4`` and N = 96), ellipses expanded."""
    return parse_element_list(element_text_at(text, env, params))


def element_text_at(text: str, env: dict[str, int] | object, params: tuple[str, ...]) -> str:
    """A family's element list as the doc would print it for one binding: ``d0, ..., d44, d45, ...``
    (punctuation kept, so the elements check still sees the doc's typos)."""
    from ..engines import oracle
    head, bindings = _parsed_bindings(text, tuple(params))
    values: dict[str, int] = {}
    for name, f in bindings:
        values[name] = int(oracle.evaluate(f, "value", 0, 0, env))  # type: ignore[arg-type]
    if values:
        head = re.sub(r"\b([a-z]+)([A-Z][A-Za-z0-9_]*)\b",
                      lambda m: f"{m.group(1)}{values[m.group(2)]}" if m.group(2) in values else m.group(0), head)
    return head.strip()


@lru_cache(maxsize=256)
def _parsed_bindings(text: str, params: tuple[str, ...]) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """The list part and each binding parsed once (a family's list is expanded for every value)."""
    from ..formula import Case, Definition, Formula, parse_expression
    head, bindings = list_and_bindings(text)
    return head, tuple((name, Formula((Definition("value", (Case(parse_expression(expr, params), None),)),), "x"))
                       for name, expr, _ in bindings)


def number_ranges(xs: list[int]) -> str:
    """Sorted integers as runs, the way lanes are named in messages: ``0-3, 8, 12-15``."""
    out, k = [], 0
    while k < len(xs):
        j = k
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[k]) if j == k else f"{xs[k]}-{xs[j]}")
        k = j + 1
    return ", ".join(out)
