#!/usr/bin/env python3
"""zyfa against its anchors, in one process and one run, on one NVIDIA GPU.

Implementations (each row of the table is one shape):
  zyfa FP8 LEAN, zyfa FP8 EXACT, zyfa BF16   through the C ABI: bindings/python's `zyfa` package when
                                             it imports and runs torch CUDA tensors, else the minimal
                                             ctypes caller bench/zyfa_ctypes.py (the log and CSV say which)
  zyfa INT8 Q/K LEAN                         q, k int8 (per token / per 64 keys) and v e4m3, quantised by
                                             zyfa from the BF16 inputs; the binding only; its ratio is to
                                             FP8 LEAN on the same shape (issue 20's bar)
  zyfa FP8 LEAN / EXACT with a key bias      (zyfa_fp8_lean_bias, zyfa_fp8_exact_bias) the FP8 rows' inputs
                                             plus an fp32 per-key score bias (params.key_bias, Q
                                             smoothing's correction): the ws_bias kernels; the binding only
  torch SDPA BF16, cuDNN backend and flash backend (torch.nn.attention.sdpa_kernel)
  Triton FP8 (bench/triton_fp8_attention.py): the FP8 anchor, EXACT-style numerics
  cuDNN FP8 (e4m3 out): cuDNN's FP8 SDPA forward through cudnn-frontend's Python graph API (PyPI
                        nvidia-cudnn-frontend, module cudnn), one graph per shape; its output is
                        e4m3, because cuDNN takes BF16/FP16 output for FP8 SDPA on Blackwell only
                        (the frontend's support check says so), so it writes half the bytes of O
                        that the bf16-out rows write. Skipped, with one line, when the module
                        does not import or a graph is not supported.
  cuDNN BF16 paged (cudnn_bf16_paged16, cudnn_bf16_paged256): cuDNN's BF16 SDPA forward through the same
                        frontend reading K and V from the page pools and block table that the zyfa
                        paged rows read (pools [pages, page_size, h, d] described to cuDNN as its
                        [pages, h, page_size, d] containers by strides, no copy): the paged anchor.
Shapes: causal, head dim 128, seqlen 1K..32K with batch * seqlen = 32K tokens and 16 heads (equal
work per token); head dim 192/128 (MLA); head dim 64 (twice the heads); one GQA shape (32 query
heads on 8 kv heads); head dim 256.
Timing: CUDA events around a batch of back-to-back launches (enough for >= 20 ms), after warm-up;
the median of the samples, per launch. Warm-up runs each implementation for --sustain-ms (1 s) of
back-to-back launches first: under sustained load the H200 lowers its SM clock at its power cap
(1,980 MHz to about 1,700 MHz within a second for zyfa BF16, throttle reason "SW power cap"), so
a short burst measures the boost clock and whatever ran before sets the state; after a sustained
warm-up every implementation is timed at its own steady state, as a serving load runs it. The SM
clock and throttle reasons read by nvidia-smi right after the samples go into the log and CSV. TFLOP/s = 2 * (Dqk + Dv) * visible pairs * heads_q / time,
the formula of zyfa-bench (causal visible pairs = s (s + 1) / 2 per sequence).
Correctness spot check first: every implementation on one small causal shape against an fp32
torch reference on the same (dequantised) inputs, relative RMS error printed, so that a fast but
wrong kernel shows; cuDNN FP8 is checked again on the first benchmark shape it runs, and is not
timed where either check fails. Writes a long-format CSV (one line per shape and implementation).
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

IMPLS = ["zyfa_fp8_lean", "zyfa_fp8_exact", "zyfa_int8_lean", "zyfa_bf16", "sdpa_cudnn_bf16", "sdpa_flash_bf16", "triton_fp8",
         "cudnn_fp8", "zyfa_fp8_lean_paged16", "zyfa_fp8_lean_paged256", "zyfa_bf16_paged16", "zyfa_bf16_paged256",
         "cudnn_bf16_paged16", "cudnn_bf16_paged256", "zyfa_fp8_lean_vt", "zyfa_fp8_exact_vt", "zyfa_fp8_lean_bias",
         "zyfa_fp8_exact_bias"]
# Each zyfa implementation's anchor(s): the ratio zyfa / anchor is printed per row. A paged row's
# anchor is the contiguous zyfa kernel on the same keys (issue 22's bar: paged >= 0.9x contiguous).
# The INT8 Q/K row's anchor is FP8 LEAN on the same shape (issue 20: INT8 LEAN >= 0.97x FP8 LEAN).
ANCHORS = {"zyfa_fp8_lean": ["triton_fp8", "cudnn_fp8"], "zyfa_fp8_exact": ["triton_fp8", "cudnn_fp8"],
           "zyfa_int8_lean": ["zyfa_fp8_lean"],
           "zyfa_bf16": ["sdpa_cudnn_bf16", "sdpa_flash_bf16"],
           "zyfa_fp8_lean_paged16": ["zyfa_fp8_lean"], "zyfa_fp8_lean_paged256": ["zyfa_fp8_lean"],
           "zyfa_bf16_paged16": ["zyfa_bf16", "cudnn_bf16_paged16"],
           "zyfa_bf16_paged256": ["zyfa_bf16", "cudnn_bf16_paged256"],
           "zyfa_fp8_lean_vt": ["zyfa_fp8_lean", "cudnn_fp8"], "zyfa_fp8_exact_vt": ["zyfa_fp8_exact", "cudnn_fp8"],
           "zyfa_fp8_lean_bias": ["zyfa_fp8_lean", "cudnn_fp8"], "zyfa_fp8_exact_bias": ["zyfa_fp8_exact", "cudnn_fp8"]}


def paged_page_size(impl):
    """The page size of a paged row (zyfa_*_paged<N>, cudnn_*_paged<N>), or 0."""
    return int(impl.rsplit("_paged", 1)[1]) if "_paged" in impl else 0


def make_page_pools(torch, k, v, page_size):
    """K and V [b, s, h, d] moved into page pools [pages, page_size, h, d] in a shuffled page order (a
    cache whose pages were handed out over time), and the block table [b, pages per sequence] int32
    that reads them back as the same keys. Outside every timed region."""
    b, s, h, d = k.shape
    pages_per_seq = (s + page_size - 1) // page_size
    perm = torch.randperm(b * pages_per_seq, generator=torch.Generator().manual_seed(5)).to(k.device)

    def pool(x):  # on a byte view: index_put works for every dtype
        raw = x.contiguous().view(torch.uint8)
        padded = torch.zeros(b, pages_per_seq * page_size, h, raw.shape[-1], dtype=torch.uint8, device=x.device)
        padded[:, :s] = raw
        out_pool = torch.empty_like(padded).reshape(b * pages_per_seq, page_size, h, raw.shape[-1])
        out_pool[perm] = padded.reshape(b * pages_per_seq, page_size, h, raw.shape[-1])
        return out_pool.view(x.dtype)

    return pool(k), pool(v), perm.reshape(b, pages_per_seq).to(torch.int32)
# Relative RMS error against fp32 on the same inputs above which the spot check fails: FP8 P
# rounding gives ~2-3e-2 (EXACT/LEAN, README), bf16 P ~2e-3; 8e-2 and 1e-2 leave room for the input
# distribution but not for a wrong kernel (which gives O(1)).
SPOT_TOLERANCE = {"fp8": 8e-2, "bf16": 1e-2}
# cuDNN FP8 rounds O to e4m3 (3 mantissa bits) on top of P's rounding, so its bound is looser; above
# it the output is grossly wrong and the row is marked failed instead of timed.
CUDNN_FP8_TOLERANCE = 1e-1


def tolerance(impl):
    if impl == "cudnn_fp8":
        return CUDNN_FP8_TOLERANCE
    return SPOT_TOLERANCE["fp8" if "fp8" in impl or "int8" in impl else "bf16"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", default=os.environ.get("ZYFA_LIBRARY_PATH", os.path.join(REPO, "build-gpu", "libzyfa.so")),
                    help="libzyfa.so to benchmark (default build-gpu/libzyfa.so or $ZYFA_LIBRARY_PATH)")
    ap.add_argument("--csv", default="bench.csv", help="output CSV path")
    ap.add_argument("--api", choices=["auto", "binding", "ctypes"], default="auto",
                    help="how zyfa is called: the bindings/python package, bench/zyfa_ctypes.py, or the first that works")
    ap.add_argument("--quick", action="store_true", help="two shapes, fewer samples: a first run")
    ap.add_argument("--samples", type=int, default=None, help="timed samples per measurement (default 15, quick 5)")
    ap.add_argument("--sustain-ms", type=float, default=1000.0,
                    help="back-to-back launches before the samples, to the power-capped steady state (default 1000; 0: none)")
    ap.add_argument("--tokens", type=int, default=32768, help="batch * seqlen for the head-dim-128 sweep")
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seqlens", default=None,
                    help="comma-separated sequence lengths of the head-dim-128 sweep, and only that sweep "
                         "(default: 1K-32K plus the other head dims and GQA)")
    ap.add_argument("--impls", default=",".join(IMPLS),
                    help="comma-separated implementations to run (default all: %(default)s)")
    args = ap.parse_args()
    args.impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    if args.seqlens is not None:
        try:
            args.seqlens = [int(x) for x in args.seqlens.split(",") if x.strip()]
        except ValueError:
            ap.error("--seqlens takes integers, e.g. 16384,32768")
        if not args.seqlens or min(args.seqlens) < 1 or args.quick:
            ap.error("--seqlens takes one or more positive lengths and excludes --quick")
    unknown = [i for i in args.impls if i not in IMPLS]
    if unknown:
        ap.error("unknown implementation(s) %s; choose from %s" % (", ".join(unknown), ", ".join(IMPLS)))
    return args


def shapes(args):
    """(name, batch, seqlen, heads_q, heads_kv, dqk, dv), all causal."""
    seqlens = args.seqlens or ([1024, 4096] if args.quick else [1024, 2048, 4096, 8192, 16384, 32768])
    out = [("causal hd128", max(1, args.tokens // s), s, args.heads, args.heads, 128, 128) for s in seqlens]
    if not args.quick and not args.seqlens:
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

    def prepare_paged(self, torch, q, k, v, out, page_size, softmax="auto"):
        """K and V in page pools (make_page_pools), read through the block table: the same keys as
        prepare(q, k, v, ...)."""
        z = self.zyfa
        s = k.shape[1]
        kp, vp, table = make_page_pools(torch, k, v, page_size)

        def launch():
            z.attention(q, kp, vp, causal="bottom_right", softmax=softmax, block_table=table, max_seqlen_k=s,
                        out=out)

        name = "?"
        try:
            name = z.attention_kernel_name(q, kp, vp, causal="bottom_right", softmax=softmax, block_table=table,
                                           max_seqlen_k=s) or "?"
        except Exception:  # the name is informative only
            pass
        return launch, "%s page %d" % (name, page_size)

    def prepare_int8(self, inp):
        """The INT8 Q/K mode on the shape's BF16 inputs: q int8 per token, k int8 per 64 keys, v e4m3
        with one descale per (batch, kv head), all quantised by zyfa on the GPU outside the timing."""
        if inp.int8 is None:
            z = self.zyfa
            q8, qd = z.quantize_int8(inp.q16, per="token")
            k8, kd = z.quantize_int8(inp.k16, per="block")
            v8, vd = z.quantize_fp8(inp.v16)
            inp.int8 = (q8, k8, v8, (qd, kd, vd))
        q8, k8, v8, descales = inp.int8
        return self.prepare(q8, k8, v8, inp.out, causal=True, softmax="lean", descales=descales)

    def prepare(self, q, k, v, out, causal=True, softmax="auto", softmax_scale=None, descales=None, key_bias=None):
        z = self.zyfa

        def launch():
            z.attention(q, k, v, causal=causal, softmax=softmax, softmax_scale=softmax_scale, descale=descales,
                        out=out, key_bias=key_bias)

        name = "?"
        try:
            name = z.attention_kernel_name(q, k, v, causal=causal, softmax=softmax, descale=descales,
                                           key_bias=key_bias) or "?"
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

    def prepare_int8(self, inp):
        raise RuntimeError("the INT8 Q/K row needs the bindings/python package (--api binding)")


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
def first_line(e, width=200):
    """One line for an exception: its message's first line, or its type when it has none."""
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:width]


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
        self.int8 = None  # zyfa's INT8 Q/K inputs (q, k, v, descales), made on first use
        self.out = torch.empty(batch, seqlen, hq, dv, device=dev, dtype=torch.bfloat16)
        self.shape = (batch, seqlen, hq, hkv, dqk, dv)


class CudnnFp8:
    """cuDNN's FP8 (e4m3) SDPA forward through cudnn-frontend's Python graph API (module `cudnn`).

    One graph per shape, built once: validate, build_operation_graph, execution plans from heuristics
    A then FALLBACK, check_support, build_plans, and its workspace; the timed launch is execute().
    Q/K/V are the bench's e4m3 tensors, [b, s, h, d] storage described to cuDNN as [b, h, s, d] with
    those strides (no copy). Output e4m3: cuDNN takes BF16/FP16 output for FP8 SDPA only on
    Blackwell (the frontend's support check refuses it below), so the row says "e4m3 out"."""

    label = "cuDNN FP8 (e4m3 out)"
    # P <= 1 after the row-max subtraction, so 448 (e4m3's largest finite value) uses its whole range.
    SCALE_S = 448.0

    def __init__(self, torch):
        import cudnn  # ImportError (wheel not installed) -> the impl is skipped, with one line
        self.cudnn, self.torch = cudnn, torch
        self.backend = cudnn.backend_version()
        self.handle = cudnn.create_handle()

    def describe(self):
        return "%s via cudnn frontend %s (%s), cuDNN backend %s" % (
            self.label, getattr(self.cudnn, "__version__", "?"), os.path.dirname(self.cudnn.__file__), self.backend)

    def _build(self, inp, out8, stats):
        """The graph for this shape, and its tensors by role; raises if cuDNN does not support it."""
        cudnn = self.cudnn
        f8, f32 = cudnn.data_type.FP8_E4M3, cudnn.data_type.FLOAT
        batch, seqlen, hq, hkv, dqk, dv = inp.shape
        g = cudnn.pygraph(io_data_type=f8, intermediate_data_type=f32, compute_data_type=f32, handle=self.handle)

        def bshd(name, t):  # a [b, s, h, d] tensor as cuDNN's [b, h, s, d] dims with its own strides
            view = t.transpose(1, 2)
            return g.tensor(name=name, dim=list(view.shape), stride=list(view.stride()), data_type=f8)

        def scalar(name):
            return g.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=f32)

        t = {"q": bshd("q", inp.q8), "k": bshd("k", inp.k8), "v": bshd("v", inp.v8)}
        for name in ("descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"):
            t[name] = scalar(name)
        # Causal, top-left (row i sees keys 0..i), as torch's is_causal and the other rows: the
        # frontend's preferred form, diagonal_alignment TOP_LEFT with right_bound 0.
        o, st, amax_s, amax_o = g.sdpa_fp8(
            q=t["q"], k=t["k"], v=t["v"], descale_q=t["descale_q"], descale_k=t["descale_k"],
            descale_v=t["descale_v"], descale_s=t["descale_s"], scale_s=t["scale_s"], scale_o=t["scale_o"],
            generate_stats=stats, attn_scale=dqk ** -0.5,
            diagonal_alignment=cudnn.diagonal_alignment.TOP_LEFT, right_bound=0, name="sdpa_fp8")
        ov = out8.transpose(1, 2)
        o.set_output(True).set_dim(list(ov.shape)).set_stride(list(ov.stride())).set_data_type(f8)
        t["o"] = o
        # Both amax outputs declared, as the frontend's own FP8 tests do (a declared Amax_S also keeps
        # the graph on cuDNN backend plans, per the 1.32 frontend's docstring).
        for name, a in (("amax_s", amax_s), ("amax_o", amax_o)):
            a.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1]).set_data_type(f32)
            t[name] = a
        if stats:
            st.set_output(True).set_dim([batch, hq, seqlen, 1]).set_stride([hq * seqlen, seqlen, 1, 1]) \
                .set_data_type(f32)
            t["stats"] = st
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        engine = getattr(g, "selected_engine", None)  # frontend >= 1.2x: None means a cuDNN backend plan
        if engine is not None:
            raise RuntimeError("the frontend chose its own engine %s, not a cuDNN backend plan" % engine.name)
        return g, t

    def prepare(self, inp):
        torch, cudnn = self.torch, self.cudnn
        batch, seqlen, hq, hkv, dqk, dv = inp.shape
        dev = "cuda"
        out8 = torch.empty(batch, seqlen, hq, dv, device=dev, dtype=torch.float8_e4m3fn)
        out8.view(torch.uint8).fill_(0x7F)  # e4m3fn NaN: an unwritten element cannot pass a check
        t0 = time.perf_counter()
        try:
            g, t = self._build(inp, out8, stats=False)
            stats = False
        except cudnn.cudnnGraphNotSupportedError as first:
            try:  # some backends serve FP8 forward only with softmax stats: time it with them, and say so
                g, t = self._build(inp, out8, stats=True)
                stats = True
            except Exception:
                raise first
        build_s = time.perf_counter() - t0
        # |O| <= max |V| (rows of P sum to 1; P's rounding can pass it slightly): a power of two that
        # maps max |V| to at most 224 keeps O 2x under e4m3's 448, and dequantises exactly.
        amax_v = float(inp.v8.float().abs().max())
        scale_o = 2.0 ** math.floor(math.log2(224.0 / max(amax_v, 1e-30)))

        def f32(x):
            return torch.full((1, 1, 1, 1), x, device=dev, dtype=torch.float32)

        one = f32(1.0)  # the bench's e4m3 inputs are N(0, 1) cast unscaled: descales 1
        pack = {t["q"]: inp.q8, t["k"]: inp.k8, t["v"]: inp.v8, t["o"]: out8,
                t["descale_q"]: one, t["descale_k"]: one, t["descale_v"]: one,
                t["descale_s"]: f32(1.0 / self.SCALE_S), t["scale_s"]: f32(self.SCALE_S), t["scale_o"]: f32(scale_o),
                t["amax_s"]: f32(0.0), t["amax_o"]: f32(0.0)}
        if stats:
            pack[t["stats"]] = torch.empty(batch, hq, seqlen, 1, device=dev, dtype=torch.float32)
        workspace = torch.empty(max(1, g.get_workspace_size()), device=dev, dtype=torch.uint8)
        cudnn.set_stream(self.handle, torch.cuda.current_stream().cuda_stream)  # the stream the events time
        inp.cudnn_out8, inp.cudnn_scale_o, inp.cudnn_amax_o = out8, scale_o, pack[t["amax_o"]]
        handle = self.handle

        def launch():
            g.execute(pack, workspace, handle=handle)

        try:
            plan = g.get_plan_name_at_index(getattr(g, "_plan_index", 0))
        except Exception:  # the name is informative only
            plan = "?"
        return launch, "%s %s%s scale_o %g, build %.1f s" % (self.label, plan, " +stats" if stats else "", scale_o,
                                                             build_s)


class CudnnPagedBf16:
    """cuDNN's BF16 SDPA forward through cudnn-frontend's Python graph API with paged K/V: the pools and
    block table of make_page_pools (the zyfa paged rows' own), cuDNN's containers [pages, h,
    page_size, d] as strided views of them, its block tables [b, 1, pages per sequence, 1], actual
    lengths (which paged K/V requires) all equal to the shape's, causal top-left as CudnnFp8. One
    graph per shape and page size; the timed launch is execute()."""

    label = "cuDNN BF16 paged"

    def __init__(self, torch):
        import cudnn  # ImportError (wheel not installed) -> the row reports the error, as any other
        self.cudnn, self.torch = cudnn, torch
        self.handle = cudnn.create_handle()

    def prepare(self, inp, page_size):
        torch, cudnn = self.torch, self.cudnn
        batch, seqlen, hq, hkv, dqk, dv = inp.shape
        kp, vp, table = make_page_pools(torch, inp.k16, inp.v16, page_size)
        pages_per_seq = table.shape[1]
        t0 = time.perf_counter()
        bf16, f32, i32 = cudnn.data_type.BFLOAT16, cudnn.data_type.FLOAT, cudnn.data_type.INT32
        g = cudnn.pygraph(io_data_type=bf16, intermediate_data_type=f32, compute_data_type=f32, handle=self.handle)

        def view_tensor(name, view, dtype):
            return g.tensor(name=name, dim=list(view.shape), stride=list(view.stride()), data_type=dtype)

        q_view, o_view = inp.q16.transpose(1, 2), inp.out.transpose(1, 2)  # [b, h, s, d] views
        k_view, v_view = kp.transpose(1, 2), vp.transpose(1, 2)  # [pages, h, page_size, d] views
        block_table = table.reshape(batch, 1, pages_per_seq, 1).contiguous()
        lengths = torch.full((batch, 1, 1, 1), seqlen, device="cuda", dtype=torch.int32)
        t = {"q": view_tensor("q", q_view, bf16), "k": view_tensor("k", k_view, bf16),
             "v": view_tensor("v", v_view, bf16), "table_k": view_tensor("table_k", block_table, i32),
             "table_v": view_tensor("table_v", block_table, i32),
             "len_q": view_tensor("len_q", lengths, i32), "len_kv": view_tensor("len_kv", lengths, i32)}
        o, _ = g.sdpa(q=t["q"], k=t["k"], v=t["v"], generate_stats=False, attn_scale=dqk ** -0.5,
                      diagonal_alignment=cudnn.diagonal_alignment.TOP_LEFT, diagonal_band_right_bound=0,
                      use_padding_mask=True, seq_len_q=t["len_q"], seq_len_kv=t["len_kv"],
                      paged_attention_k_table=t["table_k"], paged_attention_v_table=t["table_v"],
                      paged_attention_max_seq_len_kv=seqlen, name="sdpa_paged")
        o.set_output(True).set_dim(list(o_view.shape)).set_stride(list(o_view.stride())).set_data_type(bf16)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        build_s = time.perf_counter() - t0
        pack = {t["q"]: inp.q16, t["k"]: kp, t["v"]: vp, t["table_k"]: block_table, t["table_v"]: block_table,
                t["len_q"]: lengths, t["len_kv"]: lengths, o: inp.out}
        workspace = torch.empty(max(1, g.get_workspace_size()), device="cuda", dtype=torch.uint8)
        cudnn.set_stream(self.handle, torch.cuda.current_stream().cuda_stream)  # the stream the events time
        handle = self.handle

        def launch():
            g.execute(pack, workspace, handle=handle)

        return launch, "%s page %d, build %.1f s" % (self.label, page_size, build_s)


_cudnn_paged = []  # the CudnnPagedBf16 made on first use
_ctypes_zyfa = []  # the ZyfaCtypes of the transposed-V rows, made on first use
_library_path = []  # --library, for it


def key_bias_of(torch, inp):
    """The key-bias rows' fp32 bias [batch, heads_q, seqlen] of standard deviation 1.5 (made once per shape)."""
    if getattr(inp, "key_bias", None) is None:
        batch, seqlen, hq = inp.shape[0], inp.shape[1], inp.shape[2]
        g = torch.Generator(device="cuda").manual_seed(5)
        inp.key_bias = torch.randn(batch, hq, seqlen, device="cuda", generator=g, dtype=torch.float32) * 1.5
    return inp.key_bias


def make_launch(impl, torch, zyfa, inp, cudnn_fp8=None):
    """(launch, kernel description) for one implementation on one shape; raises if unsupported."""
    batch, seqlen, hq, hkv, dqk, dv = inp.shape
    if impl == "cudnn_fp8":
        if cudnn_fp8 is None:
            raise RuntimeError("cudnn frontend unavailable")
        return cudnn_fp8.prepare(inp)
    if impl.startswith("cudnn_bf16_paged"):
        if (dqk, dv) != (128, 128):
            raise RuntimeError("paged rows run at head dim 128 only (zyfa's paged kernels)")
        if not _cudnn_paged:
            _cudnn_paged.append(CudnnPagedBf16(torch))
        return _cudnn_paged[0].prepare(inp, paged_page_size(impl))
    if impl.endswith("_vt"):
        # FP8 V in the transposed layout (ZYFA_ATTN_V_TRANSPOSED) through the minimal ctypes caller,
        # built from the row-major rows' codes: the same inputs as zyfa_fp8_lean / _exact.
        if (dqk, dv) not in ((128, 128), (64, 64), (192, 128)):
            raise RuntimeError("the transposed-V kernels take head dims 64, 128 and 192/128")
        if not _ctypes_zyfa:
            _ctypes_zyfa.append(ZyfaCtypes(_library_path[0]))
        import zyfa_ctypes
        vt = zyfa_ctypes.transposed_v(torch, inp.v8)
        softmax = "lean" if impl == "zyfa_fp8_lean_vt" else "exact"
        launch, name = _ctypes_zyfa[0].z.prepare(inp.q8, inp.k8, vt, inp.out, causal=True, softmax=softmax,
                                                 v_transposed=True)
        return launch, name + " (v transposed)"
    if impl.startswith("zyfa_") and paged_page_size(impl):
        if not hasattr(zyfa, "prepare_paged"):
            raise RuntimeError("paged rows need the bindings/python package (--api binding)")
        if (dqk, dv) != (128, 128):
            raise RuntimeError("the paged kernels take head dim 128")
        if impl.startswith("zyfa_bf16"):
            return zyfa.prepare_paged(torch, inp.q16, inp.k16, inp.v16, inp.out, paged_page_size(impl), "exact")
        return zyfa.prepare_paged(torch, inp.q8, inp.k8, inp.v8, inp.out, paged_page_size(impl), "lean")
    if impl == "zyfa_int8_lean":
        return zyfa.prepare_int8(inp)
    if impl.endswith("_bias"):
        # Q smoothing's per-key score bias (params.key_bias, the ws_bias kernels): fp32 [batch, heads_q,
        # seqlen] of standard deviation 1.5, on the FP8 rows' inputs; its cost is the ratio to them.
        if not hasattr(zyfa, "prepare_paged"):
            raise RuntimeError("the key-bias rows need the bindings/python package (--api binding)")
        softmax = "lean" if impl == "zyfa_fp8_lean_bias" else "exact"
        launch, name = zyfa.prepare(inp.q8, inp.k8, inp.v8, inp.out, causal=True, softmax=softmax,
                                    key_bias=key_bias_of(torch, inp))
        return launch, name + " (key bias)"
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
    if impl == "cudnn_fp8":
        return inp.cudnn_out8.float() / inp.cudnn_scale_o
    return inp.out.float()


def fp32_reference(torch, inp):
    """fp32 torch SDPA, causal, on this shape's dequantised e4m3 inputs (descales 1), [b, s, h, dv]."""
    batch, seqlen, hq, hkv, dqk, dv = inp.shape
    qf, kf, vf = (t.float().transpose(1, 2) for t in (inp.q8, inp.k8, inp.v8))
    return torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True,
                                                            enable_gqa=hq != hkv).transpose(1, 2)


def gpu_clock():
    """'<SM MHz> MHz, <throttle reasons>' from nvidia-smi now (0x4: SW power cap), or '' without it."""
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks_throttle_reasons.active",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=10).stdout
        return out.strip().splitlines()[0] if out.strip() else ""
    except Exception:  # no nvidia-smi: the clock is informative only
        return ""


def time_launch(torch, launch, samples, sustain_ms=0.0):
    """Median milliseconds per launch: events around batches of back-to-back launches, after
    sustain_ms of back-to-back launches (the clock's steady state under load: module docstring)."""
    for _ in range(3):
        launch()
    torch.cuda.synchronize()
    t_end = time.perf_counter() + sustain_ms * 1e-3
    while time.perf_counter() < t_end:
        for _ in range(4):
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


def spot_check(torch, zyfa, log, impls, cudnn_fp8=None):
    """Every implementation on one small causal shape against fp32 torch on the same inputs."""
    batch, seqlen, hq, hkv, dqk, dv = 2, 1000, 8, 8, 128, 128
    inp = Inputs(torch, batch, seqlen, hq, hkv, dqk, dv, seed=1)
    refs = {}
    for kind, (q, k, v) in (("bf16", (inp.q16, inp.k16, inp.v16)), ("fp8", (inp.q8, inp.k8, inp.v8))):
        qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
        refs[kind] = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True).transpose(1, 2)
        if kind == "fp8":  # the key-bias rows: the bias added to every scaled score, as SDPA's float mask
            causal = torch.ones(seqlen, seqlen, device="cuda", dtype=torch.bool).tril()
            mask = torch.where(causal, 0.0, float("-inf"))[None, None] + key_bias_of(torch, inp)[:, :, None, :]
            refs["fp8_bias"] = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, attn_mask=mask).transpose(1, 2)
    results = {}
    for impl in impls:
        kind = "fp8" if "fp8" in impl else "bf16"  # INT8 Q/K: quantised from the BF16 inputs
        if impl.endswith("_bias"):
            kind = "fp8_bias"
        try:
            inp.out.fill_(float("nan"))  # an unwritten element cannot pass
            launch, _ = make_launch(impl, torch, zyfa, inp, cudnn_fp8)
            result = launch()
            torch.cuda.synchronize()
            err = rel_rms(output_of(impl, result, inp), refs[kind])
            ok = err <= tolerance(impl)
            results[impl] = (err, ok)
            log("  %-16s rel RMS error vs fp32 %.3e (bound %.0e) %s" % (impl, err, tolerance(impl),
                                                                       "ok" if ok else "WRONG"))
        except Exception as e:
            results[impl] = (float("nan"), None)  # None: did not run (False: ran and was wrong)
            log("  %-16s unavailable: %s" % (impl, first_line(e)))
            if isinstance(e, TypeError):  # a binding's signature mismatch: its message lists the accepted forms
                log("    " + str(e).strip().replace("\n", "\n    ")[:4000])
    return results


def main():
    args = parse_args()
    _library_path.append(args.library)
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

    cudnn_fp8, cudnn_skip = None, None
    if "cudnn_fp8" in args.impls:
        try:
            cudnn_fp8 = CudnnFp8(torch)
            log(cudnn_fp8.describe())
        except Exception as e:  # only this implementation is skipped
            cudnn_skip = "cudnn frontend unavailable (%s: %s)" % (type(e).__name__, first_line(e, 120))
            log("cudnn_fp8 skipped: %s; tools/gpu/fetch-device-deps.sh fetches the nvidia-cudnn-frontend wheel "
                "that tools/gpu/run-device-suite.sh installs" % cudnn_skip)

    log("== correctness spot check: causal b2 s1000 h8 d128, each vs fp32 torch on the same inputs")
    spot = spot_check(torch, zyfa, log, args.impls, cudnn_fp8)
    cudnn_check = None  # (shape, seqlen, rel RMS error) of cuDNN FP8 on the first benchmark shape it runs

    rows = []
    zyfa_api = zyfa.name if zyfa else "unavailable"
    for name, batch, seqlen, hq, hkv, dqk, dv in shapes(args):
        flops = causal_flops(batch, seqlen, hq, dqk, dv)
        inp = Inputs(torch, batch, seqlen, hq, hkv, dqk, dv)
        log("== %s: batch %d seqlen %d heads %d/%d dims %d/%d (%.1f GFLOP)" % (name, batch, seqlen, hq, hkv, dqk, dv,
                                                                           flops / 1e9))
        for impl in args.impls:
            if paged_page_size(impl) and (dqk, dv) != (128, 128):
                continue  # the paged kernels' head dim only
            row = dict(shape=name, batch=batch, seqlen=seqlen, heads_q=hq, heads_kv=hkv, head_dim_qk=dqk,
                       head_dim_v=dv, impl=impl, kernel="", ms_median="", ms_min="", ms_max="", tflops="",
                       spot_rel_rms="%.3e" % spot.get(impl, (float("nan"), False))[0], status="ok", zyfa_api=zyfa_api,
                       sm_clock="")
            if impl == "cudnn_fp8" and cudnn_skip:
                row["status"] = "skipped: " + cudnn_skip
                log("  %-16s skipped: cudnn frontend unavailable" % impl)
                rows.append(row)
                continue
            try:
                if impl.startswith("zyfa_") and zyfa is None:
                    raise RuntimeError("zyfa unavailable")
                launch, kernel = make_launch(impl, torch, zyfa, inp, cudnn_fp8)
                if impl == "cudnn_fp8":
                    if cudnn_check is None:  # the first benchmark shape it runs on: check it here too
                        launch()
                        torch.cuda.synchronize()
                        err = rel_rms(output_of(impl, None, inp), fp32_reference(torch, inp))
                        cudnn_check = (name, seqlen, err)
                        log("  %-16s check on this shape: rel RMS error vs fp32 %.3e (bound %.0e) %s; amax_o %.3g" % (
                            impl, err, CUDNN_FP8_TOLERANCE, "ok" if err <= CUDNN_FP8_TOLERANCE else "WRONG",
                            float(inp.cudnn_amax_o.item())))
                    spot_err, spot_ok = spot.get(impl, (float("nan"), None))
                    if spot_ok is False or not cudnn_check[2] <= CUDNN_FP8_TOLERANCE:  # NaN fails too
                        # Grossly wrong: a speed would mislead, so none is reported.
                        row.update(kernel=kernel, status="failed check: rel RMS %.3e at b2 s1000, %.3e at %s s%d" % (
                            spot_err, cudnn_check[2], cudnn_check[0], cudnn_check[1]))
                        log("  %-16s %s (not timed)" % (impl, row["status"]))
                        rows.append(row)
                        continue
                median, lo, hi = time_launch(torch, launch, samples, args.sustain_ms)
                clock = gpu_clock()
                row.update(kernel=kernel, ms_median="%.4f" % median, ms_min="%.4f" % lo, ms_max="%.4f" % hi,
                           tflops="%.1f" % (flops / (median * 1e-3) / 1e12), sm_clock=clock)
                # cuDNN FP8 passed its checks above (the spot check's own shape may be one it refuses).
                if impl != "cudnn_fp8" and not spot.get(impl, (0, True))[1]:
                    row["status"] = "failed spot check"
                log("  %-16s %9.3f ms  %7s TFLOP/s  %s  [%s]" % (impl, median, row["tflops"], kernel, clock))
            except Exception as e:
                row["status"] = "error: " + first_line(e, 160)
                log("  %-16s %s" % (impl, row["status"]))
                if os.environ.get("ZYFA_BENCH_TRACEBACK"):
                    traceback.print_exc()
            rows.append(row)
        del inp
        torch.cuda.empty_cache()

    fields = ["shape", "batch", "seqlen", "heads_q", "heads_kv", "head_dim_qk", "head_dim_v", "impl", "kernel",
              "ms_median", "ms_min", "ms_max", "tflops", "anchor", "ratio_vs_anchor", "spot_rel_rms", "status",
              "zyfa_api", "sm_clock"]
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
    short = {"zyfa_fp8_lean": "lean", "zyfa_fp8_exact": "exact", "zyfa_int8_lean": "int8", "zyfa_bf16": "zbf16", "sdpa_cudnn_bf16": "cudnn",
             "sdpa_flash_bf16": "flash", "triton_fp8": "triton8", "cudnn_fp8": "cudnn8",
             "zyfa_fp8_lean_paged16": "lean-p16", "zyfa_fp8_lean_paged256": "lean-p256",
             "zyfa_bf16_paged16": "bf16-p16", "zyfa_bf16_paged256": "bf16-p256",
             "cudnn_bf16_paged16": "cdnn-p16", "cudnn_bf16_paged256": "cdnn-p256",
             "zyfa_fp8_lean_vt": "lean-vt", "zyfa_fp8_exact_vt": "exact-vt", "zyfa_fp8_lean_bias": "lean-kb",
             "zyfa_fp8_exact_bias": "exact-kb"}
    # (column title, zyfa implementation, anchor); cudnn8 is cuDNN FP8 with e4m3 output.
    ratios = [("int8/lean", "zyfa_int8_lean", "zyfa_fp8_lean"), ("lean/tri", "zyfa_fp8_lean", "triton_fp8"), ("exact/tri", "zyfa_fp8_exact", "triton_fp8"),
              ("lean/cdnn8", "zyfa_fp8_lean", "cudnn_fp8"), ("exact/cdnn8", "zyfa_fp8_exact", "cudnn_fp8"),
              ("bf16/cudnn", "zyfa_bf16", "sdpa_cudnn_bf16"), ("bf16/flash", "zyfa_bf16", "sdpa_flash_bf16"),
              ("lean p16/c", "zyfa_fp8_lean_paged16", "zyfa_fp8_lean"),
              ("lean p256/c", "zyfa_fp8_lean_paged256", "zyfa_fp8_lean"),
              ("bf16 p16/c", "zyfa_bf16_paged16", "zyfa_bf16"), ("bf16 p256/c", "zyfa_bf16_paged256", "zyfa_bf16"),
              ("p16/cdnn-p", "zyfa_bf16_paged16", "cudnn_bf16_paged16"),
              ("p256/cdnn-p", "zyfa_bf16_paged256", "cudnn_bf16_paged256"),
              ("lean vt/rm", "zyfa_fp8_lean_vt", "zyfa_fp8_lean"), ("lean vt/cdnn8", "zyfa_fp8_lean_vt", "cudnn_fp8"),
              ("exact vt/rm", "zyfa_fp8_exact_vt", "zyfa_fp8_exact"), ("lean kb/lean", "zyfa_fp8_lean_bias", "zyfa_fp8_lean"),
              ("exact kb/exact", "zyfa_fp8_exact_bias", "zyfa_fp8_exact")]
    header = "%-24s %6s " % ("shape", "seqlen") + " ".join("%7s" % short[i] for i in args.impls) + \
        " " + " ".join("%11s" % title for title, _, _ in ratios)
    log(header)
    for name, batch, seqlen, *_ in shapes(args):
        vals = {i: by_key[(name, seqlen, i)]["tflops"] if (name, seqlen, i) in by_key else "" for i in args.impls}

        def ratio(a, b):
            return "%.2f" % (float(vals[a]) / float(vals[b])) if vals.get(a) and vals.get(b) else "-"

        log("%-24s %6d " % (name[:24], seqlen) + " ".join("%7s" % (vals[i] or "-") for i in args.impls) +
            " " + " ".join("%11s" % ratio(a, b) for _, a, b in ratios))
    bad = [i for i, (_, ok) in spot.items() if not ok]
    log("spot check: %s" % ("all ok" if not bad else "FAILED or unavailable: " + ", ".join(bad)))
    log("csv: %s" % os.path.abspath(args.csv))
    return 1 if any(i.startswith("zyfa_") for i in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
