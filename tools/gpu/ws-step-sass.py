#!/usr/bin/env python3
"""Instructions of one consumer step of the warp-specialised kernel, counted in its SASS, no GPU.

Compiles kernels/nvidia/attention_fwd_ws_variant.cu for sm_90a as kernels/nvidia/CMakeLists.txt
does, plus -DZYFA_WS_SASS_MARKERS=1 (PMTRIG markers around a consumer step and around the masked
softmax and the other branches a long sequence's blocks skip; kernels/nvidia/sm90/), disassembles it
and counts, for each kernel, the instructions of the first compiled step (one key block per
consumer warp, 64 or 128 keys (nvidia::ws_key_block): S of the next block, P.V of this one, the
softmax, the rescale) without the marked branches:
the path that most blocks of a long sequence take, by opcode. Static, so an estimate of the dynamic
count (ncu's per-block figure, docs/performance.md) that still holds the other unmarked branches
(EXACT's rescale skip, barrier retry loops), good for comparing two versions of the kernel before
spending device time. The markers themselves are left out; the compiler may move a few
instructions across them.
Usage: ws-step-sass.py [--dims d128|d192_128|d64|d256] [--family e4m3|b16|int8] [--flag NVCC_FLAG]... [--top N]
Needs nvcc (CUDA_HOME or PATH) and cuobjdump (CUDA's, or the one bundled with the triton package).
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIMS = {"d128": (128, 128), "d192_128": (192, 128), "d64": (64, 64), "d256": (256, 256)}
MARKER = re.compile(r"PMTRIG 0x([0-9a-f]+)")
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)")


def find_tool(name):
    for d in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        if d and os.access(os.path.join(d, "bin", name), os.X_OK):
            return os.path.join(d, "bin", name)
    if shutil.which(name):
        return shutil.which(name)
    try:
        import triton  # its wheel bundles cuobjdump
        found = glob.glob(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name))
        if found:
            return found[0]
    except ImportError:
        pass
    sys.exit("ws-step-sass.py: %s not found (CUDA_HOME, /usr/local/cuda/bin, PATH, triton)" % name)


def kernels_of(sass):
    """{kernel name: [(opcode or 'MARK<bit>')...]} in address order."""
    out, name = {}, None
    for line in sass.splitlines():
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = INSTRUCTION.match(line)
        if m and name:
            mark = MARKER.search(line)
            # pmevent k assembles to PMTRIG 1 << k
            out[name].append("MARK%d" % (int(mark.group(1), 16).bit_length() - 1) if mark else m.group(3))
    return out


def first_step(ops):
    """Opcodes of the first step (pmevent 1 .. 2) without what lies between pmevent 3 and 4, 5 and 6,
    7 and 8 (the branches a long sequence's blocks do not take; kernels/nvidia/sm90/)."""
    begin = ops.index("MARK1")
    end = ops.index("MARK2", begin)
    kept, depth = [], 0  # the marked branches nest (the masked softmax holds its own 5/6)
    for op in ops[begin + 1:end]:
        if op in ("MARK3", "MARK5", "MARK7"):
            depth += 1
        elif op in ("MARK4", "MARK6", "MARK8"):
            depth -= 1
        elif depth == 0 and not op.startswith("MARK"):
            kept.append(op)
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="d128", choices=sorted(DIMS))
    ap.add_argument("--family", default="e4m3", choices=["e4m3", "b16", "int8"])
    ap.add_argument("--flag", action="append", default=[], help="extra nvcc flag (repeatable)")
    ap.add_argument("--top", type=int, default=14, help="opcodes listed per kernel")
    args = ap.parse_args()
    nvcc, cuobjdump = find_tool("nvcc"), find_tool("cuobjdump")
    dqk, dv = DIMS[args.dims]
    with tempfile.TemporaryDirectory() as work:
        cubin = os.path.join(work, "ws.cubin")
        subprocess.run([nvcc, "-cubin", "-arch=sm_90a", "-O3", "-std=c++17", "-fmad=false",
                        "-I" + os.path.join(ROOT, "kernels"), "-DZYFA_WS_SASS_MARKERS=1",
                        "-DZYFA_FAMILY_E4M3=%d" % {"b16": 0, "e4m3": 1, "int8": 2}[args.family], "-DZYFA_HEAD_DIM_QK=%d" % dqk,
                        "-DZYFA_HEAD_DIM_V=%d" % dv, "-DZYFA_DIMS_SUFFIX=" + args.dims] + args.flag +
                       ["-o", cubin, os.path.join(ROOT, "kernels", "nvidia", "attention_fwd_ws_variant.cu")],
                       check=True)
        sass = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True, text=True).stdout
    for name, ops in sorted(kernels_of(sass).items()):
        step = first_step(ops)
        counts = collections.Counter(op.split(".")[0] for op in step)
        print("%s: %d instructions in one step's unmasked path" % (name, len(step)))
        print("  " + ", ".join("%s %d" % kv for kv in counts.most_common(args.top)))


if __name__ == "__main__":
    main()
