"""Register and memory contents as bits plus byte tags, across the threads of a CTA (numpy, one row a thread).

A register of width ``w`` holds, for each of the ``T`` threads, ``bits`` (``uint64[T]``; a predicate: ``bool[T]``) and
``tags`` (``int64[T, w / 8]`` or ``None``): what each byte is.

* ``CONCRETE`` (-1): an exact integer byte (an address, an index, a constant); ``bits`` holds it.
* ``UNDEF`` (-2): never written (a register read before any write, memory no one wrote).
* ``>= 0``: data: a byte of an input element or of a value computed from them.  The symbolic engine's code is
  ``value * 8 + byte`` (``verify.kernel.symbolic``); the numeric engine's data bytes carry their bits in ``bits``
  and a tag that only says "data" (``verify.kernel.numeric``).

``tags is None`` means every byte is ``CONCRETE``: integer code stays on the fast path.  Every instruction computes
both: ``bits`` by the integer semantics and ``tags`` by routing bytes, so the numeric engine's data flows through the
bits and the symbolic engine's through the tags, two implementations of each data movement.
"""
from __future__ import annotations

import numpy as np

CONCRETE = -1
UNDEF = -2
U64 = np.uint64
_SHIFTS = {n: (np.arange(n, dtype=np.uint64) * np.uint64(8)) for n in (1, 2, 4, 8)}


def mask_of(bits: int) -> np.uint64:
    return np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


def to_bytes(bits: np.ndarray, nbytes: int) -> np.ndarray:
    """``uint64[T]`` -> ``uint8[T, nbytes]`` (little-endian)."""
    sh = _SHIFTS.get(nbytes)
    if sh is None:
        sh = np.arange(nbytes, dtype=np.uint64) * np.uint64(8)
    return ((bits[:, None] >> sh[None, :]) & np.uint64(0xFF)).astype(np.uint8)


def from_bytes(b: np.ndarray) -> np.ndarray:
    """``uint8[T, n]`` (n <= 8) -> ``uint64[T]``."""
    n = b.shape[1]
    sh = _SHIFTS.get(n)
    if sh is None:
        sh = np.arange(n, dtype=np.uint64) * np.uint64(8)
    return np.bitwise_or.reduce(b.astype(np.uint64) << sh[None, :], axis=1) if n else np.zeros(b.shape[0], U64)


def sext(bits: np.ndarray, width: int) -> np.ndarray:
    """The ``width``-bit two's complement value of ``bits`` as ``int64``."""
    if width >= 64:
        return bits.astype(np.int64)
    sign = np.uint64(1 << (width - 1))
    m = mask_of(width)
    return ((bits & m) ^ sign).astype(np.int64) - np.int64(1 << (width - 1))


def full_tags(n: int, nbytes: int, code: int = CONCRETE) -> np.ndarray:
    return np.full((n, nbytes), code, np.int64)


def tags_or_concrete(tags: np.ndarray | None, n: int, nbytes: int) -> np.ndarray:
    return full_tags(n, nbytes) if tags is None else tags


def resize_tags(tags: np.ndarray | None, nbytes: int, pad: int = CONCRETE) -> np.ndarray | None:
    """Tags of a value narrowed or widened to ``nbytes`` (widened with ``pad`` bytes)."""
    if tags is None:
        return None
    have = tags.shape[1]
    if have == nbytes:
        return tags
    if have > nbytes:
        return tags[:, :nbytes]
    return np.concatenate([tags, np.full((tags.shape[0], nbytes - have), pad, np.int64)], axis=1)


def simplify(tags: np.ndarray | None) -> np.ndarray | None:
    """``None`` when every byte is concrete."""
    if tags is None or (tags == CONCRETE).all():
        return None
    return tags


def undefined_rows(tags: np.ndarray | None) -> np.ndarray | None:
    """Threads whose value has an undefined byte (``None``: none)."""
    if tags is None:
        return None
    u = (tags == UNDEF).any(axis=1)
    return u if u.any() else None


def data_rows(tags: np.ndarray | None) -> np.ndarray | None:
    if tags is None:
        return None
    d = np.any(tags >= 0, axis=1)
    return d if d.any() else None
