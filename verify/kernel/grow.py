"""Growable numpy columns (capacity doubles), for the value table and the tensor-core operand tables."""
from __future__ import annotations

import numpy as np


class Grow:
    """Rows of ``width`` int64 columns (``width`` 0: a plain vector), appended in blocks."""

    def __init__(self, width: int = 0, capacity: int = 1024, dtype: type = np.int64) -> None:
        self.width = width
        shape = (capacity, width) if width else (capacity,)
        self.data: np.ndarray = np.zeros(shape, dtype)
        self.n = 0

    def extend(self, rows: np.ndarray) -> int:
        """Append ``rows``; the index of the first."""
        k = rows.shape[0]
        if self.n + k > self.data.shape[0]:
            cap = max(self.data.shape[0] * 2, self.n + k)
            new = np.zeros((cap,) + self.data.shape[1:], self.data.dtype)
            new[: self.n] = self.data[: self.n]
            self.data = new
        self.data[self.n: self.n + k] = rows
        start = self.n
        self.n += k
        return start

    def view(self) -> np.ndarray:
        return self.data[: self.n]

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)
