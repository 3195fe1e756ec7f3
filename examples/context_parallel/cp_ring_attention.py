"""Context-parallel causal prefill: zig-zag ring attention over torch.distributed with zyfa as the
attention kernel and zyfa.attention_merge combining the partial results.

The sequence is cut into 2W chunks; rank r owns chunks r and 2W-1-r of Q, K and V (cp_ring.py
says why). K/V travel around the ring, rank r -> r+1, one batch_isend_irecv per step, issued before
the attention on the K/V the rank already holds, so the transfer overlaps the compute. Each rank
calls zyfa.attention (with lse) on its query chunks against the K/V it holds, with the mask the
pair needs, and merges the fp32 partial (O, lse) with zyfa.attention_merge.

NCCL with CUDA tensors and zyfa's CUDA backend where there are GPUs; gloo with CPU tensors and
zyfa's CPU backend otherwise: the same code.

    torchrun --nproc_per_node=2 examples/context_parallel/cp_ring_attention.py --seqlen 32768 --check
    torchrun --nproc_per_node=2 examples/context_parallel/cp_ring_attention.py --seqlen 131072 --bench
    python3 examples/context_parallel/cp_ring_attention.py --backend cpu --nproc 2 --seqlen 2048 --check

--check compares the ring's O and lse with one zyfa call on the whole sequence (every rank for
its own rows) against the merge's stated bounds; --bench times one device on the whole sequence
against the ring. Exit status 1 when a check fails.
"""
import os

# NVLink multicast (NVLS) off, before torch or NCCL read the environment: the device machines
# require it (a program using multicast can take the host's shared GPUs out of service). Forced,
# not defaulted, so an inherited "1" cannot turn it back on.
for _name, _value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
                      ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_name] = _value

import argparse  # noqa: E402
import math  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cp_ring  # noqa: E402
import zyfa  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["auto", "cuda", "cpu"], default="auto",
                   help="cuda: NCCL + zyfa CUDA; cpu: gloo + zyfa CPU; auto: cuda when torch sees a GPU")
    p.add_argument("--nproc", type=int, default=None,
                   help="start this many local ranks (torch.multiprocessing) instead of running under torchrun")
    p.add_argument("--seqlen", type=int, default=32768, help="tokens of the one sequence (batch 1)")
    p.add_argument("--heads", type=int, default=None, help="query heads (default 32 on GPUs, 4 on the CPU)")
    p.add_argument("--heads-kv", type=int, default=None, help="K/V heads (default 8 on GPUs, 2 on the CPU)")
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--dtype", default="fp8,bf16", help="comma list of fp8 (e4m3fn) and bf16")
    p.add_argument("--softmax", default="exact,lean", help="comma list of exact and lean (lean: fp8 only)")
    p.add_argument("--inputs", default="gaussian,sink",
                   help="--check inputs: gaussian, and sink (the row maximum at every chunk start, "
                        "where the ring must equal the single call to fp32 rounding)")
    p.add_argument("--check", action="store_true", help="compare with one zyfa call on the whole sequence")
    p.add_argument("--bench", action="store_true", help="time one device on the whole sequence against the ring")
    p.add_argument("--repeats", type=int, default=10, help="--bench: timed runs (median), after 2 warm-ups")
    p.add_argument("--threads", type=int, default=0, help="CPU backend threads per rank (0: cores / ranks)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    if not a.check and not a.bench:
        a.check = True
    a.dtypes = [d for d in a.dtype.split(",") if d]
    a.softmaxes = [s for s in a.softmax.split(",") if s]
    a.inputs_list = [i for i in a.inputs.split(",") if i]
    for name, values, allowed in (("--dtype", a.dtypes, ("fp8", "bf16")), ("--softmax", a.softmaxes, ("exact", "lean")),
                                  ("--inputs", a.inputs_list, ("gaussian", "sink"))):
        bad = [x for x in values if x not in allowed]
        if bad or not values:
            p.error("%s takes a comma list of %s, got %r" % (name, ", ".join(allowed), ",".join(values)))
    return a


def configs(a):
    """(dtype, softmax) pairs to run; LEAN exists for FP8 inputs only."""
    return [(d, s) for d in a.dtypes for s in a.softmaxes if not (d == "bf16" and s == "lean")]


# ---- inputs ----------------------------------------------------------------------------------

def make_inputs(a, dtype, inputs, device, world, rank):
    """The whole sequence's q, k, v in zyfa's input dtype, made on rank 0 and broadcast (as raw bytes,
    which every backend carries), with FP8 descales; FP8 is quantised once over the sequence so the
    ring and the single call read the same codes and scales. Returns (q, k, v, descale, max|v|)."""
    shapes = [(1, a.seqlen, a.heads, a.head_dim), (1, a.seqlen, a.heads_kv, a.head_dim),
              (1, a.seqlen, a.heads_kv, a.head_dim)]
    elem = torch.float8_e4m3fn if dtype == "fp8" else torch.bfloat16
    descale = [torch.empty((1, a.heads_kv), dtype=torch.float32, device=device) for _ in range(3)]
    if rank == 0:
        g = torch.Generator(device=device).manual_seed(a.seed)
        q, k, v = (torch.randn(s, generator=g, device=device, dtype=torch.float32) for s in shapes)
        if inputs == "sink":
            cp_ring.make_sinks(q, k, cp_ring.chunk_len(a.seqlen, world))
        if dtype == "fp8":
            (q, descale[0]), (k, descale[1]), (v, descale[2]) = (
                zyfa.quantize_fp8(q, heads_kv=a.heads_kv), zyfa.quantize_fp8(k), zyfa.quantize_fp8(v))
        else:
            q, k, v = (x.to(torch.bfloat16) for x in (q, k, v))
    else:
        q, k, v = (torch.empty(s, dtype=elem, device=device) for s in shapes)
    for x in (q, k, v):
        dist.broadcast(as_bytes(x), src=0)
    if dtype == "fp8":
        for d in descale:
            dist.broadcast(d, src=0)
        max_v = float((v.float().abs() * descale[2][:, None, :, None]).max())
        return q, k, v, tuple(descale), max_v
    return q, k, v, None, float(v.float().abs().max())


def as_bytes(x):
    """A contiguous tensor's bytes as a uint8 view: NCCL and gloo carry uint8 whatever the element."""
    return x.view(torch.uint8) if x.element_size() == 1 else x.view(torch.uint8).view(-1)


def local_rows(x, rank, world):
    """The rank's zig-zag rows [chunk r; chunk 2W-1-r] of a [batch, S, ...] tensor, contiguous."""
    return torch.cat([x[:, t0:t1] for t0, t1 in cp_ring.local_token_ranges(rank, world, x.shape[1])],
                     dim=1).contiguous()


# ---- the ring --------------------------------------------------------------------------------

def ring_attention(q_local, kv_local, rank, world, attn_kwargs, context, communicate=True):
    """Ring attention for this rank's rows: returns the cp_ring.Accumulator (fp32 O and lse per half).

    kv_local: this rank's [2, batch, 2c, heads_kv, dim] K and V in one tensor, so each step moves
    one buffer. Step s computes on the K/V of rank r - s while the K/V of rank r - s - 1 arrives:
    the send of the current buffer and the receive of the next are issued first. Two receive
    buffers alternate; the one a step receives into was computed on two steps before, work that
    NCCL orders before the receive (it makes its stream wait for the current stream at issue) and
    that the CPU backend has finished (its calls are synchronous). kv_local itself is only sent, so
    it survives for the next call. communicate=False computes the same steps on kv_local without
    transfers (the bench's compute-only time)."""
    c = q_local.shape[1] // 2
    acc = cp_ring.Accumulator(context)
    recv = [torch.empty_like(kv_local), torch.empty_like(kv_local)] if communicate and world > 1 else None
    send_to, recv_from = (rank + 1) % world, (rank - 1) % world
    cur = kv_local
    for step in range(world):
        reqs = []
        if recv is not None and step + 1 < world:
            nxt = recv[step % 2]
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, as_bytes(cur), send_to),
                                           dist.P2POp(dist.irecv, as_bytes(nxt), recv_from)])
        src = cp_ring.ring_source(rank, world, step)
        cp_ring.attend(acc, q_local, cur[0], cur[1], rank, src, world, c, attn_kwargs)
        for r in reqs:
            r.wait()
        if reqs:
            cur = nxt
    return acc


# ---- check and bench -------------------------------------------------------------------------

def check(a, dtype, softmax, inputs, device, rank, world, context):
    """Ring vs one zyfa call on the whole sequence, every rank for its own rows, reduced to rank 0."""
    q, k, v, descale, max_v = make_inputs(a, dtype, inputs, device, world, rank)
    kwargs = {"softmax": softmax, "descale": descale, "context": context}
    single_o, single_lse = zyfa.attention(q, k, v, causal="bottom_right", return_lse=True, out_dtype="fp32",
                                          **kwargs)
    q_local = local_rows(q, rank, world)
    kv_local = torch.stack([local_rows(k, rank, world), local_rows(v, rank, world)])
    acc = ring_attention(q_local, kv_local, rank, world, kwargs, context)
    o_max, lse_min, lse_max = cp_ring.differences(acc, single_o, single_lse,
                                                  cp_ring.local_token_ranges(rank, world, a.seqlen))
    # NaN -> inf before the reduction (max of NaN is backend-defined); inf fails every bound.
    vals = [o_max, -lse_min, lse_max, float(single_lse.abs().max())]
    t = torch.tensor([math.inf if math.isnan(x) else x for x in vals], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    o_max, lse_min, lse_max, max_lse = float(t[0]), -float(t[1]), float(t[2]), float(t[3])
    if inputs == "sink":
        # B counted in 64-key blocks: the most any backend steps (CUDA's FP8 kernels step 128).
        bounds = cp_ring.tight_bounds(world, a.seqlen, 64, max_v, max_lse)
    else:
        bounds = cp_ring.general_bounds(softmax, dtype, a.seqlen, max_v)
    ok = cp_ring.verdict((o_max, lse_min, lse_max), *bounds)
    lse_bound = bounds[1] if isinstance(bounds[1], tuple) else (-bounds[1], bounds[1])
    if rank == 0:
        print("check W=%d S=%d %s %s %s: |O_ring - O_single| max %.3g (bound %.3g), lse_ring - lse_single "
              "in [%.3g, %.3g] (bound [%.3g, %.3g]), max|v| %.3g: %s" % (
                  world, a.seqlen, dtype, softmax.upper(), inputs, o_max, bounds[0], lse_min, lse_max,
                  lse_bound[0], lse_bound[1], max_v, "OK" if ok else "FAIL"), flush=True)
    return ok


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device, repeats):
    """Median wall seconds of fn() over repeats, after two warm-ups (contexts, allocator, NCCL)."""
    times = []
    for i in range(repeats + 2):
        synchronize(device)
        t0 = time.perf_counter()
        fn()
        synchronize(device)
        if i >= 2:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(a, dtype, softmax, device, rank, world, context):
    """One device on the whole sequence (rank 0 alone, the others waiting) against the ring (all
    ranks; a run's time is the slowest rank's) and the ring's steps without transfers."""
    q, k, v, descale, _ = make_inputs(a, dtype, "gaussian", device, world, rank)
    kwargs = {"softmax": softmax, "descale": descale, "context": context}
    one = None
    if rank == 0:
        # What a one-device prefill writes: O in bf16, no lse.
        one = timed(lambda: zyfa.attention(q, k, v, causal="bottom_right", **kwargs), device, a.repeats)
    dist.barrier()
    q_local = local_rows(q, rank, world)
    kv_local = torch.stack([local_rows(k, rank, world), local_rows(v, rank, world)])

    def ring(communicate):
        def run():
            acc = ring_attention(q_local, kv_local, rank, world, kwargs, context, communicate)
            return [o.to(torch.bfloat16) for o in acc.o]  # the ring's product in the same dtype
        return run

    results = []
    for communicate in (True, False):
        times = []
        for i in range(a.repeats + 2):
            dist.barrier()
            synchronize(device)
            t0 = time.perf_counter()
            ring(communicate)()
            synchronize(device)
            t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=device)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            if i >= 2:
                times.append(float(t[0]))
        results.append(statistics.median(times))
    if rank == 0:
        # Causal forward FLOPs as docs/performance.md counts them: 2 matmuls of 2 flops per
        # multiply-add over half the S x S scores.
        flops = 4.0 * 0.5 * a.seqlen * a.seqlen * a.heads * a.head_dim
        print("bench W=%d S=%d heads %d/%d dim %d %s %s on %s: one device %.2f ms (%.3g TFLOP/s), ring "
              "%.2f ms (%.3g TFLOP/s; its attention and merges without transfers %.2f ms), speed-up %.2fx" % (
                  world, a.seqlen, a.heads, a.heads_kv, a.head_dim, dtype, softmax.upper(), device_name(device),
                  one * 1e3, flops / one / 1e12, results[0] * 1e3, flops / results[0] / 1e12, results[1] * 1e3,
                  one / results[0]), flush=True)


def device_name(device):
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (zyfa CPU backend)"


# ---- processes -------------------------------------------------------------------------------

def worker(rank, world, a):
    use_cuda = a.backend == "cuda" or (a.backend == "auto" and torch.cuda.is_available())
    if use_cuda:
        local_rank = int(os.environ.get("LOCAL_RANK", rank))
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", rank=rank, world_size=world)
        context = zyfa.Context("cuda", device=local_rank)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", rank=rank, world_size=world)
        threads = a.threads or max(1, (os.cpu_count() or 1) // world)
        context = zyfa.Context("cpu", num_threads=threads)
    if a.heads is None:
        a.heads = 32 if use_cuda else 4
    if a.heads_kv is None:
        a.heads_kv = 8 if use_cuda else 2
    ok = True
    try:
        cp_ring.chunk_len(a.seqlen, world)
        if rank == 0:
            print("zyfa %s (%s); torch %s, %s, %d ranks, %s; NCCL_NVLS_ENABLE=%s" % (
                zyfa.version(), zyfa.library_path(), torch.__version__, dist.get_backend(), world,
                device_name(device), os.environ["NCCL_NVLS_ENABLE"]), flush=True)
        with torch.inference_mode():
            for dtype, softmax in configs(a):
                if a.check:
                    for inputs in a.inputs_list:
                        ok &= check(a, dtype, softmax, inputs, device, rank, world, context)
                if a.bench:
                    bench(a, dtype, softmax, device, rank, world, context)
    finally:
        dist.destroy_process_group()
        context.close()
    if not ok:
        sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    a = parse_args(argv)
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # under torchrun
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), a)
        return
    nproc = a.nproc or 1
    # Ranks started here are all on this machine: rendezvous and gloo's traffic stay on the
    # loopback interface (gloo otherwise picks the interface the host name resolves to).
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    if nproc == 1:
        worker(0, 1, a)
        return
    import torch.multiprocessing as mp
    try:
        mp.spawn(worker, args=(nproc, a), nprocs=nproc, join=True)
    except mp.ProcessExitedException as e:
        print("cp_ring_attention: %s" % e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
