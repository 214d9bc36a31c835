"""The ``--help`` epilog of every command: one example and the exit codes."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .options import Parser

_BAD_INPUT = ("  2  bad input: unreadable file, unwritable output, syntax error, unknown id or option value;\n"
              "     one line on stderr (file:line:col: error: ... or ptx-verify: error: ...), nothing written")
_SIGNALS = ("\n  130  interrupted (Ctrl-C); 143 terminated (SIGTERM): one line on stderr, worker processes\n"
            "       stopped, nothing half-written")

EPILOGS = {
    None: f"""\
examples:
  ptx-verify check                               # every bundled spec
  ptx-verify check --format sarif > results.sarif
  ptx-verify COMMAND --help                      # options, an example and the exit codes of COMMAND

exit codes:
  0  everything as the specs expect (known errata included)
  1  something is not (or, with check --baseline, something changed)
{_BAD_INPUT}""",
    "check": f"""\
examples:
  ptx-verify check                                          # the bundled specs, text
  ptx-verify check specs/mma.m16n8k16.float.toml --format json
  ptx-verify check --baseline ci/layouts.json --format sarif > results.sarif
  ptx-verify check --baseline ci/layouts.json --update-baseline   # accept the current state

exit codes:
  0  every result as its spec expects; with --baseline: no difference from it; --update-baseline: written
  1  some result is not (a new failure, a fixed erratum, an unknown, an engine disagreement);
     with --baseline: some difference from it (printed)
{_BAD_INPUT}; a missing or malformed --baseline FILE too""",
    "list": f"""\
example:
  ptx-verify list --format json

exit codes:
  0  listed
{_BAD_INPUT}""",
    "table": f"""\
examples:
  ptx-verify table mma.m16n8k16.A.f16_bf16
  ptx-verify table mma.m16n8k256.A.b1 --format svg --out k256.svg      # condensed around the collision
  ptx-verify table mma.m16n8k256.A.b1 --format svg --full > full.svg   # every cell

exit codes:
  0  drawn
{_BAD_INPUT}""",
    "pictures": f"""\
example:
  ptx-verify pictures --out pictures/

exit codes:
  0  every picture written (replacing DIR as a whole)
{_BAD_INPUT}""",
    "report": f"""\
example:
  ptx-verify report specs --pages ../shared/ptx-isa-9.0 --out reports/ptx-isa-9.0

exit codes:
  0  written; everything as the specs expect
  1  written; some result is not
{_BAD_INPUT}""",
    "ingest": f"""\
examples:
  ptx-verify ingest ../shared/ptx-isa-9.0 --out /tmp/specs
  ptx-verify ingest PAGE.md --findings none > spec.toml     # one section: stdout is one spec file

exit codes:
  0  specs written (or printed); the pages are as the reviewed specs record (known errata included)
  1  specs written; something on the pages is not (a new erratum, a formula that does not parse,
     a changed layout)
{_BAD_INPUT}""",
    "probe": f"""\
example:
  ptx-verify probe mma.m16n8k16.A.f16_bf16 --emit /tmp/probes

exit codes:
  0  probe sources written
{_BAD_INPUT}""",
    "confirm": f"""\
examples:
  ptx-verify confirm --device cuda
  ptx-verify confirm mma.m16n8k16.A.f16_bf16 --device simulated   # the pipeline, no GPU (proves nothing)

exit codes:
  0  every tested layout as its spec expects (confirmed; a known erratum contradicted; wmma observed)
  1  some layout not as expected
{_BAD_INPUT}; also no GPU or no nvcc""",
    "conform": f"""\
example:
  ptx-verify conform mma.m16n8k16.A.f16_bf16 --cute "((4,8),(2,2,2)):((32,1),(16,8,128))"

exit codes:
  0  the layout you wrote is the spec's (with --allow-replication: or a replication of it)
  1  it is not (the first differing point is printed), or the doc leaves the spec's map unspecified (wmma);
     for a family: some member is not
{_BAD_INPUT}; a given that fits no member of a family, or several (give --param)""",
    "handoff": f"""\
example:
  ptx-verify handoff mma.m16n8k16.float.C.f32 mma.m16n8k16.A.f16_bf16
  ptx-verify handoff mma.m16n8k16.float.C.f32 --triton examples/layouts/handoff_32x16.ttgir --tensor "#mma" --to-tensor "#blocked"  # exit 1: shuffle
    (two block layouts of one kernel: free, shuffle within warps, or shared: through shared memory)
  ptx-verify handoff ldmatrix.m8n8.R.b16 ldmatrix.m8n8.R.b16 --from-param NUM=1 --to-param NUM=2
    (--param binds a name on every side that has it; --from-param/--to-param bind one side alone)
  ptx-verify handoff mma.m16n8k16.float.C.f32 --reduce row --xor 1,2
    (does a shfl.xor butterfly reduce every row over exactly the lanes that own it?)

exit codes:
  0  the fragment feeds the operand without a shuffle (for families: every member); --reduce: exact
  1  it does not (what each lane needs is printed; across warps: which warps exchange what), a member whose
     extents cannot be tiled (incompatible), or a map the doc leaves unspecified (wmma); --reduce: inexact
     (the lane pair that breaks it)
{_BAD_INPUT}""",
    "kernel": f"""\
examples:
  ptx-verify kernel examples/kernels/triton_fp16.toml         # a launch file: .ptx, grid, block, computes, args
  ptx-verify kernel mm.ptx --grid 1 --block 128 --computes "C[m, n] = A[m, k] * B[k, n]" \\
      --arg A:f16:128x256 --arg B:f16:256x128 --arg C:f32:128x128 --arg 128 --arg 128 --arg 256 ...
  ptx-verify kernel --triton mm.py:matmul_kernel --constexpr BM=128 --constexpr BN=128 --constexpr BK=64 \\
      --target sm_80 --grid 1 --computes "C[m, n] = A[m, k] * B[k, n]" --arg A:f16:128x256 ...
  ptx-verify kernel examples/kernels/mma_inline_read_swizzled.toml --svg c.svg  # the picture: each element's
      verdict, the first wrong one outlined with its chain (--full: every cell of a large output)

exit codes:
  0  proved: every output element is exactly its einsum sum, each product once, nothing else written
  1  refuted (the first wrong element and the chain that made it, and every other finding), or the two
     engines disagree
{_BAD_INPUT}; also an instruction the executor does not know (named with its line), a branch it cannot
     follow, or a missing toolchain (nvcc, Triton)""",
    "diff": f"""\
example:
  ptx-verify diff ../shared/ptx-isa-9.0 ../shared/ptx-isa-9.1

exit codes:
  0  nothing changed
  1  something did (added, removed, changed, undecided)
{_BAD_INPUT}""",
    "crosscheck": f"""\
examples:
  ptx-verify crosscheck --cute ../cutlass/include
  ptx-verify crosscheck --reference cute            # CuTe compiled host-only (g++, the CUDA headers)
  ptx-verify crosscheck --matrix --format json > reports/references.json

exit codes:
  0  every layout the reference states agrees with the spec (--matrix: no difference that is not reviewed)
  1  some differ or cannot be read
{_BAD_INPUT}; also no CuTe headers found, or the reference is unavailable here (the reason is printed)""",
}


def add_epilogs(parser: argparse.ArgumentParser,
                subparsers: "argparse._SubParsersAction[Parser]") -> None:
    """Give the main parser and every subcommand its epilog, printed verbatim."""
    for name, p in [(None, parser)] + sorted(subparsers.choices.items()):
        if name in EPILOGS:
            p.epilog = EPILOGS[name] + _SIGNALS
            p.formatter_class = argparse.RawDescriptionHelpFormatter
