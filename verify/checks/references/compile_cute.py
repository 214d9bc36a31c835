"""Compile and run the program that prints CuTe's traits (``layout.notations.cute_compiled``), host-only.

g++ (or ``$CXX``) with ``-std=c++17`` against the CuTe/CUTLASS headers and the CUDA toolkit's headers
(``cuda/std`` from CCCL; no GPU, no nvcc).  A trait whose instantiation does not compile is dropped
and recorded with the compiler's first error in the headers (file and line), and the program is
compiled again without it.  The output is cached by a hash of the program, the compiler's version
and every header under the include root, in the user's cache directory (never the source tree).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ...layout.notations.cute_compiled import Request, program

COMPILE_TIMEOUT = 900.0
RUN_TIMEOUT = 120.0
MAX_ROUNDS = 6
CACHE_VERSION = 1


@dataclass(frozen=True)
class Failure:
    """A trait the compiler refused: where in the headers, and the first error."""

    index: int
    header: str
    line: int
    message: str


@dataclass(frozen=True)
class Run:
    output: str
    failures: tuple[Failure, ...]
    compiler: str
    cached: bool = False


class ToolchainError(RuntimeError):
    """No compiler, no CUDA headers, or headers that do not compile at all: the reference is unavailable."""


def find_compiler() -> str | None:
    for cand in (os.environ.get("CXX"), "g++", "clang++"):
        if cand and shutil.which(cand):
            return shutil.which(cand)
    return None


def cuda_include_dirs() -> list[Path]:
    """The CUDA toolkit's include directory and its CCCL directory (``cuda/std/...``), when installed."""
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if not home:
            continue
        inc = Path(home) / "include"
        found = [d for d in (inc, inc / "cccl") if (d / "cuda" / "std").is_dir()]
        if found:
            return [inc] + [d for d in found if d != inc]
    for inc in sorted(Path("/usr/local").glob("cuda-*/include"), reverse=True):
        for d in (inc, inc / "cccl"):
            if (d / "cuda" / "std").is_dir():
                return [inc] + ([d] if d != inc else [])
    return []


def probe() -> str:
    """'' when CuTe can be compiled here, else why not."""
    if find_compiler() is None:
        return "no C++ compiler (g++ or clang++; or set CXX)"
    if not cuda_include_dirs():
        return "no CUDA toolkit headers (cuda/std under $CUDA_HOME/include or /usr/local/cuda/include[/cccl])"
    return ""


def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return cxx
    return (out.stdout.splitlines() or [cxx])[0]


def _headers_hash(root: Path) -> str:
    h = hashlib.sha256()
    for sub in ("cute", "cutlass"):
        for p in sorted((root / sub).rglob("*")):
            if p.is_file() and p.suffix in (".hpp", ".h", ".hh", ".inl"):
                h.update(p.relative_to(root).as_posix().encode())
                h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ptx-verify" / "cute"


_LOC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+):\s+(?P<what>error|required from here|required from)"
                  r"(?::\s*(?P<msg>.*))?$")


def _attribute(stderr: str, gen: str, where: dict[int, int], root: Path,
               requests: list[Request]) -> tuple[dict[int, Failure], str]:
    """Compiler errors -> the trait whose function led to each (the last line of the generated file named
    before the error); the first error that names no trait is returned as a fatal message."""
    failures: dict[int, Failure] = {}
    current: int | None = None
    fatal = ""
    gen_name = Path(gen).name
    for raw in stderr.splitlines():
        m = _LOC.match(raw.strip())
        if not m:
            if "In function" in raw or "At global scope" in raw:
                current = None
            continue
        f, line = m.group("file"), int(m.group("line"))
        if Path(f).name == gen_name:
            if line in where:
                current = where[line]
            if m.group("what") != "error":
                continue
        if m.group("what") != "error":
            continue
        msg = (m.group("msg") or "").strip()
        if current is None:
            if Path(f).name == gen_name:
                continue
            fatal = fatal or f"{_rel(f, root)}:{line}: error: {msg}"
            continue
        if current not in failures:
            r = requests[current]
            if Path(f).name == gen_name:
                failures[current] = Failure(current, r.header, r.line, msg)
            else:
                failures[current] = Failure(current, _rel(f, root), line, msg)
    return failures, fatal


def _rel(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def run(root: Path, requests: list[Request], *, use_cache: bool = True, cache: Path | None = None) -> Run:
    """The program's output for ``requests`` (with the traits that did not compile), from the cache when
    the same program, compiler, CuTe headers and CUDA include directories were compiled before."""
    cxx = find_compiler()
    incs = cuda_include_dirs()
    if cxx is None or not incs:
        raise ToolchainError(probe())
    version = _compiler_version(cxx)
    src, where = program(requests)
    # every input of the compile: a cached result made with other CUDA headers ($CUDA_HOME) is never reused
    key = hashlib.sha256(json.dumps([CACHE_VERSION, src, version, _headers_hash(root), [str(d) for d in incs]])
                         .encode()).hexdigest()[:32]
    cfile = (cache or cache_dir()) / f"{key}.json"
    if not use_cache:
        return _compile(root, requests, cxx, incs, version, cfile, use_cache)
    with _locked(cfile):   # processes asking for the same program (test workers) compile it once
        hit = _cached(cfile)
        if hit is not None:
            return hit
        return _compile(root, requests, cxx, incs, version, cfile, use_cache)


def _cached(cfile: Path) -> Run | None:
    if not cfile.is_file():
        return None
    try:
        doc = json.loads(cfile.read_text(encoding="utf-8"))
        return Run(doc["output"], tuple(Failure(**f) for f in doc["failures"]), doc["compiler"], True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def _locked(cfile: Path) -> Iterator[None]:
    """An exclusive lock on ``cfile``'s lock file while it is compiled (no lock where none can be taken)."""
    try:
        cfile.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(cfile.with_suffix(".lock"), os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:
        yield
        return
    try:
        try:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX)
        except (ImportError, OSError):
            pass
        yield
    finally:
        os.close(fd)


def _compile(root: Path, requests: list[Request], cxx: str, incs: list[Path], version: str, cfile: Path,
             use_cache: bool) -> Run:
    failures: dict[int, Failure] = {}
    with tempfile.TemporaryDirectory(prefix="ptx-verify-cute-") as tmp:
        gen = Path(tmp) / "ptxv_traits.cpp"
        exe = Path(tmp) / "ptxv_traits"
        active = list(requests)
        for _ in range(MAX_ROUNDS):
            src_now, where_now = program([r if i not in failures else _dropped(r) for i, r in enumerate(active)])
            gen.write_text(src_now, encoding="utf-8")
            cmd = [cxx, "-x", "c++", "-std=c++17", "-w", "-O0", f"-I{root}"] + [f"-I{d}" for d in incs] + \
                  ["-o", str(exe), str(gen)]
            try:
                b = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise ToolchainError(f"compiling CuTe's traits took over {COMPILE_TIMEOUT:.0f} s") from None
            if b.returncode == 0:
                break
            new, fatal = _attribute(b.stderr, str(gen), where_now, root, requests)
            new = {k: v for k, v in new.items() if k not in failures}
            if not new:
                raise ToolchainError("CuTe's headers do not compile here: " +
                                     (fatal or (b.stderr.strip().splitlines() or ["(no message)"])[-1]))
            failures.update(new)
        else:
            raise ToolchainError(f"CuTe's traits still do not compile after dropping {len(failures)} traits")
        try:
            r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise ToolchainError("the traits program did not finish") from None
        if r.returncode != 0:
            raise ToolchainError(f"the traits program failed (exit {r.returncode})")
    result = Run(r.stdout, tuple(sorted(failures.values(), key=lambda f: f.index)), version)
    if use_cache:
        try:
            cfile.parent.mkdir(parents=True, exist_ok=True)
            tmpf = cfile.with_suffix(".tmp")
            tmpf.write_text(json.dumps({"output": result.output, "compiler": version,
                                        "failures": [f.__dict__ for f in result.failures]}), encoding="utf-8")
            os.replace(tmpf, cfile)
        except OSError:
            pass
    return result


def _dropped(r: Request) -> Request:
    from dataclasses import replace
    return replace(r, skipped="did not compile")
