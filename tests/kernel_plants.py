"""What the kernel tests share: the committed fixtures, a change planted in a fixture's PTX (written beside its
launch file in a temporary folder), and the two engines' agreement on a verdict."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import ROOT

KERNELS = ROOT / "examples" / "kernels"


def ptx_code(text: str) -> list[str]:
    """A PTX file's lines up to its DWARF sections, without its .file lines and comment-only lines: what does not
    depend on the folder it was compiled in (.debug_info names that folder and its length counts the name's bytes)."""
    lines = []
    for ln in text.splitlines():
        if ln.lstrip().startswith(".section") and ".debug" in ln:
            break
        if ".file" not in ln and not ln.startswith("//"):
            lines.append(ln)
    return lines


def first(lines: list[str], pattern: str) -> int:
    """The index of the first line ``pattern`` matches (``re.search``)."""
    return next(k for k, s in enumerate(lines) if re.search(pattern, s))


def replaced(pattern: str, old: str, new: str) -> Callable[[list[str]], None]:
    """A change of a PTX's lines: ``old`` -> ``new`` (once) at the first line matching ``pattern``."""
    def change(lines: list[str]) -> None:
        k = first(lines, pattern)
        assert old in lines[k], (old, lines[k])
        lines[k] = lines[k].replace(old, new, 1)
    change.__doc__ = f"{old} -> {new} at the first line matching {pattern}"
    return change


def renamed(kind: str, declared: int, old: str) -> Callable[[list[str]], None]:
    """A meaning-preserving plant: one more register of ``kind`` declared (``.reg .b32 \t%r<declared>;`` for
    ``kind`` ``"b32"``/``"%r"``), the new last one taking the place of ``old`` wherever ``old`` is an operand."""
    prefix = old.rstrip("0123456789")
    new = f"{prefix}{declared}"

    def change(lines: list[str]) -> None:
        k = first(lines, rf"\.reg \.{kind} \t{re.escape(prefix)}<{declared}>;")
        lines[k] = lines[k].replace(f"{prefix}<{declared}>", f"{prefix}<{declared + 1}>")
        for k, s in enumerate(lines):
            if f"{old}," in s or f"{old};" in s:
                lines[k] = s.replace(old, new)
    return change


def mutant(tmp_path: Path, base: str, change: Callable[[list[str]], None],
           toml_change: Callable[[str], str] | None = None) -> str:
    """The launch file of fixture ``base`` with ``change`` applied to its PTX's lines (and ``toml_change`` to the
    launch's text), both written under ``tmp_path``: its path."""
    lines = (KERNELS / f"{base}.ptx").read_text(encoding="utf-8").split("\n")
    change(lines)
    (tmp_path / "k.ptx").write_text("\n".join(lines), encoding="utf-8")
    toml = (KERNELS / f"{base}.toml").read_text(encoding="utf-8").replace(f"{base}.ptx", "k.ptx")
    if toml_change:
        toml = toml_change(toml)
    (tmp_path / "k.toml").write_text(toml, encoding="utf-8")
    return str(tmp_path / "k.toml")


def agree(r: Any, numeric_subset: bool = False) -> None:
    """The two engines agree: the same verdict, the same number of MMAs, and the same wrong elements; with
    ``numeric_subset``, the numeric engine's wrong elements among the symbolic one's (its random inputs are only
    4 or 1 bits wide for packed types, so it may miss one by chance: the verdict's own rule)."""
    sym, num = r.engines["symbolic"], r.engines["numeric"]
    assert r.status != "error", r.findings[0].words
    assert sym["verdict"] == num["verdict"]
    if numeric_subset:
        assert num["wrong_elements"] <= sym["wrong_elements"]
    else:
        assert sym["wrong_elements"] == num["wrong_elements"]
    assert sym["mma"] == num["mma"] > 0


def only_finding(r: Any, element: str, count: int) -> Any:
    """A refuted kernel whose engines agree, with one finding: first wrong at ``element``, ``count`` wrong in all."""
    assert r.status == "refuted"
    agree(r)
    (f,) = r.findings
    assert (f.element, f.count) == (element, count)
    return f


def nvcc_makes(tmp_path: Path, base: str, name: str, defines: list[str], arch: str = "sm_100a") -> None:
    """nvcc here compiles ``base``.cu (with ``defines``) to the committed ``name``.ptx's code; skips without nvcc."""
    import shutil
    import subprocess

    import pytest
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    shutil.copy(KERNELS / f"{base}.cu", tmp_path / f"{base}.cu")
    subprocess.run([nvcc, "-ptx", f"-arch={arch}", "-lineinfo", *defines, f"{base}.cu", "-o", "k.ptx"],
                   cwd=tmp_path, check=True)
    assert ptx_code((tmp_path / "k.ptx").read_text(encoding="utf-8")) == \
        ptx_code((KERNELS / f"{name}.ptx").read_text(encoding="utf-8"))
