"""Many probe programs in one translation unit (one ``nvcc`` run builds them all).

Each probe's standalone program (its kernel and a host ``main`` printing its raw JSON) goes into a
namespace of its own, with ``main`` renamed and its macros undefined after it; a new ``main`` runs probe
``k`` (``./probes k``) or every probe in turn (``./probes``), framing each output between ``@@probe k ID``
and ``@@end k RC`` lines.  ``frames`` reads that output back.  nvcc's start-up, not the probes, is most of
the cost of building one probe, so the assembly tests and ``confirm --device cuda`` build one such file
per architecture.
"""
from __future__ import annotations

import re
from typing import Sequence

_DEFINE = re.compile(r"^#define (\w+)", re.M)
_FRAME = re.compile(r"^@@probe (\d+) (\S+)\n(.*?)^@@end \1 (-?\d+)$", re.M | re.S)


def batch_program(programs: Sequence[tuple[str, str]]) -> str:
    """One translation unit from (probe id, standalone program source) pairs."""
    includes: list[str] = []
    parts: list[str] = []
    for k, (_pid, src) in enumerate(programs):
        lines = src.split("\n")
        includes += [ln for ln in lines if ln.startswith("#include") and ln not in includes]
        body = "\n".join(ln for ln in lines if not ln.startswith("#include")).replace("int main() {",
                                                                                    "int probe_main() {")
        undef = "".join(f"#undef {m}\n" for m in dict.fromkeys(_DEFINE.findall(src)))
        parts.append(f"namespace probe_{k} {{\n{body}\n}}  // namespace probe_{k}\n{undef}")
    for inc in ("#include <cstdio>", "#include <cstdlib>"):
        if inc not in includes:
            includes.append(inc)
    table = ",\n".join(f"  {{\"{pid}\", probe_{k}::probe_main}}" for k, (pid, _s) in enumerate(programs))
    main = f"""
struct ProbeEntry {{ const char* id; int (*run)(); }};
static const ProbeEntry kProbes[] = {{
{table}
}};

int main(int argc, char** argv) {{
  const int n = (int)(sizeof(kProbes) / sizeof(kProbes[0]));
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  int worst = 0;
  for (int k = 0; k < n; ++k) {{
    if (only >= 0 && k != only) continue;
    printf("@@probe %d %s\\n", k, kProbes[k].id);
    fflush(stdout);
    const int rc = kProbes[k].run();
    fflush(stdout);
    printf("\\n@@end %d %d\\n", k, rc);
    fflush(stdout);
    if (rc != 0) worst = rc;
  }}
  return worst;
}}
""" if programs else "\nint main() { return 0; }\n"
    return "\n".join(includes) + "\n" + "".join(parts) + main


def frames(stdout: str) -> dict[int, tuple[str, str, int]]:
    """Probe index -> (probe id, its output, its exit code) from a batch program's output (complete
    frames only: a probe that crashed the process has none)."""
    return {int(m.group(1)): (m.group(2), m.group(3), int(m.group(4))) for m in _FRAME.finditer(stdout)}
