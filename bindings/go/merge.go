package zyfa

import (
	"runtime"
	"unsafe"
)

// MergeOptions for AttentionMerge; the zero value is fixed-length sequences and no lse output.
type MergeOptions struct {
	// Packed sequences: [batch + 1] prefix sums and the longest length (parts and o [total, heads, dim]).
	CuSeqlensQ []int32
	MaxSeqlenQ int
	// Optional output: the merged lse, [batch * heads * seqlen_q], or [heads * total_q] when packed.
	LSE []float32
}

// AttentionMerge combines partial attention results over disjoint key sets for the same queries
// (split keys, a prefix cache and a new chunk, context parallelism) into o: per row, in fp32,
// lse = ln(sum_i exp(lse_i)), O = sum_i exp(lse_i - lse) O_i. parts are the parts' O (FP32, FP16
// or BF16 host tensors of o's shape), partLSE their lse as Attention writes it. A part whose lse is
// -inf adds nothing; a row whose parts are all -inf gets O = 0 and lse = -inf; NaN or +inf lse
// give NaN. The parts are copied into C memory for the call (cgo forbids Go pointers inside memory
// handed to C), one pass over data the merge reads once anyway.
func (c *Context) AttentionMerge(parts []Tensor, partLSE [][]float32, o Tensor, opts *MergeOptions) error {
	if opts == nil {
		opts = &MergeOptions{}
	}
	if len(parts) == 0 || len(parts) != len(partLSE) {
		return invalid("AttentionMerge needs at least one part and one lse per part, got %d and %d", len(parts),
			len(partLSE))
	}
	if !o.onHost {
		return invalid("AttentionMerge takes host tensors; use AttentionMergeDevice for device memory")
	}
	m, rowsTimesHeads, err := mergeShape(parts, &o, opts.CuSeqlensQ, opts.MaxSeqlenQ)
	if err != nil {
		return err
	}
	total := 0
	for i := range parts {
		if !parts[i].onHost {
			return invalid("part %d is not a host tensor", i)
		}
		if len(partLSE[i]) < rowsTimesHeads {
			return invalid("partLSE[%d] has %d values, needs %d", i, len(partLSE[i]), rowsTimesHeads)
		}
		total += parts[i].length*parts[i].dtype.size() + rowsTimesHeads*4
	}
	var lse unsafe.Pointer
	if opts.LSE != nil {
		if len(opts.LSE) < rowsTimesHeads || rowsTimesHeads == 0 {
			return invalid("LSE has %d values, needs %d", len(opts.LSE), rowsTimesHeads)
		}
		lse = unsafe.Pointer(&opts.LSE[0])
	}
	var cu unsafe.Pointer
	if opts.CuSeqlensQ != nil {
		cu = unsafe.Pointer(&opts.CuSeqlensQ[0])
	}
	staging := cMalloc(total)
	if staging == nil && total > 0 {
		return &Error{Status: StatusOutOfMemory, Message: "zyfa (Go): cannot allocate the parts' staging copy"}
	}
	defer cFree(staging)
	data := make([]uintptr, len(parts))
	lseAt := make([]uintptr, len(parts))
	offset := uintptr(0)
	ptrs := make([]*Tensor, len(parts))
	for i := range parts {
		ptrs[i] = &parts[i]
		bytes := uintptr(parts[i].length * parts[i].dtype.size())
		if bytes > 0 {
			copy(unsafe.Slice((*byte)(unsafe.Add(staging, offset)), bytes), unsafe.Slice((*byte)(parts[i].host), bytes))
		}
		data[i] = uintptr(staging) + offset
		offset += bytes
		lseBytes := uintptr(rowsTimesHeads * 4)
		if lseBytes > 0 {
			copy(unsafe.Slice((*float32)(unsafe.Add(staging, offset)), rowsTimesHeads), partLSE[i][:rowsTimesHeads])
		}
		lseAt[i] = uintptr(staging) + offset
		offset += lseBytes
	}
	err = c.use(func(ctx unsafe.Pointer) error {
		if b := cContextBackend(ctx); b != BackendCPU {
			return invalid("host tensors need a CPU context, this one is %s", b)
		}
		return cMerge(ctx, &m, ptrs, data, lseAt, &o, o.host, cu, lse, 0)
	})
	runtime.KeepAlive(o.keep)
	runtime.KeepAlive(opts.CuSeqlensQ)
	runtime.KeepAlive(opts.LSE)
	return err
}

// DeviceMergeOptions for AttentionMergeDevice: device addresses (0 = none) and, for packed
// sequences, the batch size the cu_seqlens array describes.
type DeviceMergeOptions struct {
	CuSeqlensQ        uintptr
	Batch, MaxSeqlenQ int
	LSE               uintptr
}

// AttentionMergeDevice is AttentionMerge on a GPU context: parts and o are Device tensors,
// partLSE their device lse addresses; enqueued on stream (0 = the default stream), never
// synchronising. GPU backends take at most 64 parts per call.
func (c *Context) AttentionMergeDevice(parts []Tensor, partLSE []uintptr, o Tensor, opts *DeviceMergeOptions,
	stream uintptr) error {
	if opts == nil {
		opts = &DeviceMergeOptions{}
	}
	if len(parts) == 0 || len(parts) != len(partLSE) {
		return invalid("AttentionMergeDevice needs at least one part and one lse per part, got %d and %d",
			len(parts), len(partLSE))
	}
	var m mergeProblem
	switch {
	case opts.CuSeqlensQ != 0 && len(o.shape) == 3:
		m = mergeProblem{parts: len(parts), batch: opts.Batch, seqlenQ: opts.MaxSeqlenQ, heads: o.shape[1],
			headDimV: o.shape[2]}
	case opts.CuSeqlensQ == 0 && len(o.shape) == 4:
		m = mergeProblem{parts: len(parts), batch: o.shape[0], seqlenQ: o.shape[1], heads: o.shape[2],
			headDimV: o.shape[3]}
	default:
		return invalid("a packed o [total, heads, dim] needs CuSeqlensQ, a batched one none")
	}
	data := make([]uintptr, len(parts))
	ptrs := make([]*Tensor, len(parts))
	for i := range parts {
		if parts[i].onHost || !sameShape(parts[i].shape, o.shape) {
			return invalid("part %d must be a Device tensor of o's shape %v", i, o.shape)
		}
		data[i] = parts[i].device
		ptrs[i] = &parts[i]
	}
	return c.use(func(ctx unsafe.Pointer) error {
		return cMerge(ctx, &m, ptrs, data, partLSE, &o, unsafe.Pointer(o.device), unsafe.Pointer(opts.CuSeqlensQ),
			unsafe.Pointer(opts.LSE), stream)
	})
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mergeShape: the problem from o's shape, every part of the same shape; and the lse length.
func mergeShape(parts []Tensor, o *Tensor, cu []int32, maxSeqlen int) (mergeProblem, int, error) {
	for i := range parts {
		if !sameShape(parts[i].shape, o.shape) {
			return mergeProblem{}, 0, invalid("part %d has shape %v, o %v", i, parts[i].shape, o.shape)
		}
	}
	if cu != nil {
		if len(o.shape) != 3 {
			return mergeProblem{}, 0, invalid("packed sequences need 3-D [total, heads, dim] parts and o")
		}
		if err := checkCuSeqlens(cu, o.shape[0], "CuSeqlensQ"); err != nil {
			return mergeProblem{}, 0, err
		}
		return mergeProblem{parts: len(parts), batch: len(cu) - 1, seqlenQ: maxSeqlen, heads: o.shape[1],
			headDimV: o.shape[2]}, o.shape[0] * o.shape[1], nil
	}
	if len(o.shape) != 4 {
		return mergeProblem{}, 0, invalid("fixed-length parts and o are 4-D [batch, seq, heads, dim]")
	}
	return mergeProblem{parts: len(parts), batch: o.shape[0], seqlenQ: o.shape[1], heads: o.shape[2],
		headDimV: o.shape[3]}, o.shape[0] * o.shape[1] * o.shape[2], nil
}
