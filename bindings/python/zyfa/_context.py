"""Context: one backend on one device, and the cache of automatic contexts per device."""
import ctypes
import threading

from . import _lib
from ._errors import ZyfaError, check

_BACKENDS = {"auto": _lib.BACKEND_AUTO, "cpu": _lib.BACKEND_CPU, "hip": _lib.BACKEND_HIP,
             "cuda": _lib.BACKEND_CUDA}
_BACKEND_NAMES = {v: k for k, v in _BACKENDS.items()}


class Context:
    """A libzyfa context bound to one backend and one device.

    backend: 'auto' (HIP, then CUDA, then CPU), 'cpu', 'cuda' or 'hip'; device: the GPU ordinal;
    num_threads: CPU backend worker threads, 0 = all hardware threads.
    Release it with close() or a `with` block; garbage collection closes it as a backstop.
    A context may be used from several threads at once (the C library allows it); close() must
    not race with calls using it.
    """

    def __init__(self, backend="auto", device=0, num_threads=0):
        if isinstance(backend, str):
            if backend.lower() not in _BACKENDS:
                raise ValueError("backend must be one of %s, not %r" % (sorted(_BACKENDS), backend))
            backend_code = _BACKENDS[backend.lower()]
        else:
            backend_code = int(backend)
        lib = _lib.lib()
        opts = _lib.ContextOptions()
        lib.zyfa_context_options_init(ctypes.byref(opts), ctypes.sizeof(opts))
        opts.backend = backend_code
        opts.device = int(device)
        opts.num_threads = int(num_threads)
        handle = ctypes.c_void_p()
        self._handle = None
        check(lib.zyfa_context_create(ctypes.byref(opts), ctypes.byref(handle)))
        self._handle = handle
        self._lib = lib  # kept so that __del__ at interpreter exit still reaches the library
        self.device = int(device)
        self.num_threads = int(num_threads)

    @property
    def handle(self):
        """The zyfa_context* as a ctypes.c_void_p; raises if the context is closed."""
        if self._handle is None:
            raise ZyfaError(_lib.ERROR_INVALID_ARGUMENT, "the context is closed",
                            name="invalid argument")
        return self._handle

    @property
    def backend(self):
        """'cpu', 'cuda' or 'hip'."""
        return _BACKEND_NAMES[self._lib.zyfa_context_backend(self.handle)]

    @property
    def device_name(self):
        """'cpu', 'sm_90', 'gfx950', ..."""
        return self._lib.zyfa_context_device_name(self.handle).decode()

    @property
    def closed(self):
        return self._handle is None

    def close(self):
        """Destroys the context; GPU work enqueued with it must have completed. Idempotent."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._lib.zyfa_context_destroy(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        if self.closed:
            return "<zyfa.Context closed>"
        return "<zyfa.Context backend=%s device=%d (%s)>" % (self.backend, self.device, self.device_name)


_default_lock = threading.Lock()
_defaults = {}


def default_context(backend, device=0):
    """The shared context for ('cpu', 0), ('cuda', n) or ('hip', n), created on first use.

    Creating a GPU context loads code objects, so do a first call before capturing a CUDA graph.
    """
    key = (backend, int(device) if backend != "cpu" else 0)
    ctx = _defaults.get(key)
    if ctx is None:
        with _default_lock:
            ctx = _defaults.get(key)
            if ctx is None:
                ctx = Context(backend=backend, device=key[1])
                _defaults[key] = ctx
    return ctx
