"""The ``mma`` forms the executor does not run are refused: one error naming the instruction and its PTX line
(exit 2 on the command line), never a silent pass -- ``.b1`` with ``.xor.popc`` (no sum of products), block-scaled
``mma`` (``kind::``), and an ``mma.sp`` selector the catalog's metadata layout does not name or that is not a
constant."""
from __future__ import annotations

import pytest

from test_kernel_exec import HEAD, run
from verify.kernel.machine import KernelError

ZERO = "\tmov.u32 %r30, 0;\n"

REFUSED = [
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%r2, %r3}, {%r4}, {%r5}, {%r2, %r3};",
     ".b1 is executed with .and.popc only"),
    ("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.xor.popc {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r8}, "
     "{%r2, %r3, %r4, %r5};", ".b1 is executed with .and.popc only"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32 {%r2, %r3, %r4, %r5}, {%r6, %r7, %r8, %r9}, "
     "{%r10, %r11}, {%r2, %r3, %r4, %r5};", "mma with .kind:: or .block_scale (sm_120) is not executed yet"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%r2, %r3, %r4, %r5}, "
     "{%r6, %r7, %r8, %r9}, {%r10, %r11, %r12, %r13}, {%r2, %r3, %r4, %r5}, %r14, 0x2;",
     "sparsity selector 2 is not one of [0, 1]"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r2, %r3, %r4, %r5}, {%r6, %r7}, "
     "{%r10, %r11}, {%r2, %r3, %r4, %r5}, %r14, %r15;", "the sparsity selector must be a constant"),
]


@pytest.mark.parametrize("line,message", REFUSED, ids=[x[0].split(" ")[0] for x in REFUSED])
def test_an_mma_form_not_executed_is_refused_at_its_line(line, message):
    with pytest.raises(KernelError) as e:
        run(f"\t{line}\n{ZERO}")
    assert e.value.line == HEAD.count("\n") + 1
    assert message in e.value.message, e.value.message
    assert line.split(" ")[0] in e.value.message


def test_the_refusal_on_the_command_line_is_one_line_with_exit_2(tmp_path, capsys):
    from conftest import cli
    line = REFUSED[0][0]
    (tmp_path / "k.ptx").write_text(HEAD + f"\t{line}\n{ZERO}\tret;\n}}\n", encoding="utf-8")
    code, _, err_text = cli(capsys, "kernel", str(tmp_path / "k.ptx"), "--grid", "1,1,1", "--block", "32,1,1",
                            "--computes", "O[i, j] = X[i, k] * Y[k, j]", "--arg", "O:u32:32x1", "--arg", "X:f16:32x1",
                            "--arg", "Y:f16:1x1")
    err = err_text.strip().split("\n")
    assert code == 2 and len(err) == 1, err
    assert f"k.ptx:{HEAD.count(chr(10)) + 1}:" in err[0] and "mma.sync.aligned.m8n8k128" in err[0], err
