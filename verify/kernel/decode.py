"""Decoding: a function's instructions into the executor's steps, once per launch, before anything runs (an
unsupported instruction is an error at its line: never a silent pass)."""
from __future__ import annotations

from typing import Any

from ..ptx.syntax import TYPE_BITS, Function, Instr, Module, Sym
from .launch import Launch
from .machine import Program, Step
from .spaces import build_params, layout_globals, layout_local, layout_shared
from .memory import GlobalMemory
from .ops import HANDLERS


def decode(module: Module, fn: Function, launch: Launch, domain: Any, gmem: GlobalMemory, trace: bool = False) -> Program:
    """The program of ``fn`` for ``launch``: the parameters laid out, every instruction decoded once (an
    unsupported one is an error at its line, before anything runs)."""
    prog = Program(module, fn, launch, domain, trace=trace, gmem=gmem)
    prog.widths = [TYPE_BITS[r.type] for r in fn.regs]
    prog.shared_addr, prog.shared_size = layout_shared(module, fn, launch.shared)
    prog.local_addr, prog.local_size = layout_local(fn)
    prog.global_addr = layout_globals(module)
    build_params(prog)
    pcs: dict[int, int] = {}
    instrs: list[Instr] = []
    for k, st in enumerate(fn.body):
        pcs[k] = len(instrs)
        if isinstance(st, Instr):
            instrs.append(st)
    label_pc = {name: pcs.get(idx, len(instrs)) for name, idx in fn.labels.items()}
    for i, ins in enumerate(instrs):
        base = ins.base
        if base in ("bra", "brx"):
            if base == "brx" or len(ins.operands) != 1 or not isinstance(ins.operands[0], Sym):
                raise prog.error(ins, f"{ins.opcode}: only a branch to a label is supported")
            prog.steps.append(Step(ins, i, "bra", target=label_pc[ins.operands[0].name]))
            continue
        if base in ("ret", "exit"):
            prog.steps.append(Step(ins, i, "exit"))
            continue
        h = HANDLERS.get(base)
        if h is None:
            raise prog.error(ins, f"unsupported instruction '{ins.opcode}' ({base}): the executor does not know "
                                  "its semantics")
        step = h(prog, ins, i)
        prog.steps.append(step)
    return prog



__all__ = ["decode"]
