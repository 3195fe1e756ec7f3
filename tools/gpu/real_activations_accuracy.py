#!/usr/bin/env python3
"""FP8 kernel-only error of the CUDA kernels on the shipped real activations, beside the CPU model.

For each layer in tests/data/real-activations (SmolLM2-135M-Instruct, GQA 9/3, head dim 64, 1,024
tokens): Q, K and V quantised by zyfa.quantize_fp8 (Q one scale per kv head group), then causal
attention with LEAN and EXACT on the GPU (default context for CUDA tensors) and on the CPU model with
key_block 128 (the sm_90 FP8 kernels' instance), FP32 output. Reference: fp64 attention on the decoded
codes (the kernel's own error, no input quantisation). Prints O's relative RMS error against fp64
for both, the GPU's against the CPU model's, and the lse's max |difference| (GPU - CPU model, GPU -
fp64, CPU model - fp64).

Needs torch with CUDA and numpy; the library from $ZYFA_LIBRARY_PATH (or the usual search of
bindings/python/zyfa). Usage: ZYFA_LIBRARY_PATH=build-gpu/libzyfa.so python3 tools/gpu/real_activations_accuracy.py [LABEL]
"""
import os
import sys

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python", "tests"))
import zyfa  # noqa: E402
import reference as ref  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "real-activations")


def decoded(codes, descale, heads):
    """e4m3 codes [b, s, h, d] times a [b, h_scale] descale (adjacent heads share a scale)."""
    per_head = np.repeat(descale, heads // descale.shape[1], axis=1)
    return (zyfa.fp8_to_float32(codes) * per_head[:, None, :, None]).astype(np.float64)


def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    cpu = zyfa.Context("cpu", num_threads=os.cpu_count() or 2)
    for layer in sorted(d for d in os.listdir(DATA) if d.startswith("layer")):
        q, k, v = (np.load(os.path.join(DATA, layer, n + ".npy")).astype(np.float32)[None] for n in ("q", "k", "v"))
        heads_q, heads_kv = q.shape[2], k.shape[2]
        q8, qd = zyfa.quantize_fp8(q, heads_kv=heads_kv, context=cpu)
        k8, kd = zyfa.quantize_fp8(k, context=cpu)
        v8, vd = zyfa.quantize_fp8(v, context=cpu)
        o_ref, lse_ref = ref.attention(decoded(q8, qd, heads_q), decoded(k8, kd, heads_kv), decoded(v8, vd, heads_kv),
                                       ref.MASK_CAUSAL)
        on_gpu = lambda codes: torch.from_numpy(codes).view(torch.float8_e4m3fn).cuda()  # noqa: E731
        for softmax in ("lean", "exact"):
            o_cpu, lse_cpu = zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=(qd, kd, vd), causal="top_left",
                                            return_lse=True, softmax=softmax, key_block=128, context=cpu,
                                            out_dtype="fp32")
            o_gpu, lse_gpu = zyfa.attention(on_gpu(q8), on_gpu(k8), on_gpu(v8),
                                            descale=tuple(torch.from_numpy(d).cuda() for d in (qd, kd, vd)),
                                            causal="top_left", return_lse=True, softmax=softmax, out_dtype="fp32")
            o_gpu, lse_gpu = o_gpu.float().cpu().numpy(), lse_gpu.float().cpu().numpy()
            o_cpu, lse_cpu = np.asarray(o_cpu, dtype=np.float32), np.asarray(lse_cpu, dtype=np.float32)
            gpu_err, cpu_err = ref.rel_rms(o_gpu, o_ref), ref.rel_rms(o_cpu, o_ref)
            print("%s %s %-5s O rel_rms vs fp64: gpu %.4e, cpu model %.4e (gpu/cpu %.4f); gpu vs cpu model %.2e; "
                  "lse max |diff|: gpu - cpu model %.2e, gpu - fp64 %.3e, cpu model - fp64 %.3e" % (
                      label, layer, softmax, gpu_err, cpu_err, gpu_err / cpu_err, ref.rel_rms(o_gpu, o_cpu),
                      np.max(np.abs(lse_gpu - lse_cpu)), ref.lse_max_abs(lse_gpu, lse_ref),
                      ref.lse_max_abs(lse_cpu, lse_ref)), flush=True)


if __name__ == "__main__":
    main()
