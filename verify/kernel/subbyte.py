"""Elements narrower than a byte in shared memory, read by the tensor cores: ``wgmma``'s packed ``.b1``, the
``e2m1`` of ``tcgen05.mma`` ``kind::mxf4``/``mxf4nvf4`` (two to a byte) and the 4- and 6-bit types of
``kind::f8f6f4``/``mxf8f6f4`` (each in the catalog's shared-memory container, ``tcgen05.packing.smem``).

The descriptor model gives each element's bit address (``descriptors.descriptor_bit_addresses``); an element is read
from the byte holding it, the byte's elements split from the low bits (the element at the lower bit address in the
lower bits), so the data is followed in whole bytes as everywhere else in the executor.
"""
from __future__ import annotations

import re

import numpy as np

from ..layout.types import ELEMENT_BITS
from ..ptx.syntax import Instr
from .access import read_shared_async
from .fragments import NoLayout, smem_containers
from .descriptors import BadDescriptor, descriptor_rows
from .machine import CTA


def smem_bits(type_name: str) -> int:
    """The bits of an element of ``type_name`` as a tensor core reads it from shared memory: an ``EeMm`` float is
    1 + e + m bits (``e3m2``, ``e2m3``: 6, where a register holds them in 8-bit containers), others their width."""
    m = re.fullmatch(r"e(\d)m(\d)", type_name)
    return 1 + int(m.group(1)) + int(m.group(2)) if m else ELEMENT_BITS.get(type_name, 8)


def read_packed(cta: CTA, ins: Instr, at: np.ndarray, bits: int, warps: np.ndarray, thread: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """(byte addresses, values), each in the shape of ``at``, of the ``bits``-wide elements at bit addresses ``at``
    of shared memory, read by the asynchronous proxy on behalf of ``warps`` (``thread`` names the reader): each
    element taken at its place in its byte."""
    addr = at // 8
    tags, bts = read_shared_async(cta, ins, addr.reshape(-1), 1, warps, thread)
    parts = cta.prog.domain.packed_elements(tags, bts, bits)  # [n, 8 / bits]
    slot = (at % 8 // bits).reshape(-1)
    return addr, parts[np.arange(len(slot)), slot].reshape(at.shape)


def read_containers(cta: CTA, ins: Instr, value: int, major: str, bits: int, rows: int, K: int, t: int, what: str,
                    face: str, rows_at: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(byte addresses [rows, K], values [rows, K]) of a ``kind::f8f6f4``/``mxf8f6f4`` operand of ``bits``-wide
    elements (``e2m1``: 4; ``e3m2``, ``e2m3``: 6) that the descriptor ``value`` reads for thread ``t``: the
    descriptor model places each element's 8-bit container (as 8-bit data), the catalog's shared-memory packing
    (``tcgen05.packing.smem.mxf8f6f4.b<bits>``) gives the element's bits in the container's unit.  An element that
    straddles two bytes (6-bit) is refused at the instruction's line: the executor follows data in whole bytes."""
    prog = cta.prog
    try:
        addr = descriptor_rows("tcgen05", value, major, 8, rows, K, face, rows_at)  # rows_at: read_desc's
        lid, first = smem_containers(bits, face)
    except BadDescriptor as e:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): the {what} descriptor {value:#018x} cannot be read: "
                              f"{e}") from None
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t}): {e}") from None
    unit = len(first)
    straddle = first % 8 + bits > 8
    if straddle.any():
        c = int(np.argmax(straddle))
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t}): {what}'s {bits}-bit elements "
                              f"are packed {unit} to a {unit}-byte unit ({lid}): container {c}'s element is bits "
                              f"{int(first[c])}-{int(first[c]) + bits - 1}, across two bytes; the executor follows "
                              "data in whole bytes")
    at = (addr - addr % unit) * 8 + first[addr % unit]
    return read_packed(cta, ins, at, bits, np.array([t // 32]), t)


__all__ = ["read_containers", "read_packed", "smem_bits"]
