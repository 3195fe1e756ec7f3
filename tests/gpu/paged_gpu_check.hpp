// Paged K/V on a GPU backend (CUDA on the H200, HIP on the emulator): a GpuCase's keys copied into
// page pools (tests/support/paged_case.hpp) on the device, run through the block table, and the
// O and lse compared bit for bit with the contiguous call's. Shared by tests/gpu/paged_kv_gpu_test.cpp
// and tests/emu/amd_paged_test.cpp.
#pragma once

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/gpu_session.hpp"
#include "support/paged_case.hpp"

namespace zyfa_gpu_test {

using zyfa_test::PagedKv;
using zyfa_test::PagedLayout;


// The paged twin of a GpuCase on the device: its pools, tables and its own O and lse.
struct DevicePaged {
    PagedKv host;
    DeviceBuffer k_pool, v_pool, table, seqused, o, lse;
    zyfa_attn_params params;
    zyfa_tensor tk, tv, to;

    DevicePaged(GpuRuntime& rt, GpuCase& c, const PagedLayout& layout)
        : host(c.host, layout),
          k_pool(rt, host.k_pool.data(), bytes_of(host.k_pool)),
          v_pool(rt, host.v_pool.data(), bytes_of(host.v_pool)),
          table(rt, host.block_table.data(), bytes_of(host.block_table)),
          seqused(rt, host.seqused_k.data(), bytes_of(host.seqused_k)),
          // The sentinels the contiguous call started from (not its results): an element the paged
          // call leaves unwritten matches only where the contiguous call left it unwritten too.
          o(rt, std::vector<uint8_t>(c.host.o.size(), AttentionCase::kOutputSentinel).data(), bytes_of(c.host.o)),
          lse(rt, std::vector<float>(c.host.lse.size(), AttentionCase::kLseSentinel).data(), bytes_of(c.host.lse)) {
        params = c.params;  // device descales and cu_seqlens_q
        params.cu_seqlens_k = nullptr;
        params.block_table = static_cast<const int32_t*>(table.data());
        params.seqused_k = static_cast<const int32_t*>(seqused.data());
        params.block_table_stride = host.block_table_stride;
        params.num_pages = host.num_pages;
        params.page_size = layout.page_size;
        params.lse = c.params.lse ? static_cast<float*>(lse.data()) : nullptr;
        tk = host.tk;
        tv = host.tv;
        tk.data = k_pool.data();
        tv.data = v_pool.data();
        to = c.to;
        to.data = o.data();
    }
};

// Runs `paged`, the paged twin of `c` (after c.run), and asserts its O and lse are c's bit for bit
// and no guard band was written (paged's buffers, and `workspace` where the call had one).
inline void expect_paged_run_matches(Session& s, GpuCase& c, DevicePaged& paged, int32_t page_size,
                                     const std::string& label, const char* name,
                                     const DeviceBuffer* workspace = nullptr) {
    const zyfa_status st = zyfa_attn_fwd(s.cuda, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to, s.stream);
    if (st != ZYFA_SUCCESS) std::printf("  %s: %s\n", label.c_str(), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_SUCCESS);
    s.runtime->synchronize_stream(s.stream);
    std::vector<uint8_t> o(c.host.o.size());
    std::vector<float> lse(c.host.lse.size());
    paged.o.download(o.data());
    paged.lse.download(lse.data());
    size_t differing = 0;
    for (size_t i = 0; i < o.size(); ++i) differing += o[i] != c.host.o[i];
    const bool lse_equal = std::memcmp(lse.data(), c.host.lse.data(), bytes_of(lse)) == 0;
    const bool guards = paged.o.guard_intact() && paged.lse.guard_intact() && (!workspace || workspace->guard_intact());
    std::printf("  %-44s page %3d %s: %zu of %zu O bytes differ from contiguous, lse %s%s\n", label.c_str(),
                page_size, name, differing, o.size(), lse_equal ? "equal" : "DIFFERS",
                guards ? "" : "  GUARD BAND OVERWRITTEN");
    assert_int_equal(differing, 0);
    assert_true(lse_equal);
    assert_true(guards);
}

// Contiguous and paged on the GPU: bitwise equal O and lse, the paged kernel chosen.
// kernel_part: a substring the paged kernel's name must hold ("ws_paged" on CUDA, "_paged_" on AMD).
inline void expect_paged_equals_contiguous(const CaseShape& shape, int32_t page_size, const std::string& label,
                                           const char* kernel_part) {
    Session& s = session();
    GpuCase c(*s.runtime, shape);
    assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
    PagedLayout layout;
    layout.page_size = page_size;
    layout.row_padding = 16;  // the pools' own row stride (16 elements: FP8's alignment)
    DevicePaged paged(*s.runtime, c, layout);
    const char* name = zyfa_attn_kernel_name(s.cuda, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
    if (name == nullptr) std::printf("  %s: %s\n", label.c_str(), zyfa_last_error_message());
    assert_non_null(name);
    assert_non_null(std::strstr(name, kernel_part));
    expect_paged_run_matches(s, c, paged, page_size, label, name);
}

}  // namespace zyfa_gpu_test
