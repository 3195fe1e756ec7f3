/* Leaks one block on purpose. The test leak_sanitizer_active (ASan builds only) runs this with
 * detect_leaks=1 and passes only if LeakSanitizer reports the leak: proof that leak detection
 * really runs in the sanitizer tier on this machine (LSan needs ptrace-like access that some
 * sandboxes and containers deny, and then it silently finds nothing). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "zyfa.h"

/* Allocates and drops the only pointer. Out of line, and the stack it used is scrubbed
 * afterwards, so that no stale copy in a register or stack slot keeps the block "reachable" for
 * LeakSanitizer's conservative scan (as happened at -O2 with the allocation inlined in main). */
__attribute__((noinline)) static void leak(void) {
    void* volatile block = malloc(4242);
    block = NULL;
    (void)block;
}

__attribute__((noinline)) static void scrub_stack(void) {
    volatile unsigned char area[16384];
    for (size_t i = 0; i < sizeof area; ++i) area[i] = 0;
}

int main(void) {
    leak();
    scrub_stack();
    /* Also touch the library, so the canary runs in the same environment as the C tests. */
    printf("zyfa %s: leaked 4242 bytes\n", zyfa_version_string());
    return 0;
}
