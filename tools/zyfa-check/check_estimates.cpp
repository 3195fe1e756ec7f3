#include "check_estimates.hpp"

#include <cstdio>
#include <cstring>

namespace zyfa_check {
namespace {

struct BusyEstimate {
    const char* arch;
    const char* kernel;
    int busy_percent;
};

// Generated: see the file's header for the command; a CTest fails when it is stale.
constexpr BusyEstimate kBusy[] = {
#include "mfma_busy_estimates.inc"
};

// Matrix FLOP per CU per clock, dense. Sources, read 2026-12-03 through this project's document
// search (AMD's figures as others quote them; no AMD datasheet was opened):
//   MI355X (gfx950): 256 CUs (8 XCDs x 32), 2,400 MHz peak engine clock, FP8 8,192 FLOP per CU
//     per clock (twice MI300X's 4,096), about 5 PFLOP/s FP8 = 8,192 x 256 x 2.4e9 (AMD's ISSCC
//     2026 talk on MI355X as reported by the trade press; CU count and clock from AMD's launch
//     figures as reported). BF16 4,096: half the FP8 rate, from the MFMA pass counts below (the
//     2.5 PFLOP/s this gives was not checked against an AMD document here).
//   MI300X (gfx942): 304 CUs, 2,100 MHz; FP8 2,614.9 TFLOP/s and BF16 1,307.4 (ROCm's MI300
//     documentation as quoted) = 4,096 and 2,048 x 304 x 2.1e9.
// The same figures follow from the MFMA pass counts the cycle model uses (docs/emulator.md, "ISA
// facts"): a 32x32x64 FP8 MFMA is 2 x 32 x 32 x 64 = 131,072 FLOP in 16 passes (64 cycles) on
// one SIMD, 2,048 per cycle, x 4 SIMDs per CU = 8,192 on gfx950; 32x32x16 BF16, 32,768 FLOP in 8
// passes (32 cycles): 1,024 x 4 = 4,096. gfx942's 32x32x16 FP8 and 32x32x8 BF16 (8 passes) give
// 4,096 and 2,048.
struct ArchPeak {
    const char* arch;
    const char* part;
    int cus;
    int clock_mhz;
    double fp8;
    double bf16;
};
constexpr ArchPeak kPeaks[] = {
    {"gfx950", "MI355X", 256, 2400, 8192.0, 4096.0},
    {"gfx942", "MI300X", 304, 2100, 4096.0, 2048.0},
};

const ArchPeak* peak_of(const std::string& arch) {
    for (const ArchPeak& p : kPeaks)
        if (arch == p.arch) return &p;
    return nullptr;
}

}  // namespace

double mfma_busy_estimate(const std::string& arch, const std::string& kernel) {
    for (const BusyEstimate& e : kBusy)
        if (arch == e.arch && kernel == e.kernel) return e.busy_percent / 100.0;
    return -1.0;
}

double peak_flop_per_cu_clock(const std::string& arch, zyfa_dtype dtype) {
    const ArchPeak* p = peak_of(arch);
    if (p == nullptr) return 0.0;
    return dtype == ZYFA_DTYPE_BF16 ? p->bf16 : p->fp8;
}

Estimate estimate(const std::string& arch, const std::string& kernel, zyfa_dtype dtype, int cus, int clock_khz) {
    Estimate e;
    const double busy = mfma_busy_estimate(arch, kernel);
    const double peak = peak_flop_per_cu_clock(arch, dtype);
    if (busy < 0.0 || peak <= 0.0) {
        e.why_none = "no estimate";
    } else if (clock_khz <= 0 || cus <= 0) {
        e.why_none = "no estimate (clock not reported)";
    } else {
        e.present = true;
        e.busy = busy;
        e.tflops = busy * peak * cus * (clock_khz * 1e3) / 1e12;
    }
    return e;
}

void print_estimates_table() {
    std::printf("MFMA-busy estimates of the calibrated cycle model (tools/amdgpu-emu, 256 queries x 1,024 keys; "
                "a model, not a measurement) x the arch's published dense peak at its peak clock:\n\n"
                "| arch | part | kernel | MFMA busy (est.) | peak FLOP / CU / clock | est. TFLOP/s at CUs x clock |\n"
                "|---|---|---|---|---|---|\n");
    for (const BusyEstimate& b : kBusy) {
        const ArchPeak* p = peak_of(b.arch);
        if (p == nullptr) continue;
        const zyfa_dtype dtype = std::strstr(b.kernel, "bf16") != nullptr ? ZYFA_DTYPE_BF16 : ZYFA_DTYPE_FP8_E4M3FN;
        const Estimate e = estimate(b.arch, b.kernel, dtype, p->cus, p->clock_mhz * 1000);
        std::printf("| %s | %s | %s | %d%% | %.0f (%s) | %.0f at %d x %d MHz |\n", b.arch, p->part, b.kernel,
                    b.busy_percent, peak_flop_per_cu_clock(b.arch, dtype), dtype == ZYFA_DTYPE_BF16 ? "BF16" : "FP8",
                    e.tflops, p->cus, p->clock_mhz);
    }
}

std::string send_back_block(const std::string& invocation, bool amd) {
    std::string block =
        "To send the results back, run this block (it repeats this check into zyfa-check-report.txt and\n"
        "adds the clocks the driver tools report) and paste zyfa-check-report.txt into a comment on\n"
        "zyfa's AMD issue (issue 23), or send it to whoever asked you to run zyfa-check:\n\n"
        "```sh\n";
    block += "{ " + invocation + "\n";
    if (amd) {
        block += "  rocm-smi --showclocks\n"
                 "  amd-smi metric --clock\n";
    } else {
        block += "  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv\n";
    }
    block += "} > zyfa-check-report.txt 2>&1\n```\n";
    return block;
}

}  // namespace zyfa_check
