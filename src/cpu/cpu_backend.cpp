#include "cpu_backend.hpp"

#include "attention_blocked.hpp"
#include "attention_merge.hpp"
#include "core/errors.hpp"
#include "numerics_model.hpp"
#include "quantize_fp8.hpp"
#include "worker_pool.hpp"

namespace zyfa {
namespace cpu {

namespace {

// Kernel names: backend, input dtype, softmax mode, key block. Static strings (the ABI says so).
const char* kernel_name_for(zyfa_dtype dtype, zyfa_softmax softmax, int key_block) {
    const bool lean = softmax == ZYFA_SOFTMAX_LEAN;
    if (key_block == 128) {
        switch (dtype) {
            case ZYFA_DTYPE_FP8_E4M3FN: return lean ? "cpu_fwd_e4m3fn_lean_bk128" : "cpu_fwd_e4m3fn_exact_bk128";
            case ZYFA_DTYPE_FP8_E4M3FNUZ: return lean ? "cpu_fwd_e4m3fnuz_lean_bk128" : "cpu_fwd_e4m3fnuz_exact_bk128";
            case ZYFA_DTYPE_BF16: return "cpu_fwd_bf16_exact_bk128";
            case ZYFA_DTYPE_FP16: return "cpu_fwd_fp16_exact_bk128";
            case ZYFA_DTYPE_FP32: return "cpu_fwd_fp32_exact_bk128";
            default: return nullptr;
        }
    }
    switch (dtype) {
        case ZYFA_DTYPE_FP8_E4M3FN: return lean ? "cpu_fwd_e4m3fn_lean_bk64" : "cpu_fwd_e4m3fn_exact_bk64";
        case ZYFA_DTYPE_FP8_E4M3FNUZ: return lean ? "cpu_fwd_e4m3fnuz_lean_bk64" : "cpu_fwd_e4m3fnuz_exact_bk64";
        case ZYFA_DTYPE_BF16: return "cpu_fwd_bf16_exact_bk64";
        case ZYFA_DTYPE_FP16: return "cpu_fwd_fp16_exact_bk64";
        case ZYFA_DTYPE_FP32: return "cpu_fwd_fp32_exact_bk64";
        default: return nullptr;
    }
}

// The INT8 Q/K mode: q and k INT8, v (and so P) in this FP8 format.
const char* int8_qk_kernel_name_for(zyfa_dtype v_dtype, zyfa_softmax softmax, int key_block) {
    const bool lean = softmax == ZYFA_SOFTMAX_LEAN;
    const bool fnuz = v_dtype == ZYFA_DTYPE_FP8_E4M3FNUZ;
    if (key_block == 128) {
        if (fnuz) return lean ? "cpu_fwd_int8qk_e4m3fnuz_lean_bk128" : "cpu_fwd_int8qk_e4m3fnuz_exact_bk128";
        return lean ? "cpu_fwd_int8qk_e4m3fn_lean_bk128" : "cpu_fwd_int8qk_e4m3fn_exact_bk128";
    }
    if (fnuz) return lean ? "cpu_fwd_int8qk_e4m3fnuz_lean_bk64" : "cpu_fwd_int8qk_e4m3fnuz_exact_bk64";
    return lean ? "cpu_fwd_int8qk_e4m3fn_lean_bk64" : "cpu_fwd_int8qk_e4m3fn_exact_bk64";
}

const char* kernel_name_for(const AttnProblem& problem) {
    const int key_block = NumericsModel::for_problem(problem).key_block;
    if (problem.int8_qk()) return int8_qk_kernel_name_for(problem.v.dtype, problem.softmax, key_block);
    return kernel_name_for(problem.q.dtype, problem.softmax, key_block);
}

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(int num_threads) : pool_(num_threads) {}

    zyfa_backend kind() const override { return ZYFA_BACKEND_CPU; }
    const char* device_name() const override { return "cpu"; }

    // The CPU backend runs every valid request: every dtype, mask, window, head dim up to 512,
    // key block 64 or 128.
    void check_attn_supported(const AttnProblem& problem) const override {
        if (!kernel_name_for(problem))
            throw_not_supported("the CPU backend has no kernel for this q dtype");
        if (problem.softmax == ZYFA_SOFTMAX_LEAN && !problem.fp8_p())
            throw_not_supported("params.softmax = LEAN needs FP8 q/k/v (or INT8 q/k with FP8 v)");
    }

    const char* attn_kernel_name(const AttnProblem& problem) const override {
        return kernel_name_for(problem);
    }

    void attn_fwd(const AttnProblem& problem, void* /*stream: the CPU backend is synchronous*/) override {
        attention_blocked(problem, NumericsModel::for_problem(problem), pool_);
    }

    void check_quantize_supported(const QuantProblem&) const override {}

    void quantize_fp8(const QuantProblem& problem, void* /*stream*/) override { cpu::quantize_fp8(problem, pool_); }

    void check_merge_supported(const MergeProblem&) const override {}  // any number of parts

    void attn_merge(const MergeProblem& problem, void* /*stream*/) override { cpu::attention_merge(problem, pool_); }

private:
    WorkerPool pool_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int num_threads) { return std::make_unique<CpuBackend>(num_threads); }

}  // namespace cpu
}  // namespace zyfa
