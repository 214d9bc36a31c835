"""What a doc page states about a layout, one stated value at a time, with its page position.

A ``Statement`` is a fact read from a page (``verify.catalog.page_statements`` and its readers): a register count,
a register type, an element list, a matrix shape, a number of threads, a swizzle mode a table allows, a field's
bits, a layout written in CuTe notation... Each is one value at the position of the words that state it, so that
a statement that is wrong is reported at its own line.  Readers only read: they never compare a statement with
anything.  ``verify.checks.statements`` judges each one against the reviewed specs and against the page's other
statements (both engines where the statement is a map).

``value`` is hashable and compared by meaning, never as text: numbers are integers, sets are frozensets, a layout
is a named map (``verify.layout.named``), an expression over a family's parameter is its text and the judge
evaluates it at every member.  ``unread`` says why words that state a value could not be read (a statement that
no longer reads is a changed statement: its judge reports it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Statement:
    """One value a page states (module docstring)."""

    page: str
    line: int
    col: int
    section: str          # the section's number, as its release states it
    kind: str             # what is stated: a kind ``verify.checks.statements`` has a judge for
    subject: str          # what it is stated of: a layout id, ``instruction.shape``, an instruction, a table
    value: Any            # the value, hashable (see the module docstring); None when unread
    words: str            # the page's words that state it
    unread: str = ""      # why the words could not be read as a value ("" when read)

    def where(self) -> str:
        return f"{self.page}:{self.line}:{self.col}"


__all__ = ["Statement"]
