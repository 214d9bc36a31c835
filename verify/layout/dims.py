"""Named dimensions: what a layout map goes from and to.

A layout is a map from a product of named, finite *input* dimensions to named *output* dimensions
(Triton's ``LinearLayout`` has the same idea: register, lane, warp and a shared-memory offset are all
just input dimensions).  A ``Dim`` is a name and a size; the size is an integer or, in a family, an
expression over the family's parameters (``N / 2`` elements for wgmma D).

The names the catalog and the notations use (``VOCABULARY``) are conventions, not a closed set: any
lower-case name is a dimension.  What matters is that the two sides of an algebra operation agree on
names (``compose`` feeds an output to the input of the same name).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping

from .family import Extent, extent_at, extent_text

# The dimensions layouts of the catalog and the notations use, with what one step along each means.
VOCABULARY: Mapping[str, str] = {
    "lane": "a thread's lane in its warp (0..31)",
    "warp": "a warp's index in its warpgroup or block",
    "thread": "a thread's index in its warpgroup or block, lane + 32 * warp",
    "i": "an element's index among one thread's register elements",
    "mma": "the MMA computation a thread serves (m8n8k4 runs four in a warp)",
    "row": "a matrix row",
    "col": "a matrix column",
    "offset": "a shared-memory offset (in elements, or bytes where the layout says so)",
    "tmem_lane": "a Tensor Memory lane (a row of Tensor Memory)",
    "tmem_col": "a Tensor Memory column (32 bits)",
    "cta": "the CTA of a CTA pair (cta_group::2)",
}

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


@dataclass(frozen=True)
class Dim:
    """A named, finite dimension: points ``0 .. size - 1`` (``size`` may be an expression over a
    family's parameters)."""

    name: str
    size: Extent

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"a dimension name is lower-case letters, digits and '_': {self.name!r}")
        if isinstance(self.size, int) and self.size < 1:
            raise ValueError(f"dimension {self.name} needs at least one point, not {self.size}")

    def at(self, env: Mapping[str, int] | None = None) -> int:
        """The size for one binding of the parameters."""
        return extent_at(self.size, env or {})

    def __str__(self) -> str:
        return f"{self.name}:{extent_text(self.size)}"


def names(dims: Iterable[Dim]) -> tuple[str, ...]:
    return tuple(d.name for d in dims)


def unique(dims: Iterable[Dim], what: str) -> tuple[Dim, ...]:
    """``dims`` as a tuple; ``ValueError`` when a name repeats."""
    out = tuple(dims)
    seen: set[str] = set()
    for d in out:
        if d.name in seen:
            raise ValueError(f"{what}: dimension {d.name!r} appears twice")
        seen.add(d.name)
    return out


def find(dims: Iterable[Dim], name: str) -> Dim:
    for d in dims:
        if d.name == name:
            return d
    raise KeyError(name)


def describe(dims: Iterable[Dim]) -> str:
    """``(lane:32, i:4)``"""
    return "(" + ", ".join(str(d) for d in dims) + ")"


# ----------------------------------------------------------------------------- a fragment's dimension names

TMEM_NAMES = {"lane": "tmem_lane", "column": "tmem_col"}


@lru_cache(maxsize=None)
def output_name(axis: str) -> str:
    """The output dimension a fragment's codomain axis becomes: Tensor Memory's ``lane``/``column`` are
    ``tmem_lane``/``tmem_col`` (``lane`` is an input), other axes as written in dimension form
    (``scale factor`` -> ``scale_factor``)."""
    return TMEM_NAMES.get(axis) or re.sub(r"[^a-z0-9_]+", "_", axis.lower()).strip("_") or "axis"


def thread_dim_name(threads: int) -> str:
    """``lane`` for a warp's fragment, ``thread`` for a warpgroup's or a block's."""
    return "lane" if threads <= 32 else "thread"
