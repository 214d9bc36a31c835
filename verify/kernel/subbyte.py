"""Elements narrower than a byte in shared memory, read by the tensor cores: ``wgmma``'s packed ``.b1``, the
``e2m1`` of ``tcgen05.mma`` ``kind::mxf4``/``mxf4nvf4`` (two to a byte) and the 4- and 6-bit types of
``kind::f8f6f4``/``mxf8f6f4`` (each in the catalog's shared-memory container, ``tcgen05.packing.smem``).

The descriptor model gives each element's bit address (``fragments.descriptor_bit_addresses``); an element is read
from the byte holding it, the byte's elements split from the low bits (the element at the lower bit address in the
lower bits), so the data is followed in whole bytes as everywhere else in the executor.
"""
from __future__ import annotations

import numpy as np

from ..ptx.syntax import Instr
from .access import read_shared_async
from .machine import CTA


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


__all__ = ["read_packed"]
