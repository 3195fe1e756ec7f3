package zyfa

import (
	"runtime"
	"unsafe"
)

// Mask selects which keys a query sees (docs/api.md).
type Mask int32

const (
	MaskNone              Mask = 0
	MaskCausal            Mask = 1 // top-left: query i sees keys j <= i
	MaskCausalBottomRight Mask = 2 // j <= i + seqlen_k - seqlen_q, as flash_attn
)

// Softmax selects the softmax numerics.
type Softmax int32

const (
	SoftmaxAuto  Softmax = 0 // Lean for FP8 inputs, Exact otherwise
	SoftmaxExact Softmax = 1
	SoftmaxLean  Softmax = 2
)

// Window is a sliding window; -1 leaves a side unbounded.
type Window struct{ Left, Right int32 }

// AttentionOptions for host calls; the zero value is no mask, no window, scale 1/sqrt(head_dim),
// Auto softmax, the backend's own key block.
type AttentionOptions struct {
	Mask         Mask
	Window       *Window
	SoftmaxScale float32 // 0 = 1/sqrt(head_dim)
	Softmax      Softmax
	// Keys per online-softmax step (params.key_block): 0 = the backend's own (CPU and AMD 64), 64
	// or 128. LEAN's block scales depend on it; a backend without kernels for it is NotSupported.
	KeyBlock int32
	// FP8 only: fp32 [batch * heads_kv] each, or nil.
	QDescale, KDescale, VDescale []float32
	// Packed sequences: [batch + 1] prefix sums (both or neither) and the longest lengths.
	CuSeqlensQ, CuSeqlensK []int32
	MaxSeqlenQ, MaxSeqlenK int
	// Optional output: [batch * heads_q * seqlen_q], or [heads_q * total_q] when packed.
	LSE []float32
	// Optional attention sinks, fp32 [heads_q] (params.sinks; gpt-oss, FlashAttention-3's s_aux):
	// one logit per query head in the units of the scaled scores that joins every row's softmax
	// denominator and multiplies no value. LSE then includes it (a row without keys gets O = 0,
	// LSE = the sink): when merging parts, pass Sinks to one part only.
	Sinks []float32
	// Paged K/V: k and v are page pools [num_pages, page_size, heads_kv, head_dim]; key j of
	// sequence b is row j % page_size of page BlockTable[b*BlockTableStride + j/page_size]. q is
	// 4-D, or packed with CuSeqlensQ alone (CuSeqlensK nil); MaxSeqlenK is the longest sequence's
	// key count and SequsedK ([batch], or nil: MaxSeqlenK each) each sequence's.
	BlockTable       []int32
	BlockTableStride int
	SequsedK         []int32
}

// DeviceAttentionOptions for GPU calls: the same settings with device addresses (0 = none) and,
// for packed sequences, the batch size the cu_seqlens arrays describe.
type DeviceAttentionOptions struct {
	Mask                          Mask
	Window                        *Window
	SoftmaxScale                  float32
	Softmax                       Softmax
	KeyBlock                      int32 // as AttentionOptions.KeyBlock
	QDescale, KDescale, VDescale  uintptr
	CuSeqlensQ, CuSeqlensK        uintptr
	Batch, MaxSeqlenQ, MaxSeqlenK int
	LSE                           uintptr
	Sinks                         uintptr // fp32 [heads_q], as AttentionOptions.Sinks
	// Paged K/V as AttentionOptions' (device addresses; Batch names the table's rows).
	BlockTable, SequsedK uintptr
	BlockTableStride     int
}

type attnParams struct {
	mask                                 Mask
	batch, seqlenQ, seqlenK              int
	headsQ, headsKV, headDimQK, headDimV int
	softmaxScale                         float32
	softmax                              Softmax
	windowLeft, windowRight              int32
	keyBlock                             int32
	paged                                bool
	blockTableStride, numPages, pageSize int
}

// pagedShapeParams derives a paged problem: k and v are 4-D pools, q 4-D or packed (3-D).
func pagedShapeParams(q, k, v, o *Tensor, packed bool, batch, maxQ, maxK, stride int) (attnParams, error) {
	p := attnParams{windowLeft: -1, windowRight: -1, paged: true}
	if len(k.shape) != 4 || len(v.shape) != 4 {
		return p, invalid("paged k and v are pools [num_pages, page_size, heads_kv, head_dim]; got %v and %v", k.shape, v.shape)
	}
	if v.shape[0] != k.shape[0] || v.shape[1] != k.shape[1] || v.shape[2] != k.shape[2] {
		return p, invalid("v pool %v does not match k pool %v", v.shape, k.shape)
	}
	rank := 4
	if packed {
		rank = 3
	}
	if len(q.shape) != rank || len(o.shape) != rank {
		return p, invalid("q and o must be %d-D; got %v and %v", rank, q.shape, o.shape)
	}
	s := rank - 3
	if k.shape[3] != q.shape[s+2] {
		return p, invalid("k head_dim %d != q head_dim %d", k.shape[3], q.shape[s+2])
	}
	for i := 0; i < rank-1; i++ {
		if o.shape[i] != q.shape[i] {
			return p, invalid("o shape %v does not match q shape %v", o.shape, q.shape)
		}
	}
	if o.shape[rank-1] != v.shape[3] {
		return p, invalid("o head_dim %d != v head_dim %d", o.shape[rank-1], v.shape[3])
	}
	p.headsQ, p.headsKV, p.headDimQK, p.headDimV = q.shape[s+1], k.shape[2], q.shape[s+2], v.shape[3]
	if packed {
		p.batch, p.seqlenQ = batch, maxQ
	} else {
		p.batch, p.seqlenQ = q.shape[0], q.shape[1]
	}
	p.seqlenK, p.blockTableStride, p.numPages, p.pageSize = maxK, stride, k.shape[0], k.shape[1]
	return p, nil
}

// shapeParams derives the problem from the views and checks them against each other.
func shapeParams(q, k, v, o *Tensor, packed bool, batch, maxQ, maxK int) (attnParams, error) {
	p := attnParams{windowLeft: -1, windowRight: -1}
	rank := 4
	if packed {
		rank = 3
	}
	for _, t := range []*Tensor{q, k, v, o} {
		if len(t.shape) != rank {
			return p, invalid("with%s cu_seqlens every tensor is %d-D; got shape %v", map[bool]string{true: "", false: "out"}[packed], rank, t.shape)
		}
	}
	s := rank - 3 // index of the seq/total axis
	if k.shape[s+2] != q.shape[s+2] {
		return p, invalid("k head_dim %d != q head_dim %d", k.shape[s+2], q.shape[s+2])
	}
	if v.shape[s] != k.shape[s] || v.shape[s+1] != k.shape[s+1] || (!packed && v.shape[0] != k.shape[0]) {
		return p, invalid("v shape %v does not match k shape %v", v.shape, k.shape)
	}
	if !packed && k.shape[0] != q.shape[0] {
		return p, invalid("k batch %d != q batch %d", k.shape[0], q.shape[0])
	}
	for i := 0; i < rank-1; i++ {
		if o.shape[i] != q.shape[i] {
			return p, invalid("o shape %v does not match q shape %v", o.shape, q.shape)
		}
	}
	if o.shape[rank-1] != v.shape[rank-1] {
		return p, invalid("o head_dim %d != v head_dim %d", o.shape[rank-1], v.shape[rank-1])
	}
	p.headsQ, p.headsKV, p.headDimQK, p.headDimV = q.shape[s+1], k.shape[s+1], q.shape[s+2], v.shape[s+2]
	if packed {
		p.batch, p.seqlenQ, p.seqlenK = batch, maxQ, maxK
	} else {
		p.batch, p.seqlenQ, p.seqlenK = q.shape[0], q.shape[1], k.shape[1]
	}
	return p, nil
}

func checkCuSeqlens(cu []int32, rows int, name string) error {
	if len(cu) == 0 {
		return invalid("%s is empty; it needs batch + 1 entries", name)
	}
	for _, x := range cu {
		if x < 0 || int(x) > rows {
			return invalid("%s holds %d, outside the %d packed rows", name, x, rows)
		}
	}
	return nil
}

func ptrOf(x []float32) unsafe.Pointer {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Pointer(&x[0])
}

func (c *Context) hostCall(q, k, v, o Tensor, opts *AttentionOptions, nameOnly bool) (string, error) {
	if opts == nil {
		opts = &AttentionOptions{}
	}
	if !q.onHost || !k.onHost || !v.onHost || !o.onHost {
		return "", invalid("Attention takes host tensors; use AttentionDevice for device memory")
	}
	packed := opts.CuSeqlensQ != nil || opts.CuSeqlensK != nil
	batch := 0
	ptr := hostPointers{q: q.host, k: k.host, v: v.host, o: o.host}
	paged := opts.BlockTable != nil
	if paged {
		if opts.CuSeqlensK != nil {
			return "", invalid("paged keys are not packed: CuSeqlensK must be nil with BlockTable (use SequsedK)")
		}
		packed = opts.CuSeqlensQ != nil
		if packed {
			if err := checkCuSeqlens(opts.CuSeqlensQ, q.shape[0], "CuSeqlensQ"); err != nil {
				return "", err
			}
			batch = len(opts.CuSeqlensQ) - 1
			ptr.cuQ = unsafe.Pointer(&opts.CuSeqlensQ[0])
		} else if len(q.shape) == 4 {
			batch = q.shape[0]
		}
		if len(opts.BlockTable) < batch*opts.BlockTableStride {
			return "", invalid("BlockTable has %d entries, needs batch * BlockTableStride = %d", len(opts.BlockTable),
				batch*opts.BlockTableStride)
		}
		if opts.SequsedK != nil {
			if len(opts.SequsedK) < batch {
				return "", invalid("SequsedK has %d entries, needs batch = %d", len(opts.SequsedK), batch)
			}
			ptr.used = unsafe.Pointer(&opts.SequsedK[0])
		}
		if len(opts.BlockTable) > 0 {
			ptr.table = unsafe.Pointer(&opts.BlockTable[0])
		}
	} else if packed {
		if len(q.shape) != 3 || len(k.shape) != 3 {
			return "", invalid("packed sequences need 3-D [total, heads, dim] tensors")
		}
		if len(opts.CuSeqlensQ) != len(opts.CuSeqlensK) {
			return "", invalid("CuSeqlensQ and CuSeqlensK must both be set, with batch + 1 entries each")
		}
		if err := checkCuSeqlens(opts.CuSeqlensQ, q.shape[0], "CuSeqlensQ"); err != nil {
			return "", err
		}
		if err := checkCuSeqlens(opts.CuSeqlensK, k.shape[0], "CuSeqlensK"); err != nil {
			return "", err
		}
		batch = len(opts.CuSeqlensQ) - 1
		ptr.cuQ, ptr.cuK = unsafe.Pointer(&opts.CuSeqlensQ[0]), unsafe.Pointer(&opts.CuSeqlensK[0])
	}
	var p attnParams
	var err error
	if paged {
		p, err = pagedShapeParams(&q, &k, &v, &o, packed, batch, opts.MaxSeqlenQ, opts.MaxSeqlenK, opts.BlockTableStride)
	} else {
		p, err = shapeParams(&q, &k, &v, &o, packed, batch, opts.MaxSeqlenQ, opts.MaxSeqlenK)
	}
	if err != nil {
		return "", err
	}
	p.mask, p.softmaxScale, p.softmax, p.keyBlock = opts.Mask, opts.SoftmaxScale, opts.Softmax, opts.KeyBlock
	if opts.Window != nil {
		p.windowLeft, p.windowRight = opts.Window.Left, opts.Window.Right
	}
	for _, d := range []struct {
		name string
		s    []float32
		dst  *unsafe.Pointer
	}{{"QDescale", opts.QDescale, &ptr.qd}, {"KDescale", opts.KDescale, &ptr.kd}, {"VDescale", opts.VDescale, &ptr.vd}} {
		if d.s == nil {
			continue
		}
		if len(d.s) < p.batch*p.headsKV {
			return "", invalid("%s has %d values, needs batch * heads_kv = %d", d.name, len(d.s), p.batch*p.headsKV)
		}
		*d.dst = ptrOf(d.s)
	}
	if opts.LSE != nil {
		rows := p.batch * p.seqlenQ
		if packed {
			rows = q.shape[0]
		}
		if len(opts.LSE) < rows*p.headsQ {
			return "", invalid("LSE has %d values, needs %d", len(opts.LSE), rows*p.headsQ)
		}
		ptr.lse = ptrOf(opts.LSE)
	}
	if opts.Sinks != nil {
		if len(opts.Sinks) != p.headsQ {
			return "", invalid("Sinks has %d values, needs heads_q = %d", len(opts.Sinks), p.headsQ)
		}
		ptr.sinks = ptrOf(opts.Sinks)
	}
	var name string
	err = c.use(func(ctx unsafe.Pointer) error {
		if b := cContextBackend(ctx); b != BackendCPU {
			return invalid("host tensors need a CPU context, this one is %s", b)
		}
		var e error
		name, e = cAttnHost(ctx, &p, &q, &k, &v, &o, &ptr, nameOnly)
		return e
	})
	runtime.KeepAlive(q.keep)
	runtime.KeepAlive(k.keep)
	runtime.KeepAlive(v.keep)
	runtime.KeepAlive(o.keep)
	runtime.KeepAlive(opts)
	return name, err
}

// Attention computes o = softmax(scale * Q K^T + mask) V on host tensors (CPU backend), and the
// log-sum-exp into opts.LSE when set. Query head h reads kv head h / (heads_q / heads_kv).
func (c *Context) Attention(q, k, v, o Tensor, opts *AttentionOptions) error {
	_, err := c.hostCall(q, k, v, o, opts, false)
	return err
}

// AttentionKernelName is the kernel Attention would run, or the reason it would not.
func (c *Context) AttentionKernelName(q, k, v, o Tensor, opts *AttentionOptions) (string, error) {
	return c.hostCall(q, k, v, o, opts, true)
}

// AttentionDevice enqueues attention on device memory (CUDA or HIP backend) on stream
// (cudaStream_t / hipStream_t as a uintptr, 0 = the default stream). It never synchronises: the
// buffers must stay valid until the stream work is done.
func (c *Context) AttentionDevice(q, k, v, o Tensor, opts *DeviceAttentionOptions, stream uintptr) error {
	if opts == nil {
		opts = &DeviceAttentionOptions{}
	}
	if q.onHost || k.onHost || v.onHost || o.onHost {
		return invalid("AttentionDevice takes Device tensors; use Attention for host slices")
	}
	packed := opts.CuSeqlensQ != 0 || opts.CuSeqlensK != 0
	var p attnParams
	var err error
	if opts.BlockTable != 0 {
		p, err = pagedShapeParams(&q, &k, &v, &o, opts.CuSeqlensQ != 0, opts.Batch, opts.MaxSeqlenQ, opts.MaxSeqlenK,
			opts.BlockTableStride)
	} else {
		p, err = shapeParams(&q, &k, &v, &o, packed, opts.Batch, opts.MaxSeqlenQ, opts.MaxSeqlenK)
	}
	if err != nil {
		return err
	}
	p.mask, p.softmaxScale, p.softmax, p.keyBlock = opts.Mask, opts.SoftmaxScale, opts.Softmax, opts.KeyBlock
	if opts.Window != nil {
		p.windowLeft, p.windowRight = opts.Window.Left, opts.Window.Right
	}
	return c.use(func(ctx unsafe.Pointer) error { return cAttnDevice(ctx, &p, &q, &k, &v, &o, opts, stream) })
}

func quantShape(x, out *Tensor, cuSeqlens []int32, maxSeqlen, batch int) (int, int, int, int, error) {
	if len(x.shape) != len(out.shape) {
		return 0, 0, 0, 0, invalid("out shape %v != x shape %v", out.shape, x.shape)
	}
	for i := range x.shape {
		if x.shape[i] != out.shape[i] {
			return 0, 0, 0, 0, invalid("out shape %v != x shape %v", out.shape, x.shape)
		}
	}
	if len(x.shape) == 4 {
		return x.shape[0], x.shape[1], x.shape[2], x.shape[3], nil
	}
	return batch, maxSeqlen, x.shape[1], x.shape[2], nil
}

// QuantizeFP8 quantises host x (FP32, FP16 or BF16; [batch, seq, heads, dim], or packed with
// cuSeqlens and maxSeqlen) into out (FP8E4M3FN or FP8E4M3FNUZ) with one scale per (batch, head)
// written to descale [batch * heads]: x ~= out * descale. hadamard rotates the head dimension
// first (use it on Q and K alike).
func (c *Context) QuantizeFP8(x, out Tensor, descale []float32, hadamard bool, cuSeqlens []int32, maxSeqlen int) error {
	return c.quantizeHost(x, out, descale, nil, hadamard, cuSeqlens, maxSeqlen)
}

// QuantizeFP8Smoothed is QuantizeFP8 with K smoothing (for K only): each (sequence, head,
// channel)'s mean over the sequence is subtracted first and written to mean
// [batch * heads * dim]: x ~= out * descale + mean (rotated back first with hadamard). Attention's
// O is unchanged; its LSE is lower by softmaxScale * q . mean, q the original query row and mean
// its kv head's (docs/api.md, K smoothing).
func (c *Context) QuantizeFP8Smoothed(x, out Tensor, descale, mean []float32, hadamard bool, cuSeqlens []int32,
	maxSeqlen int) error {
	if mean == nil {
		return invalid("QuantizeFP8Smoothed needs a mean slice")
	}
	return c.quantizeHost(x, out, descale, mean, hadamard, cuSeqlens, maxSeqlen)
}

func (c *Context) quantizeHost(x, out Tensor, descale, mean []float32, hadamard bool, cuSeqlens []int32,
	maxSeqlen int) error {
	if !x.onHost || !out.onHost {
		return invalid("QuantizeFP8 takes host tensors; use QuantizeFP8Device for device memory")
	}
	var cu unsafe.Pointer
	batch := 0
	if cuSeqlens != nil {
		if len(x.shape) != 3 {
			return invalid("packed sequences need a 3-D [total, heads, dim] x")
		}
		if err := checkCuSeqlens(cuSeqlens, x.shape[0], "cuSeqlens"); err != nil {
			return err
		}
		cu, batch = unsafe.Pointer(&cuSeqlens[0]), len(cuSeqlens)-1
	}
	b, s, h, d, err := quantShape(&x, &out, cuSeqlens, maxSeqlen, batch)
	if err != nil {
		return err
	}
	if len(descale) < b*h || len(descale) == 0 {
		return invalid("descale has %d values, needs batch * heads = %d", len(descale), b*h)
	}
	flags := quantFlags(hadamard, mean != nil)
	var meanPtr *float32
	if mean != nil {
		if len(mean) < b*h*d || len(mean) == 0 {
			return invalid("mean has %d values, needs batch * heads * dim = %d", len(mean), b*h*d)
		}
		meanPtr = &mean[0]
	}
	err = c.use(func(ctx unsafe.Pointer) error {
		if b := cContextBackend(ctx); b != BackendCPU {
			return invalid("host tensors need a CPU context, this one is %s", b)
		}
		return cQuantizeHost(ctx, flags, b, s, h, d, &x, &out, cu, &descale[0], meanPtr)
	})
	runtime.KeepAlive(x.keep)
	runtime.KeepAlive(out.keep)
	runtime.KeepAlive(cuSeqlens)
	runtime.KeepAlive(mean)
	return err
}

// zyfa_quant_params.flags: ZYFA_QUANT_HADAMARD 1, ZYFA_QUANT_SMOOTH 2.
func quantFlags(hadamard, smooth bool) uint32 {
	flags := uint32(0)
	if hadamard {
		flags |= 1
	}
	if smooth {
		flags |= 2
	}
	return flags
}

// QuantizeFP8Device is QuantizeFP8 on device memory, enqueued on stream; cuSeqlens is a device
// address (0 = fixed length) describing batch sequences.
func (c *Context) QuantizeFP8Device(x, out Tensor, descale uintptr, hadamard bool, cuSeqlens uintptr, batch,
	maxSeqlen int, stream uintptr) error {
	return c.quantizeDevice(x, out, descale, 0, hadamard, cuSeqlens, batch, maxSeqlen, stream)
}

// QuantizeFP8DeviceSmoothed is QuantizeFP8Smoothed on device memory: mean is the device address
// of batch * heads * dim float32 values.
func (c *Context) QuantizeFP8DeviceSmoothed(x, out Tensor, descale, mean uintptr, hadamard bool, cuSeqlens uintptr,
	batch, maxSeqlen int, stream uintptr) error {
	if mean == 0 {
		return invalid("QuantizeFP8DeviceSmoothed needs a mean address")
	}
	return c.quantizeDevice(x, out, descale, mean, hadamard, cuSeqlens, batch, maxSeqlen, stream)
}

func (c *Context) quantizeDevice(x, out Tensor, descale, mean uintptr, hadamard bool, cuSeqlens uintptr, batch,
	maxSeqlen int, stream uintptr) error {
	if x.onHost || out.onHost {
		return invalid("QuantizeFP8Device takes Device tensors")
	}
	b, s, h, d, err := quantShape(&x, &out, nil, maxSeqlen, batch)
	if err != nil {
		return err
	}
	flags := quantFlags(hadamard, mean != 0)
	return c.use(func(ctx unsafe.Pointer) error {
		return cQuantizeDevice(ctx, flags, b, s, h, d, &x, &out, cuSeqlens, descale, mean, stream)
	})
}
