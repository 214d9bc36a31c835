"""The transcripts and command lines of the README and of every page under ``docs/``, read the one way the tests
run them (``tests/test_docs.py``; ``tests/test_readme.py`` for the README's own contract).

In a fenced block of no language or ``sh``, a line ``$ ptx-verify ARGS`` (continued on the next line after a
trailing ``\\``) is a command; the lines after it, up to the next ``$ `` line or the block's end (blank lines at
its end dropped), are what it prints: stdout, then stderr.  A command with no lines after it is only shown, and a
``ptx-verify ...`` line without ``$ `` in an ``sh`` block is a command line the reader may type: both must parse.
In shown output a line ``...`` stands for any lines (none included) and a line ending in ``...`` for the rest of
that line; everything else must match exactly.

A command that sends its stdout to a file (``> FILE``) shows its stderr only, and writes no file.  A command that
writes under ``/tmp/`` writes in a fresh temporary directory instead, and its output is read with that directory
written back as ``/tmp``.

Transcripts name the PTX ISA pages as a user in the checkout gives them, ``../shared/ptx-isa-9.0`` and
``../shared/ptx-isa-9.1``; where the pages are elsewhere (``$PTX_DOCS_DIR``, ``$PTX_DOCS_DIR_9_1``) the command
is given their path and its output is read with that path written back as the page shows it
(``conftest.pages_as_recorded``), so no transcript depends on where the pages are."""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from conftest import PAGES_AS_RECORDED, ROOT


def pages() -> list[Path]:
    """The README and every page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@dataclass(frozen=True)
class Transcript:
    page: str          # README.md, docs/shared-memory.md
    line: int          # the line of its ``$ ptx-verify``
    argv: tuple[str, ...]
    shown: str | None  # the output shown (None: a command line only)
    stdout: bool = True  # False where the command line sends stdout elsewhere (``> FILE``): stderr is shown

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    def needs(self) -> list[tuple[str, Path]]:
        """(the pages' name in the transcript, where they are here) for every page directory it names."""
        return [(name, where) for name, where in PAGES_AS_RECORDED if any(a.startswith(name) for a in self.argv)]


def _blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(line of the block's first content line, info string, lines) of every fenced block."""
    out, lines, k = [], text.splitlines(), 0
    while k < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[k])
        if not m:
            k += 1
            continue
        end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        out.append((k + 2, m.group(1), lines[k + 1:end]))
        k = end + 1
    return out


def _argv(command: str) -> tuple[tuple[str, ...], bool] | None:
    """The ptx-verify arguments of one shell line (a trailing comment and what follows ``&&``, ``|`` or a
    redirection dropped) and whether it sends stdout to a file; None if it runs something else."""
    command = re.split(r"\s#(?:\s|$)", command)[0].strip()
    for prog in ("ptx-verify ", ".venv/bin/ptx-verify ", "python -m verify "):
        if command.startswith(prog) or f" {prog}" in command:
            words = shlex.split(command.split(prog, 1)[1].split("&&")[0])
            cut = next((j for j, w in enumerate(words) if w in (">", "|", "2>", ">>")), len(words))
            return tuple(words[:cut]), cut < len(words) and words[cut] in (">", ">>")
    return None


def transcripts(page: Path) -> list[Transcript]:
    """Every command line and transcript of ``page``."""
    out = []
    for first, info, lines in _blocks(page.read_text(encoding="utf-8")):
        if info not in ("", "sh"):
            continue
        k = 0
        while k < len(lines):
            line = lines[k]
            if not line.startswith("$ "):
                if info == "sh" and (found := _argv(line)) is not None:
                    out.append(Transcript(rel(page), first + k, found[0], None, not found[1]))
                k += 1
                continue
            at, command = k, line[2:]
            while command.endswith("\\") and k + 1 < len(lines):
                k += 1
                command = command[:-1] + " " + lines[k].strip()
            k += 1
            end = next((j for j in range(k, len(lines)) if lines[j].startswith("$ ")), len(lines))
            shown = lines[k:end]
            while shown and not shown[-1].strip():
                shown.pop()
            if (found := _argv(command)) is not None:
                out.append(Transcript(rel(page), first + at, found[0], "\n".join(shown) + "\n" if shown else None,
                                      not found[1]))
            k = end
    return out


def every() -> list[Transcript]:
    return [t for p in pages() for t in transcripts(p)]


def pattern(shown: str) -> str:
    """Shown output as a pattern: a line ``...`` stands for any lines, a line ending in ``...`` for the rest of
    that line; everything else must match exactly."""
    parts = []
    for line in shown.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        elif line.endswith("..."):
            parts.append(re.escape(line[:-3]) + r"[^\n]*\n")
        else:
            parts.append(re.escape(line) + r"\n")
    return "".join(parts)


def here(argv: tuple[str, ...]) -> list[str]:
    """``argv`` with the pages it names where they are on this machine (relative to the checkout, as given)."""
    out = []
    for a in argv:
        for name, where in PAGES_AS_RECORDED:
            if a == name or a.startswith(name + "/"):
                a = os.path.relpath(where, ROOT) + a[len(name):]
                break
        out.append(a)
    return out
