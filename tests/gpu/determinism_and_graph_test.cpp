// Reproducibility on the GPU: 1,000 launches of one problem give bitwise identical O and lse
// (each launch writes into an output reset to a sentinel, so a launch that did nothing cannot
// pass), and a launch captured in a CUDA graph and replayed gives the same bits as a plain launch,
// also after the inputs in the captured buffers change.
#include <cstring>
#include <vector>

#include "gpu_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

constexpr int kLaunches = 1000;

CaseShape shape_for(const DtypeMode& m) {
    CaseShape s = mode_shape(m);
    s.out_dtype = ZYFA_DTYPE_BF16;
    s.batch = 2;
    s.seqlen_q = s.seqlen_k = 517;  // partial last query tile and key block
    s.heads_q = 8;
    s.heads_kv = 2;
    s.head_dim_qk = s.head_dim_v = 128;
    return s;
}

struct Outputs {
    std::vector<uint8_t> o;
    std::vector<float> lse;
};

// Resets o and lse to their sentinels and waits until that is done: fill_device runs on the
// legacy default stream, which a non-blocking stream does not wait for.
void reset(GpuCase& c, const Outputs& sentinel) {
    c.reset_outputs(sentinel.o, sentinel.lse);
    session().runtime->synchronize_device();
}

Outputs snapshot(const GpuCase& c) { return Outputs{c.host.o, c.host.lse}; }

bool same_bits(const Outputs& a, const Outputs& b) {
    return a.o.size() == b.o.size() && a.lse.size() == b.lse.size() &&
           std::memcmp(a.o.data(), b.o.data(), a.o.size()) == 0 &&
           std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0;
}

void launches_are_bitwise_identical(const DtypeMode& m) {
    Session& s = session();
    GpuCase c(*s.runtime, shape_for(m));
    const Outputs sentinel = snapshot(c);  // the host buffers still hold the sentinels
    assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
    const Outputs first = snapshot(c);
    assert_false(same_bits(first, sentinel));
    int differing = 0;
    for (int i = 1; i < kLaunches; ++i) {
        reset(c, sentinel);
        assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
        if (!same_bits(snapshot(c), first)) ++differing;
    }
    std::printf("  %-13s %d launches: %d differ from the first\n", m.name, kLaunches, differing);
    assert_int_equal(differing, 0);
    assert_true(c.guards_intact());
}

void test_1000_launches_fp8_lean(void**) {
    guarded([] { launches_are_bitwise_identical(kE4m3fnLean); });
}
void test_1000_launches_fp8_exact(void**) {
    guarded([] { launches_are_bitwise_identical(kE4m3fnExact); });
}
void test_1000_launches_bf16(void**) {
    guarded([] { launches_are_bitwise_identical(kBf16); });
}

void graph_replay_matches_plain_launch(const DtypeMode& m) {
    Session& s = session();
    GpuRuntime& rt = *s.runtime;
    GpuCase c(rt, shape_for(m));
    const Outputs sentinel = snapshot(c);
    assert_int_equal(c.run(s.cuda, rt, s.stream), ZYFA_SUCCESS);
    const Outputs plain = snapshot(c);

    // Capture: zyfa_attn_fwd must neither synchronise nor allocate, or the capture breaks here.
    reset(c, sentinel);
    rt.begin_capture(s.stream);
    const zyfa_status captured = c.launch(s.cuda, s.stream);
    zyfa::gpu::GraphHandle graph = rt.end_capture(s.stream);
    assert_int_equal(captured, ZYFA_SUCCESS);
    zyfa::gpu::GraphExecHandle exec = rt.instantiate_graph(graph);
    // Capturing enqueues nothing: the outputs still hold the sentinels.
    c.download();
    assert_true(same_bits(snapshot(c), sentinel));

    int differing = 0;
    for (int i = 0; i < 10; ++i) {
        reset(c, sentinel);
        rt.launch_graph(exec, s.stream);
        rt.synchronize_stream(s.stream);
        c.download();
        if (!same_bits(snapshot(c), plain)) ++differing;
    }
    // New inputs in the same buffers: the replay computes them, it does not repeat old bits.
    CaseShape other = shape_for(m);
    other.seed = 99;
    AttentionCase fresh(other);
    GpuCase plain_other(rt, other);
    assert_int_equal(plain_other.run(s.cuda, rt, s.stream), ZYFA_SUCCESS);
    c.upload_inputs(fresh);
    reset(c, sentinel);
    rt.launch_graph(exec, s.stream);
    rt.synchronize_stream(s.stream);
    c.download();
    const bool replay_follows_inputs = same_bits(snapshot(c), snapshot(plain_other)) && !same_bits(snapshot(c), plain);
    std::printf("  %-13s graph replay: %d of 10 replays differ from a plain launch; replay on new inputs %s\n", m.name,
                differing, replay_follows_inputs ? "matches a plain launch on them" : "DOES NOT match");
    rt.destroy_graph_exec(exec);
    rt.destroy_graph(graph);
    assert_int_equal(differing, 0);
    assert_true(replay_follows_inputs);
}

void test_graph_replay_fp8_lean(void**) {
    guarded([] { graph_replay_matches_plain_launch(kE4m3fnLean); });
}
void test_graph_replay_fp8_exact(void**) {
    guarded([] { graph_replay_matches_plain_launch(kE4m3fnExact); });
}
void test_graph_replay_bf16(void**) {
    guarded([] { graph_replay_matches_plain_launch(kBf16); });
}

}  // namespace

int main(void) {
    if (const int rc = open_session_or_skip("gpu_determinism_and_graph")) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1000_launches_fp8_lean), cmocka_unit_test(test_1000_launches_fp8_exact),
        cmocka_unit_test(test_1000_launches_bf16),     cmocka_unit_test(test_graph_replay_fp8_lean),
        cmocka_unit_test(test_graph_replay_fp8_exact), cmocka_unit_test(test_graph_replay_bf16),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
