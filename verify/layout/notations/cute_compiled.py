"""CuTe's traits as the C++ compiler evaluates them: the program that prints them, and its output read back.

Reading ``mma_traits_sm*.hpp`` as text (``cute_headers``) covers the explicit specialisations a
small reader can resolve; the compiler resolves everything else (aliases through other headers,
inheritance, templated GMMA traits, copy traits with their ``ValID``).  This module holds the two
pure halves of that reference, with nothing run here (``verify.checks.references.cute`` compiles
and runs the program):

* ``discover(include_root)``: every ``MMA_Traits<X>`` / ``Copy_Traits<X>`` specialisation in
  ``cute/atom/*traits*.hpp`` with its header and line; a partial specialisation over CuTe's GMMA
  enumerations (``GMMA::Major``, ``GMMA::ScaleIn``, ``GMMA::SparseSel``) is instantiated at K-major,
  scale one, selector zero (the layouts do not depend on them); one templated over types or integers
  is recorded with the reason it is not instantiated.
* ``program(requests)``: a C++17 translation unit that prints each trait's layouts with CuTe's own
  ``print`` (one function per trait, so a compiler error names the trait by its line).
* ``parse_output(text)``: the printed lines read back with CuTe's printed-layout grammar
  (``parse_cute``), bounded like every importer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .cute_layout import CuteLayout
from .cute_parse import parse_cute
from .errors import NotationError

# Template parameters of a partial specialisation that CuTe's layouts do not depend on, and the value
# the program instantiates them at.
ENUM_ARGS = {"GMMA::Major": "GMMA::Major::K", "GMMA::ScaleIn": "GMMA::ScaleIn::One",
             "GMMA::SparseSel": "GMMA::SparseSel::Zero"}
# A trait templated over exactly (a_type, b_type, c_type) (SM120's f8f6f4 MMAs, dense and sparse) is
# instantiated at these element types; its ValTypeA/B say uint8_t whatever the types ("the MMA accepts
# 8-bit inputs regardless"), so the rows name the template's element types instead.
TYPE_ARGS = (("cutlass::float_e4m3_t", "cutlass::float_e4m3_t", "float"),
             ("cutlass::float_e4m3_t", "cutlass::float_e4m3_t", "cutlass::half_t"))
# SM120's block-scaled dense MMAs (a, b, c, scale-factor type, vector size): .kind::mxf8f6f4 with
# .scale_vec::1X, .kind::mxf4 with 2X, .kind::mxf4nvf4 with 4X (ue4m3 scales, VS 16)
BLOCK_SCALED = {
    "SM120_16x8x32_TN_VS": (("cutlass::float_e4m3_t", "cutlass::float_e4m3_t", "float", "cutlass::float_ue8m0_t",
                             "32"),),
    "SM120_16x8x64_TN_VS": (("cutlass::float_e2m1_t", "cutlass::float_e2m1_t", "float", "cutlass::float_ue8m0_t",
                             "32"),
                            ("cutlass::float_e2m1_t", "cutlass::float_e2m1_t", "float", "cutlass::float_ue4m3_t",
                             "16")),
}
MMA_FIELDS = ("Shape_MNK", "ThrID", "ALayout", "BLayout", "CLayout", "SFALayout", "SFBLayout")
COPY_FIELDS = ("ThrID", "SrcLayout", "DstLayout", "RefLayout", "ValID")
TYPE_FIELDS = ("ValTypeA", "ValTypeB", "ValTypeC", "ValTypeD")
MAX_OUTPUT_LINES = 200_000
MAX_LINE = 20_000
# Headers the program includes: the traits of MMA and copy atoms, without TMA and im2col (descriptors
# built at run time from a tensor, no fixed layouts) and the headers that only collect others.
_SKIP_HEADERS = ("tma", "im2col")


@dataclass(frozen=True)
class Request:
    """One trait to print: its kind, the name the header writes, the C++ type to instantiate."""

    kind: str            # "mma" | "copy" | "tmem" (a Tensor Memory allocator, ``UMMA::tmem_frg...::make``)
                         # | "expr" (a C++ expression whose value is a layout)
                         # | "smem" (a C++ expression whose value is a swizzled shared-memory layout of
                         #   ``type_args[0]`` elements: its print and CuTe's offset of every (row, col))
    name: str            # as the header writes it inside MMA_Traits<...> (template arguments dropped)
    instance: str        # the C++ type: the name, or the name with the template arguments chosen; for
                         # "tmem" the template arguments of ``ptxv_tmem``: "Frg, M, N"
    header: str          # relative to the include root, e.g. cute/atom/mma_traits_sm80.hpp
    line: int
    skipped: str = ""    # why it is not instantiated (templated over types or integers)
    type_args: tuple[str, ...] = ()   # the element types chosen for a trait templated over them (A, B, C)


MAX_PRINTED_SIZE = 1 << 24   # Tensor Memory copy traits count bits: 32 threads x 128 x 32 x 32 bits


@dataclass(frozen=True)
class Printed:
    """One trait as the compiled program printed it: each field's text and the line it was printed on
    (parsed on demand, so one unreadable layout spoils only its own trait)."""

    kind: str
    name: str
    raw: dict[str, tuple[str, int]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    offsets: dict[int, tuple[int, ...]] = field(default_factory=dict)   # "smem": row -> offset of each column

    def layout(self, name: str, source: str = "cute-program") -> CuteLayout:
        """The field as a ``CuteLayout``; ``NotationError`` at its output line when CuTe printed something
        that is no layout (e.g. a stride not congruent with its shape, which the compiler accepts)."""
        text, line = self.raw[name]
        try:
            return parse_cute(text, source, max_size=MAX_PRINTED_SIZE)
        except NotationError as e:
            raise NotationError(e.message, line, len(name) + 1 + e.col, source) from None

    def has(self, name: str) -> bool:
        return name in self.raw


def _strip_comments(text: str) -> str:
    """Comments replaced by spaces (newlines kept, so positions stay those of the header)."""
    out = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), out)


def _split_top(text: str) -> list[str]:
    """Comma-separated items at bracket depth 0."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _matching(text: str, start: int) -> int:
    """The index just past the '>' that closes the '<' at ``start`` (-1 when unbalanced)."""
    depth = 0
    for k in range(start, min(len(text), start + 4000)):
        if text[k] == "<":
            depth += 1
        elif text[k] == ">":
            depth -= 1
            if depth == 0:
                return k + 1
        elif text[k] in ";{}":
            return -1
    return -1


_TRAIT = re.compile(r"template\s*<(?P<params>[^{};]*?)>\s*struct\s+(?P<kind>MMA_Traits|Copy_Traits)\s*<", re.S)


def _instance(name: str, args: str | None, params: str) -> tuple[str, str]:
    """The C++ type for a specialisation, or ("", reason) when it is templated over what we do not choose."""
    decl = _split_top(params) if params.strip() else []
    if not decl:
        return (name if args is None else f"{name}<{args}>"), ""
    values: dict[str, str] = {}
    for d in decl:
        words = d.split()
        if len(words) < 2:
            return "", f"templated over {d!r}"
        kind, pname = " ".join(words[:-1]), words[-1]
        if kind not in ENUM_ARGS:
            return "", f"templated over {kind} {pname} (partial specialisation over types or integers: not instantiated)"
        values[pname] = ENUM_ARGS[kind]
    if args is None:
        return "", "templated trait without template arguments"
    chosen = []
    for a in _split_top(args):
        if a not in values:
            return "", f"template argument {a!r} is not a parameter"
        chosen.append(values[a])
    return f"{name}<{', '.join(chosen)}>", ""


def discover_text(text: str, header: str) -> list[Request]:
    """The trait specialisations of one header's text."""
    clean = _strip_comments(text)
    out: list[Request] = []
    for m in _TRAIT.finditer(clean):
        open_at = m.end() - 1
        close = _matching(clean, open_at)
        if close < 0:
            continue
        inner = clean[open_at + 1:close - 1].strip()
        nm = re.match(r"([A-Za-z_][A-Za-z0-9_:]*)\s*(<.*>)?\s*$", inner, re.S)
        line = clean.count("\n", 0, m.start("kind")) + 1
        kind = "mma" if m.group("kind") == "MMA_Traits" else "copy"
        if len(_split_top(inner)) > 1:   # MMA_Traits<Op, Args...>: a partial specialisation over its arguments
            out.append(Request(kind, " ".join(_split_top(inner)[0].split("<")[0].split()), "", header, line,
                               "templated over trait arguments (partial specialisation: not instantiated)"))
            continue
        if nm is None:
            out.append(Request(kind, " ".join(inner.split()), "", header, line, "not a named atom"))
            continue
        name, args = nm.group(1), (nm.group(2)[1:-1] if nm.group(2) else None)
        params = " ".join(m.group("params").split())
        if params == "class a_type, class b_type, class c_type" and args is not None and \
                [a.strip() for a in _split_top(args)] == ["a_type", "b_type", "c_type"]:
            for types in TYPE_ARGS:   # SM120's f8f6f4 traits: instantiated at the element types they serve
                out.append(Request(kind, f"{name}<{', '.join(types)}>", f"{name}<{', '.join(types)}>", header, line,
                                   type_args=types))
            continue
        if name.split("::")[-1] in BLOCK_SCALED:   # SM120's block-scaled MMAs: at each scale_vec they serve
            for scaled in BLOCK_SCALED[name.split("::")[-1]]:
                inst = f"{name}<{', '.join(scaled)}>"
                out.append(Request(kind, inst, inst, header, line, type_args=scaled[:3]))
            continue
        inst, reason = _instance(name, args, m.group("params"))
        out.append(Request(kind, name, inst, header, line, reason))
    return out


def atom_headers(root: Path) -> list[Path]:
    """The traits headers under an include root (``cute/atom/*traits*.hpp``), TMA and im2col left out."""
    base = Path(root)
    found = sorted(base.rglob("cute/atom/*traits*.hpp")) or sorted(base.rglob("*traits*.hpp"))
    return [p for p in found if not any(s in p.name for s in _SKIP_HEADERS)]


def include_root(header: Path) -> Path:
    """The directory that ``#include <cute/...>`` is relative to."""
    parts = header.resolve().parts
    for k in range(len(parts) - 1, -1, -1):
        if parts[k] == "cute":
            return Path(*parts[:k])
    return header.parent


def discover(root: Path) -> list[Request]:
    """Every trait specialisation of every traits header under ``root``, in header order."""
    out: list[Request] = []
    for p in atom_headers(root):
        rel = p.resolve().relative_to(include_root(p)).as_posix()
        out.extend(discover_text(p.read_text(encoding="utf-8", errors="replace"), rel))
    return out


_TMEM = """\
template <class Frg, int M, int N> void ptxv_tmem(const char* name) {
  printf("@tmem %s\\n", name);
  ptxv_print("Layout", Frg::make(make_shape(make_shape(Int<M>{}, Int<N>{}), Int<1>{}, Int<1>{})).layout());
}
"""
# A shared-memory layout (a GMMA/UMMA atom or its tile_to_shape): CuTe's print, then CuTe's element offset of
# every (row, col) through ``as_position_independent_swizzle_layout`` (the swizzle of the smem pointer recast
# onto element offsets: the address a buffer aligned to the swizzle period gives), one line per row.
_SMEM = """\
template <class T, class L> void ptxv_smem(const char* name, L const& layout) {
  printf("@smem %s\\n", name);
  printf("SizeofBits %d\\n", int(sizeof_bits<T>::value));
  ptxv_print("Layout", layout);
  auto pil = as_position_independent_swizzle_layout(layout);
  for (int r = 0; r < int(size<0>(layout)); ++r) {
    printf("Offsets %d", r);
    for (int c = 0; c < int(size<1>(layout)); ++c) printf("%s%ld", c ? "," : " ", long(pil(r, c)));
    printf("\\n");
  }
}
"""
_PRELUDE = """\
// Generated by ptx-verify (verify/layout/notations/cute_compiled.py): prints CuTe's trait layouts.
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED 1
#include <cstdio>
#include <type_traits>
{includes}
using namespace cute;
template <class T> const char* ptxv_type() {{ return __PRETTY_FUNCTION__; }}
template <class T, class = void> struct ptxv_has_valid : std::false_type {{}};
template <class T> struct ptxv_has_valid<T, std::void_t<typename T::ValID>> : std::true_type {{}};
template <class T, class = void> struct ptxv_has_sf : std::false_type {{}};
template <class T> struct ptxv_has_sf<T, std::void_t<typename T::SFALayout>> : std::true_type {{}};
template <class T, class = void> struct ptxv_has_refl : std::false_type {{}};
template <class T> struct ptxv_has_refl<T, std::void_t<typename T::RefLayout>> : std::true_type {{}};
template <class L> void ptxv_print(const char* key, L const& l) {{ printf("%s ", key); print(l); printf("\\n"); }}
template <class Tr> void ptxv_mma(const char* name) {{
  printf("@mma %s\\n", name);
  ptxv_print("Shape_MNK", typename Tr::Shape_MNK{{}});
  ptxv_print("ThrID", typename Tr::ThrID{{}});
  ptxv_print("ALayout", typename Tr::ALayout{{}});
  ptxv_print("BLayout", typename Tr::BLayout{{}});
  ptxv_print("CLayout", typename Tr::CLayout{{}});
  printf("ValTypeA %s\\n", ptxv_type<typename Tr::ValTypeA>());
  printf("ValTypeB %s\\n", ptxv_type<typename Tr::ValTypeB>());
  printf("ValTypeC %s\\n", ptxv_type<typename Tr::ValTypeC>());
  printf("ValTypeD %s\\n", ptxv_type<typename Tr::ValTypeD>());
  if constexpr (ptxv_has_sf<Tr>::value) {{
    ptxv_print("SFALayout", typename Tr::SFALayout{{}});
    ptxv_print("SFBLayout", typename Tr::SFBLayout{{}});
    printf("SFVecSize %d\\n", int(Tr::SFVecSize));
  }}
}}
{tmem}{smem}template <class Tr> void ptxv_copy(const char* name) {{
  printf("@copy %s\\n", name);
  ptxv_print("ThrID", typename Tr::ThrID{{}});
  ptxv_print("SrcLayout", typename Tr::SrcLayout{{}});
  ptxv_print("DstLayout", typename Tr::DstLayout{{}});
  if constexpr (ptxv_has_refl<Tr>::value) ptxv_print("RefLayout", typename Tr::RefLayout{{}});
  if constexpr (ptxv_has_valid<Tr>::value) ptxv_print("ValID", typename Tr::ValID{{}});
}}
"""


def program(requests: list[Request]) -> tuple[str, dict[int, int]]:
    """The C++ source printing every instantiable request, and the line of each request's function
    (1-based line -> index into ``requests``) so a compiler error can be traced to its trait."""
    headers = sorted({r.header for r in requests if not r.skipped})
    tmem = _TMEM if any(r.kind == "tmem" and not r.skipped for r in requests) else ""
    smem = _SMEM if any(r.kind == "smem" and not r.skipped for r in requests) else ""
    text = _PRELUDE.format(includes="\n".join(f"#include <{h}>" for h in headers), tmem=tmem, smem=smem)
    lines = text.count("\n")
    body: list[str] = []
    where: dict[int, int] = {}
    calls: list[str] = []
    for k, r in enumerate(requests):
        if r.skipped:
            continue
        where[lines + len(body) + 1] = k
        if r.kind == "tmem":   # a Tensor Memory allocator: instance is "Frg, M, N"
            body.append(f"void ptxv_{k}() {{ ptxv_tmem<{r.instance}>(\"{k}\"); }}")
        elif r.kind == "smem":   # a shared-memory layout of type_args[0] elements
            body.append(f"void ptxv_{k}() {{ ptxv_smem<{r.type_args[0]}>(\"{k}\", {r.instance}); }}")
        elif r.kind == "expr":   # a C++ expression whose value is a layout (CUTLASS's storage layouts)
            body.append(f"void ptxv_{k}() {{ printf(\"@expr {k}\\n\"); ptxv_print(\"Layout\", {r.instance}); }}")
        else:
            trait = "MMA_Traits" if r.kind == "mma" else "Copy_Traits"
            body.append(f"void ptxv_{k}() {{ ptxv_{r.kind}<{trait}<{r.instance}>>(\"{k}\"); }}")
        calls.append(f"  ptxv_{k}();")
    src = text + "\n".join(body) + "\nint main() {\n" + "\n".join(calls) + "\n  return 0;\n}\n"
    return src, where


_PRETTY = re.compile(r"\[with T = (.*)\]\s*$")


def _type_name(pretty: str) -> str:
    m = _PRETTY.search(pretty)
    return " ".join((m.group(1) if m else pretty).split())


def parse_output(text: str, requests: list[Request], source: str = "cute-program") -> dict[int, Printed]:
    """The program's output: request index -> what it printed.  A line that is not the grammar is a
    ``NotationError`` at its line (the output is the compiler's, but bounded and checked all the same)."""
    lines = text.splitlines()
    if len(lines) > MAX_OUTPUT_LINES:
        raise NotationError(f"the program printed more than {MAX_OUTPUT_LINES} lines", 1, 1, source)
    out: dict[int, Printed] = {}
    cur: Printed | None = None
    for n, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            raise NotationError(f"line longer than {MAX_LINE} characters", n, 1, source)
        head, _, rest = line.partition(" ")
        if head in ("@mma", "@copy", "@tmem", "@expr", "@smem"):
            if not rest.isdigit() or int(rest) >= len(requests):
                raise NotationError(f"unknown trait index {rest!r}", n, len(head) + 2, source)
            cur = Printed(head[1:], requests[int(rest)].name)
            out[int(rest)] = cur
            continue
        if cur is None:
            raise NotationError("output before the first trait", n, 1, source)
        if head in TYPE_FIELDS:
            cur.types[head] = _type_name(rest)
        elif head in ("SFVecSize", "SizeofBits"):
            cur.types[head] = rest.strip()
        elif head == "Offsets" and cur.kind == "smem":
            row, _, values = rest.partition(" ")
            if not row.isdigit() or not re.fullmatch(r"-?\d{1,12}(,-?\d{1,12})*", values):
                raise NotationError("Offsets line is not 'Offsets ROW o,o,...'", n, 9, source)
            cur.offsets[int(row)] = tuple(int(v) for v in values.split(","))
        elif head in MMA_FIELDS or head in COPY_FIELDS or head == "Layout":
            cur.raw[head] = (rest, n)
        else:
            raise NotationError(f"unknown field {head!r}", n, 1, source)
    return out


def value_type(printed: Printed, operand: str) -> str:
    return printed.types.get(f"ValType{operand}", "")


__all__ = ["Printed", "Request", "atom_headers", "discover", "discover_text", "include_root", "parse_output",
           "program", "value_type"]
