// zyfa-amd-cycle-estimate: the MFMA-busy ESTIMATE of zyfa's AMD attention kernels
// (cycle_model.hpp; docs/emulator.md, "Cycle estimate").
//   zyfa-amd-cycle-estimate [--valu-cycles N] [--trans-cycles N] [--lds-bytes-per-cycle N]
//                           [--lds-latency N] [--memory-latency N] [--seqlen-k N] FILE.hsaco...
// For each code object it runs one workgroup (the kernel's 8 waves, 256 queries of one head,
// seqlen_k keys, no mask, random inputs) in the emulator, keeps the traces of waves 0 and 4 (the
// two waves of SIMD 0 when waves are placed round robin), and replays them through the issue
// model. Prints one Markdown table row per kernel. Exits 1 if a kernel has no steady-state loop
// or an estimate outside (0, 1].
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

#include "code_object.hpp"
#include "common/attention_kernel_args.h"
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

CycleEstimate estimate(const std::string& path, int seqlen_k, const CycleParams& params, std::string& kernel_name) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> elf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (elf.empty()) throw zyfa::emu::EmuError("cannot read " + path);
    auto object = zyfa::emu::CodeObject::load(elf.data(), elf.size());
    if (object->kernels().empty()) throw zyfa::emu::EmuError(path + ": no kernel");
    const zyfa::emu::Kernel& kernel = object->kernels().front();
    kernel_name = kernel.name;
    const bool fp8 = kernel.name.find("e4m3") != std::string::npos;
    const bool fnuz = kernel.name.find("fnuz") != std::string::npos;
    const int dqk = kernel.name.find("d192_128") != std::string::npos ? 192 : 128, dv = 128;
    const int seqlen_q = 256, elem = fp8 ? 1 : 2;

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
    o.bytes.assign(static_cast<size_t>(seqlen_q) * dv * 4, 0);
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
    a.mask = 0;  // none: every block is a full, steady-state block
    a.window_left = a.window_right = -1;
    a.in_dtype = fp8 ? (fnuz ? zyfa::kKernelE4m3fnuz : zyfa::kKernelE4m3fn) : zyfa::kKernelBf16;
    a.out_dtype = zyfa::kKernelFp32;
    a.softmax = fp8 ? 2 : 1;
    a.max_block_exponent = 8;
    a.softmax_scale = 1.0f / std::sqrt(static_cast<float>(dqk));
    a.lean_centre = 0.5f;  // the value does not change the instruction path

    zyfa::emu::LaunchConfig config;
    config.block[0] = 512;
    config.kernarg.assign(std::max<size_t>(sizeof a, kernel.descriptor.kernarg_size), 0);
    std::memcpy(config.kernarg.data(), &a, sizeof a);
    config.threads = 1;
    config.seed = 1;
    config.memory = {q.range(false), k.range(false), v.range(false), o.range(true), lse.range(true)};
    std::vector<std::vector<uint64_t>> traces;
    config.trace = &traces;
    zyfa::emu::run_kernel(*object, kernel, config);
    if (traces.size() < 5) throw zyfa::emu::EmuError(path + ": fewer than 5 waves traced");
    return zyfa::emu::estimate_mfma_busy(*object, traces[0], traces[4], params);
}

}  // namespace

int main(int argc, char** argv) {
    CycleParams params;
    int seqlen_k = 1024;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
        if (arg == "--valu-cycles") params.valu_cycles = value();
        else if (arg == "--trans-cycles") params.trans_cycles = value();
        else if (arg == "--lds-bytes-per-cycle") params.lds_bytes_per_cycle = value();
        else if (arg == "--lds-latency") params.lds_latency = value();
        else if (arg == "--memory-latency") params.memory_latency = value();
        else if (arg == "--seqlen-k") seqlen_k = value();
        else files.push_back(arg);
    }
    if (files.empty() || params.valu_cycles <= 0 || params.trans_cycles <= 0 || params.lds_bytes_per_cycle <= 0 ||
        seqlen_k < 256) {
        std::fprintf(stderr, "usage: %s [--valu-cycles N] [--trans-cycles N] [--lds-bytes-per-cycle N] "
                             "[--lds-latency N] [--memory-latency N] [--seqlen-k N>=256] FILE.hsaco...\n", argv[0]);
        return 2;
    }
    std::printf("Issue model: VALU %d cycles, transcendental %d, LDS %d B/cycle + %d latency, memory latency %d, "
                "scalar loads %d; one workgroup, 256 queries x %d keys, no mask; SIMD 0 = waves 0 and 4.\n\n",
                params.valu_cycles, params.trans_cycles, params.lds_bytes_per_cycle, params.lds_latency,
                params.memory_latency, params.smem_latency, seqlen_k);
    std::printf("| kernel | arch | trips measured | MFMA / trip | MFMA pipe cycles / trip (one wave) | VALU / trip | "
                "LDS / trip | cycles / trip | MFMA busy (estimate) |\n|---|---|---|---|---|---|---|---|---|\n");
    int failures = 0;
    for (const std::string& file : files) {
        std::string kernel;
        try {
            const CycleEstimate e = estimate(file, seqlen_k, params, kernel);
            if (!e.loop_found || !(e.mfma_busy_fraction > 0.0 && e.mfma_busy_fraction <= 1.0)) {
                std::fprintf(stderr, "%s (%s): no estimate: %s (fraction %g)\n", file.c_str(), kernel.c_str(),
                             e.message.c_str(), e.mfma_busy_fraction);
                ++failures;
                continue;
            }
            const bool gfx942 = file.find("gfx942") != std::string::npos;
            std::printf("| %s | %s | %d | %.0f | %.0f | %.0f (+%.0f transc.) | %.0f | %.0f | %.0f%% |\n", kernel.c_str(),
                        gfx942 ? "gfx942" : "gfx950", e.window_iterations, e.mix.mfma, e.mix.mfma_pipe_cycles,
                        e.mix.valu, e.mix.trans, e.mix.lds, e.cycles_per_iteration, 100.0 * e.mfma_busy_fraction);
        } catch (const std::exception& ex) {
            std::fprintf(stderr, "%s: %s\n", file.c_str(), ex.what());
            ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}
