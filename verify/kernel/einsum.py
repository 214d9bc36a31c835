"""``computes``: what a kernel is meant to compute, in einsum form, read by a small grammar (nothing evaluated).

    C[m, n] = A[m, k] * B[k, n]
    C[m, n] = A[m, k] * B[k, n] * SFA[m, k / 32] * SFB[k / 32, n]

The left side is the output; the right side a product of two factors, or of four (a block-scaled MMA's: the two
operands and their scale factors); an index that appears only on the right is summed over.  A factor's index may be
an index divided by a constant (``k / 32``: the scale-factor block of ``k``, rounded down) where the index itself
appears whole in another factor.  Errors are ``SpecError`` at the column of the text (offset by where the text
stands in its file).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import SpecError

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>[0-9]{1,9})|(?P<punct>[\[\],=*/])|(?P<bad>\S))")


@dataclass(frozen=True)
class Access:
    """``A[m, k]``, ``SFA[m, k / 32]``: the tensor, its index names, and each one's divisor (1: the index itself)."""

    tensor: str
    indices: tuple[str, ...]
    divisors: tuple[int, ...] = ()

    def divisor(self, k: int) -> int:
        return self.divisors[k] if self.divisors else 1

    def text(self, env: dict[str, int] | None = None) -> str:
        """``SFA[m, k / 32]``, or with ``env``'s values put in (``SFA[3, 9 / 32]`` as ``SFA[3, 0]``)."""
        parts = []
        for k, n in enumerate(self.indices):
            d = self.divisor(k)
            if env is not None and n in env:
                parts.append(str(env[n] // d))
            else:
                parts.append(n if d == 1 else f"{n} / {d}")
        return f"{self.tensor}[{', '.join(parts)}]"


@dataclass(frozen=True)
class Einsum:
    output: Access
    factors: tuple[Access, ...]
    text: str

    @property
    def summed(self) -> tuple[str, ...]:
        out = set(self.output.indices)
        seen: list[str] = []
        for f in self.factors:
            for i in f.indices:
                if i not in out and i not in seen:
                    seen.append(i)
        return tuple(seen)

    def describe(self) -> str:
        return self.text.strip()

    def numpy_subscripts(self) -> str:
        """``"mk,kn->mn"`` for ``numpy.einsum`` (indices renamed to letters; a divided index is its name's letter:
        the factor is expanded over the whole index first, ``expand``)."""
        letters: dict[str, str] = {}
        for a in (self.output, *self.factors):
            for i in a.indices:
                letters.setdefault(i, "abcdefghijklmnopqrstuvwxyz"[len(letters)])
        side = ",".join("".join(letters[i] for i in f.indices) for f in self.factors)
        return side + "->" + "".join(letters[i] for i in self.output.indices)


def parse_einsum(text: str, path: str = "<computes>", line: int = 1, col: int = 1) -> Einsum:
    """``text`` (found at ``line``, ``col`` of ``path``) -> ``Einsum``."""
    toks: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        kind = m.lastgroup or ""
        start = m.start(kind)
        if kind == "bad":
            raise SpecError(path, line, col + start, f"unexpected character {m.group(kind)!r} in computes")
        toks.append((kind, m.group(kind), start))
        pos = m.end()
    if len(toks) > 256:
        raise SpecError(path, line, col, "computes is longer than 256 tokens")
    toks.append(("end", "", len(text)))
    i = 0

    def err(k: int, msg: str) -> SpecError:
        return SpecError(path, line, col + toks[k][2], msg)

    def access() -> Access:
        nonlocal i
        if toks[i][0] != "name":
            raise err(i, f"expected a tensor name, found {toks[i][1]!r}" if toks[i][1] else
                      "expected a tensor name, found the end of the text")
        name = toks[i][1]
        i += 1
        if toks[i][1] != "[":
            raise err(i, f"expected '[' after {name}")
        i += 1
        idx: list[str] = []
        div: list[int] = []
        while True:
            if toks[i][0] != "name":
                raise err(i, "expected an index name")
            idx.append(toks[i][1])
            i += 1
            d = 1
            if toks[i][1] == "/":
                i += 1
                if toks[i][0] != "int" or not 2 <= int(toks[i][1]) <= 1 << 16:
                    raise err(i, "expected a divisor (an integer from 2 to 65536) after '/'")
                d = int(toks[i][1])
                i += 1
            div.append(d)
            if toks[i][1] == "]":
                i += 1
                break
            if toks[i][1] != ",":
                raise err(i, "expected ',', '/' or ']'")
            i += 1
        return Access(name, tuple(idx), tuple(div) if any(x != 1 for x in div) else ())

    out = access()
    if toks[i][1] != "=":
        raise err(i, "expected '=' after the output")
    i += 1
    factors = [access()]
    while toks[i][1] == "*":
        i += 1
        factors.append(access())
    if toks[i][0] != "end":
        raise err(i, f"unexpected {toks[i][1]!r}")
    if len(factors) not in (2, 4):
        raise SpecError(path, line, col, f"computes has {len(factors)} factors: the tensor-core sums are products of "
                                         "two (C[m, n] = A[m, k] * B[k, n]), or of four for a block-scaled MMA "
                                         "(C[m, n] = A[m, k] * B[k, n] * SFA[m, k / 32] * SFB[k / 32, n])")
    if out.divisors:
        raise SpecError(path, line, col, f"the output {out.tensor} takes whole indices (no '/')")
    for a in (out, *factors):
        if len(set(a.indices)) != len(a.indices):
            raise SpecError(path, line, col, f"{a.tensor} repeats an index ({', '.join(a.indices)})")
    whole = {n for f in factors for k, n in enumerate(f.indices) if f.divisor(k) == 1} | set(out.indices)
    for f in factors:
        for k, n in enumerate(f.indices):
            if f.divisor(k) != 1 and n not in whole:
                raise SpecError(path, line, col, f"{f.tensor}'s index {n} / {f.divisor(k)}: {n} must also appear whole "
                                                 "in another factor")
    names = [f.tensor for f in factors]
    if len(factors) > 2 and len(set(names)) != len(names):
        raise SpecError(path, line, col, "a tensor is a factor twice (a block-scaled product's four factors are four "
                                         "tensors)")
    right = {i for f in factors for i in f.indices}
    for ix in out.indices:
        if ix not in right:
            raise SpecError(path, line, col, f"output index {ix} is on no factor")
    if out.tensor in {f.tensor for f in factors}:
        raise SpecError(path, line, col, f"the output {out.tensor} is also a factor")
    return Einsum(out, tuple(factors), text)
