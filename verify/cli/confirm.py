"""``ptx-verify probe`` and ``ptx-verify confirm``: run the real instructions on a GPU.

``register(subparsers)`` adds both subcommands (called by ``verify.cli.main``); the work is in
``verify.hardware``.
Exit codes: 0 every tested layout as expected (confirmed, or contradicted where its spec records a known
erratum whose correction is what the hardware does, as ``check`` judges errata), 1 some not, 2 bad input
or no GPU (one line on stderr, nothing written).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from typing import TYPE_CHECKING

from ..errors import SpecError, UsageError
from ..files import check_writable_dir, output_error
from ..outputs.baseline import write_atomic
from ..outputs.json import to_json
from . import options

if TYPE_CHECKING:  # the probes load when a probe command runs
    from ..hardware import kinds
    from ..layout.model import Layout


class _Fail(Exception):
    """Bad input or missing tool: one line, exit 2."""


def _layouts(specs: str | None) -> tuple[list[Layout], list[Any]]:
    """The fragment layouts and the map layouts of the specs."""
    from .. import api  # noqa: PLC0415
    from . import inputs  # noqa: PLC0415
    loaded = api.load(inputs.paths_or_bundled([specs] if specs else None))
    return api.layouts(loaded), api.map_layouts(loaded)


def _probes(lays: tuple[list[Layout], list[Any]], ids: Sequence[str]) -> list[kinds.Probe]:
    from ..hardware import kinds  # noqa: PLC0415
    try:
        return kinds.probes_for(lays[0], ids, lays[1])
    except KeyError as e:
        raise _Fail(e.args[0]) from None


def cmd_probe(args: argparse.Namespace) -> int:
    check_writable_dir(args.emit)  # refused before any work
    lays = _layouts(args.specs)
    found = [p for p in _probes(lays, args.ids) if not p.negative]
    out = Path(args.emit)
    from ..hardware import kinds  # noqa: PLC0415
    files = {f"{p.id}.cu": kinds.program(p) for p in found}
    files["README.md"] = kinds.build_note(found)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error(args.emit, e) from None
    for name, text in files.items():  # each file whole or not at all (temp file, then rename)
        write_atomic(out / name, text)
    for p in found:
        member = f"  [{', '.join(p.tags)}]" if p.binding else ""
        print(f"{out / (p.id + '.cu')}  {p.text}  ({p.arch}){member}")
    print(f"{out / 'README.md'}  build and run notes")
    return 0


def cmd_confirm(args: argparse.Namespace) -> int:
    from ..hardware import cuda, observe  # noqa: PLC0415
    lays = _layouts(args.specs)
    found = _probes(lays, args.ids)
    say = (lambda line: print(line, file=sys.stderr)) if args.format == "json" else print  # JSON: one document
    if args.device == "simulated":
        say("SIMULATED device (numpy, follows the specs): tests the pipeline, proves nothing about "
            "hardware; nothing written")
        results = cuda.confirm_simulated(found)
    else:
        check_writable_dir(args.out)  # refused before the probes are built
        results = cuda.confirm_on_gpu(found, Path(args.out), args.nvcc, args.timeout, say)
    if args.format == "json":
        sys.stdout.write(to_json({"schema": 1, "simulated": args.device == "simulated",
                                  "results": observe.results_json(results)}))
    else:
        for r in results:
            print(r.text_line())
        counts = {s: sum(1 for r in results if r.status == s) for s in ("confirmed", "observed", "contradicted")}
        known = sum(1 for r in results if r.status == "contradicted" and r.as_expected)
        unexpected = sum(1 for r in results if not r.as_expected)
        tag = "SIMULATED: " if args.device == "simulated" else ""
        print(f"{tag}{len(results)} layout results: {counts['confirmed']} confirmed, {counts['observed']} observed "
              f"(wmma: the doc states no map), {counts['contradicted']} contradicted ({known} known errata), "
              f"{unexpected} unexpected" + ("  -> FAIL" if unexpected else ""))
    return 0 if all(r.as_expected for r in results) else 1


def _guard(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return int(fn(args))
        except SpecError as e:
            print(e.one_line(), file=sys.stderr)
        except (_Fail, UsageError) as e:
            print(f"ptx-verify: error: {e}", file=sys.stderr)
        except OSError as e:
            where = f"{e.filename}: " if e.filename else ""
            print(f"ptx-verify: error: {where}{(e.strerror or str(e)).lower()}", file=sys.stderr)
        except subprocess.SubprocessError as e:
            print(f"ptx-verify: error: {e}", file=sys.stderr)
        except Exception as e:  # the probe modules' own bad-input errors (imported with the command)
            from ..hardware import cuda, probes  # noqa: PLC0415
            if not isinstance(e, (probes.ProbeError, cuda.HardwareError)):
                raise
            print(f"ptx-verify: error: {e}", file=sys.stderr)
        return 2
    return run


def register(subparsers: Any) -> None:
    """Add ``probe`` and ``confirm`` to the ``ptx-verify`` command line."""
    p = subparsers.add_parser("probe", help="write CUDA probe kernels that run the real instruction")
    p.add_argument("ids", nargs="+", metavar="ID", help="layout ids (or unique parts of them)")
    p.add_argument("--emit", required=True, metavar="DIR",
                   help="directory for the .cu files and a README.md of build notes (created if missing)")
    p.add_argument("--specs", default=None, metavar="PATH",
                   help="spec files or directory the ids are looked up in (default: the bundled specs)")
    p.set_defaults(func=_guard(cmd_probe))

    c = subparsers.add_parser("confirm", help="run the probes on a GPU and record observations")
    c.add_argument("ids", nargs="*", metavar="ID", help="layout ids (default: every probe-able instruction)")
    c.add_argument("--device", choices=("cuda", "simulated"), default="cuda",
                   help="cuda: a real GPU (writes observations); simulated: numpy, labelled, writes nothing")
    c.add_argument("--specs", default=None, metavar="PATH",
                   help="spec files or directory the layouts are taken from (default: the bundled specs)")
    c.add_argument("--out", default="reports/observations", metavar="DIR",
                   help="--device cuda: directory for the observation files (default: reports/observations)")
    c.add_argument("--nvcc", default=None, help="path to nvcc (default: PATH, CUDA_HOME, nvidia-cuda-nvcc)")
    c.add_argument("--timeout", type=options.seconds, default=300.0,
                   help="seconds per probe build and per probe run (default 300)")
    c.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default) or json (one document on stdout; progress and notes on stderr)")
    c.set_defaults(func=_guard(cmd_confirm))
