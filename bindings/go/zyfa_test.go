package zyfa

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
)

// values returns deterministic pseudo-random numbers in [-1, 1) (a 64-bit LCG).
func values(n int, seed uint64) []float32 {
	state := seed*6364136223846793005 + 1442695040888963407
	out := make([]float32, n)
	for i := range out {
		state = state*6364136223846793005 + 1442695040888963407
		out[i] = float32(float64(state>>40)/float64(1<<24)*2 - 1)
	}
	return out
}

// reference is fp64 attention of one sequence: q [sq, hq, d], k [sk, hkv, d], v [sk, hkv, dv];
// returns o [sq, hq, dv] and lse [hq, sq] (docs/api.md visibility rule).
func reference(q, k, v []float64, sq, sk, hq, hkv, d, dv int, mask Mask, wl, wr int) ([]float64, []float64) {
	scale := 1 / math.Sqrt(float64(d))
	diag := sk - sq
	if mask == MaskCausal {
		diag = 0
	}
	o := make([]float64, sq*hq*dv)
	lse := make([]float64, hq*sq)
	for h := 0; h < hq; h++ {
		kh := h / (hq / hkv)
		for i := 0; i < sq; i++ {
			scores := make([]float64, sk)
			max := math.Inf(-1)
			for j := 0; j < sk; j++ {
				visible := (mask == MaskNone || j <= i+diag) && (wl < 0 || j >= i+diag-wl) && (wr < 0 || j <= i+diag+wr)
				scores[j] = math.Inf(-1)
				if !visible {
					continue
				}
				dot := 0.0
				for x := 0; x < d; x++ {
					dot += q[(i*hq+h)*d+x] * k[(j*hkv+kh)*d+x]
				}
				scores[j] = scale * dot
				max = math.Max(max, scores[j])
			}
			lse[h*sq+i] = math.Inf(-1)
			if math.IsInf(max, -1) {
				continue
			}
			sum := 0.0
			for j, s := range scores {
				if math.IsInf(s, -1) {
					continue
				}
				p := math.Exp(s - max)
				sum += p
				for x := 0; x < dv; x++ {
					o[(i*hq+h)*dv+x] += p * v[(j*hkv+kh)*dv+x]
				}
			}
			for x := 0; x < dv; x++ {
				o[(i*hq+h)*dv+x] /= sum
			}
			lse[h*sq+i] = max + math.Log(sum)
		}
	}
	return o, lse
}

func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, a := range x {
		out[i] = float64(a)
	}
	return out
}

func relRMS(x []float32, ref []float64) float64 {
	var err2, ref2 float64
	for i := range ref {
		err2 += (float64(x[i]) - ref[i]) * (float64(x[i]) - ref[i])
		ref2 += ref[i] * ref[i]
	}
	return math.Sqrt(err2 / ref2)
}

// Tolerances as tests/cpu/reference_check.hpp derives them: O's relative RMS within the largest
// rounding of one element of P (fp32 1e-5; FP8 Lean P 8.5%); lse 1e-4 (exact) or 0.085 (Lean).
const (
	fp32Tol = 1e-5
	leanTol = 0.085
)

func cpuContext(t *testing.T) *Context {
	t.Helper()
	ctx, err := NewContext(&ContextOptions{Backend: BackendCPU, NumThreads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// must(t)(Float32(...)) unwraps a view constructor's result, failing the test on an error.
func must(t *testing.T) func(Tensor, error) Tensor {
	return func(tensor Tensor, err error) Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tensor
	}
}

func TestFloat32AgainstFP64(t *testing.T) {
	ctx := cpuContext(t)
	if ctx.Backend() != BackendCPU || ctx.DeviceName() != "cpu" {
		t.Fatalf("backend %v device %q", ctx.Backend(), ctx.DeviceName())
	}
	b, sq, sk, hq, hkv, d := 2, 37, 70, 4, 2, 64
	q, k, v := values(b*sq*hq*d, 1), values(b*sk*hkv*d, 2), values(b*sk*hkv*d, 3)
	cases := []struct {
		mask   Mask
		window *Window
	}{{MaskNone, nil}, {MaskCausal, nil}, {MaskCausalBottomRight, nil}, {MaskNone, &Window{8, 3}}}
	for _, c := range cases {
		o := make([]float32, b*sq*hq*d)
		lse := make([]float32, b*hq*sq)
		err := ctx.Attention(must(t)(Float32(q, b, sq, hq, d)), must(t)(Float32(k, b, sk, hkv, d)),
			must(t)(Float32(v, b, sk, hkv, d)), must(t)(Float32(o, b, sq, hq, d)),
			&AttentionOptions{Mask: c.mask, Window: c.window, LSE: lse})
		if err != nil {
			t.Fatal(err)
		}
		wl, wr := -1, -1
		if c.window != nil {
			wl, wr = int(c.window.Left), int(c.window.Right)
		}
		for batch := 0; batch < b; batch++ {
			qs, ks := sq*hq*d, sk*hkv*d
			oRef, lseRef := reference(widen(q[batch*qs:][:qs]), widen(k[batch*ks:][:ks]), widen(v[batch*ks:][:ks]),
				sq, sk, hq, hkv, d, d, c.mask, wl, wr)
			if e := relRMS(o[batch*qs:][:qs], oRef); e > fp32Tol {
				t.Errorf("mask %d window %v: rel_rms %g > %g", c.mask, c.window, e, fp32Tol)
			}
			for i, r := range lseRef {
				x := float64(lse[batch*hq*sq+i])
				if !(x == r || math.Abs(x-r) <= 1e-4) {
					t.Fatalf("lse[%d] %g vs %g", i, x, r)
				}
			}
		}
	}
}

func TestPackedBF16AndQuantizedFP8(t *testing.T) {
	ctx := cpuContext(t)
	hq, d := 2, 128
	cu := []int32{0, 10, 10, 64}
	x := [3][]float32{values(64*hq*d, 7), values(64*hq*d, 8), values(64*hq*d, 9)}
	var codes [3][]byte
	var scales [3][]float32
	for i := range x {
		codes[i] = make([]byte, len(x[i]))
		scales[i] = make([]float32, 3*hq)
		err := ctx.QuantizeFP8(must(t)(Float32(x[i], 64, hq, d)), must(t)(Bytes(codes[i], FP8E4M3FN, 64, hq, d)),
			scales[i], false, cu, 54)
		if err != nil {
			t.Fatal(err)
		}
	}
	o := make([]float32, 64*hq*d)
	lse := make([]float32, hq*64)
	opts := &AttentionOptions{Mask: MaskCausalBottomRight, Softmax: SoftmaxLean, QDescale: scales[0],
		KDescale: scales[1], VDescale: scales[2], CuSeqlensQ: cu, CuSeqlensK: cu, MaxSeqlenQ: 54, MaxSeqlenK: 54, LSE: lse}
	qt := must(t)(Bytes(codes[0], FP8E4M3FN, 64, hq, d))
	kt := must(t)(Bytes(codes[1], FP8E4M3FN, 64, hq, d))
	vt := must(t)(Bytes(codes[2], FP8E4M3FN, 64, hq, d))
	ot := must(t)(Float32(o, 64, hq, d))
	name, err := ctx.AttentionKernelName(qt, kt, vt, ot, opts)
	if err != nil || !strings.HasPrefix(name, "cpu_") {
		t.Fatalf("kernel name %q, %v", name, err)
	}
	if err := ctx.Attention(qt, kt, vt, ot, opts); err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 3; s++ {
		a, e := int(cu[s]), int(cu[s+1])
		if a == e {
			continue
		}
		var deq [3][]float64
		for i := range deq {
			for r := a; r < e; r++ {
				for h := 0; h < hq; h++ {
					for c := 0; c < d; c++ {
						deq[i] = append(deq[i], e4m3fn(codes[i][(r*hq+h)*d+c])*float64(scales[i][s*hq+h]))
					}
				}
			}
		}
		oRef, lseRef := reference(deq[0], deq[1], deq[2], e-a, e-a, hq, hq, d, d, MaskCausalBottomRight, -1, -1)
		if err := relRMS(o[a*hq*d:e*hq*d], oRef); err > leanTol {
			t.Errorf("sequence %d: rel_rms %g > %g", s, err, leanTol)
		}
		for h := 0; h < hq; h++ {
			for i := 0; i < e-a; i++ {
				if diff := math.Abs(float64(lse[h*64+a+i]) - lseRef[h*(e-a)+i]); diff > leanTol {
					t.Fatalf("lse sequence %d head %d row %d off by %g", s, h, i, diff)
				}
			}
		}
	}
}

// e4m3fn decodes an OCP e4m3 code (bias 7; the test never meets NaN).
func e4m3fn(c byte) float64 {
	sign := 1.0
	if c&0x80 != 0 {
		sign = -1
	}
	exp, man := int(c>>3&0xF), float64(c&7)
	if exp == 0 {
		return sign * man / 8 * math.Pow(2, -6)
	}
	return sign * (1 + man/8) * math.Pow(2, float64(exp-7))
}

func TestErrorsCarryStatusAndMessage(t *testing.T) {
	ctx := cpuContext(t)
	q, k := values(16*6*64, 1), values(16*4*64, 2)
	o := make([]float32, len(q))
	for i := range o {
		o[i] = 7
	}
	err := ctx.Attention(must(t)(Float32(q, 1, 16, 6, 64)), must(t)(Float32(k, 1, 16, 4, 64)),
		must(t)(Float32(k, 1, 16, 4, 64)), must(t)(Float32(o, 1, 16, 6, 64)), nil)
	var zerr *Error
	if !errors.As(err, &zerr) || zerr.Status != StatusInvalidArgument || !strings.Contains(zerr.Message, "heads") {
		t.Fatalf("got %v", err)
	}
	if !errors.Is(err, StatusInvalidArgument) || !strings.HasPrefix(err.Error(), "zyfa: invalid argument: ") {
		t.Fatalf("errors.Is / message: %v", err)
	}
	for _, x := range o {
		if x != 7 {
			t.Fatal("a failed call wrote its output")
		}
	}
	qt := must(t)(Float32(q[:16*4*64], 1, 16, 4, 64))
	err = ctx.Attention(qt, qt, qt, must(t)(Float32(o[:16*4*64], 1, 16, 4, 64)), &AttentionOptions{Softmax: SoftmaxLean})
	if !IsStatus(err, StatusNotSupported) {
		t.Fatalf("lean on fp32: %v", err)
	}
	if _, err := Float32(q, 1, 16, 100, 64); !IsStatus(err, StatusInvalidArgument) {
		t.Fatalf("a shape larger than the slice: %v", err)
	}
	if err := ctx.Attention(qt, qt, qt, must(t)(Float32(o, 1, 16, 4, 32)), nil); err == nil ||
		!strings.Contains(err.Error(), "head_dim") {
		t.Fatalf("o head_dim mismatch: %v", err)
	}
	gpu, err := NewContext(&ContextOptions{Backend: BackendCUDA})
	if err == nil {
		gpu.Close() // a CUDA build on a machine with a GPU
	} else if !IsStatus(err, StatusNotSupported) && !IsStatus(err, StatusNoDevice) {
		t.Fatalf("CUDA context: %v", err)
	}
}

func TestKeyBlock(t *testing.T) {
	ctx := cpuContext(t)
	s, h, d := 300, 2, 64
	var codes [3][]byte
	var scales [3][]float32
	for i := range codes {
		codes[i], scales[i] = make([]byte, s*h*d), make([]float32, h)
		err := ctx.QuantizeFP8(must(t)(Float32(values(s*h*d, uint64(30+i)), 1, s, h, d)),
			must(t)(Bytes(codes[i], FP8E4M3FN, 1, s, h, d)), scales[i], false, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
	}
	run := func(keyBlock int32) (string, []float32, error) {
		o := make([]float32, s*h*d)
		for i := range o {
			o[i] = 7
		}
		opts := &AttentionOptions{Mask: MaskCausal, QDescale: scales[0], KDescale: scales[1], VDescale: scales[2],
			KeyBlock: keyBlock}
		qt, kt, vt := must(t)(Bytes(codes[0], FP8E4M3FN, 1, s, h, d)), must(t)(Bytes(codes[1], FP8E4M3FN, 1, s, h, d)),
			must(t)(Bytes(codes[2], FP8E4M3FN, 1, s, h, d))
		ot := must(t)(Float32(o, 1, s, h, d))
		name, _ := ctx.AttentionKernelName(qt, kt, vt, ot, opts)
		return name, o, ctx.Attention(qt, kt, vt, ot, opts)
	}
	name0, o0, err0 := run(0)
	name64, o64, err64 := run(64)
	name128, o128, err128 := run(128)
	if err0 != nil || err64 != nil || err128 != nil {
		t.Fatalf("key_block 0/64/128: %v / %v / %v", err0, err64, err128)
	}
	if name0 != name64 || !strings.HasSuffix(name128, "_bk128") {
		t.Fatalf("kernels %q %q %q", name0, name64, name128)
	}
	same, differs := true, false
	for i := range o0 {
		same = same && math.Float32bits(o0[i]) == math.Float32bits(o64[i])
		differs = differs || math.Float32bits(o0[i]) != math.Float32bits(o128[i])
	}
	if !same || !differs {
		t.Fatalf("0 equals 64 bitwise: %v (want true); 128 differs in LEAN's bits: %v (want true)", same, differs)
	}
	_, o, err := run(63)
	if !IsStatus(err, StatusInvalidArgument) || !strings.Contains(err.Error(), "params.key_block = 63") {
		t.Fatalf("key_block 63: %v", err)
	}
	for _, x := range o {
		if x != 7 {
			t.Fatal("a failed call wrote its output")
		}
	}
}

func TestCloseIsIdempotentAndCallsAfterCloseFail(t *testing.T) {
	ctx, err := NewContext(&ContextOptions{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	ctx.Close()
	ctx.Close()
	q := must(t)(Float32(values(8*64, 1), 1, 8, 1, 64))
	if err := ctx.Attention(q, q, q, q, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if ctx.DeviceName() != "" {
		t.Fatal("DeviceName after Close")
	}
}

func TestConcurrentGoroutinesShareAContext(t *testing.T) {
	ctx := cpuContext(t)
	q := values(32*4*64, 11)
	run := func() ([]float32, error) {
		o := make([]float32, len(q))
		qt := must(t)(Float32(q, 1, 32, 4, 64))
		err := ctx.Attention(qt, qt, qt, must(t)(Float32(o, 1, 32, 4, 64)), &AttentionOptions{Mask: MaskCausal})
		return o, err
	}
	expected, err := run()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([][]float32, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = run()
		}(i)
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for j := range expected {
			if results[i][j] != expected[j] {
				t.Fatalf("goroutine %d differs at %d (the CPU backend is deterministic)", i, j)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	if err := CheckVersion(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(BuildInfo(), "cpu") {
		t.Fatalf("build info %q", BuildInfo())
	}
}

// K smoothing: QuantizeFP8Smoothed returns K's per-head channel mean; attention on the smoothed K
// gives the same O (it beats unsmoothed FP8 on keys with a shared offset), and LSE plus
// softmaxScale * q . mean is the unsmoothed LSE (FP8 score error plus LEAN's 0.082, docs/api.md).
func TestKSmoothing(t *testing.T) {
	ctx := cpuContext(t)
	s, h, d := 96, 2, 64
	q, v := values(s*h*d, 41), values(s*h*d, 42)
	k := values(s*h*d, 43)
	for i := range k {
		sign := float32(1)
		if i%2 == 1 {
			sign = -1
		}
		k[i] = 2*k[i] + sign*3*float32(1+(i%d)%5)
	}
	quantize := func(x []float32, mean []float32) ([]byte, []float32) {
		codes, descale := make([]byte, s*h*d), make([]float32, h)
		in, out := must(t)(Float32(x, 1, s, h, d)), must(t)(Bytes(codes, FP8E4M3FN, 1, s, h, d))
		var err error
		if mean != nil {
			err = ctx.QuantizeFP8Smoothed(in, out, descale, mean, false, nil, 0)
		} else {
			err = ctx.QuantizeFP8(in, out, descale, false, nil, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		return codes, descale
	}
	mean := make([]float32, h*d)
	q8, qd := quantize(q, nil)
	k8, kd := quantize(k, mean)
	kPlain, kdPlain := quantize(k, nil)
	v8, vd := quantize(v, nil)
	for hh := 0; hh < h; hh++ {
		for x := 0; x < d; x++ {
			want := 0.0
			for j := 0; j < s; j++ {
				want += float64(k[(j*h+hh)*d+x])
			}
			want /= float64(s)
			if got := float64(mean[hh*d+x]); math.Abs(got-want) > 1e-6*math.Abs(want)+1e-9 {
				t.Fatalf("mean[%d, %d] = %g, want %g", hh, x, got, want)
			}
		}
	}
	run := func(kc []byte, kdesc []float32, lse []float32) []float32 {
		o := make([]float32, s*h*d)
		opts := &AttentionOptions{Mask: MaskCausal, Softmax: SoftmaxLean, QDescale: qd, KDescale: kdesc, VDescale: vd,
			LSE: lse}
		err := ctx.Attention(must(t)(Bytes(q8, FP8E4M3FN, 1, s, h, d)), must(t)(Bytes(kc, FP8E4M3FN, 1, s, h, d)),
			must(t)(Bytes(v8, FP8E4M3FN, 1, s, h, d)), must(t)(Float32(o, 1, s, h, d)), opts)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	lse := make([]float32, h*s)
	o := run(k8, kd, lse)
	oPlain := run(kPlain, kdPlain, nil)
	oRef, lseRef := reference(widen(q), widen(k), widen(v), s, s, h, h, d, d, MaskCausal, -1, -1)
	if err, errPlain := relRMS(o, oRef), relRMS(oPlain, oRef); err > 0.08 || err >= errPlain {
		t.Fatalf("O rel. RMS: smoothed %g, plain %g", err, errPlain)
	}
	scale := 1 / math.Sqrt(float64(d))
	worst := 0.0
	for hh := 0; hh < h; hh++ {
		for i := 0; i < s; i++ {
			dot := 0.0
			for x := 0; x < d; x++ {
				dot += float64(q[(i*h+hh)*d+x]) * float64(mean[hh*d+x])
			}
			worst = math.Max(worst, math.Abs(float64(lse[hh*s+i])+scale*dot-lseRef[hh*s+i]))
		}
	}
	if worst > 0.25 {
		t.Fatalf("corrected LSE differs from fp64 by %g", worst)
	}
	if err := ctx.QuantizeFP8Smoothed(must(t)(Float32(k, 1, s, h, d)), must(t)(Bytes(k8, FP8E4M3FN, 1, s, h, d)), kd,
		mean[:10], false, nil, 0); err == nil {
		t.Fatal("a short mean slice was accepted")
	}
}

// AttentionMerge: keys split in two ranges (mask None), each attended with its lse, merged, against
// the unsplit call. fp32 inputs keep P unrounded, so both are the same weighted sum up to fp32
// rounding (sums of <= 70 terms, exp and log of the lse): well under 1e-5 of |v| <= 1.
func TestAttentionMergeOfSplitKeys(t *testing.T) {
	ctx := cpuContext(t)
	b, sq, sk, h, d, cut := 2, 5, 70, 2, 32, 29
	q, k, v := values(b*sq*h*d, 41), values(b*sk*h*d, 42), values(b*sk*h*d, 43)
	keys := func(x []float32, k0, k1 int) []float32 { // rows k0..k1 of every batch, contiguous
		out := make([]float32, 0, b*(k1-k0)*h*d)
		for batch := 0; batch < b; batch++ {
			out = append(out, x[(batch*sk+k0)*h*d:(batch*sk+k1)*h*d]...)
		}
		return out
	}
	run := func(k0, k1 int) ([]float32, []float32) {
		o, lse := make([]float32, b*sq*h*d), make([]float32, b*h*sq)
		err := ctx.Attention(must(t)(Float32(q, b, sq, h, d)), must(t)(Float32(keys(k, k0, k1), b, k1-k0, h, d)),
			must(t)(Float32(keys(v, k0, k1), b, k1-k0, h, d)), must(t)(Float32(o, b, sq, h, d)),
			&AttentionOptions{LSE: lse})
		if err != nil {
			t.Fatal(err)
		}
		return o, lse
	}
	oFull, lseFull := run(0, sk)
	oA, lseA := run(0, cut)
	oB, lseB := run(cut, sk)
	o, lse := make([]float32, b*sq*h*d), make([]float32, b*h*sq)
	parts := []Tensor{must(t)(Float32(oA, b, sq, h, d)), must(t)(Float32(oB, b, sq, h, d))}
	if err := ctx.AttentionMerge(parts, [][]float32{lseA, lseB}, must(t)(Float32(o, b, sq, h, d)),
		&MergeOptions{LSE: lse}); err != nil {
		t.Fatal(err)
	}
	for i := range o {
		if math.Abs(float64(o[i]-oFull[i])) > 1e-5 {
			t.Fatalf("o[%d]: merged %g, unsplit %g", i, o[i], oFull[i])
		}
	}
	for i := range lse {
		if math.Abs(float64(lse[i]-lseFull[i])) > 1e-5 {
			t.Fatalf("lse[%d]: merged %g, unsplit %g", i, lse[i], lseFull[i])
		}
	}

	// Every part -inf on a row: O = 0, lse = -inf. The library names a bad field.
	lseA[0], lseB[0] = float32(math.Inf(-1)), float32(math.Inf(-1))
	if err := ctx.AttentionMerge(parts, [][]float32{lseA, lseB}, must(t)(Float32(o, b, sq, h, d)),
		&MergeOptions{LSE: lse}); err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(float64(lse[0]), -1) || o[0] != 0 {
		t.Fatalf("empty row: lse %g, o[0] %g", lse[0], o[0])
	}
	empty := []float32{}
	err := ctx.AttentionMerge([]Tensor{must(t)(Float32(empty, b, sq, h, 0))}, [][]float32{lseA},
		must(t)(Float32(empty, b, sq, h, 0)), nil)
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArgument || !strings.Contains(e.Message, "params.head_dim_v = 0") {
		t.Fatalf("head_dim 0: %v", err)
	}
	if err := ctx.AttentionMerge(parts, [][]float32{lseA}, must(t)(Float32(o, b, sq, h, d)), nil); !IsStatus(err,
		StatusInvalidArgument) {
		t.Fatalf("one lse for two parts: %v", err)
	}
}

// Attention sinks: -inf is no sink bit for bit; a finite sink joins each row's denominator only, so
// lse' = log(e^lse + e^sink) and O' = O e^(lse - lse') from the call without sinks; rows that see
// no key get O = 0 and lse = the sink; a slice of the wrong length is refused.
func TestSinks(t *testing.T) {
	ctx := cpuContext(t)
	sq, sk, h, d := 24, 16, 2, 64 // bottom-right: the first 8 rows see no key
	q, k, v := values(sq*h*d, 31), values(sk*h*d, 32), values(sk*h*d, 33)
	run := func(sinks []float32) ([]float32, []float32, error) {
		o, lse := make([]float32, sq*h*d), make([]float32, h*sq)
		err := ctx.Attention(must(t)(Float32(q, 1, sq, h, d)), must(t)(Float32(k, 1, sk, h, d)),
			must(t)(Float32(v, 1, sk, h, d)), must(t)(Float32(o, 1, sq, h, d)),
			&AttentionOptions{Mask: MaskCausalBottomRight, LSE: lse, Sinks: sinks})
		return o, lse, err
	}
	o0, lse0, err0 := run(nil)
	oInf, lseInf, errInf := run([]float32{float32(math.Inf(-1)), float32(math.Inf(-1))})
	sinks := []float32{0.5, -1.5}
	o1, lse1, err1 := run(sinks)
	if err0 != nil || errInf != nil || err1 != nil {
		t.Fatalf("%v / %v / %v", err0, errInf, err1)
	}
	for i := range o0 {
		if math.Float32bits(o0[i]) != math.Float32bits(oInf[i]) {
			t.Fatal("sinks of -inf changed O")
		}
	}
	for i := range lse0 {
		if math.Float32bits(lse0[i]) != math.Float32bits(lseInf[i]) {
			t.Fatal("sinks of -inf changed the lse")
		}
	}
	for head := 0; head < h; head++ {
		for i := 0; i < sq; i++ {
			l0, l1, s := float64(lse0[head*sq+i]), float64(lse1[head*sq+i]), float64(sinks[head])
			want := s
			if i >= 8 {
				want = math.Max(l0, s) + math.Log1p(math.Exp(-math.Abs(l0-s)))
			}
			if math.Abs(l1-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Fatalf("head %d row %d: lse %g, want %g", head, i, l1, want)
			}
			for x := 0; x < d; x++ {
				at := (i*h+head)*d + x
				expected := 0.0
				if i >= 8 {
					expected = float64(o0[at]) * math.Exp(l0-want)
				}
				if math.Abs(float64(o1[at])-expected) > 1e-5 {
					t.Fatalf("head %d row %d: O %g, want %g", head, i, o1[at], expected)
				}
			}
		}
	}
	if _, _, err := run([]float32{1}); !IsStatus(err, StatusInvalidArgument) || !strings.Contains(err.Error(), "Sinks") {
		t.Fatalf("one sink for two heads: %v", err)
	}
}

// TestPagedKV: the same keys read through a block table from page pools (pages interleaved between
// the sequences, unused rows NaN) give the contiguous call's bits; a page index out of range is
// InvalidArgument naming params.block_table.
func TestPagedKV(t *testing.T) {
	ctx := cpuContext(t)
	b, sq, sk, h, d, page := 2, 24, 70, 2, 32, 16
	q, k, v := values(b*sq*h*d, 41), values(b*sk*h*d, 42), values(b*sk*h*d, 43)
	o := make([]float32, b*sq*h*d)
	opts := &AttentionOptions{Mask: MaskCausalBottomRight}
	if err := ctx.Attention(must(t)(Float32(q, b, sq, h, d)), must(t)(Float32(k, b, sk, h, d)),
		must(t)(Float32(v, b, sk, h, d)), must(t)(Float32(o, b, sq, h, d)), opts); err != nil {
		t.Fatal(err)
	}
	pages := (sk + page - 1) / page
	kp, vp := make([]float32, b*pages*page*h*d), make([]float32, b*pages*page*h*d)
	for i := range kp {
		kp[i], vp[i] = float32(math.NaN()), float32(math.NaN())
	}
	table := make([]int32, b*pages)
	for s := 0; s < b; s++ {
		for p := 0; p < pages; p++ {
			index := p*b + (b - 1 - s)
			table[s*pages+p] = int32(index)
			for r := 0; r < page && p*page+r < sk; r++ {
				src, dst := (s*sk+p*page+r)*h*d, (index*page+r)*h*d
				copy(kp[dst:dst+h*d], k[src:src+h*d])
				copy(vp[dst:dst+h*d], v[src:src+h*d])
			}
		}
	}
	paged := &AttentionOptions{Mask: MaskCausalBottomRight, BlockTable: table, BlockTableStride: pages,
		SequsedK: []int32{int32(sk), int32(sk)}, MaxSeqlenK: sk}
	op := make([]float32, b*sq*h*d)
	run := func() error {
		return ctx.Attention(must(t)(Float32(q, b, sq, h, d)), must(t)(Float32(kp, b*pages, page, h, d)),
			must(t)(Float32(vp, b*pages, page, h, d)), must(t)(Float32(op, b, sq, h, d)), paged)
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	for i := range o {
		if math.Float32bits(o[i]) != math.Float32bits(op[i]) {
			t.Fatalf("paged differs from contiguous at %d: %v vs %v", i, op[i], o[i])
		}
	}
	table[1] = int32(b * pages)
	if err := run(); !IsStatus(err, StatusInvalidArgument) || !strings.Contains(err.Error(), "params.block_table") {
		t.Fatalf("page index out of range: %v", err)
	}
}
