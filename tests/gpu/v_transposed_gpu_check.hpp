// FP8 V in the transposed layout on a GPU backend (ZYFA_ATTN_V_TRANSPOSED): a GpuCase run row-major,
// then with its V copied into the layout (tests/support/v_transposed_case.hpp), O and lse compared
// bit for bit. Shared by tests/gpu/v_transposed_gpu_test.cpp and the compute-sanitizer case.
#pragma once

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/gpu_session.hpp"
#include "support/v_transposed_case.hpp"

namespace zyfa_gpu_test {

using zyfa_test::VTransposed;
using zyfa_test::VTransposedLayout;

// Runs the case row-major on the GPU, then with V transposed (device copies of the layout, fresh
// sentinel outputs): bitwise equal, the guard bands intact.
inline void expect_transposed_equals_row_major(const CaseShape& shape, const VTransposedLayout& layout, const std::string& label) {
    Session& s = session();
    GpuCase c(*s.runtime, shape);
    assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
    VTransposed vt(c.host, layout);
    DeviceBuffer v(*s.runtime, vt.v.data(), bytes_of(vt.v));
    DeviceBuffer o(*s.runtime, std::vector<uint8_t>(c.host.o.size(), zyfa_test::AttentionCase::kOutputSentinel).data(),
                   bytes_of(c.host.o));
    DeviceBuffer lse(*s.runtime, std::vector<float>(c.host.lse.size(), zyfa_test::AttentionCase::kLseSentinel).data(),
                     bytes_of(c.host.lse));
    zyfa_attn_params p = c.params;
    p.flags = ZYFA_ATTN_V_TRANSPOSED;
    p.lse = c.params.lse ? static_cast<float*>(lse.data()) : nullptr;
    zyfa_tensor tv = vt.tv, to = c.to;
    tv.data = v.data();
    to.data = o.data();
    const char* name = zyfa_attn_kernel_name(s.cuda, &p, &c.tq, &c.tk, &tv, &to);
    if (name == nullptr) std::printf("  %s: %s\n", label.c_str(), zyfa_last_error_message());
    assert_non_null(name);
    const zyfa_status st = zyfa_attn_fwd(s.cuda, &p, &c.tq, &c.tk, &tv, &to, s.stream);
    if (st != ZYFA_SUCCESS) std::printf("  %s: %s\n", label.c_str(), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_SUCCESS);
    s.runtime->synchronize_stream(s.stream);
    std::vector<uint8_t> got_o(c.host.o.size());
    std::vector<float> got_lse(c.host.lse.size());
    o.download(got_o.data());
    lse.download(got_lse.data());
    size_t differing = 0;
    for (size_t i = 0; i < got_o.size(); ++i) differing += got_o[i] != c.host.o[i];
    const bool lse_equal = std::memcmp(got_lse.data(), c.host.lse.data(), bytes_of(got_lse)) == 0;
    const bool guards = o.guard_intact() && lse.guard_intact();
    std::printf("  %-50s %s: %zu of %zu O bytes differ from row-major, lse %s%s\n", label.c_str(), name, differing,
                got_o.size(), lse_equal ? "equal" : "DIFFERS", guards ? "" : "  GUARD BAND OVERWRITTEN");
    assert_int_equal(differing, 0);
    assert_true(lse_equal);
    assert_true(guards);
}

}  // namespace zyfa_gpu_test
