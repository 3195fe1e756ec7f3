/* What the HIP runtime test double (fake_hip_runtime.cpp) records, read by hip_host_test.cpp
 * through the exported fake_hip_state(). */
#ifndef ZYFA_TESTS_AMD_FAKE_HIP_STATE_H
#define ZYFA_TESTS_AMD_FAKE_HIP_STATE_H

#include "common/attention_kernel_args.h"

struct fake_hip_launch {
    char symbol[128];
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    void* stream;
    zyfa::AttnKernelArgs args; /* a copy of *kernelParams[0] */
    unsigned char second[128]; /* attention kernels (zyfa_attn_fwd_*): the first bytes of *kernelParams[1] */
};

struct fake_hip_state {
    int modules_loaded;    /* hipModuleLoadData successes */
    int modules_unloaded;
    int images_rejected;   /* images whose ELF header is not a code object for the device's arch */
    int functions_found;   /* hipModuleGetFunction successes (symbol and symbol.kd in the ELF) */
    int functions_missing;
    int set_device_calls;
    int launches;
    int pointer_queries;   /* hipPointerGetAttributes calls */
    struct fake_hip_launch last_launch;
    struct fake_hip_launch previous_launch; /* the launch before last_launch */
};

#endif
