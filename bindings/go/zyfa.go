// Package zyfa binds libzyfa, FlashAttention forward kernels for FP8 (e4m3) and BF16 prefill, with
// cgo (`#cgo pkg-config: zyfa`).
//
// A Context is one backend on one device; release it with Close (a finalizer is only a backstop).
// Host slices ([]float32, []uint16 holding bf16/fp16, []byte holding e4m3 codes) run on the CPU
// backend through Context.Attention; device memory (raw uintptr addresses) runs on the CUDA or HIP
// backend, enqueued on a stream, through Context.AttentionDevice. A Context may be used from many
// goroutines at once; Close waits for calls in flight.
package zyfa

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Status is a zyfa_status code other than success; it implements error with the library's short
// name, so errors.Is(err, zyfa.StatusNotSupported) tells a fallback-worthy failure apart.
type Status int32

const (
	StatusInvalidArgument Status = 1
	StatusNotSupported    Status = 2
	StatusNoDevice        Status = 3
	StatusDevice          Status = 4
	StatusOutOfMemory     Status = 5
	StatusInternal        Status = 6
)

// Error returns the library's name of the status ("not supported").
func (s Status) Error() string { return cStatusString(s) }

// Error is a failed call: its Status and the library's detail naming the offending field and value.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "zyfa: " + e.Status.Error()
	}
	return "zyfa: " + e.Status.Error() + ": " + e.Message
}

// Unwrap gives the Status, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Status }

func invalid(format string, args ...interface{}) error {
	return &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// Backend selects the implementation a Context runs on.
type Backend int32

const (
	BackendAuto Backend = 0 // HIP, then CUDA, then the CPU
	BackendCPU  Backend = 1
	BackendHIP  Backend = 2
	BackendCUDA Backend = 3
)

func (b Backend) String() string {
	switch b {
	case BackendCPU:
		return "cpu"
	case BackendHIP:
		return "hip"
	case BackendCUDA:
		return "cuda"
	}
	return "auto"
}

// The header version this package mirrors.
const (
	VersionMajor = 0
	VersionMinor = 1
)

// Version is the loaded library's "MAJOR.MINOR.PATCH".
func Version() string { return cVersionString() }

// BuildInfo names the backends and GPU targets compiled into the loaded library.
func BuildInfo() string { return cBuildInfo() }

// CheckVersion fails when the loaded library is not of this package's major version (before 1.0,
// of its minor too: a 0.x minor release may change the ABI).
func CheckVersion() error {
	n := cVersion()
	major, minor := n/10000, n/100%100
	if major != VersionMajor || (major == 0 && minor != VersionMinor) {
		return fmt.Errorf("zyfa: library %s, this package needs %d.%d", Version(), VersionMajor, VersionMinor)
	}
	return nil
}

// ContextOptions configure NewContext; the zero value is backend Auto, device 0, all CPU threads.
type ContextOptions struct {
	Backend    Backend
	Device     int32 // GPU ordinal
	NumThreads int32 // CPU backend worker threads, 0 = all hardware threads
}

// Context is a libzyfa context bound to one backend and one device.
type Context struct {
	mu  sync.RWMutex // calls hold it shared; Close holds it exclusively
	ptr unsafe.Pointer
}

// ErrClosed is returned by calls on a closed Context.
var ErrClosed = &Error{Status: StatusInvalidArgument, Message: "the context is closed"}

// NewContext creates a context; opts nil means the defaults.
func NewContext(opts *ContextOptions) (*Context, error) {
	if opts == nil {
		opts = &ContextOptions{}
	}
	if err := CheckVersion(); err != nil {
		return nil, err
	}
	ptr, err := cContextCreate(opts.Backend, opts.Device, opts.NumThreads)
	if err != nil {
		return nil, err
	}
	c := &Context{ptr: ptr}
	// Backstop only: GPU work enqueued with the context must be complete before it is destroyed,
	// which only the caller knows; call Close.
	runtime.SetFinalizer(c, (*Context).Close)
	return c, nil
}

// Close destroys the context; it is idempotent and waits for calls in flight.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ptr != nil {
		cContextDestroy(c.ptr)
		c.ptr = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

// use runs fn with the live handle, holding the context open (and reachable) for the call.
func (c *Context) use(fn func(ptr unsafe.Pointer) error) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.ptr == nil {
		return ErrClosed
	}
	err := fn(c.ptr)
	runtime.KeepAlive(c)
	return err
}

// Backend is the backend the context is bound to.
func (c *Context) Backend() Backend {
	b := BackendAuto
	_ = c.use(func(p unsafe.Pointer) error { b = cContextBackend(p); return nil })
	return b
}

// DeviceName is "cpu", "sm_90", "gfx950", ...; "" once closed.
func (c *Context) DeviceName() string {
	name := ""
	_ = c.use(func(p unsafe.Pointer) error { name = cContextDeviceName(p); return nil })
	return name
}

// IsStatus reports whether err is a zyfa error with status s.
func IsStatus(err error, s Status) bool { return errors.Is(err, s) }
