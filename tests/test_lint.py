"""The lint `pyproject.toml` configures (`[tool.ruff]`: pyflakes and pycodestyle's errors) finds nothing in the
package, the tests and the benchmarks: an unused import, an undefined name, a function defined twice fail here."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]' installs it)")
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_project_has_no_lint_finding() -> None:
    run = _ruff("check", "--no-cache", "verify", "tests", "benchmarks")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_lint_finds_a_function_defined_twice_and_an_undefined_name(tmp_path: Path) -> None:
    """The configuration is the project's (copied beside a bad file), and it does find what it is there for."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n\n\ndef f():\n    return 1\n\n\ndef f():\n    return undefined_name\n")
    run = _ruff("check", "--no-cache", "--output-format", "concise", "bad.py", cwd=tmp_path)
    assert run.returncode == 1
    assert {code for code in ("F401", "F811", "F821") if code in run.stdout} == {"F401", "F811", "F821"}, run.stdout
