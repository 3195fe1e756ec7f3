// zyfa-amd-cycle-estimate: the MFMA-busy ESTIMATE of zyfa's AMD attention kernels
// (cycle_model.hpp; docs/emulator.md, "Cycle estimate"; docs/performance.md, AMD).
//   zyfa-amd-cycle-estimate [--valu-cycles N] [--packed-f32-cycles N] [--trans-cycles N]
//                           [--cvt-cycles N] [--no-coexec-holds] [--coexec-per-simd]
//                           [--lds-bytes-per-cycle N] [--lds-latency N] [--memory-latency N]
//                           [--seqlen-k N] [--mask none|causal_br] [--page-size N] FILE...
// The defaults are the calibrated cost table (docs/emulator.md, "Cycle model costs"); the flags
// exist for the sensitivity rows of docs/performance.md, not to tune a kernel's figure.
// For each code object it runs the kernel in the emulator on random inputs (one head, seqlen_k
// keys), keeps the traces of waves 0 and 4 of one workgroup (the two waves of SIMD 0 when waves
// are placed round robin; a workgroup is 8 waves, 256 queries), and replays them through the issue
// model. Prints one Markdown table row per kernel. Exits 1 if a kernel has no steady-state loop or
// an estimate outside (0, 1].
//
// Kernels: the HIP C++ ones (kernels/amd: zyfa_attn_fwd_{bf16,e4m3_lean,e4m3fnuz_lean}_<dims>)
// take the mask at run time, set by --mask: none (default; every block is a full, steady-state
// block) or causal_br (seqlen_k - 256 keys before the tile: the last 256-row tile of a square
// causal problem, full blocks then the diagonal). The gfx950 FP8 asm kernels
// and BF16 asm kernels (kernels/amd/gfx950_fp8: zyfa_gfx950_fp8_lean_<dims>_<mask>,
// zyfa_gfx950_bf16_<dims>_<mask>; gfx942: zyfa_gfx942_bf16_d128_<mask>) have their mask compiled in and run
// with it: _none and _causal_br run one workgroup of 256 queries as above. _causal_tl runs a
// square problem (seqlen_q = seqlen_k, ceil(seqlen_k / 256) query workgroups) and traces the
// workgroup of the LAST query tile (rows 768..1023 at 1024 keys), which sees every key: 12 full
// blocks, then the diagonal. The first tile (rows 0..255) sees at most 256 keys, too few trips for
// a steady state. The paged asm kernels (<kind>_paged_d128_<mask>) read the same K and V as pools of
// --page-size keys (default 16, vLLM's) through an identity block table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "amd/attention_extra_args.h"
#include "code_object.hpp"
#include "common/attention_kernel_args.h"
#include "common/block_scale.h"
#include "common/lean_p.h"
#include "cycle_model.hpp"
#include "emu_error.hpp"
#include "runner.hpp"

namespace {

using zyfa::emu::CycleEstimate;
using zyfa::emu::CycleParams;

struct Buffer {
    std::vector<uint8_t> bytes;
    zyfa::emu::MemoryRange range(bool writable) const {
        return zyfa::emu::MemoryRange{reinterpret_cast<uint64_t>(bytes.data()), bytes.size(), writable};
    }
};

// What the tool needs to know about a kernel, from its symbol.
struct KernelKind {
    bool asm_kernel = false;  // kernels/amd/gfx950_fp8
    bool fp8 = false, fnuz = false;
    int dqk = 128;
    int mask = 0;             // zyfa_mask the launch passes (asm: the compiled-in one)
    bool top_left_asm = false;
    bool paged = false;       // asm <kind>_paged_d128_<mask>: amd::AttnExtraArgs after AttnKernelArgs
};

KernelKind kind_of(const std::string& name, int hip_cpp_mask) {
    KernelKind k;
    const bool asm_fp8_gfx942 = name.rfind("zyfa_gfx942_fp8_", 0) == 0;  // e4m3fnuz
    const bool asm_fp8 = name.rfind("zyfa_gfx950_fp8_", 0) == 0 || asm_fp8_gfx942;
    k.asm_kernel = asm_fp8 || name.rfind("zyfa_gfx950_bf16_", 0) == 0 || name.rfind("zyfa_gfx942_bf16_", 0) == 0;
    k.fp8 = asm_fp8 || name.find("e4m3") != std::string::npos;
    k.fnuz = name.find("fnuz") != std::string::npos || asm_fp8_gfx942;
    k.dqk = name.find("d192_128") != std::string::npos ? 192 : 128;
    k.paged = name.find("_paged_") != std::string::npos;  // asm and HIP C++ (zyfa_attn_fwd_paged_*) alike
    k.mask = hip_cpp_mask;
    if (k.asm_kernel) {
        const auto ends_with = [&](const char* suffix) {
            const std::string s(suffix);
            return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
        };
        k.mask = ends_with("_causal_tl") ? 1 : ends_with("_causal_br") ? 2 : 0;
        k.top_left_asm = k.mask == 1;
    }
    return k;
}

// An estimate and the workgroup (grid x) whose waves it replayed.
struct TracedEstimate {
    CycleEstimate estimate;
    uint32_t workgroup = 0;
};

TracedEstimate estimate(const zyfa::emu::CodeObject& loaded, const std::string& path, const KernelKind& kind,
                       int seqlen_k, int page_size, const CycleParams& params) {
    const zyfa::emu::CodeObject* object = &loaded;
    const zyfa::emu::Kernel& kernel = object->kernels().front();
    const bool fp8 = kind.fp8;
    const bool fnuz = kind.fnuz;
    const int dqk = kind.dqk, dv = 128;
    // Top-left causal: a square problem whose last query tile is traced (see the top).
    const int seqlen_q = kind.top_left_asm ? seqlen_k : 256, elem = fp8 ? 1 : 2;
    const uint32_t query_workgroups = static_cast<uint32_t>((seqlen_q + 255) / 256);

    // Inputs: small values (bf16 in [-1, 1]; e4m3 codes of magnitude <= 1) from a fixed seed.
    std::mt19937 rng(7);
    auto fill = [&](Buffer& b, size_t count) {
        b.bytes.resize(count * static_cast<size_t>(elem));
        for (size_t i = 0; i < count; ++i) {
            if (fp8) {
                const uint8_t magnitude = static_cast<uint8_t>(rng() % (fnuz ? 0x40 : 0x38));  // below 1.0
                b.bytes[i] = static_cast<uint8_t>(magnitude | ((rng() & 1) ? 0x80 : 0));
                if (b.bytes[i] == 0x80) b.bytes[i] = 0;  // fnuz: 0x80 is NaN
            } else {
                const float f = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 1000.0f;
                uint32_t bits;
                std::memcpy(&bits, &f, 4);
                b.bytes[2 * i] = static_cast<uint8_t>(bits >> 16);
                b.bytes[2 * i + 1] = static_cast<uint8_t>(bits >> 24);
            }
        }
    };
    Buffer q, k, v, o, lse;
    fill(q, static_cast<size_t>(seqlen_q) * dqk);
    fill(k, static_cast<size_t>(seqlen_k) * dqk);
    fill(v, static_cast<size_t>(seqlen_k) * dv);
    const zyfa::AttnKernelDtype out_dtype = kind.asm_kernel ? zyfa::kKernelBf16 : zyfa::kKernelFp32;  // asm: BF16 out
    o.bytes.assign(static_cast<size_t>(seqlen_q) * dv * (out_dtype == zyfa::kKernelFp32 ? 4 : 2), 0);
    lse.bytes.assign(static_cast<size_t>(seqlen_q) * 4, 0);

    zyfa::AttnKernelArgs a;
    std::memset(&a, 0, sizeof a);
    a.q = q.bytes.data();
    a.k = k.bytes.data();
    a.v = v.bytes.data();
    a.o = o.bytes.data();
    a.lse = reinterpret_cast<float*>(lse.bytes.data());
    a.q_stride_seq = dqk;
    a.q_stride_head = dqk;
    a.q_stride_batch = static_cast<int64_t>(seqlen_q) * dqk;
    a.k_stride_seq = a.k_stride_head = dqk;
    a.k_stride_batch = static_cast<int64_t>(seqlen_k) * dqk;
    a.v_stride_seq = a.v_stride_head = dv;
    a.v_stride_batch = static_cast<int64_t>(seqlen_k) * dv;
    a.o_stride_seq = a.o_stride_head = dv;
    a.o_stride_batch = static_cast<int64_t>(seqlen_q) * dv;
    a.batch = 1;
    a.seqlen_q = seqlen_q;
    a.seqlen_k = seqlen_k;
    a.heads_q = a.heads_kv = 1;
    a.head_dim_qk = dqk;
    a.head_dim_v = dv;
    a.mask = kind.mask;
    a.window_left = a.window_right = -1;
    a.in_dtype = fp8 ? (fnuz ? zyfa::kKernelE4m3fnuz : zyfa::kKernelE4m3fn) : zyfa::kKernelBf16;
    a.out_dtype = out_dtype;
    a.softmax = fp8 ? 2 : 1;
    a.max_block_exponent = zyfa::numerics::kBlockScaleMaxExponent;
    a.softmax_scale = 1.0f / std::sqrt(static_cast<float>(dqk));
    a.lean_centre = zyfa::numerics::lean_p_centre_for(zyfa::numerics::FloatToIntRounding::TowardZero);

    zyfa::emu::LaunchConfig config;
    config.grid[0] = query_workgroups;
    config.block[0] = 512;
    config.kernarg.assign(std::max<size_t>(sizeof a, kernel.descriptor.kernarg_size), 0);
    std::memcpy(config.kernarg.data(), &a, sizeof a);
    config.memory = {q.range(false), k.range(false), v.range(false), o.range(true), lse.range(true)};
    Buffer table;
    if (kind.paged) {
        // K and V as pools of page_size keys, page p holding keys p * page_size ..: block_table[p] = p.
        const int pages = (seqlen_k + page_size - 1) / page_size;
        table.bytes.resize(static_cast<size_t>(pages) * 4);
        for (int p = 0; p < pages; ++p) std::memcpy(&table.bytes[static_cast<size_t>(p) * 4], &p, 4);
        k.bytes.resize(static_cast<size_t>(pages) * page_size * dqk * elem, 0);
        v.bytes.resize(static_cast<size_t>(pages) * page_size * dv * elem, 0);
        zyfa::amd::AttnExtraArgs extra;
        std::memset(&extra, 0, sizeof extra);
        extra.paged.block_table = reinterpret_cast<const int32_t*>(table.bytes.data());
        extra.paged.block_table_stride = pages;
        extra.paged.page_size = page_size;
        extra.paged.num_pages = pages;
        a.k = k.bytes.data();
        a.v = v.bytes.data();
        a.k_stride_batch = static_cast<int64_t>(page_size) * dqk;
        a.v_stride_batch = static_cast<int64_t>(page_size) * dv;
        const size_t offset = (sizeof a + alignof(zyfa::amd::AttnExtraArgs) - 1) / alignof(zyfa::amd::AttnExtraArgs) *
                              alignof(zyfa::amd::AttnExtraArgs);
        config.kernarg.assign(std::max<size_t>(offset + sizeof extra, kernel.descriptor.kernarg_size), 0);
        std::memcpy(config.kernarg.data(), &a, sizeof a);
        std::memcpy(config.kernarg.data() + offset, &extra, sizeof extra);
        config.memory = {q.range(false), k.range(false), v.range(false), o.range(true), lse.range(true), table.range(false)};
    }
    config.threads = 1;
    config.seed = 1;
    // Which workgroup computes which query tile is the kernel's choice (the asm kernels run their
    // tiles in reverse, longest first: generator/kernel_setup.cpp), so with several query
    // workgroups each is traced in turn and the one whose wave 0 ran the most instructions is
    // kept: in a top-left causal grid, the last tile, the only one that sees every key.
    std::vector<std::vector<uint64_t>> traces, longest;
    TracedEstimate result;
    config.trace = &traces;
    for (uint32_t group = 0; group < query_workgroups; ++group) {
        config.trace_group[0] = group;
        zyfa::emu::run_kernel(*object, kernel, config);
        if (traces.size() < 5) throw zyfa::emu::EmuError(path + ": fewer than 5 waves traced");
        if (longest.empty() || traces[0].size() > longest[0].size()) {
            longest.swap(traces);
            result.workgroup = group;
        }
    }
    result.estimate = zyfa::emu::estimate_mfma_busy(*object, longest[0], longest[4], params);
    return result;
}

}  // namespace

int main(int argc, char** argv) {
    CycleParams params;
    int seqlen_k = 1024;
    int page_size = 16;
    int hip_cpp_mask = 0;
    bool bad_mask = false;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
        if (arg == "--valu-cycles") params.valu_cycles = value();
        else if (arg == "--packed-f32-cycles") params.packed_f32_cycles = value();
        else if (arg == "--trans-cycles") params.trans_cycles = value();
        else if (arg == "--cvt-cycles") params.cvt_cycles = value();
        else if (arg == "--no-coexec-holds") params.mfma_coexec_holds = false;
        else if (arg == "--coexec-per-simd") params.coexec_per_simd = true;
        else if (arg == "--lds-bytes-per-cycle") params.lds_bytes_per_cycle = value();
        else if (arg == "--lds-latency") params.lds_latency = value();
        else if (arg == "--memory-latency") params.memory_latency = value();
        else if (arg == "--seqlen-k") seqlen_k = value();
        else if (arg == "--page-size") page_size = value();
        else if (arg == "--mask") {
            const std::string mask = i + 1 < argc ? argv[++i] : "";
            hip_cpp_mask = mask == "causal_br" ? 2 : 0;
            bad_mask = mask != "none" && mask != "causal_br";
        }
        else files.push_back(arg);
    }
    if (files.empty() || params.valu_cycles <= 0 || params.packed_f32_cycles <= 0 || params.trans_cycles <= 0 ||
        params.cvt_cycles <= 0 || params.lds_bytes_per_cycle <= 0 || seqlen_k < 256 || bad_mask || page_size < 8 ||
        page_size > 256 || (page_size & (page_size - 1)) != 0) {
        std::fprintf(stderr, "usage: %s [--valu-cycles N] [--packed-f32-cycles N] [--trans-cycles N] [--cvt-cycles N] "
                             "[--no-coexec-holds] [--coexec-per-simd] [--lds-bytes-per-cycle N] [--lds-latency N] "
                             "[--memory-latency N] [--seqlen-k N>=256] [--mask none|causal_br] [--page-size 8|16|...|256] FILE...\n",
                     argv[0]);
        return 2;
    }
    std::printf("Issue model: VALU %d cycles, packed fp32 %d, transcendental %d, conversion %d, MFMA co-execution "
                "holds %s, LDS %d B/cycle + %d latency, memory latency %d, scalar loads %d; one workgroup traced, "
                "256 queries x %d keys, HIP C++ kernels' mask %s (asm kernels: their own; _causal_tl: seqlen_q = "
                "seqlen_k, the last query tile traced); SIMD 0 = waves 0 and 4.\n\n",
                params.valu_cycles, params.packed_f32_cycles, params.trans_cycles, params.cvt_cycles,
                !params.mfma_coexec_holds ? "off" : params.coexec_per_simd ? "per SIMD" : "per wave",
                params.lds_bytes_per_cycle, params.lds_latency, params.memory_latency, params.smem_latency, seqlen_k,
                hip_cpp_mask == 2 ? "causal_br" : "none");
    std::printf("| kernel | arch | mask | trips measured | MFMA / trip | MFMA pipe cycles / trip (one wave) | VALU / trip "
                "(conversions, packed fp32, transcendental) | VALU pipe cycles / trip (one wave) | LDS / trip | "
                "cycles / trip | MFMA busy (estimate) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    int failures = 0;
    for (const std::string& file : files) {
        std::string kernel;
        try {
            std::ifstream in(file, std::ios::binary);
            std::vector<char> elf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (elf.empty()) throw zyfa::emu::EmuError("cannot read " + file);
            const auto object = zyfa::emu::CodeObject::load(elf.data(), elf.size());
            if (object->kernels().empty()) throw zyfa::emu::EmuError(file + ": no kernel");
            kernel = object->kernels().front().name;
            const KernelKind kind = kind_of(kernel, hip_cpp_mask);
            const char* arch = object->arch() == zyfa::emu::Arch::Gfx942 ? "gfx942" : "gfx950";
            const TracedEstimate traced = estimate(*object, file, kind, seqlen_k, page_size, params);
            const CycleEstimate& e = traced.estimate;
            std::string mask_name = kind.mask == 0 ? "none" : "causal_br";
            if (kind.paged) mask_name += ", pages of " + std::to_string(page_size);
            if (kind.top_left_asm) {
                const int first_row = (seqlen_k - 1) / 256 * 256;
                mask_name = "causal_tl: rows " + std::to_string(first_row) + ".." + std::to_string(seqlen_k - 1) +
                            " of " + std::to_string(seqlen_k) + " (workgroup " + std::to_string(traced.workgroup) +
                            ")";
            }
            if (!e.loop_found || !(e.mfma_busy_fraction > 0.0 && e.mfma_busy_fraction <= 1.0)) {
                std::fprintf(stderr, "%s (%s): no estimate: %s (fraction %g)\n", file.c_str(), kernel.c_str(),
                             e.message.c_str(), e.mfma_busy_fraction);
                ++failures;
                continue;
            }
            std::printf("| %s | %s | %s | %d | %.0f | %.0f | %.0f (%.0f cvt, %.0f pk; +%.0f transc.) | %.0f | %.0f | %.0f "
                        "| %.0f%% |\n",
                        kernel.c_str(), arch, mask_name.c_str(), e.window_iterations, e.mix.mfma, e.mix.mfma_pipe_cycles,
                        e.mix.valu, e.mix.cvt, e.mix.packed_f32, e.mix.trans, e.mix.valu_pipe_cycles, e.mix.lds,
                        e.cycles_per_iteration, 100.0 * e.mfma_busy_fraction);
        } catch (const std::exception& ex) {
            std::fprintf(stderr, "%s: %s\n", file.c_str(), ex.what());
            ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}
