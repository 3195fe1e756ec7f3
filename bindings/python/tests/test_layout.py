"""The ctypes structs against the C compiler's layout of include/zyfa.h."""
import ctypes
import os
import shutil
import subprocess

import pytest

from zyfa import _lib

STRUCTS = {"zyfa_context_options": _lib.ContextOptions, "zyfa_tensor": _lib.Tensor,
           "zyfa_attn_params": _lib.AttnParams, "zyfa_quant_params": _lib.QuantParams}


def c_layout(tmp_path):
    include = os.environ.get("ZYFA_INCLUDE_DIR")
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not include or not cc:
        pytest.skip("needs ZYFA_INCLUDE_DIR (folder of zyfa.h) and a C compiler")
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <zyfa.h>", "int main(void) {"]
    for name, cls in STRUCTS.items():
        lines.append('printf("%s size %%zu\\n", sizeof(%s));' % (name, name))
        for field, _ in cls._fields_:
            lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));' % (name, field, name, field))
    lines += ["return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c99", "-I", include, str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_struct_sizes_and_offsets_match_c(tmp_path):
    layout = c_layout(tmp_path)
    for name, cls in STRUCTS.items():
        assert ctypes.sizeof(cls) == layout[(name, "size")], name
        for field, _ in cls._fields_:
            assert getattr(cls, field).offset == layout[(name, field)], (name, field)
