"""The warp-specialised kernels against other builds of them and the anchors, in one process.

Times zyfa FP8 LEAN, FP8 EXACT and BF16 on the warp-specialised sm_90a kernels (every problem on
sm_90a), beside torch SDPA cuDNN / flash BF16 and the Triton FP8 kernel, on
bench/run_benchmark.py's inputs and timing (causal, head dim 128, batch * seqlen = 32K tokens, 16
heads). Each zyfa kernel is first checked against an fp32 torch reference on the same inputs
(seqlens <= 4096).
Usage: ws_ab_timing.py LIBRARY [--variant LABEL=LIBRARY2]... [SEQLEN...]   (device only)
--variant adds a mode: another build of libzyfa.so (say, with a kernel switch flipped, or an
earlier commit's tree), opened as its own zyfa caller. Until 2026-12-02 the modes also included
the older wgmma kernels and the cp.async producer, chosen by environment variables
(ZYFA_NVIDIA_WS, ZYFA_NVIDIA_TMA) that the library no longer reads; their figures are in
docs/performance.md and docs/hopper-kernel-notes.md.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import run_benchmark as rb  # noqa: E402


def main():
    library = sys.argv[1]
    variants, seqlens = [], []
    args = sys.argv[2:]
    while args:
        a = args.pop(0)
        if a == "--variant":
            label, path = args.pop(0).split("=", 1)
            variants.append((label, path))
        else:
            seqlens.append(int(a))
    seqlens = seqlens or [4096, 16384]
    import torch

    class Args:
        api = "ctypes"

    # "ws" uses the tensor memory accelerator where the problem allows (these inputs do).
    modes = [("ws", library)] + variants
    callers = {}
    for label, path in modes:
        Args.library = path
        callers[label] = rb.open_zyfa(Args, torch)
    zyfa = callers["ws"]
    print(zyfa.describe())
    table = []
    for seqlen in seqlens:
        batch, heads = max(1, 32768 // seqlen), 16
        flops = rb.causal_flops(batch, seqlen, heads, 128, 128)
        inp = rb.Inputs(torch, batch, seqlen, heads, heads, 128, 128)
        print("== causal hd128 batch %d seqlen %d heads %d" % (batch, seqlen, heads))
        ref = {}
        if seqlen <= 4096:
            for kind, (q, k, v) in (("bf16", (inp.q16, inp.k16, inp.v16)), ("fp8", (inp.q8, inp.k8, inp.v8))):
                qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
                ref[kind] = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True).transpose(1, 2)
        row = {"seqlen": seqlen}
        for impl in ["zyfa_fp8_lean", "zyfa_fp8_exact", "zyfa_bf16"]:
            for label, _ in modes:
                launch, kernel = rb.make_launch(impl, torch, callers[label], inp)
                err = ""
                if ref:
                    inp.out.fill_(float("nan"))
                    launch()
                    torch.cuda.synchronize()
                    err = "rel_rms %.3e" % rb.rel_rms(inp.out.float(), ref["fp8" if "fp8" in impl else "bf16"])
                median, lo, hi = rb.time_launch(torch, launch, 7, 1000.0)
                row[impl + "/" + label] = flops / median / 1e9
                print("  %-15s %-6s %8.3f ms %7.1f TFLOP/s (min %.1f)  %s %s" %
                      (impl, label, median, flops / median / 1e9, flops / hi / 1e9, kernel, err), flush=True)
        for impl in ["sdpa_cudnn_bf16", "sdpa_flash_bf16", "triton_fp8"]:
            try:
                launch, kernel = rb.make_launch(impl, torch, zyfa, inp)
                median, lo, hi = rb.time_launch(torch, launch, 7, 1000.0)
                row[impl] = flops / median / 1e9
                print("  %-15s %-6s %8.3f ms %7.1f TFLOP/s  %s" % (impl, "anchor", median, flops / median / 1e9, kernel),
                      flush=True)
            except Exception as e:  # an anchor that does not run is reported, not fatal
                print("  %-15s unavailable: %s" % (impl, str(e).splitlines()[0][:160]))
        table.append(row)
        del inp
        torch.cuda.empty_cache()

    def get(row, key):
        return row.get(key, float("nan"))

    labels = [m[0] for m in modes]
    print("== summary (TFLOP/s): seqlen | " + " | ".join("%s lean, exact, bf16" % l for l in labels) +
          " | triton8 cudnn flash | ws lean/triton ws bf16/cudnn")
    for r in table:
        cols = " | ".join("%6.1f %6.1f %6.1f" % (get(r, "zyfa_fp8_lean/" + l), get(r, "zyfa_fp8_exact/" + l),
                                                 get(r, "zyfa_bf16/" + l)) for l in labels)
        print("%6d | %s | %6.1f %6.1f %6.1f | %5.2f %5.2f" % (
            r["seqlen"], cols, get(r, "triton_fp8"), get(r, "sdpa_cudnn_bf16"), get(r, "sdpa_flash_bf16"),
            get(r, "zyfa_fp8_lean/ws") / get(r, "triton_fp8"), get(r, "zyfa_bf16/ws") / get(r, "sdpa_cudnn_bf16")))


if __name__ == "__main__":
    main()
