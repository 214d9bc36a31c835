"""``ptx-verify``: a thin shell over ``verify.api``.  Exit codes: 0 as expected, 1 not, 2 bad input."""
from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Sequence

from .. import api
from ..checks.fragment import BoundError
from ..engines.oracle import EvalError
from ..errors import SpecError, UsageError
from ..outputs import json as out_json
from ..outputs import text as out_text
from . import options


def _load(paths: Sequence[str]) -> list:
    return api.load(list(paths) if paths else ["specs"])


def cmd_check(args: argparse.Namespace) -> int:
    specs, doc_findings = api.load_with_doc_findings(list(args.paths) if args.paths else ["specs"])
    if not api.layouts(specs):
        raise UsageError(f"nothing to check: no layouts in {' '.join(args.paths) or 'specs'}")
    report = api.check_all(specs, timeout=args.timeout, jobs=args.jobs or api.default_jobs(),
                           doc_findings=doc_findings)
    if getattr(args, "observations", None):
        from ..hardware.observe import check_observations  # noqa: PLC0415
        obs = check_observations(api.layouts(specs), args.observations)
        report = dataclasses.replace(report, findings=report.findings + tuple(obs))
    if args.format == "json":
        sys.stdout.write(out_json.to_json(out_json.check_json(report, timings=args.timings)))
    else:
        sys.stdout.write(out_text.check_text(report))
    return 0 if report.as_expected else 1


def cmd_list(args: argparse.Namespace) -> int:
    lays = api.layouts(_load([args.specs]))
    if args.format == "json":
        sys.stdout.write(out_json.to_json(out_json.list_json(lays)))
    else:
        sys.stdout.write(out_text.list_text(lays))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    specs = _load([args.specs])
    try:
        lay = api.layout(specs, args.id)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    metadata = None
    if args.metadata is not None:
        try:
            metadata = int(args.metadata, 0)
        except ValueError:
            raise UsageError(f"--metadata {args.metadata!r} is not a number (e.g. 0x44444444)") from None
        if not 0 <= metadata < 2**32:
            raise UsageError(f"--metadata {args.metadata} does not fit a 32-bit register")
    if args.format == "json":
        sys.stdout.write(out_json.to_json(out_json.table_json(lay, metadata)))
    else:
        sys.stdout.write(out_text.table_text(lay, metadata))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = options.Parser(prog="ptx-verify", description="Verify PTX warp-level matrix fragment layouts.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=options.Parser)

    c = sub.add_parser("check", help="prove or refute every property of every layout")
    c.add_argument("paths", nargs="*", help="spec files, directories of specs, or doc pages (default: specs/)")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--timeout", type=options.seconds, default=10.0, help="seconds per Z3 query (default 10)")
    c.add_argument("--timings", action="store_true", help="include seconds in JSON (not byte-stable)")
    c.add_argument("--jobs", type=options.jobs, default=None,
                   help="worker processes for the layout checks (default: CPUs, at most 4)")
    c.add_argument("--observations", metavar="DIR", help="compare specs with GPU observation files")
    c.set_defaults(func=cmd_check)

    lst = sub.add_parser("list", help="list the known layouts")
    lst.add_argument("--specs", default="specs")
    lst.add_argument("--format", choices=("text", "json"), default="text")
    lst.set_defaults(func=cmd_list)

    t = sub.add_parser("table", help="the full mapping of one layout")
    t.add_argument("id")
    t.add_argument("--specs", default="specs")
    t.add_argument("--format", choices=("text", "json"), default="text")
    t.add_argument("--metadata", default=None,
                   help="sparse A: the 32-bit metadata register (default: the spec's canonical value)")
    t.set_defaults(func=cmd_table)

    from . import confirm, ingest, layouts, report  # noqa: PLC0415  (each adds its subcommands)
    for module in (ingest, confirm, report, layouts):
        module.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        options.quiet_sigpipe()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SpecError as e:
        print(e.one_line(), file=sys.stderr)
    except (UsageError, BoundError) as e:
        print(f"ptx-verify: error: {e}", file=sys.stderr)
    except EvalError as e:
        print(f"ptx-verify: error: formula line {e.pos.line}, column {e.pos.col}: {e.message}", file=sys.stderr)
    except BrokenPipeError:
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
