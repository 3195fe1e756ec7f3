// The replacements behind interposer.hpp. Memory comes from glibc's own entry points
// (__libc_malloc and friends), so the replacements never recurse and blocks allocated before
// main or by glibc internally can still be freed here. Live bytes are malloc_usable_size, which
// is the same at allocation and at free.
#include "interposer.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* block, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* block);
}

namespace zyfa_fault {
namespace {

std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_thread_starts{0};
std::atomic<int64_t> g_live_blocks{0};
std::atomic<int64_t> g_live_bytes{0};
std::atomic<uint64_t> g_fail_allocation_at{0};  // absolute count; 0 = none
std::atomic<uint64_t> g_fail_thread_start_at{0};
std::atomic<bool> g_fired{false};

// Counts one request; false when it is the one to fail.
bool admit(std::atomic<uint64_t>& counter, std::atomic<uint64_t>& fail_at) {
    const uint64_t k = counter.fetch_add(1) + 1;
    if (k != fail_at.load()) return true;
    g_fired = true;
    return false;
}

void* track(void* block) {
    if (block != nullptr) {
        g_live_blocks.fetch_add(1);
        g_live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(block)));
    }
    return block;
}

void untrack(void* block) {
    if (block == nullptr) return;
    g_live_blocks.fetch_sub(1);
    g_live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(block)));
}

void* allocate(size_t size) {
    if (!admit(g_allocations, g_fail_allocation_at)) return nullptr;
    return track(__libc_malloc(size));
}

void* allocate_aligned(size_t alignment, size_t size) {
    if (!admit(g_allocations, g_fail_allocation_at)) return nullptr;
    return track(__libc_memalign(alignment, size));
}

void release(void* block) {
    untrack(block);
    __libc_free(block);
}

// operator new: std::bad_alloc when the request is failed (or memory is really exhausted and no
// new_handler helps).
void* new_or_throw(size_t size, size_t alignment) {
    if (size == 0) size = 1;
    for (;;) {
        void* block = alignment != 0 ? allocate_aligned(alignment, size) : allocate(size);
        if (block != nullptr) return block;
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

void* new_or_null(size_t size, size_t alignment) noexcept {
    try {
        return new_or_throw(size, alignment);
    } catch (...) {
        return nullptr;
    }
}

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

CreateFn real_pthread_create() {
    static const CreateFn real = reinterpret_cast<CreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
    return real;
}
// Resolved before main, so that dlsym's own work is not counted in a call.
[[maybe_unused]] const CreateFn g_resolved_at_start = real_pthread_create();

}  // namespace

Tally tally() {
    return Tally{g_allocations.load(), g_thread_starts.load(), g_live_blocks.load(), g_live_bytes.load()};
}

void fail_allocation(uint64_t n) {
    g_fired = false;
    g_fail_allocation_at = n == 0 ? 0 : g_allocations.load() + n;
}

void fail_thread_start(uint64_t n) {
    g_fired = false;
    g_fail_thread_start_at = n == 0 ? 0 : g_thread_starts.load() + n;
}

void disarm() {
    g_fail_allocation_at = 0;
    g_fail_thread_start_at = 0;
}

bool failure_fired() { return g_fired.load(); }

}  // namespace zyfa_fault

using zyfa_fault::new_or_null;
using zyfa_fault::new_or_throw;
using zyfa_fault::release;

// --- the C allocator --------------------------------------------------------------------------
extern "C" {

void* malloc(size_t size) noexcept { return zyfa_fault::allocate(size); }

void* calloc(size_t count, size_t size) noexcept {
    if (!zyfa_fault::admit(zyfa_fault::g_allocations, zyfa_fault::g_fail_allocation_at)) return nullptr;
    return zyfa_fault::track(__libc_calloc(count, size));
}

void* realloc(void* block, size_t size) noexcept {
    if (block != nullptr && size == 0) {  // glibc frees and returns NULL
        release(block);
        return nullptr;
    }
    if (!zyfa_fault::admit(zyfa_fault::g_allocations, zyfa_fault::g_fail_allocation_at)) return nullptr;
    const int64_t old_bytes = block != nullptr ? static_cast<int64_t>(malloc_usable_size(block)) : 0;
    void* grown = __libc_realloc(block, size);
    if (grown == nullptr) return nullptr;  // the old block is still live
    if (block != nullptr) {
        zyfa_fault::g_live_blocks.fetch_sub(1);
        zyfa_fault::g_live_bytes.fetch_sub(old_bytes);
    }
    return zyfa_fault::track(grown);
}

void* reallocarray(void* block, size_t count, size_t size) noexcept {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return nullptr;
    }
    return realloc(block, bytes);
}

void free(void* block) noexcept { release(block); }

void* memalign(size_t alignment, size_t size) noexcept { return zyfa_fault::allocate_aligned(alignment, size); }

void* aligned_alloc(size_t alignment, size_t size) noexcept { return zyfa_fault::allocate_aligned(alignment, size); }

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
    if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void* block = zyfa_fault::allocate_aligned(alignment, size);
    if (block == nullptr) return ENOMEM;
    *out = block;
    return 0;
}

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) noexcept {
    if (!zyfa_fault::admit(zyfa_fault::g_thread_starts, zyfa_fault::g_fail_thread_start_at)) return EAGAIN;
    return zyfa_fault::real_pthread_create()(thread, attr, start, arg);
}

}  // extern "C"

// --- operator new and delete, every form ------------------------------------------------------
void* operator new(size_t size) { return new_or_throw(size, 0); }
void* operator new[](size_t size) { return new_or_throw(size, 0); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return new_or_null(size, 0); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return new_or_null(size, 0); }
void* operator new(size_t size, std::align_val_t a) { return new_or_throw(size, static_cast<size_t>(a)); }
void* operator new[](size_t size, std::align_val_t a) { return new_or_throw(size, static_cast<size_t>(a)); }
void* operator new(size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
    return new_or_null(size, static_cast<size_t>(a));
}
void* operator new[](size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
    return new_or_null(size, static_cast<size_t>(a));
}

void operator delete(void* block) noexcept { release(block); }
void operator delete[](void* block) noexcept { release(block); }
void operator delete(void* block, size_t) noexcept { release(block); }
void operator delete[](void* block, size_t) noexcept { release(block); }
void operator delete(void* block, const std::nothrow_t&) noexcept { release(block); }
void operator delete[](void* block, const std::nothrow_t&) noexcept { release(block); }
void operator delete(void* block, std::align_val_t) noexcept { release(block); }
void operator delete[](void* block, std::align_val_t) noexcept { release(block); }
void operator delete(void* block, size_t, std::align_val_t) noexcept { release(block); }
void operator delete[](void* block, size_t, std::align_val_t) noexcept { release(block); }
void operator delete(void* block, std::align_val_t, const std::nothrow_t&) noexcept { release(block); }
void operator delete[](void* block, std::align_val_t, const std::nothrow_t&) noexcept { release(block); }
