"""The wgmma kernels against the mma.sync kernels and the anchors, in one process (device only).

Times zyfa FP8 LEAN, FP8 EXACT and BF16 with the sm_90a wgmma kernels (the default there) and with
ZYFA_NVIDIA_WGMMA=0 (the mma.sync kernels; read once when a context is created, so each mode opens
its own zyfa caller and context after setting it), beside torch SDPA
cuDNN / flash BF16 and the Triton FP8 kernel, on bench/run_benchmark.py's inputs and timing
(causal, head dim 128, batch * seqlen = 32K tokens, 16 heads). Each zyfa kernel is first checked
against an fp32 torch reference on the same inputs. Usage: wgmma_ab_timing.py LIBRARY [SEQLEN...]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import run_benchmark as rb  # noqa: E402


def main():
    library = sys.argv[1]
    seqlens = [int(s) for s in sys.argv[2:]] or [4096, 16384]
    import torch

    class Args:
        api = "ctypes"

    Args.library = library
    modes = [("wgmma", "1"), ("mma.sync", "0")]
    callers = {}
    for label, flag in modes:  # the variable is read at context creation: one caller per mode
        os.environ["ZYFA_NVIDIA_WGMMA"] = flag
        callers[label] = rb.open_zyfa(Args, torch)
    os.environ.pop("ZYFA_NVIDIA_WGMMA")
    zyfa = callers["wgmma"]
    print(zyfa.describe())
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
        for impl in ["zyfa_fp8_lean", "zyfa_fp8_exact", "zyfa_bf16"]:
            for label, _ in modes:
                launch, kernel = rb.make_launch(impl, torch, callers[label], inp)
                err = ""
                if ref:
                    inp.out.fill_(float("nan"))
                    launch()
                    torch.cuda.synchronize()
                    err = "rel_rms %.3e" % rb.rel_rms(inp.out.float(), ref["fp8" if "fp8" in impl else "bf16"])
                median, lo, hi = rb.time_launch(torch, launch, 5)
                print("  %-15s %-9s %8.3f ms %7.1f TFLOP/s  %s %s" % (impl, label, median, flops / median / 1e9,
                                                                     kernel, err), flush=True)
        for impl in ["sdpa_cudnn_bf16", "sdpa_flash_bf16", "triton_fp8"]:
            try:
                launch, kernel = rb.make_launch(impl, torch, zyfa, inp)
                median, lo, hi = rb.time_launch(torch, launch, 5)
                print("  %-15s %-9s %8.3f ms %7.1f TFLOP/s  %s" % (impl, "anchor", median, flops / median / 1e9, kernel),
                      flush=True)
            except Exception as e:  # an anchor that does not run is reported, not fatal
                print("  %-15s unavailable: %s" % (impl, str(e).splitlines()[0][:160]))
        del inp
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
