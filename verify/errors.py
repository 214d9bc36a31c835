"""Bad input, reported as one line ``file:line:column: error: message`` (exit code 2).

Every layer raises ``SpecError`` (or a subclass) for input it cannot accept; the CLI prints
``one_line()`` and exits 2, so a user never sees a traceback for bad input.
"""
from __future__ import annotations


class SpecError(ValueError):
    """Bad input: one line, with file, line and column."""

    def __init__(self, path: str, line: int, col: int, message: str, text: str = "") -> None:
        super().__init__(f"{path}:{line}:{col}: {message}")
        self.path, self.line, self.col, self.message, self.text = path, line, col, message, text

    def one_line(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: error: {self.message}"

    def __reduce__(self):  # picklable, so worker processes can report bad input too
        return (type(self), (self.path, self.line, self.col, self.message, self.text))


class UsageError(Exception):
    """Bad input that is not in a file (an unknown layout id, a bad option value): exit 2."""
