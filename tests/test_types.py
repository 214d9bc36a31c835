"""The type checker as a ratchet: `mypy` (configured in pyproject.toml's [tool.mypy], pinned in the `dev` extra) runs
over the package, and no file may have more type errors than `tests/type_ratchet.json` records for it (a file it
does not name: none).  A file made cleaner lowers its entry with `python tests/test_types.py --update`; a new
module starts clean.  docs/testing.md has the figures."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RATCHET = ROOT / "tests" / "type_ratchet.json"
_ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+: error: ", re.M)


def counts(output: str) -> dict[str, int]:
    """Type errors per file in mypy's output (its `file:line: error:` lines; notes are not errors)."""
    out: dict[str, int] = {}
    for m in _ERROR.finditer(output):
        out[m.group("file")] = out.get(m.group("file"), 0) + 1
    return dict(sorted(out.items()))


def worse(now: dict[str, int], ratchet: dict[str, int]) -> list[str]:
    """Each file with more errors than the ratchet allows, in words."""
    return [f"{f}: {n} type error(s), the ratchet allows {ratchet.get(f, 0)}"
            for f, n in sorted(now.items()) if n > ratchet.get(f, 0)]


def mypy(cache: Path, *paths: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]' installs it)")
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), "--no-error-summary", *paths],
                         cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode in (0, 1), run.stdout + run.stderr  # 2: mypy could not run (a crash, a bad option)
    return run


def test_no_file_has_more_type_errors_than_the_ratchet(tmp_path: Path) -> None:
    now = counts(mypy(tmp_path / "cache").stdout)
    ratchet = json.loads(RATCHET.read_text(encoding="utf-8"))
    assert not worse(now, ratchet), "\n".join(worse(now, ratchet))


def test_the_ratchet_holds_a_file_to_its_count_and_a_new_file_to_none() -> None:
    assert worse({"verify/a.py": 2}, {"verify/a.py": 1}) == ["verify/a.py: 2 type error(s), the ratchet allows 1"]
    assert worse({"verify/new.py": 1}, {}) == ["verify/new.py: 1 type error(s), the ratchet allows 0"]
    assert worse({"verify/a.py": 1}, {"verify/a.py": 3}) == []


def test_the_configured_checker_counts_a_type_error(tmp_path: Path) -> None:
    """The project's configuration, copied beside a file with one wrong assignment, finds exactly it."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "bad.py").write_text('x: int = "one"\n\n\ndef f(y: str) -> str:\n    return y\n', encoding="utf-8")
    assert counts(mypy(tmp_path / "cache", "bad.py", cwd=tmp_path).stdout) == {"bad.py": 1}


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        found = counts(mypy(Path(tmp)).stdout)
    RATCHET.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{RATCHET.relative_to(ROOT)}: {sum(found.values())} type errors in {len(found)} files")
