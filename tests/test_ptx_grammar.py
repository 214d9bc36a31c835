"""The PTX grammar (verify/ptx): real kernels parse; every construct the executor reads is in the tree; bad input is
one error at its file, line and column (exit 2 from the command line), never a traceback."""
from __future__ import annotations

import pytest

from conftest import ROOT, cli
from verify.errors import SpecError
from verify.ptx import Addr, FImm, Imm, Instr, Label, Not, PredPair, Reg, Special, Sink, Sym, Vec, parse_module

KERNELS = ROOT / "examples" / "kernels"

SMALL = """\
// a comment /* that opens no block
/* a block
   comment over lines */
.version 8.8
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dyn[];
.shared .align 8 .b8 stat[64];

.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .align 4 .b8 k_param_1[12],
	.param .u32 k_param_2
)
.reqntid 64
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<4>;
	.loc	1 7 3
	ld.param.b64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	setp.lt.u32 	%p1|%p2, %r1, 32;
	@!%p1 bra 	$L__BB0_2;
	{
	.reg .b32 %r1;
	add.s32 	%r1, %r2, -4;
	}
	.loc	2 3 1, function_name $L__info, inlined_at 1 9 5
	mov.b32 	%r3, 0f3F800000;
	mov.b64 	{%r4, %r5}, %rd1;
	ld.shared.v2.b32 	{%r6, _}, [stat+8];
	st.global.b32 	[%rd1+-4], %r6;
	selp.b32 	%r7, 1, 0, !%p2;
$L__BB0_2:
	ret;
}
	.file	1 "k.py"
	.file	2 "lib.py"
	.section	.debug_str
	{
.b8 0
	}
"""


def test_a_small_module_parses_into_every_construct():
    m = parse_module(SMALL, "k.ptx")
    assert (m.version, m.target, m.address_size) == ("8.8", ("sm_80",), 64)
    assert [(v.name, v.count, v.extern, v.align) for v in m.variables] == [("dyn", None, True, 16), ("stat", 64, False, 8)]
    (fn,) = m.entries()
    assert [(p.name, p.type, p.count, p.size, p.pointer) for p in fn.params] == [
        ("k_param_0", "u64", 1, 8, True), ("k_param_1", "b8", 12, 12, False), ("k_param_2", "u32", 1, 4, False)]
    assert fn.directives == ((".reqntid", (64,)),)
    assert m.files == {1: "k.py", 2: "lib.py"}
    ins = [s for s in fn.body if isinstance(s, Instr)]
    by = {i.opcode: i for i in ins}
    assert isinstance(by["mov.u32"].operands[1], Special) and by["mov.u32"].operands[1].name == "%tid.x"
    setp = by["setp.lt.u32"]
    assert isinstance(setp.operands[0], PredPair) and setp.loc is not None and (setp.loc.line, setp.loc.col) == (7, 3)
    bra = by["bra"]
    assert bra.guard is not None and bra.negated and isinstance(bra.operands[0], Sym)
    # the block's %r1 is a register of its own: the add writes it, not the outer %r1
    outer = by["mov.u32"].operands[0]
    inner = by["add.s32"].operands[0]
    assert isinstance(outer, Reg) and isinstance(inner, Reg) and outer.name == inner.name and outer.id != inner.id
    assert isinstance(by["add.s32"].operands[2], Imm) and by["add.s32"].operands[2].value == -4
    mov = by["mov.b32"]
    assert isinstance(mov.operands[1], FImm) and mov.operands[1].bits == 0x3F800000 and mov.operands[1].width == 32
    assert mov.loc is not None and mov.loc.outermost().line == 9
    assert isinstance(by["mov.b64"].operands[0], Vec)
    ld = by["ld.shared.v2.b32"]
    assert isinstance(ld.operands[0].items[1], Sink)
    assert isinstance(ld.operands[1], Addr) and ld.operands[1].base.name == "stat" and ld.operands[1].offset == 8
    st = by["st.global.b32"]
    assert st.operands[0].offset == -4 and isinstance(st.operands[0].base, Reg)
    assert isinstance(by["selp.b32"].operands[3], Not)
    assert [s.name for s in fn.body if isinstance(s, Label)] == ["$L__BB0_2"]
    assert fn.labels["$L__BB0_2"] == next(k for k, s in enumerate(fn.body) if isinstance(s, Label))


@pytest.mark.parametrize("name", ["triton_fp16.ptx", "triton_fp16_64.ptx", "mma_inline.ptx", "mma_inline_swizzled.ptx"])
def test_the_compiled_fixtures_parse(name):
    text = (KERNELS / name).read_text(encoding="utf-8")
    m = parse_module(text, name)
    (fn,) = [f for f in m.entries() if f.body]
    ops = {s.base for s in fn.body if isinstance(s, Instr)}
    assert {"mma", "ldmatrix", "bar", "ld", "st"} <= ops
    # every register an instruction names is declared, with its type
    for s in fn.body:
        if isinstance(s, Instr):
            for o in s.operands:
                if isinstance(o, Reg):
                    assert fn.regs[o.id].name == o.name


BAD = [
    ("/* never closed", 1, 1, "comment '/*' does not end"),
    (".version 8.8\n.target sm_80\n.entry k() {\n  mov.u32 %r1, 1;\n}", 4, 11, "register %r1 is not declared"),
    (".version 8.8\n.entry k() {\n  .reg .b32 %r<2>;\n  mov.u32 %r2, 1;\n}", 4, 11, "register %r2 is not declared"),
    (".version 8.8\n.entry k() {\n  .reg .b32 %r<2>;\n  mov.u32 %r1, 1\n}", 5, 1, "expected ',' or ';'"),
    (".version 8.8\n.entry k() {\n  .reg .b32 %r<2>;\n  bra L;\n}", 4, 7, "label L is not defined"),
    (".version 8.8\n.bogus 3\n", 2, 1, "unknown directive '.bogus'"),
    (".version 8.8\n.entry k() {\n  ret;\n", 2, 12, "the body of k is not closed"),
    (".version 8.8\n.entry k() {\n  mov.u32 ` ;\n}", 3, 11, "unexpected character '`'"),
    (".version 8.8\n.entry k() {\nL: ret;\nL: ret;\n}", 4, 1, "label L is defined twice"),
    (".version 8.8\n.shared .b8 s[];\n", 2, 13, "only an .extern variable may be unsized"),
    (".version 8.8\n.entry k() {\n  .reg .b32 %r<2>;\n  ld.global.b32 %r1, [%r0 * 2];\n}", 4, 27, "expected '+', '-' or ']'"),
    (".version 8.8\n.file 1 \"a.py\n", 2, 9, "string does not end"),
    (".version 8.8\n.entry k() {\n  .reg .b32 %r<2>;\n  mov.u32 %r1, 09;\n}", 4, 16, "octal literal"),
]


@pytest.mark.parametrize("text,line,col,message", BAD)
def test_bad_ptx_is_one_error_at_its_position(text, line, col, message):
    with pytest.raises(SpecError) as e:
        parse_module(text, "bad.ptx")
    assert (e.value.path, e.value.line, e.value.col) == ("bad.ptx", line, col), e.value.one_line()
    assert message in e.value.message


def test_the_command_line_prints_one_line_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD[1][0], encoding="utf-8")
    rc, out, err = cli(capsys, "kernel", str(bad), "--grid", "1", "--block", "32", "--computes",
                       "C[m, n] = A[m, k] * B[k, n]", "--arg", "A:f16:16x16", "--arg", "B:f16:16x8", "--arg",
                       "C:f32:16x8")
    assert rc == 2 and out == ""
    assert err == f"{bad}:4:11: error: register %r1 is not declared\n"
