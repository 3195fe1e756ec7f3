package zyfa

/*
#cgo pkg-config: zyfa
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zyfa.h>

// The C side of each call. Go memory handed to C may not hold Go pointers, so the data pointers
// travel as separate arguments and are put into the structs here, on the C stack. The detail
// message is thread-local in C and a goroutine may change threads between two cgo calls, so it is
// copied out within the same call.
static zyfa_status zyfa_go_message(zyfa_status st, char* msg, size_t n) {
	if (st != ZYFA_SUCCESS && msg != NULL && n > 0) {
		strncpy(msg, zyfa_last_error_message(), n - 1);
		msg[n - 1] = '\0';
	}
	return st;
}

static zyfa_status zyfa_go_context_create(zyfa_context_options opts, zyfa_context** out, char* msg, size_t n) {
	return zyfa_go_message(zyfa_context_create(&opts, out), msg, n);
}

static zyfa_status zyfa_go_attn(zyfa_context* ctx, zyfa_attn_params p, zyfa_tensor q, zyfa_tensor k,
                                zyfa_tensor v, zyfa_tensor o, void* qd, void* kd, void* vd, void* q_data,
                                void* k_data, void* v_data, void* o_data, void* cu_q, void* cu_k, void* lse,
                                void* sinks, void* table, void* used, void* stream, int kernel_name_only,
                                const char** name, char* msg, size_t n) {
	q.data = q_data; k.data = k_data; v.data = v_data; o.data = o_data;
	p.cu_seqlens_q = (const int32_t*)cu_q; p.cu_seqlens_k = (const int32_t*)cu_k;
	p.block_table = (const int32_t*)table; p.seqused_k = (const int32_t*)used;
	p.q_descale = (const float*)qd; p.k_descale = (const float*)kd; p.v_descale = (const float*)vd;
	p.lse = (float*)lse; p.sinks = (const float*)sinks;
	if (kernel_name_only) {
		*name = zyfa_attn_kernel_name(ctx, &p, &q, &k, &v, &o);
		if (*name != NULL) return ZYFA_SUCCESS;
		return zyfa_go_message(zyfa_attn_supported(ctx, &p, &q, &k, &v, &o), msg, n);
	}
	return zyfa_go_message(zyfa_attn_fwd(ctx, &p, &q, &k, &v, &o, stream), msg, n);
}

// Host memory: Go pointers passed as arguments (cgo keeps them alive and checks them).
static zyfa_status zyfa_go_attn_host(zyfa_context* ctx, zyfa_attn_params p, zyfa_tensor q, zyfa_tensor k,
                                     zyfa_tensor v, zyfa_tensor o, void* qd, void* kd, void* vd, void* q_data,
                                     void* k_data, void* v_data, void* o_data, void* cu_q, void* cu_k, void* lse,
                                     void* sinks, void* table, void* used, int kernel_name_only, const char** name,
                                     char* msg, size_t n) {
	return zyfa_go_attn(ctx, p, q, k, v, o, qd, kd, vd, q_data, k_data, v_data, o_data, cu_q, cu_k, lse, sinks,
	                    table, used, NULL, kernel_name_only, name, msg, n);
}

// Device memory: addresses as integers (they are not Go pointers).
static zyfa_status zyfa_go_attn_device(zyfa_context* ctx, zyfa_attn_params p, zyfa_tensor q, zyfa_tensor k,
                                       zyfa_tensor v, zyfa_tensor o, uintptr_t qd, uintptr_t kd, uintptr_t vd,
                                       uintptr_t q_data, uintptr_t k_data, uintptr_t v_data, uintptr_t o_data,
                                       uintptr_t cu_q, uintptr_t cu_k, uintptr_t lse, uintptr_t sinks,
                                       uintptr_t table, uintptr_t used, uintptr_t stream, char* msg, size_t n) {
	return zyfa_go_attn(ctx, p, q, k, v, o, (void*)qd, (void*)kd, (void*)vd, (void*)q_data, (void*)k_data,
	                    (void*)v_data, (void*)o_data, (void*)cu_q, (void*)cu_k, (void*)lse, (void*)sinks,
	                    (void*)table, (void*)used, (void*)stream, 0, NULL, msg, n);
}

static zyfa_status zyfa_go_quantize_host(zyfa_context* ctx, zyfa_quant_params p, zyfa_tensor in, zyfa_tensor out,
                                         void* in_data, void* out_data, void* cu, float* descale, float* mean,
                                         char* msg, size_t n) {
	in.data = in_data; out.data = out_data; p.cu_seqlens = (const int32_t*)cu; p.smooth_mean = mean;
	return zyfa_go_message(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), msg, n);
}

static zyfa_status zyfa_go_quantize_device(zyfa_context* ctx, zyfa_quant_params p, zyfa_tensor in,
                                           zyfa_tensor out, uintptr_t in_data, uintptr_t out_data, uintptr_t cu,
                                           uintptr_t descale, uintptr_t mean, uintptr_t stream, char* msg,
                                           size_t n) {
	in.data = (void*)in_data; out.data = (void*)out_data; p.cu_seqlens = (const int32_t*)cu;
	p.smooth_mean = (float*)mean;
	return zyfa_go_message(zyfa_quantize_fp8(ctx, &p, &in, &out, (float*)descale, (void*)stream), msg, n);
}

// zyfa_attn_merge: parts and part_lse are C memory (cgo forbids Go pointers inside memory handed
// to C); o, cu_seqlens_q and the output lse travel as arguments.
// part_data and part_lse hold addresses (C or device memory) as integers; the views get them here.
static zyfa_status zyfa_go_merge(zyfa_context* ctx, zyfa_merge_params p, zyfa_tensor* parts,
                                 const uintptr_t* part_data, const uintptr_t* part_lse, zyfa_tensor o, void* o_data,
                                 void* cu, void* lse, uintptr_t stream, char* msg, size_t n) {
	const float** lse_ptrs = (const float**)malloc(sizeof(float*) * (size_t)(p.num_parts > 0 ? p.num_parts : 1));
	if (lse_ptrs == NULL) return ZYFA_ERROR_OUT_OF_MEMORY;
	for (int32_t i = 0; i < p.num_parts; ++i) {
		parts[i].data = (void*)part_data[i];
		lse_ptrs[i] = (const float*)part_lse[i];
	}
	o.data = o_data; p.cu_seqlens_q = (const int32_t*)cu; p.lse = (float*)lse;
	zyfa_status st = zyfa_go_message(zyfa_attn_merge(ctx, &p, parts, lse_ptrs, &o, (void*)stream), msg, n);
	free(lse_ptrs);
	return st;
}
*/
import "C"

import (
	"unsafe"
)

const messageSize = 1024

func goMessage(buf []byte) string {
	for i, b := range buf {
		if b == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}

func statusError(st C.zyfa_status, buf []byte) error {
	if st == C.ZYFA_SUCCESS {
		return nil
	}
	return &Error{Status: Status(st), Message: goMessage(buf)}
}

func cVersion() uint32              { return uint32(C.zyfa_version()) }
func cVersionString() string        { return C.GoString(C.zyfa_version_string()) }
func cBuildInfo() string            { return C.GoString(C.zyfa_build_info()) }
func cStatusString(s Status) string { return C.GoString(C.zyfa_status_string(C.zyfa_status(s))) }

func cContextCreate(backend Backend, device, numThreads int32) (unsafe.Pointer, error) {
	var opts C.zyfa_context_options
	C.zyfa_context_options_init(&opts, C.size_t(unsafe.Sizeof(opts)))
	opts.backend = C.zyfa_backend(backend)
	opts.device = C.int32_t(device)
	opts.num_threads = C.int32_t(numThreads)
	var ctx *C.zyfa_context
	msg := make([]byte, messageSize)
	st := C.zyfa_go_context_create(opts, &ctx, (*C.char)(unsafe.Pointer(&msg[0])), messageSize)
	if err := statusError(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(ctx), nil
}

func cContextDestroy(ctx unsafe.Pointer) { C.zyfa_context_destroy((*C.zyfa_context)(ctx)) }
func cContextBackend(ctx unsafe.Pointer) Backend {
	return Backend(C.zyfa_context_backend((*C.zyfa_context)(ctx)))
}
func cContextDeviceName(ctx unsafe.Pointer) string {
	return C.GoString(C.zyfa_context_device_name((*C.zyfa_context)(ctx)))
}

func cTensor(t *Tensor) C.zyfa_tensor {
	return C.zyfa_tensor{dtype: C.zyfa_dtype(t.dtype), stride_batch: C.int64_t(t.strides[0]),
		stride_seq: C.int64_t(t.strides[1]), stride_head: C.int64_t(t.strides[2])}
}

func cAttnParams(p *attnParams) C.zyfa_attn_params {
	var c C.zyfa_attn_params
	C.zyfa_attn_params_init(&c, C.size_t(unsafe.Sizeof(c)))
	c.mask = C.zyfa_mask(p.mask)
	c.batch, c.seqlen_q, c.seqlen_k = C.int64_t(p.batch), C.int64_t(p.seqlenQ), C.int64_t(p.seqlenK)
	c.heads_q, c.heads_kv = C.int64_t(p.headsQ), C.int64_t(p.headsKV)
	c.head_dim_qk, c.head_dim_v = C.int64_t(p.headDimQK), C.int64_t(p.headDimV)
	c.softmax_scale = C.float(p.softmaxScale)
	c.softmax = C.zyfa_softmax(p.softmax)
	c.window_left, c.window_right = C.int32_t(p.windowLeft), C.int32_t(p.windowRight)
	c.key_block = C.int32_t(p.keyBlock)
	if p.paged { // the pointers are set by zyfa_go_attn
		c.block_table_stride, c.num_pages = C.int64_t(p.blockTableStride), C.int64_t(p.numPages)
		c.page_size = C.int32_t(p.pageSize)
	}
	return c
}

// hostPointers are the Go memory one host call reads and writes (nil where absent).
type hostPointers struct {
	q, k, v, o, qd, kd, vd, cuQ, cuK, lse, sinks, table, used unsafe.Pointer
}

func cAttnHost(ctx unsafe.Pointer, p *attnParams, q, k, v, o *Tensor, ptr *hostPointers, nameOnly bool) (string, error) {
	msg := make([]byte, messageSize)
	var name *C.char
	only := C.int(0)
	if nameOnly {
		only = 1
	}
	st := C.zyfa_go_attn_host((*C.zyfa_context)(ctx), cAttnParams(p), cTensor(q), cTensor(k), cTensor(v), cTensor(o),
		ptr.qd, ptr.kd, ptr.vd, ptr.q, ptr.k, ptr.v, ptr.o, ptr.cuQ, ptr.cuK, ptr.lse, ptr.sinks, ptr.table, ptr.used,
		only, &name,
		(*C.char)(unsafe.Pointer(&msg[0])), messageSize)
	if err := statusError(st, msg); err != nil {
		return "", err
	}
	if nameOnly {
		return C.GoString(name), nil
	}
	return "", nil
}

func cAttnDevice(ctx unsafe.Pointer, p *attnParams, q, k, v, o *Tensor, d *DeviceAttentionOptions, stream uintptr) error {
	msg := make([]byte, messageSize)
	st := C.zyfa_go_attn_device((*C.zyfa_context)(ctx), cAttnParams(p), cTensor(q), cTensor(k), cTensor(v), cTensor(o),
		C.uintptr_t(d.QDescale), C.uintptr_t(d.KDescale), C.uintptr_t(d.VDescale), C.uintptr_t(q.device),
		C.uintptr_t(k.device), C.uintptr_t(v.device), C.uintptr_t(o.device), C.uintptr_t(d.CuSeqlensQ),
		C.uintptr_t(d.CuSeqlensK), C.uintptr_t(d.LSE), C.uintptr_t(d.Sinks), C.uintptr_t(d.BlockTable),
		C.uintptr_t(d.SequsedK), C.uintptr_t(stream), (*C.char)(unsafe.Pointer(&msg[0])), messageSize)
	return statusError(st, msg)
}

func cQuantParams(flags uint32, batch, seqlen, heads, headDim int) C.zyfa_quant_params {
	var c C.zyfa_quant_params
	C.zyfa_quant_params_init(&c, C.size_t(unsafe.Sizeof(c)))
	c.flags = C.uint32_t(flags)
	c.batch, c.seqlen, c.heads, c.head_dim = C.int64_t(batch), C.int64_t(seqlen), C.int64_t(heads), C.int64_t(headDim)
	return c
}

// mean is nil (no smoothing) or the first of the batch * heads * headDim K-smoothing means.
func cQuantizeHost(ctx unsafe.Pointer, flags uint32, batch, seqlen, heads, headDim int, in, out *Tensor,
	cu unsafe.Pointer, descale, mean *float32) error {
	msg := make([]byte, messageSize)
	st := C.zyfa_go_quantize_host((*C.zyfa_context)(ctx), cQuantParams(flags, batch, seqlen, heads, headDim),
		cTensor(in), cTensor(out), in.host, out.host, cu, (*C.float)(unsafe.Pointer(descale)),
		(*C.float)(unsafe.Pointer(mean)), (*C.char)(unsafe.Pointer(&msg[0])), messageSize)
	return statusError(st, msg)
}

func cQuantizeDevice(ctx unsafe.Pointer, flags uint32, batch, seqlen, heads, headDim int, in, out *Tensor,
	cu, descale, mean, stream uintptr) error {
	msg := make([]byte, messageSize)
	st := C.zyfa_go_quantize_device((*C.zyfa_context)(ctx), cQuantParams(flags, batch, seqlen, heads, headDim),
		cTensor(in), cTensor(out), C.uintptr_t(in.device), C.uintptr_t(out.device), C.uintptr_t(cu),
		C.uintptr_t(descale), C.uintptr_t(mean), C.uintptr_t(stream), (*C.char)(unsafe.Pointer(&msg[0])),
		messageSize)
	return statusError(st, msg)
}

// mergeProblem is zyfa_merge_params without its pointers.
type mergeProblem struct {
	parts, batch, seqlenQ, heads, headDimV int
}

// cMerge calls zyfa_attn_merge. partData and partLSE are addresses in C or device memory (never Go
// memory); o, cu and lse are Go memory (host) or nil, or oDevice etc. for device calls.
func cMerge(ctx unsafe.Pointer, m *mergeProblem, parts []*Tensor, partData, partLSE []uintptr, o *Tensor,
	oData, cu, lse unsafe.Pointer, stream uintptr) error {
	var p C.zyfa_merge_params
	C.zyfa_merge_params_init(&p, C.size_t(unsafe.Sizeof(p)))
	p.num_parts = C.int32_t(m.parts)
	p.batch, p.seqlen_q = C.int64_t(m.batch), C.int64_t(m.seqlenQ)
	p.heads, p.head_dim_v = C.int64_t(m.heads), C.int64_t(m.headDimV)
	n := len(parts)
	// The arrays are C memory: the views and addresses they hold are not Go pointers.
	tensors := (*C.zyfa_tensor)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.zyfa_tensor{}))))
	addresses := (*C.uintptr_t)(C.malloc(C.size_t(2*n) * C.size_t(unsafe.Sizeof(C.uintptr_t(0)))))
	defer C.free(unsafe.Pointer(tensors))
	defer C.free(unsafe.Pointer(addresses))
	if tensors == nil || addresses == nil {
		return &Error{Status: StatusOutOfMemory, Message: "zyfa (Go): cannot allocate the parts' descriptors"}
	}
	tensorSlice := unsafe.Slice(tensors, n)
	addressSlice := unsafe.Slice(addresses, 2*n)
	for i, t := range parts {
		tensorSlice[i] = cTensor(t)
		addressSlice[i] = C.uintptr_t(partData[i])
		addressSlice[n+i] = C.uintptr_t(partLSE[i])
	}
	msg := make([]byte, messageSize)
	st := C.zyfa_go_merge((*C.zyfa_context)(ctx), p, tensors, addresses, (*C.uintptr_t)(unsafe.Add(unsafe.Pointer(addresses),
		uintptr(n)*unsafe.Sizeof(C.uintptr_t(0)))), cTensor(o), oData, cu, lse, C.uintptr_t(stream),
		(*C.char)(unsafe.Pointer(&msg[0])), messageSize)
	return statusError(st, msg)
}

// cMalloc and cFree: C memory for data that C reads through pointers held in other C memory.
func cMalloc(bytes int) unsafe.Pointer {
	if bytes <= 0 {
		return nil
	}
	return C.malloc(C.size_t(bytes))
}

func cFree(p unsafe.Pointer) { C.free(p) }
