package zyfa

import (
	"fmt"
	"unsafe"
)

// DType is an element type.
type DType int32

const (
	FP32        DType = 1
	FP16        DType = 2
	BF16        DType = 3
	FP8E4M3FN   DType = 4 // OCP e4m3: bias 7, max 448
	FP8E4M3FNUZ DType = 5 // bias 8, max 240 (gfx942)
)

func (d DType) size() int {
	switch d {
	case FP32:
		return 4
	case FP16, BF16:
		return 2
	}
	return 1
}

// Tensor is a view of a [batch, seq, heads, dim] array (or packed [total, heads, dim] for
// variable-length problems): host memory it keeps alive, or a device address. The dim axis is
// contiguous; strides are in elements for (batch, seq, head).
type Tensor struct {
	shape   []int
	strides [3]int64
	dtype   DType
	host    unsafe.Pointer // first element of the Go slice (nil for device or empty tensors)
	keep    interface{}    // the Go slice, kept reachable with the Tensor
	length  int            // elements in the slice
	device  uintptr
	onHost  bool
}

func contiguous(shape []int) ([3]int64, error) {
	switch len(shape) {
	case 4:
		return [3]int64{int64(shape[1] * shape[2] * shape[3]), int64(shape[2] * shape[3]), int64(shape[3])}, nil
	case 3:
		return [3]int64{0, int64(shape[1] * shape[2]), int64(shape[2])}, nil
	}
	return [3]int64{}, invalid("a shape has 4 extents [batch, seq, heads, dim] or 3 [total, heads, dim], not %v", shape)
}

func elements(shape []int) int {
	n := 1
	for _, s := range shape {
		if s < 0 {
			return -1
		}
		n *= s
	}
	return n
}

func hostTensor(p unsafe.Pointer, keep interface{}, length int, dtype DType, shape []int) (Tensor, error) {
	strides, err := contiguous(shape)
	if err != nil {
		return Tensor{}, err
	}
	if n := elements(shape); n < 0 || n > length {
		return Tensor{}, invalid("shape %v needs %d elements, the slice has %d", shape, n, length)
	}
	return Tensor{shape: append([]int(nil), shape...), strides: strides, dtype: dtype, host: p, keep: keep,
		length: length, onHost: true}, nil
}

// Float32 views a contiguous []float32 of the given shape.
func Float32(data []float32, shape ...int) (Tensor, error) {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	return hostTensor(p, data, len(data), FP32, shape)
}

// Uint16 views a contiguous []uint16 holding BF16 or FP16 bits.
func Uint16(data []uint16, dtype DType, shape ...int) (Tensor, error) {
	if dtype != BF16 && dtype != FP16 {
		return Tensor{}, invalid("[]uint16 holds BF16 or FP16, not dtype %d", dtype)
	}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	return hostTensor(p, data, len(data), dtype, shape)
}

// Bytes views a contiguous []byte holding FP8 codes (FP8E4M3FN or FP8E4M3FNUZ).
func Bytes(data []byte, dtype DType, shape ...int) (Tensor, error) {
	if dtype != FP8E4M3FN && dtype != FP8E4M3FNUZ {
		return Tensor{}, invalid("[]byte holds FP8 e4m3 codes, not dtype %d", dtype)
	}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	return hostTensor(p, data, len(data), dtype, shape)
}

// Device views device memory at ptr for the GPU backends; strides nil means contiguous. Nothing
// checks the address: it must hold the elements the shape addresses until the stream work is done.
func Device(ptr uintptr, dtype DType, shape []int, strides *[3]int64) (Tensor, error) {
	s, err := contiguous(shape)
	if err != nil {
		return Tensor{}, err
	}
	if strides != nil {
		s = *strides
	}
	return Tensor{shape: append([]int(nil), shape...), strides: s, dtype: dtype, device: ptr}, nil
}

// Shape is the view's shape.
func (t Tensor) Shape() []int { return append([]int(nil), t.shape...) }

func (t Tensor) String() string { return fmt.Sprintf("Tensor(dtype %d, shape %v)", t.dtype, t.shape) }
