"""The doc's element lists (``a0, a1, ..., a7``): split, expanded and read back to names.

The count and elements checks compare them with the register counts; ingest reports their
typos.  Lists are tolerant of stray punctuation and of ellipses with or without a comma.
"""
from __future__ import annotations

import re

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


