//! The CPU backend through the safe layer against a Rust fp64 reference, and the error paths.
use std::sync::Arc;
use zyfa::*;

/// Deterministic pseudo-random values in [-1, 1) (a 64-bit LCG; no crates needed).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

/// fp64 attention of one sequence; q [sq, hq, d], k [sk, hkv, d], v [sk, hkv, dv] (row-major).
/// Returns o [sq, hq, dv] and lse [hq, sq] (docs/api.md: key j visible when the mask and window
/// conditions hold; d = 0 for Causal, sk - sq otherwise).
#[allow(clippy::too_many_arguments)]
fn reference(q: &[f64], k: &[f64], v: &[f64], sq: usize, sk: usize, hq: usize, hkv: usize, d: usize, dv: usize,
             mask: Mask, window: (i32, i32)) -> (Vec<f64>, Vec<f64>) {
    let scale = 1.0 / (d as f64).sqrt();
    let diag = if mask == Mask::Causal { 0 } else { sk as i64 - sq as i64 };
    let mut o = vec![0.0; sq * hq * dv];
    let mut lse = vec![f64::NEG_INFINITY; hq * sq];
    for h in 0..hq {
        let kh = h / (hq / hkv);
        for i in 0..sq {
            let visible = |j: usize| {
                let (i, j) = (i as i64, j as i64);
                (mask == Mask::None || j <= i + diag)
                    && (window.0 < 0 || j >= i + diag - window.0 as i64)
                    && (window.1 < 0 || j <= i + diag + window.1 as i64)
            };
            let scores: Vec<Option<f64>> = (0..sk)
                .map(|j| {
                    if !visible(j) {
                        return None;
                    }
                    let dot: f64 = (0..d).map(|x| q[(i * hq + h) * d + x] * k[(j * hkv + kh) * d + x]).sum();
                    Some(scale * dot)
                })
                .collect();
            let max = scores.iter().flatten().cloned().fold(f64::NEG_INFINITY, f64::max);
            if max == f64::NEG_INFINITY {
                continue;
            }
            let mut sum = 0.0;
            for (j, s) in scores.iter().enumerate() {
                if let Some(s) = s {
                    let p = (s - max).exp();
                    sum += p;
                    for x in 0..dv {
                        o[(i * hq + h) * dv + x] += p * v[(j * hkv + kh) * dv + x];
                    }
                }
            }
            for x in 0..dv {
                o[(i * hq + h) * dv + x] /= sum;
            }
            lse[h * sq + i] = max + sum.ln();
        }
    }
    (o, lse)
}

fn rel_rms(x: &[f32], reference: &[f64]) -> f64 {
    let err2: f64 = x.iter().zip(reference).map(|(a, b)| (*a as f64 - b).powi(2)).sum();
    let ref2: f64 = reference.iter().map(|b| b * b).sum();
    (err2 / ref2).sqrt()
}

fn widen(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&a| a as f64).collect()
}

// Tolerances as tests/cpu/reference_check.hpp derives them: relative RMS of O within the largest
// rounding of one element of P (fp32: 1e-5; bf16 P and output: 2^-9 each; FP8 Lean P: 8.5%),
// lse within 1e-4 (exact fp32 sums) or 0.085 (Lean: rounded probabilities).
const FP32_TOL: f64 = 1e-5;
const BF16_TOL: f64 = 2.0 / 512.0;
const LEAN_TOL: f64 = 0.085;

#[test]
fn fp32_masks_windows_gqa_against_fp64() {
    let ctx = Context::new(&ContextOptions { backend: Backend::Cpu, num_threads: 2, ..Default::default() }).unwrap();
    assert_eq!(ctx.backend(), Backend::Cpu);
    assert_eq!(ctx.device_name(), "cpu");
    let (b, sq, sk, hq, hkv, d) = (2, 37, 70, 4, 2, 64);
    let q = values(b * sq * hq * d, 1);
    let k = values(b * sk * hkv * d, 2);
    let v = values(b * sk * hkv * d, 3);
    for (mask, window) in [(Mask::None, (-1, -1)), (Mask::Causal, (-1, -1)), (Mask::CausalBottomRight, (-1, -1)),
                           (Mask::None, (8, 3))] {
        let mut o = vec![0f32; b * sq * hq * d];
        let mut lse = vec![0f32; b * hq * sq];
        let opts = AttentionOptions { mask, window, ..Default::default() };
        ctx.attention(&opts, &Tensor::new(&q, [b, sq, hq, d]).unwrap(), &Tensor::new(&k, [b, sk, hkv, d]).unwrap(),
                      &Tensor::new(&v, [b, sk, hkv, d]).unwrap(), &mut TensorMut::new(&mut o, [b, sq, hq, d]).unwrap(),
                      Some(&mut lse))
            .unwrap();
        for batch in 0..b {
            let (qs, ks) = (sq * hq * d, sk * hkv * d);
            let (o_ref, lse_ref) = reference(&widen(&q[batch * qs..][..qs]), &widen(&k[batch * ks..][..ks]),
                                             &widen(&v[batch * ks..][..ks]), sq, sk, hq, hkv, d, d, mask, window);
            let err = rel_rms(&o[batch * qs..][..qs], &o_ref);
            assert!(err <= FP32_TOL, "{:?} {:?}: rel_rms {:e}", mask, window, err);
            for (x, r) in lse[batch * hq * sq..][..hq * sq].iter().zip(&lse_ref) {
                assert!((*x as f64 == *r) || (*x as f64 - r).abs() <= 1e-4, "lse {} vs {}", x, r);
            }
        }
    }
}

#[test]
fn bf16_varlen_against_fp64() {
    let ctx = Context::cpu().unwrap();
    let (hq, hkv, d) = (4, 1, 64);
    let cu_q = [0, 5, 5, 40];
    let cu_k = [0, 9, 12, 50];
    let to_bf16 = |x: Vec<f32>| x.into_iter().map(Bf16::from_f32).collect::<Vec<_>>();
    let q = to_bf16(values(40 * hq * d, 4));
    let k = to_bf16(values(50 * hkv * d, 5));
    let v = to_bf16(values(50 * hkv * d, 6));
    let mut o = vec![Bf16::default(); 40 * hq * d];
    let opts = AttentionOptions {
        mask: Mask::CausalBottomRight,
        varlen: Some(Varlen { cu_seqlens_q: &cu_q, cu_seqlens_k: &cu_k, max_seqlen_q: 35, max_seqlen_k: 38 }),
        ..Default::default()
    };
    let (qt, kt, vt) = (Tensor::packed(&q, [40, hq, d]).unwrap(), Tensor::packed(&k, [50, hkv, d]).unwrap(),
                        Tensor::packed(&v, [50, hkv, d]).unwrap());
    let mut ot = TensorMut::packed(&mut o, [40, hq, d]).unwrap();
    assert!(ctx.attention_kernel_name(&opts, &qt, &kt, &vt, &ot).unwrap().starts_with("cpu_"));
    ctx.attention(&opts, &qt, &kt, &vt, &mut ot, None).unwrap();
    let wide = |x: &[Bf16]| x.iter().map(|e| e.to_f32() as f64).collect::<Vec<_>>();
    for s in 0..3 {
        let (q0, q1, k0, k1) = (cu_q[s] as usize, cu_q[s + 1] as usize, cu_k[s] as usize, cu_k[s + 1] as usize);
        if q1 == q0 {
            continue;
        }
        let (o_ref, _) = reference(&wide(&q[q0 * hq * d..q1 * hq * d]), &wide(&k[k0 * hkv * d..k1 * hkv * d]),
                                   &wide(&v[k0 * hkv * d..k1 * hkv * d]), q1 - q0, k1 - k0, hq, hkv, d, d,
                                   Mask::CausalBottomRight, (-1, -1));
        let got: Vec<f32> = o[q0 * hq * d..q1 * hq * d].iter().map(|e| e.to_f32()).collect();
        let err = rel_rms(&got, &o_ref);
        assert!(err <= BF16_TOL, "sequence {}: rel_rms {:e}", s, err);
    }
}

#[test]
fn fp8_quantized_with_descales_against_fp64() {
    let ctx = Context::cpu().unwrap();
    let (b, s, h, d) = (1, 64, 2, 128);
    let mut codes = Vec::new();
    let mut scales = Vec::new();
    for seed in 7..10 {
        let x = values(b * s * h * d, seed);
        let mut q8 = vec![E4m3fn::default(); x.len()];
        let mut descale = vec![0f32; b * h];
        ctx.quantize_fp8(&Tensor::new(&x, [b, s, h, d]).unwrap(), &mut TensorMut::new(&mut q8, [b, s, h, d]).unwrap(),
                         &mut descale, false, None)
            .unwrap();
        for head in 0..h {
            let amax = (0..s * d).map(|i| x[(i / d * h + head) * d + i % d].abs()).fold(0f32, f32::max);
            assert!((descale[head] - amax / 448.0).abs() <= 1e-6 * descale[head], "descale = amax / 448");
        }
        codes.push(q8);
        scales.push(descale);
    }
    let mut o = vec![0f32; b * s * h * d];
    let mut lse = vec![0f32; b * h * s];
    let opts = AttentionOptions {
        mask: Mask::Causal,
        softmax: Softmax::Lean,
        descale: Some(Descale { q: &scales[0], k: &scales[1], v: &scales[2] }),
        ..Default::default()
    };
    ctx.attention(&opts, &Tensor::new(&codes[0], [b, s, h, d]).unwrap(), &Tensor::new(&codes[1], [b, s, h, d]).unwrap(),
                  &Tensor::new(&codes[2], [b, s, h, d]).unwrap(), &mut TensorMut::new(&mut o, [b, s, h, d]).unwrap(),
                  Some(&mut lse))
        .unwrap();
    let dequant = |c: &[E4m3fn], sc: &[f32]| {
        c.iter().enumerate().map(|(i, e)| e.to_f32() as f64 * sc[(i / d) % h] as f64).collect::<Vec<_>>()
    };
    let (o_ref, lse_ref) = reference(&dequant(&codes[0], &scales[0]), &dequant(&codes[1], &scales[1]),
                                     &dequant(&codes[2], &scales[2]), s, s, h, h, d, d, Mask::Causal, (-1, -1));
    let err = rel_rms(&o, &o_ref);
    assert!(err <= LEAN_TOL, "rel_rms {:e}", err);
    for (x, r) in lse.iter().zip(&lse_ref) {
        assert!((*x as f64 - r).abs() <= LEAN_TOL, "lse {} vs {}", x, r);
    }
}

#[test]
fn key_block_0_is_64_and_128_steps_other_lean_blocks() {
    let ctx = Context::cpu().unwrap();
    let (b, s, h, d) = (1, 300, 2, 64);
    let mut codes = Vec::new();
    let mut scales = Vec::new();
    for seed in 21..24 {
        let x = values(b * s * h * d, seed);
        let mut c = vec![E4m3fn::default(); x.len()];
        let mut descale = vec![0f32; b * h];
        ctx.quantize_fp8(&Tensor::new(&x, [b, s, h, d]).unwrap(), &mut TensorMut::new(&mut c, [b, s, h, d]).unwrap(),
                         &mut descale, false, None)
            .unwrap();
        codes.push(c);
        scales.push(descale);
    }
    let run = |key_block: i32| {
        let opts = AttentionOptions {
            mask: Mask::Causal,
            descale: Some(Descale { q: &scales[0], k: &scales[1], v: &scales[2] }),
            key_block,
            ..Default::default()
        };
        let (qt, kt, vt) = (Tensor::new(&codes[0], [b, s, h, d]).unwrap(), Tensor::new(&codes[1], [b, s, h, d]).unwrap(),
                            Tensor::new(&codes[2], [b, s, h, d]).unwrap());
        let mut o = vec![7f32; b * s * h * d];
        let name = ctx.attention_kernel_name(&opts, &qt, &kt, &vt, &TensorMut::new(&mut o, [b, s, h, d]).unwrap());
        let result = ctx.attention(&opts, &qt, &kt, &vt, &mut TensorMut::new(&mut o, [b, s, h, d]).unwrap(), None);
        (name, result, o)
    };
    let (name0, r0, o0) = run(0);
    let (name64, r64, o64) = run(64);
    let (name128, r128, o128) = run(128);
    r0.unwrap();
    r64.unwrap();
    r128.unwrap();
    assert_eq!(name0.unwrap(), name64.unwrap());
    assert!(name128.unwrap().ends_with("_bk128"));
    assert!(o0.iter().zip(&o64).all(|(x, y)| x.to_bits() == y.to_bits()), "key_block 0 is 64, bit for bit");
    assert!(o0.iter().zip(&o128).any(|(x, y)| x.to_bits() != y.to_bits()), "128 moves LEAN's block scales");
    let (_, err, o) = run(63);
    let err = err.unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("params.key_block = 63"), "{}", err.message);
    assert!(o.iter().all(|&x| x == 7.0), "a failed call writes nothing");
}

#[test]
fn library_errors_carry_status_and_message() {
    let ctx = Context::cpu().unwrap();
    let (q, k) = (values(16 * 6 * 64, 1), values(16 * 4 * 64, 2));
    let mut o = vec![7f32; 16 * 6 * 64];
    let err = ctx
        .attention(&AttentionOptions::default(), &Tensor::new(&q, [1, 16, 6, 64]).unwrap(),
                   &Tensor::new(&k, [1, 16, 4, 64]).unwrap(), &Tensor::new(&k, [1, 16, 4, 64]).unwrap(),
                   &mut TensorMut::new(&mut o, [1, 16, 6, 64]).unwrap(), None)
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("heads"), "{}", err.message);
    assert!(err.to_string().starts_with("invalid argument: "));
    assert!(o.iter().all(|&x| x == 7.0), "a failed call writes nothing");

    let q = values(16 * 4 * 64, 3);
    let mut o = vec![0f32; q.len()];
    let t = Tensor::new(&q, [1, 16, 4, 64]).unwrap();
    let lean = AttentionOptions { softmax: Softmax::Lean, ..Default::default() };
    let err = ctx.attention(&lean, &t, &t, &t, &mut TensorMut::new(&mut o, [1, 16, 4, 64]).unwrap(), None).unwrap_err();
    assert_eq!(err.status, Status::NotSupported);
    assert_eq!(err.status.code(), zyfa::sys::ZYFA_ERROR_NOT_SUPPORTED);

    match Context::new(&ContextOptions { backend: Backend::Cuda, ..Default::default() }) {
        Ok(gpu) => assert_eq!(gpu.backend(), Backend::Cuda), // a CUDA build on a machine with a GPU
        Err(e) => assert!(matches!(e.status, Status::NotSupported | Status::NoDevice), "{}", e),
    }
}

#[test]
fn binding_checks_protect_the_slices() {
    let data = vec![0f32; 100];
    let err = Tensor::new(&data, [1, 4, 4, 8]).unwrap_err(); // 128 elements needed
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(Tensor::with_strides(&data, Shape::Batched([1, 4, 1, 8]), [0, 24, 0]).is_ok()); // spans 80
    assert!(Tensor::with_strides(&data, Shape::Batched([1, 5, 1, 8]), [0, 24, 0]).is_err()); // spans 104
    let ctx = Context::cpu().unwrap();
    let q = values(8 * 2 * 64, 1);
    let t = Tensor::new(&q, [1, 8, 2, 64]).unwrap();
    let mut o = vec![0f32; 8 * 2 * 32];
    let err = ctx
        .attention(&AttentionOptions::default(), &t, &t, &t, &mut TensorMut::new(&mut o, [1, 8, 2, 32]).unwrap(), None)
        .unwrap_err();
    assert!(err.message.contains("o has shape"), "{}", err.message);
    let packed = Tensor::packed(&q, [8, 2, 64]).unwrap();
    let mut o = vec![0f32; q.len()];
    let cu = [0, 9];
    let opts = AttentionOptions {
        varlen: Some(Varlen { cu_seqlens_q: &cu, cu_seqlens_k: &cu, max_seqlen_q: 9, max_seqlen_k: 9 }),
        ..Default::default()
    };
    let err = ctx
        .attention(&opts, &packed, &packed, &packed, &mut TensorMut::packed(&mut o, [8, 2, 64]).unwrap(), None)
        .unwrap_err();
    assert!(err.message.contains("cu_seqlens_q"), "{}", err.message);
}

#[test]
fn context_is_send_and_sync_and_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Context>();
    let ctx = Arc::new(Context::cpu().unwrap());
    let q = Arc::new(values(32 * 4 * 64, 11));
    let run = |ctx: &Context, q: &[f32]| {
        let mut o = vec![0f32; q.len()];
        let t = Tensor::new(q, [1, 32, 4, 64]).unwrap();
        let opts = AttentionOptions { mask: Mask::Causal, ..Default::default() };
        ctx.attention(&opts, &t, &t, &t, &mut TensorMut::new(&mut o, [1, 32, 4, 64]).unwrap(), None).unwrap();
        o
    };
    let expected = run(&ctx, &q);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (ctx, q) = (Arc::clone(&ctx), Arc::clone(&q));
            std::thread::spawn(move || run(&ctx, &q))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), expected, "the CPU backend is deterministic");
    }
}

#[test]
fn version_and_codecs() {
    assert!(library_is_compatible(), "library {} vs binding 0.1", version());
    assert!(build_info().contains("cpu"));
    assert_eq!(E4m3fn(0x7E).to_f32(), 448.0);
    assert_eq!(E4m3fnuz(0x7F).to_f32(), 240.0);
    assert!(E4m3fn(0x7F).to_f32().is_nan() && E4m3fnuz(0x80).to_f32().is_nan());
    assert_eq!(Bf16::from_f32(1.0 + 1.0 / 256.0).to_f32(), 1.0); // tie to even
    assert_eq!(Bf16::from_f32(1.0 + 3.0 / 256.0).to_f32(), 1.015625);
    assert_eq!(F16(0x3C00).to_f32(), 1.0);
}

#[test]
fn k_smoothing_returns_the_mean_and_quantises_the_rest() {
    let ctx = Context::cpu().unwrap();
    let (b, s, h, d) = (2, 40, 2, 64);
    // Keys with a per-channel offset shared by every token.
    let x: Vec<f32> = values(b * s * h * d, 31).iter().enumerate()
        .map(|(i, v)| v + 3.0 * (1 + (i % d) % 5) as f32 * if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let mut codes = vec![E4m3fn::default(); x.len()];
    let mut descale = vec![0f32; b * h];
    let mut mean = vec![0f32; b * h * d];
    ctx.quantize_fp8_smoothed(&Tensor::new(&x, [b, s, h, d]).unwrap(), &mut TensorMut::new(&mut codes, [b, s, h, d]).unwrap(),
                              &mut descale, &mut mean, false, None)
        .unwrap();
    for bi in 0..b {
        for hi in 0..h {
            for di in 0..d {
                let at = |si: usize| ((bi * s + si) * h + hi) * d + di;
                let want = (0..s).map(|si| x[at(si)] as f64).sum::<f64>() / s as f64;
                let got = mean[(bi * h + hi) * d + di];
                assert!((got as f64 - want).abs() <= 1e-6 * want.abs() + 1e-9, "mean {} vs {}", got, want);
                for si in 0..s {
                    // The codes hold x - mean: within half an e4m3 quantum (2^-4 relative, or half
                    // the subnormal quantum 2^-9 times the descale).
                    let y = x[at(si)] - got;
                    let back = codes[at(si)].to_f32() * descale[bi * h + hi];
                    let bound = (y.abs() / 16.0).max(descale[bi * h + hi] / 1024.0) * 1.00001 + 1e-6;
                    assert!((back - y).abs() <= bound, "{} vs {}", back, y);
                }
            }
        }
    }
    let mut short = vec![0f32; b * h * d - 1];
    let err = ctx.quantize_fp8_smoothed(&Tensor::new(&x, [b, s, h, d]).unwrap(),
                                        &mut TensorMut::new(&mut codes, [b, s, h, d]).unwrap(), &mut descale,
                                        &mut short, false, None)
        .unwrap_err();
    assert!(err.message.contains("mean has"), "{}", err.message);
}

/// zyfa_attn_merge: keys split in two ranges (mask None), each attended on its own with its lse,
/// merged, against the unsplit call. fp32 inputs keep P unrounded, so both results are the same
/// weighted sum up to fp32 rounding (sums of <= 70 terms, exp and log of the lse: well under 1e-5 of
/// |v| <= 1); -inf parts, all-inf rows and the errors through the safe layer.
#[test]
fn attention_merge_of_split_keys_equals_the_unsplit_call() {
    let ctx = Context::cpu().unwrap();
    let (b, sq, sk, h, d, cut) = (2, 5, 70, 2, 32, 29);
    let q = values(b * sq * h * d, 31);
    let k = values(b * sk * h * d, 32);
    let v = values(b * sk * h * d, 33);
    let opts = AttentionOptions::default();
    let run = |k0: usize, k1: usize| {
        // Rows k0..k1 of every batch: a strided view of the same k and v.
        let stride = [(sk * h * d) as i64, (h * d) as i64, d as i64];
        let shape = Shape::Batched([b, k1 - k0, h, d]);
        let kt = Tensor::with_strides(&k[k0 * h * d..], shape, stride).unwrap();
        let vt = Tensor::with_strides(&v[k0 * h * d..], shape, stride).unwrap();
        let mut o = vec![0f32; b * sq * h * d];
        let mut lse = vec![0f32; b * h * sq];
        ctx.attention(&opts, &Tensor::new(&q, [b, sq, h, d]).unwrap(), &kt, &vt,
                      &mut TensorMut::new(&mut o, [b, sq, h, d]).unwrap(), Some(&mut lse))
            .unwrap();
        (o, lse)
    };
    let (o_full, lse_full) = run(0, sk);
    let (o_a, lse_a) = run(0, cut);
    let (o_b, lse_b) = run(cut, sk);
    let mut o = vec![0f32; b * sq * h * d];
    let mut lse = vec![0f32; b * h * sq];
    let parts = [Tensor::new(&o_a, [b, sq, h, d]).unwrap(), Tensor::new(&o_b, [b, sq, h, d]).unwrap()];
    ctx.attention_merge(&[&parts[0], &parts[1]], &[&lse_a, &lse_b], &mut TensorMut::new(&mut o, [b, sq, h, d]).unwrap(),
                        Some(&mut lse), None)
        .unwrap();
    for (x, r) in o.iter().zip(&o_full) {
        assert!((x - r).abs() <= 1e-5, "merged {} vs unsplit {}", x, r);
    }
    for (x, r) in lse.iter().zip(&lse_full) {
        assert!((x - r).abs() <= 1e-5, "merged lse {} vs unsplit {}", x, r);
    }

    // A part with lse -inf adds nothing (its O is not read); every part -inf: O = 0, lse = -inf.
    let mut lse_a2 = lse_a.clone();
    let mut lse_b2 = lse_b.clone();
    let mut o_a2 = o_a.clone();
    lse_a2[0] = f32::NEG_INFINITY;
    o_a2[0] = f32::NAN;
    lse_a2[1] = f32::NEG_INFINITY;
    lse_b2[1] = f32::NEG_INFINITY;
    let parts = [Tensor::new(&o_a2, [b, sq, h, d]).unwrap(), Tensor::new(&o_b, [b, sq, h, d]).unwrap()];
    ctx.attention_merge(&[&parts[0], &parts[1]], &[&lse_a2, &lse_b2], &mut TensorMut::new(&mut o, [b, sq, h, d]).unwrap(),
                        Some(&mut lse), None)
        .unwrap();
    assert_eq!(o[0], o_b[0]); // (b 0, s 0, h 0): part b alone, weight exactly 1
    assert_eq!(lse[0], lse_b[0]);
    assert_eq!(lse[1], f32::NEG_INFINITY); // lse index 1 = (b 0, h 0, s 1)
    assert!(o[h * d..][..d].iter().all(|&x| x == 0.0)); // row (b 0, s 1, h 0)

    // Errors: a short lse is refused by the binding, a head dim of 0 by the library (naming it).
    let part = Tensor::new(&o_a, [b, sq, h, d]).unwrap();
    let err = ctx.attention_merge(&[&part], &[&lse_a[..3]], &mut TensorMut::new(&mut o, [b, sq, h, d]).unwrap(), None,
                                  None)
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    let (empty_part, mut empty_o): (Vec<f32>, Vec<f32>) = (vec![], vec![]);
    let part = Tensor::new(&empty_part, [b, sq, h, 0]).unwrap();
    let err = ctx.attention_merge(&[&part], &[&lse_a], &mut TensorMut::new(&mut empty_o, [b, sq, h, 0]).unwrap(),
                                  None, None)
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("params.head_dim_v = 0"), "{}", err.message);
}

/// Attention sinks: -inf is no sink bit for bit; a finite sink joins each row's denominator only,
/// so lse' = ln(e^lse + e^sink) and O' = O e^(lse - lse') from the call without sinks; rows that
/// see no key get O = 0 and lse = the sink; a slice of the wrong length is refused.
#[test]
fn sinks_join_the_denominator_only() {
    let ctx = Context::cpu().unwrap();
    let (sq, sk, h, d) = (24usize, 16usize, 2usize, 64usize); // bottom-right: rows 0..8 see no key
    let (q, k, v) = (values(sq * h * d, 31), values(sk * h * d, 32), values(sk * h * d, 33));
    let run = |sinks: Option<&[f32]>| -> Result<(Vec<f32>, Vec<f32>)> {
        let mut o = vec![0f32; sq * h * d];
        let mut lse = vec![0f32; h * sq];
        let opts = AttentionOptions { mask: Mask::CausalBottomRight, sinks, ..Default::default() };
        ctx.attention(&opts, &Tensor::new(&q, [1, sq, h, d]).unwrap(), &Tensor::new(&k, [1, sk, h, d]).unwrap(),
                      &Tensor::new(&v, [1, sk, h, d]).unwrap(), &mut TensorMut::new(&mut o, [1, sq, h, d]).unwrap(),
                      Some(&mut lse))?;
        Ok((o, lse))
    };
    let (o0, lse0) = run(None).unwrap();
    let (o_inf, lse_inf) = run(Some(&[f32::NEG_INFINITY, f32::NEG_INFINITY])).unwrap();
    assert!(o0.iter().zip(&o_inf).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(lse0.iter().zip(&lse_inf).all(|(a, b)| a.to_bits() == b.to_bits()));
    let sinks = [0.5f32, -1.5];
    let (o1, lse1) = run(Some(&sinks)).unwrap();
    for head in 0..h {
        for i in 0..sq {
            let (l0, l1, s) = (lse0[head * sq + i] as f64, lse1[head * sq + i] as f64, sinks[head] as f64);
            let want = if i < 8 { s } else { l0.max(s) + (-(l0 - s).abs()).exp().ln_1p() };
            assert!((l1 - want).abs() <= 1e-5 * want.abs().max(1.0), "head {} row {}: {} vs {}", head, i, l1, want);
            for x in 0..d {
                let at = (i * h + head) * d + x;
                let expected = if i < 8 { 0.0 } else { o0[at] as f64 * (l0 - want).exp() };
                assert!((o1[at] as f64 - expected).abs() <= 1e-5, "head {} row {}: {} vs {}", head, i, o1[at], expected);
            }
        }
    }
    let err = run(Some(&[1.0])).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("sinks"), "{}", err.message);
}

#[test]
fn paged_kv_equals_contiguous_bit_for_bit() {
    let ctx = Context::cpu().unwrap();
    let (b, sq, sk, h, d, page) = (2, 24, 70, 2, 32, 16);
    let q = values(b * sq * h * d, 31);
    let k = values(b * sk * h * d, 32);
    let v = values(b * sk * h * d, 33);
    let opts = AttentionOptions { mask: Mask::CausalBottomRight, ..Default::default() };
    let mut o = vec![0f32; b * sq * h * d];
    ctx.attention(&opts, &Tensor::new(&q, [b, sq, h, d]).unwrap(), &Tensor::new(&k, [b, sk, h, d]).unwrap(),
                  &Tensor::new(&v, [b, sk, h, d]).unwrap(), &mut TensorMut::new(&mut o, [b, sq, h, d]).unwrap(), None)
        .unwrap();
    // The same keys in pages, the sequences' pages interleaved, the unused rows NaN.
    let pages_per_seq = (sk + page - 1) / page;
    let num_pages = b * pages_per_seq;
    let (mut kp, mut vp) = (vec![f32::NAN; num_pages * page * h * d], vec![f32::NAN; num_pages * page * h * d]);
    let mut table = vec![0i32; b * pages_per_seq];
    for s in 0..b {
        for p in 0..pages_per_seq {
            let index = p * b + (b - 1 - s);
            table[s * pages_per_seq + p] = index as i32;
            for r in 0..page.min(sk - p * page) {
                let (src, dst) = (((s * sk) + p * page + r) * h * d, (index * page + r) * h * d);
                kp[dst..dst + h * d].copy_from_slice(&k[src..src + h * d]);
                vp[dst..dst + h * d].copy_from_slice(&v[src..src + h * d]);
            }
        }
    }
    let used = vec![sk as i32; b];
    let paged_opts = AttentionOptions {
        paged: Some(Paged { block_table: &table, block_table_stride: pages_per_seq, seqused_k: Some(&used),
                            max_seqlen_k: sk }),
        ..opts
    };
    let mut op = vec![0f32; b * sq * h * d];
    ctx.attention(&paged_opts, &Tensor::new(&q, [b, sq, h, d]).unwrap(),
                  &Tensor::new(&kp, [num_pages, page, h, d]).unwrap(), &Tensor::new(&vp, [num_pages, page, h, d]).unwrap(),
                  &mut TensorMut::new(&mut op, [b, sq, h, d]).unwrap(), None)
        .unwrap();
    assert!(o.iter().zip(&op).all(|(x, y)| x.to_bits() == y.to_bits()), "paged == contiguous, bit for bit");
}
