"""PTX register and element types: widths and which accumulators go with which inputs, and the register
arithmetic of a fragment (elements per thread a matrix needs, elements a register packs).

One table each, and one implementation of the arithmetic, shared by the spec loader, the checks (count,
packing, the instruction's registers), doc ingestion (the errata of a table row) and the probes; each
words its findings its own way.
"""
from __future__ import annotations

# Register widths in bits.
REGISTER_BITS: dict[str, int] = {"b32": 32, "f32": 32, "s32": 32, "u32": 32, "f16x2": 32, "bf16x2": 32,
                                 "f64": 64, "b64": 64, "f16": 16, "b16": 16}

# Element widths in bits.  Sub-byte float types follow the doc's packing (e2m1 is 4 bits when
# packed eight to a .b32; a spec may override with ``element_bits``).
ELEMENT_BITS: dict[str, int] = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32,
                                "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "e3m2": 8, "e2m3": 8, "e2m1": 4,
                                "s4": 4, "u4": 4, "b1": 1, "ue8m0": 8, "ue4m3": 8,
                                # untyped data of the data-movement instructions (ldmatrix, stmatrix,
                                # movmatrix, tcgen05.ld/st); .b8x16 is a row of sixteen 8-bit containers
                                "b8": 8, "b16": 16, "b32": 32, "b8x16": 8}


def elements_per_thread(rows: int, cols: int, threads: int) -> int | None:
    """Elements each of ``threads`` holds of a rows x cols matrix spread evenly (None: it cannot be)."""
    return rows * cols // threads if threads and rows * cols % threads == 0 else None


def packs(register_type: str | None, element_bits: int | None) -> int | None:
    """How many elements of ``element_bits`` bits fill one register of ``register_type`` exactly (None when
    they do not fill it, or either width is unknown)."""
    rbits = REGISTER_BITS.get(register_type or "")
    if not rbits or not element_bits or rbits % element_bits:
        return None
    return rbits // element_bits


# Accumulator (C/D) types each A/B type allows (the PTX mma type table).
ACCUMULATOR_TYPES: dict[str, frozenset[str]] = {
    "f16": frozenset({"f16", "f32"}), "bf16": frozenset({"f32"}), "tf32": frozenset({"f32"}),
    "f64": frozenset({"f64"}), "s8": frozenset({"s32"}), "u8": frozenset({"s32"}), "s4": frozenset({"s32"}),
    "u4": frozenset({"s32"}), "b1": frozenset({"s32"}), "e4m3": frozenset({"f16", "f32"}),
    "e5m2": frozenset({"f16", "f32"}), "e3m2": frozenset({"f16", "f32"}), "e2m3": frozenset({"f16", "f32"}),
    "e2m1": frozenset({"f16", "f32"}),
}
