"""Read CuTe's ``mma_traits_sm*.hpp`` headers as text: every ``MMA_Traits`` it can resolve.

CuTe states each MMA atom's fragment layouts as C++ types (``using ALayout = ...``), so checking
CUTLASS against the PTX spec means reading those headers.  This is a reader for the subset the
traits use — namespaces, namespace-scope ``using`` aliases (also ``template <int ...>`` aliases such
as ``CLayout_64xN<N>``), explicit specialisations ``template <> struct MMA_Traits<X> [: MMA_Traits<Y>]
{ using ...; }`` — not a C++ compiler: anything else is skipped by balanced brackets, partial
specialisations (templated traits) are recorded as skipped with the reason, and a malformed trait
(an unknown alias, a shape not congruent with its stride) is reported with its position instead of
stopping the read.  Nothing is executed; nesting and sizes are bounded like every importer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .cute import tv_to_formula
from .cute_layout import CuteLayout
from .cute_parse import Interpreter, TNode, Token, TypeParser, lex
from .errors import NotationError, TVImport, decode_source, read_source

MAX_ALIAS_CHAIN = 16
MAX_HEADER_TOKENS = 400_000     # the largest CuTe header (sm90_gmma_sparse_ext) has ~117k
REQUIRED = ("ValTypeA", "ValTypeB", "ValTypeC", "ValTypeD", "Shape_MNK", "ThrID", "ALayout", "BLayout", "CLayout")
_INT_PARAM_TYPES = {"int", "unsigned", "size_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "short", "long"}


@dataclass(frozen=True)
class TraitEntry:
    """One ``MMA_Traits<name>`` with its layouts resolved (aliases and inheritance applied)."""

    name: str
    value_types: tuple[str, str, str, str]   # A, B, C, D, as written
    shape_mnk: tuple[int, int, int]
    thr_id: CuteLayout
    a_layout: CuteLayout
    b_layout: CuteLayout
    c_layout: CuteLayout
    line: int
    source: str = ""
    base: str | None = None                  # the trait it inherits from, if any

    def layout(self, operand: str) -> CuteLayout:
        return {"A": self.a_layout, "B": self.b_layout, "C": self.c_layout, "D": self.c_layout}[operand.upper()]

    def import_operand(self, operand: str) -> TVImport:
        """The operand's layout as a formula (``D`` shares ``C``'s layout in CuTe)."""
        m, n, k = self.shape_mnk
        field_name = "CLayout" if operand.upper() == "D" else operand.upper() + "Layout"
        return tv_to_formula(self.layout(operand), operand, m, n, k, thr_id=self.thr_id,
                             text=f"MMA_Traits<{self.name}>::{field_name} = {self.layout(operand)}",
                             source=self.source or "header")


_PTX_TYPES = {
    "half_t": "f16", "bfloat16_t": "bf16", "tfloat32_t": "tf32", "float": "f32", "double": "f64",
    "int8_t": "s8", "uint8_t": "u8", "int4b_t": "s4", "uint4b_t": "u4", "uint1b_t": "b1", "bin1_t": "b1",
    "int32_t": "s32", "uint32_t": "u32", "int16_t": "s16", "float_e4m3_t": "e4m3", "float_e5m2_t": "e5m2",
    "float_e2m3_t": "e2m3", "float_e3m2_t": "e3m2", "float_e2m1_t": "e2m1",
    # the same types as the compiler names them (``verify.layout.notations.cute_compiled``)
    "int": "s32", "unsigned int": "u32", "signed char": "s8", "unsigned char": "u8", "short int": "s16",
    "integer_subbyte<1, false>": "b1", "integer_subbyte<4, true>": "s4", "integer_subbyte<4, false>": "u4",
}


def ptx_type(value_type: str) -> str | None:
    """CuTe's C++ element type as the PTX type suffix (``cutlass::half_t`` -> ``f16``), or None."""
    return _PTX_TYPES.get(value_type.rsplit("::", 1)[-1])


class Skipped(NamedTuple):
    """A trait that could not be read, and why."""

    name: str
    line: int
    reason: str


@dataclass
class HeaderResult:
    source: str
    traits: list[TraitEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class _Alias:
    name: str
    node: TNode | None
    params: tuple[str, ...] | None          # template parameters (ints), None for a plain alias
    error: NotationError | None
    source: str


@dataclass
class _Member:
    node: TNode | None
    text: str
    line: int
    col: int
    source: str
    error: NotationError | None = None


@dataclass
class _Raw:
    """A trait before evaluation: its own members, merged with its base's when inherited."""

    name: str
    line: int
    members: dict[str, _Member]
    base: str | None
    skipped: str | None = None


class HeaderReader:
    """Reads one header after another, sharing aliases and traits (headers include each other)."""

    def __init__(self) -> None:
        self.aliases: dict[str, _Alias] = {}
        self.raw: dict[str, _Raw] = {}
        self._resolving: list[str] = []

    # ------------------------------------------------------------------ public
    def read(self, text: str | bytes, source: str = "header", *, line0: int = 1,
             result: HeaderResult | None = None) -> HeaderResult:
        """Read one header (or one part of it starting at ``line0``, adding to ``result``)."""
        text = decode_source(text, source)
        toks = lex(text, source, cpp=True, line0=line0, max_tokens=MAX_HEADER_TOKENS)
        result = result if result is not None else HeaderResult(source)
        _Scanner(self, toks, source, result).run()
        return result

    # ------------------------------------------------------------------ alias resolution
    def lookup(self, name: str) -> _Alias | None:
        if name in self.aliases:
            return self.aliases[name]
        short = name.rsplit("::", 1)[-1]
        return self.aliases.get(short)

    def resolve(self, node: TNode, interp: Interpreter) -> object:
        alias = self.lookup(node.text)
        if alias is None:
            return None
        if alias.error is not None:
            raise NotationError(f"alias {alias.name} could not be read: {alias.error.message} "
                                f"(at {alias.error.source}:{alias.error.line}:{alias.error.col})",
                                node.line, node.col, interp.source)
        if len(self._resolving) >= MAX_ALIAS_CHAIN or alias.name in self._resolving:
            raise NotationError(f"alias {alias.name} refers to itself or nests too deep", node.line, node.col,
                                interp.source)
        env: dict[str, int] = {}
        if alias.params is not None:
            if node.args is None or len(node.args) != len(alias.params):
                raise NotationError(f"template alias {alias.name} takes {len(alias.params)} arguments",
                                    node.line, node.col, interp.source)
            env = {p: interp.integer(a) for p, a in zip(alias.params, node.args)}
        elif node.args is not None:
            raise NotationError(f"{alias.name} is not a template", node.line, node.col, interp.source)
        self._resolving.append(alias.name)
        try:
            return Interpreter(alias.source, env, self.resolve).value(alias.node)  # type: ignore[arg-type]
        finally:
            self._resolving.pop()

    # ------------------------------------------------------------------ traits
    def evaluate(self, raw: _Raw, source: str) -> TraitEntry | Skipped:
        if raw.skipped is not None:
            return Skipped(raw.name, raw.line, raw.skipped)
        members = dict(raw.members)
        chain: list[str] = []
        base = raw.base
        while base is not None:  # inheritance: base members first, own members override
            if base in chain or len(chain) >= MAX_ALIAS_CHAIN:
                return Skipped(raw.name, raw.line, f"inheritance cycle through MMA_Traits<{base}>")
            chain.append(base)
            parent = self.raw.get(base)
            if parent is None and "<" in base:  # an instance of a partial specialisation?
                head = base.split("<", 1)[0]
                parent = next((r for n, r in self.raw.items() if n.split("<", 1)[0] == head and r.skipped), None)
            if parent is None:
                return Skipped(raw.name, raw.line, f"base MMA_Traits<{base}> is not defined in the headers read")
            if parent.skipped is not None:
                return Skipped(raw.name, raw.line, f"base MMA_Traits<{base}> was skipped: {parent.skipped}")
            members = {**parent.members, **members}
            base = parent.base
        missing = [f for f in REQUIRED if f not in members]
        if missing:
            return Skipped(raw.name, raw.line, "missing " + ", ".join(missing))
        try:
            vals = []
            for f in REQUIRED:
                mem = members[f]
                if f.startswith("ValType"):
                    vals.append(mem.text)
                    continue
                if mem.error is not None:
                    raise mem.error
                interp = Interpreter(mem.source, None, self.resolve)
                if f == "Shape_MNK":
                    shape = interp.int_tuple(mem.node)  # type: ignore[arg-type]
                    if shape.children is None or len(shape.children) != 3 or any(
                            c.children is not None for c in shape.children):
                        raise NotationError("Shape_MNK is not Shape<M,N,K>", mem.line, mem.col, mem.source)
                    vals.append(tuple(shape.value))  # type: ignore[arg-type]
                else:
                    vals.append(interp.layout(mem.node))  # type: ignore[arg-type]
        except NotationError as e:
            return Skipped(raw.name, raw.line, f"{f}: {e.one_line()}")
        va, vb, vc, vd, mnk, thr, a, b, c = vals
        return TraitEntry(raw.name, (va, vb, vc, vd), mnk, thr, a, b, c, raw.line, source, raw.base)  # type: ignore


def _join(toks: list[Token]) -> str:
    """Token texts as C++ would print them: a space only between two words."""
    out: list[str] = []
    prev_word = False
    for t in toks:
        word = t[0] in ("NAME", "NUM")
        if word and prev_word:
            out.append(" ")
        out.append(t[1])
        prev_word = word
    return "".join(out)


class _Scanner:
    """One pass over one header's tokens (iterative; brackets are skipped by counting)."""

    def __init__(self, reader: HeaderReader, toks: list[Token], source: str, result: HeaderResult) -> None:
        self.r, self.toks, self.source, self.result = reader, toks, source, result
        self.k = 0
        self.scopes = 0  # open namespace / extern "C" braces

    def tok(self, off: int = 0) -> Token:
        return self.toks[min(self.k + off, len(self.toks) - 1)]

    def is_p(self, p: str, off: int = 0) -> bool:
        t = self.tok(off)
        return t[0] == "P" and t[1] == p

    def is_name(self, name: str, off: int = 0) -> bool:
        t = self.tok(off)
        return t[0] == "NAME" and t[1] == name

    def error(self, message: str, t: Token | None = None) -> NotationError:
        t = t or self.tok()
        return NotationError(message, t[3], t[4], self.source)

    # ------------------------------------------------------------------ skipping
    def skip_declaration(self) -> None:
        """Up to the end of one declaration: a ';' or a balanced '{...}' (plus ';'), or before a
        '}' that closes the enclosing scope."""
        depth = 0
        while True:
            t = self.tok()
            if t[0] == "END":
                return
            if t[0] == "P":
                if t[1] in "([":
                    depth += 1
                elif t[1] in ")]":
                    depth = max(0, depth - 1)
                elif t[1] == ";" and depth == 0:
                    self.k += 1
                    return
                elif t[1] == "{":
                    self.skip_braces()
                    if depth == 0:
                        if self.is_p(";"):
                            self.k += 1
                        return
                    continue
                elif t[1] == "}" and depth == 0:
                    return
            self.k += 1

    def skip_braces(self) -> None:
        """From a '{' past its matching '}'."""
        depth = 0
        while True:
            t = self.tok()
            if t[0] == "END":
                raise self.error("unbalanced '{' at end of file")
            if t[0] == "P":
                if t[1] == "{":
                    depth += 1
                elif t[1] == "}":
                    depth -= 1
                    if depth == 0:
                        self.k += 1
                        return
            self.k += 1

    def angle_tokens(self) -> list[Token]:
        """From a '<' past its matching '>' (parentheses protect comparisons); returns the inside."""
        start = self.k
        if not self.is_p("<"):
            raise self.error("expected '<'")
        angle, paren = 0, 0
        while True:
            t = self.tok()
            if t[0] == "END" or (t[0] == "P" and t[1] in "{};" and paren == 0):
                raise self.error("unbalanced '<'", self.toks[start])
            if t[0] == "P":
                if t[1] in "([":
                    paren += 1
                elif t[1] in ")]":
                    paren -= 1
                elif t[1] == "<" and paren == 0:
                    angle += 1
                elif t[1] == ">" and paren == 0:
                    angle -= 1
                    if angle == 0:
                        self.k += 1
                        return self.toks[start + 1:self.k - 1]
            self.k += 1

    # ------------------------------------------------------------------ top level
    def run(self) -> None:
        while True:
            t = self.tok()
            if t[0] == "END":
                return
            try:
                self.statement()
            except NotationError as e:  # a broken construct: report it and resynchronise
                self.result.skipped.append(Skipped("<header>", e.line, e.one_line()))
                self.skip_declaration()
                if self.is_p("}"):
                    self.k += 1

    def statement(self) -> None:
        t = self.tok()
        if t[0] == "P" and t[1] == "}":
            self.k += 1
            self.scopes = max(0, self.scopes - 1)
            if self.is_p(";"):
                self.k += 1
            return
        if t[0] == "P" and t[1] == ";":
            self.k += 1
            return
        if self.is_name("namespace"):
            self.k += 1
            while self.tok()[0] == "NAME" or self.is_p("::"):
                self.k += 1
            if self.is_p("{"):
                self.k += 1
                self.scopes += 1
            else:
                self.skip_declaration()  # namespace alias
            return
        if self.is_name("extern") and self.tok(1)[0] == "STR" and self.is_p("{", 2):
            self.k += 3
            self.scopes += 1
            return
        if self.is_name("using"):
            self.alias(None)
            return
        if self.is_name("template"):
            self.k += 1
            params = self.angle_tokens() if self.is_p("<") else []
            if self.is_name("using"):
                self.alias(params)
                return
            if (self.is_name("struct") or self.is_name("class")) and self.is_name("MMA_Traits", 1):
                self.trait(params)
                return
            self.skip_declaration()
            return
        self.skip_declaration()

    def alias(self, params: list[Token] | None) -> None:
        """``using NAME = TYPE;`` (or a template alias); other ``using`` forms are skipped."""
        start = self.k
        if not (self.tok(1)[0] == "NAME" and self.is_p("=", 2)):
            self.skip_declaration()
            return
        name = self.tok(1)[1]
        self.k += 3
        pnames: tuple[str, ...] | None = None
        error: NotationError | None = None
        if params is not None:
            try:
                pnames = self.int_params(params)
            except NotationError as e:
                error = e
        node = None
        if error is None:
            parser = TypeParser(self.toks, self.k, self.source)
            try:
                node = parser.type()
                if not (parser.tok[0] == "P" and parser.tok[1] == ";"):
                    raise parser.error(f"expected ';' after the alias, found {parser.tok[1]!r}")
                self.k = parser.k + 1
            except NotationError as e:
                error, node = e, None
        if error is not None:
            self.k = start
            self.skip_declaration()
        self.r.aliases[name] = _Alias(name, node, pnames, error, self.source)

    def int_params(self, params: list[Token]) -> tuple[str, ...]:
        """Names of ``template <int M, int K>`` parameters; type parameters are unsupported."""
        groups: list[list[Token]] = [[]]
        for t in params:
            if t[0] == "P" and t[1] == ",":
                groups.append([])
            else:
                groups[-1].append(t)
        names = []
        for g in groups:
            if not g:
                continue
            if g[0][1] not in _INT_PARAM_TYPES:
                raise self.error(f"template parameter {_join(g)!r} is not an integer", g[0])
            declared = g
            for j, t in enumerate(g):
                if t[0] == "P" and t[1] == "=":
                    declared = g[:j]
                    break
            if len(declared) < 2 or declared[-1][0] != "NAME":
                raise self.error(f"template parameter {_join(g)!r} has no name", g[0])
            names.append(declared[-1][1])
        return tuple(names)

    def trait(self, params: list[Token]) -> None:
        struct_tok = self.tok()
        self.k += 2  # struct MMA_Traits
        name_toks = self.angle_tokens()
        name = _join(name_toks)
        name = name.removeprefix("cute::")
        line = struct_tok[3]
        base = None
        if self.is_p(":"):
            self.k += 1
            if self.is_name("public"):
                self.k += 1
            if self.is_name("MMA_Traits") or (self.is_name("cute") and self.is_p("::", 1)):
                if self.is_name("cute"):
                    self.k += 2
                self.k += 1
                base = _join(self.angle_tokens())
                base = base.removeprefix("cute::")
            else:  # some other base class: read what we can, note the base as written
                btoks = []
                while not self.is_p("{") and self.tok()[0] != "END" and not self.is_p(";"):
                    btoks.append(self.tok())
                    self.k += 1
                base = "?" + _join(btoks)
        if not self.is_p("{"):
            self.skip_declaration()
            self.result.skipped.append(Skipped(name, line, "declaration without a body"))
            return
        if params:
            pnames = [g for g in _join(params).split(",")]
            self.skip_braces()
            if self.is_p(";"):
                self.k += 1
            reason = "templated (partial specialisation over " + ", ".join(p.strip() for p in pnames) + ")"
            self.r.raw[name] = _Raw(name, line, {}, base, reason)
            self.result.skipped.append(Skipped(name, line, reason))
            return
        members = self.body()
        raw = _Raw(name, line, members, None if base is None or base.startswith("?") else base)
        if base is not None and base.startswith("?"):
            raw.skipped = f"inherits from {base[1:]!r}, not an MMA_Traits"
        self.r.raw[name] = raw
        out = self.r.evaluate(raw, self.source)
        (self.result.skipped if isinstance(out, Skipped) else self.result.traits).append(out)  # type: ignore[arg-type]

    def body(self) -> dict[str, _Member]:
        """Member ``using`` declarations of a trait body, from '{' past '};'."""
        self.k += 1
        members: dict[str, _Member] = {}
        while True:
            t = self.tok()
            if t[0] == "END":
                raise self.error("unterminated struct body")
            if t[0] == "P" and t[1] == "}":
                self.k += 1
                if self.is_p(";"):
                    self.k += 1
                return members
            if t[0] == "NAME" and t[1] in ("public", "private", "protected") and self.is_p(":", 1):
                self.k += 2
                continue
            if self.is_name("using") and self.tok(1)[0] == "NAME" and self.is_p("=", 2):
                name_tok = self.tok(1)
                self.k += 3
                start = self.k
                parser = TypeParser(self.toks, self.k, self.source)
                node, err = None, None
                try:
                    node = parser.type()
                    if not (parser.tok[0] == "P" and parser.tok[1] == ";"):
                        raise parser.error(f"expected ';' after {name_tok[1]}, found {parser.tok[1]!r}")
                except NotationError as e:
                    err = e
                self.k = start
                self.skip_declaration()
                text = _join(self.toks[start:self.k - 1])
                members[name_tok[1]] = _Member(node, text, name_tok[3], name_tok[4], self.source, err)
                continue
            self.skip_declaration()


# ----------------------------------------------------------------------------- files

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)


def read_header(text: str | bytes, source: str = "header", reader: HeaderReader | None = None) -> HeaderResult:
    """Traits of one header text (pass ``reader`` to share aliases/traits with headers read before)."""
    return (reader or HeaderReader()).read(text, source)


def read_headers(paths: list[Path] | list[str]) -> list[HeaderResult]:
    """Several headers as the compiler would see them: a header included by another is read at the
    point of its ``#include`` (CuTe includes ``mma_traits_sm90_gmma_ext.hpp`` at the *end* of
    ``mma_traits_sm90_gmma.hpp``), so aliases and base traits resolve across files."""
    files = sorted((Path(p) for p in paths), key=lambda p: p.name)
    texts = {p: decode_source(read_source(p), str(p)) for p in files}
    by_name = {p.name: p for p in files}
    results = {p: HeaderResult(str(p)) for p in files}
    reader = HeaderReader()
    seen: set[Path] = set()
    order: list[Path] = []

    def parts(p: Path) -> list[tuple[str, int] | Path]:
        """The text between sibling ``#include`` lines, and the included files, in order."""
        out: list[tuple[str, int] | Path] = []
        text, start, line0 = texts[p], 0, 1
        for m in _INCLUDE.finditer(text):
            target = by_name.get(m.group(1).rsplit("/", 1)[-1])
            if target is None or target == p:
                continue
            out.append((text[start:m.start()], line0))
            line0 += text.count("\n", start, m.end())
            start = m.end()
            out.append(target)
        out.append((text[start:], line0))
        return out

    included = {item for p in files for item in parts(p) if isinstance(item, Path)}
    roots = [p for p in files if p not in included] + [p for p in files if p in included]
    for root in roots:  # iterative: an include chain of any length cannot overflow the stack
        if root in seen:
            continue
        seen.add(root)
        order.append(root)
        stack = [(root, iter(parts(root)))]
        while stack:
            p, it = stack[-1]
            item = next(it, None)
            if item is None:
                stack.pop()
            elif isinstance(item, Path):
                if item not in seen:
                    seen.add(item)
                    order.append(item)
                    stack.append((item, iter(parts(item))))
            else:
                reader.read(item[0], str(p), line0=item[1], result=results[p])
    return [results[p] for p in order]


def find_mma_headers(root: Path | str) -> list[Path]:
    """``mma_traits_sm*.hpp`` under ``root`` (a CUTLASS checkout, include dir or wheel)."""
    return sorted(Path(root).rglob("mma_traits_sm*.hpp"))
