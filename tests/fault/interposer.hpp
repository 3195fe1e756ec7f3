// Counting, and failing on request, every allocation and thread start of the process.
// interposer.cpp replaces operator new/delete (every form), the malloc family and pthread_create
// in the test executable, which the dynamic linker searches first: what libzyfa.so, libstdc++
// and glibc allocate or start on a zyfa call's behalf passes through it.
#pragma once

#include <cstdint>

namespace zyfa_fault {

struct Tally {
    uint64_t allocations;    // requests for memory: operator new, malloc, calloc, realloc, memalign...
    uint64_t thread_starts;  // pthread_create calls
    int64_t live_blocks;     // allocated and not yet freed
    int64_t live_bytes;      // their usable sizes
};

Tally tally();

// The n-th allocation (or thread start) counted after this call fails, once; n = 0 fails none.
// A failed allocation returns NULL (operator new throws std::bad_alloc); a failed thread start
// returns EAGAIN.
void fail_allocation(uint64_t n);
void fail_thread_start(uint64_t n);
void disarm();
// Whether the armed failure was reached since it was armed.
bool failure_fired();

}  // namespace zyfa_fault
