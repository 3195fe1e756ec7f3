#!/usr/bin/env python3
"""zyfa against its anchors, in one process and one run, on one NVIDIA GPU.

Implementations (each row of the table is one shape):
  zyfa FP8 LEAN, zyfa FP8 EXACT, zyfa BF16   through the C ABI: bindings/python's `zyfa` package when
                                             it imports and runs torch CUDA tensors, else the minimal
                                             ctypes caller bench/zyfa_ctypes.py (the log and CSV say which)
  torch SDPA BF16, cuDNN backend and flash backend (torch.nn.attention.sdpa_kernel)
  Triton FP8 (bench/triton_fp8_attention.py): the FP8 anchor, EXACT-style numerics
Shapes: causal, head dim 128, seqlen 1K..32K with batch * seqlen = 32K tokens and 16 heads (equal
work per token); head dim 192/128 (MLA); head dim 64 (twice the heads); one GQA shape (32 query
heads on 8 kv heads); head dim 256.
Timing: CUDA events around a batch of back-to-back launches (enough for >= 20 ms), after warm-up;
the median of the samples, per launch. TFLOP/s = 2 * (Dqk + Dv) * visible pairs * heads_q / time,
the formula of zyfa-bench (causal visible pairs = s (s + 1) / 2 per sequence).
Correctness spot check first: every implementation on one small causal shape against an fp32
torch reference on the same (dequantised) inputs, relative RMS error printed, so that a fast but
wrong kernel shows. Writes a long-format CSV (one line per shape and implementation).
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

IMPLS = ["zyfa_fp8_lean", "zyfa_fp8_exact", "zyfa_bf16", "sdpa_cudnn_bf16", "sdpa_flash_bf16", "triton_fp8"]
# Each zyfa implementation's anchor(s): the ratio zyfa / anchor is printed per row.
ANCHORS = {"zyfa_fp8_lean": ["triton_fp8"], "zyfa_fp8_exact": ["triton_fp8"],
           "zyfa_bf16": ["sdpa_cudnn_bf16", "sdpa_flash_bf16"]}
# Relative RMS error against fp32 on the same inputs above which the spot check fails: FP8 P
# rounding gives ~2-3e-2 (EXACT/LEAN, README), bf16 P ~2e-3; 8e-2 and 1e-2 leave room for the input
# distribution but not for a wrong kernel (which gives O(1)).
SPOT_TOLERANCE = {"fp8": 8e-2, "bf16": 1e-2}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", default=os.environ.get("ZYFA_LIBRARY_PATH", os.path.join(REPO, "build-gpu", "libzyfa.so")),
                    help="libzyfa.so to benchmark (default build-gpu/libzyfa.so or $ZYFA_LIBRARY_PATH)")
    ap.add_argument("--csv", default="bench.csv", help="output CSV path")
    ap.add_argument("--api", choices=["auto", "binding", "ctypes"], default="auto",
                    help="how zyfa is called: the bindings/python package, bench/zyfa_ctypes.py, or the first that works")
    ap.add_argument("--quick", action="store_true", help="two shapes, fewer samples: a first run")
    ap.add_argument("--samples", type=int, default=None, help="timed samples per measurement (default 15, quick 5)")
    ap.add_argument("--tokens", type=int, default=32768, help="batch * seqlen for the head-dim-128 sweep")
    ap.add_argument("--heads", type=int, default=16)
    return ap.parse_args()


def shapes(args):
    """(name, batch, seqlen, heads_q, heads_kv, dqk, dv), all causal."""
    seqlens = [1024, 4096] if args.quick else [1024, 2048, 4096, 8192, 16384, 32768]
    out = [("causal hd128", max(1, args.tokens // s), s, args.heads, args.heads, 128, 128) for s in seqlens]
    if not args.quick:
        out.append(("causal hd192/128 (MLA)", max(1, args.tokens // 8192), 8192, args.heads, args.heads, 192, 128))
        out.append(("causal hd64", max(1, args.tokens // 8192), 8192, 2 * args.heads, 2 * args.heads, 64, 64))
        out.append(("causal hd128 GQA 32/8", max(1, args.tokens // 8192), 8192, 32, 8, 128, 128))
        out.append(("causal hd256", max(1, args.tokens // 8192), 8192, args.heads, args.heads, 256, 256))
    return out


def causal_flops(batch, seqlen, heads_q, dqk, dv):
    pairs = seqlen * (seqlen + 1) // 2 * batch
    return 2.0 * (dqk + dv) * pairs * heads_q


# --- zyfa: binding or ctypes --------------------------------------------------------------------------
class ZyfaBinding:
    """bindings/python's zyfa.attention on torch CUDA tensors (current stream)."""

    name = "bindings/python zyfa package"

    def __init__(self, library):
        os.environ["ZYFA_LIBRARY_PATH"] = library
        sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
        import zyfa  # noqa: F401  (ImportError -> fall back)
        self.zyfa = zyfa

    def describe(self):
        z = self.zyfa
        info = getattr(z, "build_info", lambda: "?")()
        ver = getattr(z, "version", lambda: "?")()
        return "zyfa %s (%s) via %s" % (ver, info, self.name)

    def prepare(self, q, k, v, out, causal=True, softmax="auto", softmax_scale=None, descales=None):
        z = self.zyfa

        def launch():
            z.attention(q, k, v, causal=causal, softmax=softmax, softmax_scale=softmax_scale, descale=descales,
                        out=out)

        name = "?"
        try:
            name = z.attention_kernel_name(q, k, v, causal=causal, softmax=softmax, descale=descales) or "?"
        except Exception:  # the name is informative only
            pass
        return launch, name


class ZyfaCtypes:
    name = "bench/zyfa_ctypes.py (minimal ctypes)"

    def __init__(self, library):
        sys.path.insert(0, HERE)
        import zyfa_ctypes
        self.z = zyfa_ctypes.Zyfa(library)

    def describe(self):
        return "%s via %s" % (self.z.describe(), self.name)

    def prepare(self, *a, **kw):
        return self.z.prepare(*a, **kw)


def open_zyfa(args, torch):
    """The first caller that imports and gives right answers on a tiny BF16 problem (head dim 256: not a
    warp-specialised kernel, so that timing builds of those with wrong results by design still open)."""
    order = {"auto": [ZyfaBinding, ZyfaCtypes], "binding": [ZyfaBinding], "ctypes": [ZyfaCtypes]}[args.api]
    errors = []
    for cls in order:
        try:
            z = cls(args.library)
            q = torch.randn(1, 64, 2, 256, device="cuda", dtype=torch.bfloat16)
            o = torch.empty_like(q)
            launch, _ = z.prepare(q, q, q, o, causal=True, softmax="exact")
            launch()
            torch.cuda.synchronize()
            ref = torch.nn.functional.scaled_dot_product_attention(
                q.transpose(1, 2).float(), q.transpose(1, 2).float(), q.transpose(1, 2).float(), is_causal=True)
            err = rel_rms(o.transpose(1, 2).float(), ref)
            if not err < 1e-2:
                raise RuntimeError("smoke test relative error %.3g" % err)
            return z
        except Exception as e:  # try the next way of calling zyfa
            errors.append("%s: %s" % (cls.name, e))
    raise RuntimeError("zyfa could not be called: " + " | ".join(errors))


# --- inputs and implementations ------------------------------------------------------------------------
def rel_rms(x, ref):
    return float(((x - ref).pow(2).mean() / ref.pow(2).mean()).sqrt())


class Inputs:
    """One shape's tensors, [batch, seqlen, heads, dim], made once and shared by every implementation."""

    def __init__(self, torch, batch, seqlen, hq, hkv, dqk, dv, seed=0):
        g = torch.Generator(device="cuda").manual_seed(seed)
        dev = "cuda"
        self.q16 = torch.randn(batch, seqlen, hq, dqk, device=dev, dtype=torch.bfloat16, generator=g)
        self.k16 = torch.randn(batch, seqlen, hkv, dqk, device=dev, dtype=torch.bfloat16, generator=g)
        self.v16 = torch.randn(batch, seqlen, hkv, dv, device=dev, dtype=torch.bfloat16, generator=g)
        # FP8 inputs: N(0, 1) values fit e4m3 (max 448) without scaling, so descales stay 1.
        self.q8 = self.q16.to(torch.float8_e4m3fn)
        self.k8 = self.k16.to(torch.float8_e4m3fn)
        self.v8 = self.v16.to(torch.float8_e4m3fn)
        self.vt8 = None  # the Triton kernel's transposed V, made on first use
        self.out = torch.empty(batch, seqlen, hq, dv, device=dev, dtype=torch.bfloat16)
        self.shape = (batch, seqlen, hq, hkv, dqk, dv)


def make_launch(impl, torch, zyfa, inp):
    """(launch, kernel description) for one implementation on one shape; raises if unsupported."""
    batch, seqlen, hq, hkv, dqk, dv = inp.shape
    if impl.startswith("zyfa_"):
        if impl == "zyfa_bf16":
            return zyfa.prepare(inp.q16, inp.k16, inp.v16, inp.out, causal=True, softmax="exact")
        softmax = "lean" if impl == "zyfa_fp8_lean" else "exact"
        return zyfa.prepare(inp.q8, inp.k8, inp.v8, inp.out, causal=True, softmax=softmax)
    if impl.startswith("sdpa_"):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = SDPBackend.CUDNN_ATTENTION if impl == "sdpa_cudnn_bf16" else SDPBackend.FLASH_ATTENTION
        q, k, v = (t.transpose(1, 2) for t in (inp.q16, inp.k16, inp.v16))  # [b, h, s, d] views, no copies
        gqa = hq != hkv

        def launch():
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

        return launch, str(backend).split(".")[-1]
    if impl == "triton_fp8":
        sys.path.insert(0, HERE)
        import triton_fp8_attention as tfa
        if inp.vt8 is None:
            inp.vt8 = tfa.transpose_v(inp.v8)  # outside the timed region (see the kernel's docstring)

        def launch():
            return tfa.fp8_causal_attention(inp.q8, inp.k8, inp.vt8, out=inp.out)

        return launch, "triton fp8 exp2 x256 BM128 BN128"
    raise ValueError(impl)


def output_of(impl, result, inp):
    """[b, s, h, dv] float32 output of the launch that just ran."""
    if impl.startswith("sdpa_"):
        return result.transpose(1, 2).float()
    return inp.out.float()


def time_launch(torch, launch, samples):
    """Median milliseconds per launch: events around batches of back-to-back launches."""
    for _ in range(3):
        launch()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    launch()
    torch.cuda.synchronize()
    estimate = max(time.perf_counter() - t0, 1e-5)
    per_sample = max(1, min(200, int(math.ceil(0.02 / estimate))))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        start.record()
        for _ in range(per_sample):
            launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / per_sample)
    return statistics.median(times), min(times), max(times)


def spot_check(torch, zyfa, log):
    """Every implementation on one small causal shape against fp32 torch on the same inputs."""
    batch, seqlen, hq, hkv, dqk, dv = 2, 1000, 8, 8, 128, 128
    inp = Inputs(torch, batch, seqlen, hq, hkv, dqk, dv, seed=1)
    refs = {}
    for kind, (q, k, v) in (("bf16", (inp.q16, inp.k16, inp.v16)), ("fp8", (inp.q8, inp.k8, inp.v8))):
        qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
        refs[kind] = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True).transpose(1, 2)
    results = {}
    for impl in IMPLS:
        kind = "fp8" if "fp8" in impl else "bf16"
        try:
            inp.out.fill_(float("nan"))  # an unwritten element cannot pass
            launch, _ = make_launch(impl, torch, zyfa, inp)
            result = launch()
            torch.cuda.synchronize()
            err = rel_rms(output_of(impl, result, inp), refs[kind])
            ok = err <= SPOT_TOLERANCE[kind]
            results[impl] = (err, ok)
            log("  %-16s rel RMS error vs fp32 %.3e (bound %.0e) %s" % (impl, err, SPOT_TOLERANCE[kind],
                                                                       "ok" if ok else "WRONG"))
        except Exception as e:
            results[impl] = (float("nan"), False)
            log("  %-16s unavailable: %s" % (impl, str(e).splitlines()[0][:200]))
    return results


def main():
    args = parse_args()
    samples = args.samples or (5 if args.quick else 15)
    lines = []

    def log(text):
        print(text, flush=True)
        lines.append(text)

    import torch
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch: nothing to benchmark")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.cuda.get_device_properties(0)
    log("device: %s, %d SMs; torch %s (CUDA %s, cuDNN %s)" % (dev.name, dev.multi_processor_count, torch.__version__,
                                                              torch.version.cuda, torch.backends.cudnn.version()))
    try:
        import triton
        log("triton %s" % triton.__version__)
    except ImportError:
        log("triton: not importable")

    zyfa = None
    try:
        zyfa = open_zyfa(args, torch)
        log(zyfa.describe())
    except Exception as e:
        log("zyfa unavailable: %s" % e)

    log("== correctness spot check: causal b2 s1000 h8 d128, each vs fp32 torch on the same inputs")
    spot = spot_check(torch, zyfa, log)

    rows = []
    zyfa_api = zyfa.name if zyfa else "unavailable"
    for name, batch, seqlen, hq, hkv, dqk, dv in shapes(args):
        flops = causal_flops(batch, seqlen, hq, dqk, dv)
        inp = Inputs(torch, batch, seqlen, hq, hkv, dqk, dv)
        log("== %s: batch %d seqlen %d heads %d/%d dims %d/%d (%.1f GFLOP)" % (name, batch, seqlen, hq, hkv, dqk, dv,
                                                                           flops / 1e9))
        for impl in IMPLS:
            row = dict(shape=name, batch=batch, seqlen=seqlen, heads_q=hq, heads_kv=hkv, head_dim_qk=dqk,
                       head_dim_v=dv, impl=impl, kernel="", ms_median="", ms_min="", ms_max="", tflops="",
                       spot_rel_rms="%.3e" % spot.get(impl, (float("nan"), False))[0], status="ok", zyfa_api=zyfa_api)
            try:
                if impl.startswith("zyfa_") and zyfa is None:
                    raise RuntimeError("zyfa unavailable")
                launch, kernel = make_launch(impl, torch, zyfa, inp)
                median, lo, hi = time_launch(torch, launch, samples)
                row.update(kernel=kernel, ms_median="%.4f" % median, ms_min="%.4f" % lo, ms_max="%.4f" % hi,
                           tflops="%.1f" % (flops / (median * 1e-3) / 1e12))
                if not spot.get(impl, (0, True))[1]:
                    row["status"] = "failed spot check"
                log("  %-16s %9.3f ms  %7s TFLOP/s  %s" % (impl, median, row["tflops"], kernel))
            except Exception as e:
                row["status"] = "error: " + str(e).splitlines()[0][:160] if str(e) else "error: " + type(e).__name__
                log("  %-16s %s" % (impl, row["status"]))
                if os.environ.get("ZYFA_BENCH_TRACEBACK"):
                    traceback.print_exc()
            rows.append(row)
        del inp
        torch.cuda.empty_cache()

    fields = ["shape", "batch", "seqlen", "heads_q", "heads_kv", "head_dim_qk", "head_dim_v", "impl", "kernel",
              "ms_median", "ms_min", "ms_max", "tflops", "anchor", "ratio_vs_anchor", "spot_rel_rms", "status",
              "zyfa_api"]
    by_key = {(r["shape"], r["seqlen"], r["impl"]): r for r in rows}
    extra = []
    for r in rows:
        r["anchor"], r["ratio_vs_anchor"] = "", ""
        for anchor in ANCHORS.get(r["impl"], []):
            a = by_key.get((r["shape"], r["seqlen"], anchor))
            ratio = "%.2f" % (float(r["tflops"]) / float(a["tflops"])) if a and a["tflops"] and r["tflops"] else ""
            if not r["anchor"]:
                r["anchor"], r["ratio_vs_anchor"] = anchor, ratio
            else:  # a second anchor: its own CSV line, so every ratio has a column
                extra.append(dict(r, anchor=anchor, ratio_vs_anchor=ratio))
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows + extra)

    # The table, last: TFLOP/s per implementation and the ratios zyfa / anchor.
    log("== results (TFLOP/s, median of %d samples; ratios zyfa/anchor; zyfa via %s)" % (samples, zyfa_api))
    short = {"zyfa_fp8_lean": "lean", "zyfa_fp8_exact": "exact", "zyfa_bf16": "zbf16", "sdpa_cudnn_bf16": "cudnn",
             "sdpa_flash_bf16": "flash", "triton_fp8": "triton8"}
    header = "%-24s %6s " % ("shape", "seqlen") + " ".join("%7s" % short[i] for i in IMPLS) + \
        "  lean/tri exact/tri bf16/cudnn bf16/flash"
    log(header)
    for name, batch, seqlen, *_ in shapes(args):
        vals = {i: by_key[(name, seqlen, i)]["tflops"] for i in IMPLS}

        def ratio(a, b):
            return "%.2f" % (float(vals[a]) / float(vals[b])) if vals[a] and vals[b] else "-"

        log("%-24s %6d " % (name[:24], seqlen) + " ".join("%7s" % (vals[i] or "-") for i in IMPLS) +
            "  %8s %9s %10s %10s" % (ratio("zyfa_fp8_lean", "triton_fp8"), ratio("zyfa_fp8_exact", "triton_fp8"),
                                      ratio("zyfa_bf16", "sdpa_cudnn_bf16"), ratio("zyfa_bf16", "sdpa_flash_bf16")))
    bad = [i for i, (_, ok) in spot.items() if not ok]
    log("spot check: %s" % ("all ok" if not bad else "FAILED or unavailable: " + ", ".join(bad)))
    log("csv: %s" % os.path.abspath(args.csv))
    return 1 if any(i.startswith("zyfa_") for i in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
