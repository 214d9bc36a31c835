"""The PTX parser: tokens -> ``Module``, by recursive descent over a small grammar.

    module     := ( .version V | .target T,... | .address_size N | .file N "name" [, N, N]
                  | .section NAME { ... } | .pragma "..." ; | [linkage] variable | [linkage] function )*
    function   := (.entry | .func [( param,... )]) NAME [( param,... )] directive* ( { body } | ; )
    param      := (.param | .reg) ( .TYPE | .ptr | .SPACE | .align N )* NAME [ [N] ]
    body       := ( { body } | .reg .TYPE NAME[<N>],... ; | variable | .loc N N N [, function_name L, inlined_at N N N]
                  | .pragma "..." ; | LABEL : | [@[!]%p] OPCODE operand,... ; )*
    operand    := %reg | %special | _ | INT | -INT | FLOAT | NAME [(+|-) INT] | %p|%q | !%p
                  | [ (NAME|%reg|INT) ((+|-) INT)* ] | { operand,... } | ( operand,... )

Registers are resolved in their scope (a block's ``.reg`` shadows an outer one); ``%r<845>`` declares ``%r0`` to
``%r844``.  Every error is a ``SpecError`` at the token's line and column; nothing is evaluated.
"""
from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from ..errors import SpecError
from .lexer import Token, tokenize
from .syntax import (SPECIAL_REGISTERS, TYPE_BITS, Addr, FImm, Function, Group, Imm, Instr, Label, Module, Not,
                     Operand, Param, PredPair, Reg, RegDecl, SourceLoc, Special, Statement, Sink, Sym, TensorAddr, Vec,
                     VarDecl)

MAX_REGISTERS = 1 << 20  # declared registers of one function (a range %r<N> counts N)
MAX_DEPTH = 64  # nested blocks
SPACES = ("shared", "global", "const", "local", "param")
_RANGE_NAME = re.compile(r"(%?[A-Za-z_$][A-Za-z_$]*?)(\d+)$")


class _Scope:
    """The registers of one block: names, and ranges ``%r<N>`` (prefix -> (count, type, declaration))."""

    def __init__(self, uid: int) -> None:
        self.uid = uid
        self.names: dict[str, int] = {}
        self.ranges: dict[str, tuple[int, str, int, int]] = {}  # prefix -> (count, type, line, col)
        self.labels: dict[str, str] = {}  # a label as written -> its name in the function (unique)


class _Body:
    """What parsing one function body has gathered: its open scopes, registers, statements, variables, labels."""

    def __init__(self) -> None:
        self.scopes = [_Scope(0)]
        self.opened = 1  # scopes opened so far (each block's uid)
        self.regs: list[RegDecl] = []
        self.lazy: dict[tuple[int, str, int], int] = {}  # (scope, prefix, n) -> register id
        self.body: list[Statement] = []
        self.variables: list[VarDecl] = []
        self.labels: dict[str, int] = {}
        self.branches: list[tuple[int, tuple[_Scope, ...]]] = []  # (body index, the scopes open there)
        self.loc: SourceLoc | None = None
        self.declared = 0


class Parser:
    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self.toks = tokenize(text, path)
        self.i = 0

    # ------------------------------------------------------------------ tokens

    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "EOF":
            self.i += 1
        return t

    def error(self, t: Token, message: str) -> SpecError:
        return SpecError(self.path, t.line, t.col, message)

    def _what(self, t: Token) -> str:
        return "the end of the file" if t.kind == "EOF" else repr(t.text)

    def expect(self, text: str) -> Token:
        t = self.next()
        if t.text != text or t.kind not in ("PUNCT", "WORD"):
            raise self.error(t, f"expected {text!r}, found {self._what(t)}")
        return t

    def accept(self, text: str) -> bool:
        t = self.peek()
        if t.text == text and t.kind in ("PUNCT", "WORD"):
            self.i += 1
            return True
        return False

    def integer(self) -> int:
        t = self.next()
        neg = False
        if t.kind == "PUNCT" and t.text == "-":
            neg, t = True, self.next()
        if t.kind != "INT":
            raise self.error(t, f"expected an integer, found {self._what(t)}")
        return -t.value if neg else t.value

    def word(self, what: str) -> Token:
        t = self.next()
        if t.kind != "WORD":
            raise self.error(t, f"expected {what}, found {self._what(t)}")
        return t

    # ------------------------------------------------------------------ module

    def module(self) -> Module:
        version, address_size = "", 64
        target: tuple[str, ...] = ()
        functions: list[Function] = []
        variables: list[VarDecl] = []
        files: dict[int, str] = {}
        while self.peek().kind != "EOF":
            t = self.peek()
            if t.kind != "WORD" or not t.text.startswith("."):
                raise self.error(t, f"expected a directive (.version, .target, .entry, ...), found {self._what(t)}")
            d = t.text
            if d == ".version":
                self.next()
                v = self.next()
                if v.kind not in ("FLOAT", "INT"):
                    raise self.error(v, f"expected a version number such as 8.8, found {self._what(v)}")
                version = v.text
            elif d == ".target":
                self.next()
                names = [self.word("a target such as sm_80").text]
                while self.accept(","):
                    names.append(self.word("a target").text)
                target = tuple(names)
            elif d == ".address_size":
                self.next()
                address_size = self.integer()
                if address_size not in (32, 64):
                    raise self.error(t, f".address_size {address_size}: expected 32 or 64")
            elif d == ".file":
                self.next()
                n = self.integer()
                s = self.next()
                if s.kind != "STR":
                    raise self.error(s, f"expected a file name in quotes, found {self._what(s)}")
                name = s.text
                if self.peek().kind == "STR":  # .file N "dir" "name"
                    name = name.rstrip("/") + "/" + self.next().text
                while self.accept(","):
                    self.integer()
                files[n] = name
            elif d == ".section":
                self.next()
                self.word("a section name")
                self._skip_braces()
            elif d == ".pragma":
                self.next()
                self._pragma()
            else:
                linkage = self._linkage()
                t = self.peek()
                if t.text in (".entry", ".func"):
                    functions.append(self.function())
                elif t.kind == "WORD" and t.text[1:] in SPACES:
                    variables.append(self.variable(extern=".extern" in linkage))
                else:
                    raise self.error(t, f"unknown directive {self._what(t)}")
        seen: set[str] = set()
        for f in functions:
            if f.name in seen and f.body:
                raise SpecError(self.path, f.line, f.col, f"function {f.name} is defined twice")
            if f.body:
                seen.add(f.name)
        return Module(self.path, version, target, address_size, tuple(functions), tuple(variables), files)

    def _linkage(self) -> set[str]:
        out = set()
        while self.peek().text in (".visible", ".extern", ".weak", ".common"):
            out.add(self.next().text)
        return out

    def _pragma(self) -> None:
        s = self.next()
        if s.kind != "STR":
            raise self.error(s, f"expected a string after .pragma, found {self._what(s)}")
        while self.accept(","):
            self.next()
        self.expect(";")

    def _skip_braces(self) -> None:
        open_ = self.expect("{")
        depth = 1
        while depth:
            t = self.next()
            if t.kind == "EOF":
                raise self.error(open_, "'{' is not closed")
            if t.kind == "PUNCT":
                depth += {"{": 1, "}": -1}.get(t.text, 0)

    # ------------------------------------------------------------------ declarations

    def _modifiers(self) -> tuple[str | None, int, bool, int, str | None]:
        """(type, align, pointer, vector, space) of the words after a state space."""
        typ, align, pointer, vec, space = None, 0, False, 1, None
        while self.peek().kind == "WORD" and self.peek().text.startswith("."):
            t = self.next()
            w = t.text[1:]
            if w == "align":
                align = self.integer()
                if align <= 0 or align & (align - 1):
                    raise self.error(t, f".align {align}: expected a power of two")
            elif w == "ptr":
                pointer = True
            elif w in ("v2", "v4", "v8"):
                vec = int(w[1:])
            elif w in TYPE_BITS:
                typ = w
            elif w in SPACES or w.split("::")[0] in SPACES:
                space = w
            elif w in ("attribute", "managed", "unified"):
                if self.accept("("):
                    while not self.accept(")"):
                        if self.next().kind == "EOF":
                            raise self.error(t, "'(' is not closed")
            else:
                raise self.error(t, f"unknown modifier {t.text!r}")
        return typ, align, pointer, vec, space

    def variable(self, extern: bool) -> VarDecl:
        sp = self.next()
        space = sp.text[1:]
        typ, align, _, vec, _ = self._modifiers()
        if typ is None:
            raise self.error(self.peek(), f"expected the type of the {sp.text} variable, found {self._what(self.peek())}")
        name = self.word("a variable name")
        count: int | None = vec
        dims = 0
        while self.accept("["):
            dims += 1
            if self.accept("]"):
                count = None
                continue
            n = self.integer()
            if n < 0:
                raise self.error(name, f"array size {n} is negative")
            count = (count or 1) * n
            self.expect("]")
        if count is None and not extern:
            raise self.error(name, f"{name.text}[] has no size: only an .extern variable may be unsized")
        init: tuple[int, ...] = ()
        if self.accept("="):
            init = self._initialiser(name)
        self.expect(";")
        return VarDecl(space, name.text, typ, count, align or max(1, TYPE_BITS[typ] // 8), extern, name.line,
                       name.col, init)

    def _initialiser(self, at: Token) -> tuple[int, ...]:
        values: list[int] = []

        def item() -> None:
            if self.accept("{"):
                if not self.accept("}"):
                    item()
                    while self.accept(","):
                        item()
                    self.expect("}")
                return
            t = self.peek()
            if t.kind == "FLOAT":
                self.next()
                values.append(t.value)
            else:
                values.append(self.integer())
        item()
        return tuple(values)

    def _param(self) -> Param:
        t = self.next()
        if t.text not in (".param", ".reg"):
            raise self.error(t, f"expected .param, found {self._what(t)}")
        typ, align, pointer, vec, _ = self._modifiers()
        if typ is None:
            raise self.error(self.peek(), f"expected the parameter's type, found {self._what(self.peek())}")
        name = self.word("a parameter name")
        count = vec
        while self.accept("["):
            if self.accept("]"):
                continue
            count *= self.integer()
            self.expect("]")
        return Param(name.text, typ, count, align or max(1, TYPE_BITS[typ] // 8), name.line, name.col, pointer)

    def _params(self) -> tuple[Param, ...]:
        out: list[Param] = []
        self.expect("(")
        if self.accept(")"):
            return ()
        out.append(self._param())
        while self.accept(","):
            out.append(self._param())
        self.expect(")")
        return tuple(out)

    # ------------------------------------------------------------------ functions

    def function(self) -> Function:
        kw = self.next()
        entry = kw.text == ".entry"
        if not entry and self.peek().text == "(":
            self._params()  # return parameters of a .func
        name = self.word("a function name")
        params = self._params() if self.peek().text == "(" else ()
        directives: list[tuple[str, tuple[int, ...]]] = []
        while self.peek().kind == "WORD" and self.peek().text.startswith(".") and self.peek().text != ".entry":
            d = self.next()
            if d.text == ".pragma":
                self._pragma()
                continue
            if d.text in (".noreturn", ".explicitcluster"):
                directives.append((d.text, ()))
                continue
            nums = [self.integer()]
            while self.accept(","):
                nums.append(self.integer())
            directives.append((d.text, tuple(nums)))
        if self.accept(";"):
            return Function(name.text, entry, params, (), (), (), name.line, name.col, tuple(directives))
        return self._body(name, entry, params, tuple(directives))

    def _body(self, name: Token, entry: bool, params: tuple[Param, ...],
              directives: tuple[tuple[str, tuple[int, ...]], ...]) -> Function:
        open_ = self.expect("{")
        b = _Body()
        depth = 1
        while True:
            t = self.peek()
            if t.kind == "EOF":
                raise self.error(open_, f"the body of {name.text} is not closed ('}}' missing)")
            if t.kind == "PUNCT" and t.text == "}":
                self.next()
                depth -= 1
                b.scopes.pop()
                if depth == 0:
                    break
                continue
            if t.kind == "PUNCT" and t.text == "{":
                self.next()
                depth += 1
                if depth > MAX_DEPTH:
                    raise self.error(t, f"blocks nested deeper than {MAX_DEPTH}")
                b.scopes.append(_Scope(b.opened))
                b.opened += 1
                continue
            self._statement(b, t)
        self._resolve_branches(b)
        return Function(name.text, entry, params, tuple(b.regs), tuple(b.body), tuple(b.variables), name.line,
                        name.col, directives, b.labels)

    def _statement(self, b: _Body, t: Token) -> None:
        """Parses one statement of a body at ``t`` (a guarded or plain instruction, a label, a directive) into ``b``."""
        operand = partial(self._operand, b)
        if t.kind == "PUNCT" and t.text == "@":
            self.next()
            neg = self.accept("!")
            g = self.word("a predicate register")
            guard = self._resolve(b, g)
            op = self.word("an instruction")
            b.body.append(self._instr(op, operand, guard, neg, b.loc))
            if op.text.split(".", 1)[0] in ("bra", "brx"):
                b.branches.append((len(b.body) - 1, tuple(b.scopes)))
            return
        if t.kind != "WORD":
            raise self.error(t, f"expected an instruction, a label or a directive, found {self._what(t)}")
        if self.peek(1).kind == "PUNCT" and self.peek(1).text == ":" and not t.text.startswith("."):
            self._label(b, t)
            return
        if t.text == ".reg":
            self._reg_declaration(b, t)
            return
        if t.text == ".loc":
            self.next()
            b.loc = self._loc()
            return
        if t.text == ".pragma":
            self.next()
            self._pragma()
            return
        if t.text in (".shared", ".local", ".const", ".global"):
            b.variables.append(self.variable(extern=False))
            return
        if t.text == ".param":
            self._param()  # a call's parameter
            self.accept(";")
            return
        if t.text in (".maxnreg", ".maxntid", ".reqntid"):
            raise self.error(t, f"{t.text} belongs before the function body")
        if t.text.startswith("."):
            raise self.error(t, f"unknown directive {t.text!r}")
        self.next()
        b.body.append(self._instr(t, operand, None, False, b.loc))
        if t.text.split(".", 1)[0] in ("bra", "brx"):
            b.branches.append((len(b.body) - 1, tuple(b.scopes)))

    def _label(self, b: _Body, t: Token) -> None:
        """Parses the label ``t:`` into ``b``: a name unique in the function, its place in the body."""
        self.next()
        self.next()
        if t.text in b.scopes[-1].labels:
            raise self.error(t, f"label {t.text} is defined twice")
        # a label of a block is the block's own (inline asm repeats its labels block by block)
        unique = t.text if len(b.scopes) == 1 else f"{t.text} (block {b.scopes[-1].uid})"
        b.scopes[-1].labels[t.text] = unique
        b.labels[unique] = len(b.body)
        b.body.append(Label(unique, t.line, t.col))

    def _reg_declaration(self, b: _Body, t: Token) -> None:
        """Parses ``.reg .TYPE NAME[<N>],... ;`` at ``t`` into the innermost scope of ``b``."""
        self.next()
        typ, _, _, vec, _ = self._modifiers()
        if typ is None:
            raise self.error(self.peek(), f"expected the register type, found {self._what(self.peek())}")
        if vec != 1:
            raise self.error(t, "vector registers (.reg .v2/.v4) are not supported")
        while True:
            n = self.word("a register name")
            if self.accept("<"):
                count = self.integer()
                self.expect(">")
                if count <= 0:
                    raise self.error(n, f"register range {n.text}<{count}> is empty")
                b.declared += count
                if b.declared > MAX_REGISTERS:
                    raise self.error(n, f"more than {MAX_REGISTERS} registers declared")
                b.scopes[-1].ranges[n.text] = (count, typ, n.line, n.col)
            else:
                b.declared += 1
                if b.declared > MAX_REGISTERS:
                    raise self.error(n, f"more than {MAX_REGISTERS} registers declared")
                b.scopes[-1].names[n.text] = len(b.regs)
                b.regs.append(RegDecl(n.text, typ, n.line, n.col))
            if not self.accept(","):
                break
        self.expect(";")

    def _resolve_branches(self, b: _Body) -> None:
        """Replaces each branch target of ``b`` by the unique name of the label it reaches from its scopes."""
        for k, open_scopes in b.branches:
            st = b.body[k]
            assert isinstance(st, Instr)
            ops = list(st.operands)
            for j, o in enumerate(ops):
                if not isinstance(o, Sym):
                    continue
                found = next((sc.labels[o.name] for sc in reversed(open_scopes) if o.name in sc.labels), None)
                if found is None:
                    raise SpecError(self.path, o.line, o.col, f"label {o.name} is not defined")
                ops[j] = Sym(found, o.line, o.col)
            b.body[k] = replace(st, operands=tuple(ops))

    def _resolve(self, b: _Body, t: Token) -> Reg:
        """The register the name ``t`` denotes in the scopes open in ``b`` (a range's member declared on first use)."""
        text = t.text
        for depth in range(len(b.scopes) - 1, -1, -1):
            sc = b.scopes[depth]
            hit = sc.names.get(text)
            if hit is not None:
                return Reg(text, hit, t.line, t.col)
            m = _RANGE_NAME.match(text)
            if m and m.group(1) in sc.ranges and not (len(m.group(2)) > 1 and m.group(2)[0] == "0"):
                count, typ, line, col = sc.ranges[m.group(1)]
                n = int(m.group(2))
                if n < count:
                    key = (sc.uid, m.group(1), n)
                    rid = b.lazy.get(key)
                    if rid is None:
                        rid = b.lazy[key] = len(b.regs)
                        b.regs.append(RegDecl(text, typ, line, col))
                    return Reg(text, rid, t.line, t.col)
        raise self.error(t, f"register {text} is not declared")

    def _operand(self, b: _Body) -> Operand:
        """Parses one operand of an instruction, its registers resolved in ``b``."""
        t = self.peek()
        if t.kind == "PUNCT":
            if t.text == "[":
                return self._address(b)
            if t.text in "{(":
                self.next()
                close = "}" if t.text == "{" else ")"
                items: list[Operand] = []
                if not self.accept(close):
                    items.append(self._operand(b))
                    while self.accept(","):
                        items.append(self._operand(b))
                    self.expect(close)
                return Vec(tuple(items), t.line, t.col) if close == "}" else Group(tuple(items), t.line, t.col)
            if t.text == "!":
                self.next()
                r = self.word("a predicate register")
                return Not(self._resolve(b, r), t.line, t.col)
            if t.text == "-":
                self.next()
                n = self.next()
                if n.kind == "INT":
                    return Imm(-n.value, t.line, t.col)
                if n.kind == "FLOAT":
                    return FImm(n.value ^ (1 << (n.width - 1)), n.width, t.line, t.col)
                raise self.error(n, f"expected a number after '-', found {self._what(n)}")
            raise self.error(t, f"expected an operand, found {self._what(t)}")
        self.next()
        if t.kind == "INT":
            return Imm(t.value, t.line, t.col)
        if t.kind == "FLOAT":
            return FImm(t.value, t.width, t.line, t.col)
        if t.kind != "WORD":
            raise self.error(t, f"expected an operand, found {self._what(t)}")
        if t.text == "_":
            first: Operand = Sink(t.line, t.col)
        elif t.text in SPECIAL_REGISTERS or re.fullmatch(r"%envreg\d+|%pm\d+(_64)?", t.text):
            return Special(t.text, t.line, t.col)
        elif t.text.startswith("%") or any(t.text in sc.names for sc in b.scopes):
            first = self._resolve(b, t)  # a register (inline asm declares names such as 'complete' without a %)
        else:
            if self.peek().text in ("+", "-") and self.peek().kind == "PUNCT" and self.peek(1).kind == "INT":
                sign = 1 if self.next().text == "+" else -1
                return Addr(Sym(t.text, t.line, t.col), sign * self.next().value, t.line, t.col)
            return Sym(t.text, t.line, t.col)
        if self.peek().text == "|" and self.peek().kind == "PUNCT":
            self.next()
            s = self.word("a predicate register")
            second = Sink(s.line, s.col) if s.text == "_" else self._resolve(b, s)
            return PredPair(first, second, t.line, t.col)  # type: ignore[arg-type]
        return first

    def _address(self, b: _Body) -> Addr | TensorAddr:
        """Parses an address ``[base+offset]`` or a TMA operand ``[map, {coordinates}]``."""
        open_b = self.expect("[")
        base: Reg | Sym | None = None
        offset = 0
        sign = 1
        first = True
        while True:
            t = self.next()
            if t.kind == "INT":
                offset += sign * t.value
            elif t.kind == "WORD" and base is None and sign == 1:
                base = self._resolve(b, t) if t.text.startswith("%") else Sym(t.text, t.line, t.col)
            elif t.kind == "PUNCT" and t.text == "-" and first:
                sign = -1
                continue
            else:
                raise self.error(t, f"expected a register, a name or an integer in the address, found "
                                    f"{self._what(t)}")
            first = False
            nxt = self.next()
            if nxt.text == "]":
                break
            if nxt.text == "," and base is not None and offset == 0 and self.peek().text == "{":
                coords = self._operand(b)  # [tensorMap, {c0, c1}]: a TMA operand
                self.expect("]")
                assert isinstance(coords, Vec)
                return TensorAddr(base, coords, open_b.line, open_b.col)
            if nxt.text == "+":
                sign = 1
                if self.peek().text == "-":  # [%r+-4]
                    self.next()
                    sign = -1
            elif nxt.text == "-":
                sign = -1
            else:
                raise self.error(nxt, f"expected '+', '-' or ']' in the address, found {self._what(nxt)}")
        return Addr(base, offset, open_b.line, open_b.col)

    def _loc(self) -> SourceLoc:
        f, line, col = self.integer(), self.integer(), self.integer()
        inlined: SourceLoc | None = None
        while self.accept(","):
            key = self.word("function_name or inlined_at")
            if key.text == "function_name":
                self.next()
            elif key.text == "inlined_at":
                inlined = SourceLoc(self.integer(), self.integer(), self.integer())
            else:
                raise self.error(key, f"unknown .loc attribute {key.text!r}")
        return SourceLoc(f, line, col, inlined)

    def _instr(self, op: Token, operand, guard: Reg | None, neg: bool, loc: SourceLoc | None) -> Instr:
        if op.text.startswith((".", "%")):
            raise self.error(op, f"expected an instruction, found {op.text!r}")
        operands: list[Operand] = []
        if not self.accept(";"):
            operands.append(operand())
            while self.accept(","):
                operands.append(operand())
            t = self.next()
            if t.text != ";":
                raise self.error(t, f"expected ',' or ';' after an operand of {op.text}, found {self._what(t)}")
        return Instr(op.text, tuple(operands), op.line, op.col, guard, neg, loc)


def parse_module(text: str, path: str = "<ptx>") -> Module:
    """PTX text -> ``Module``; bad input is a ``SpecError`` at its position."""
    return Parser(text, path).module()
