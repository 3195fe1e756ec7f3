// What zyfa-check sets beside a measured TFLOP/s: the emulator's estimate for the kernel that ran,
// and the block a user copies to send the results back.
#pragma once

#include <string>

#include "zyfa.h"

namespace zyfa_check {

// The calibrated cycle model's MFMA-busy fraction for `kernel` (the symbol zyfa_attn_kernel_name
// returns) on `arch`, from mfma_busy_estimates.inc; < 0 when there is none (NVIDIA, the CPU, a
// kernel the table does not list).
double mfma_busy_estimate(const std::string& arch, const std::string& kernel);

// Dense matrix FLOP per CU per clock of `arch` for `dtype` (FP8 or BF16), from AMD's published
// peaks (check_estimates.cpp says which); 0 when unknown.
double peak_flop_per_cu_clock(const std::string& arch, zyfa_dtype dtype);

struct Estimate {
    bool present = false;
    double busy = 0.0;    // MFMA-busy fraction
    double tflops = 0.0;  // busy x the arch's peak at the reported clock
    std::string why_none;  // when !present
};

// busy x peak_flop_per_cu_clock x CUs x clock: the TFLOP/s the device would reach if every CU's
// matrix pipes were busy that fraction of the time at `clock_khz`.
Estimate estimate(const std::string& arch, const std::string& kernel, zyfa_dtype dtype, int cus, int clock_khz);

// The estimates table (--estimates): every kernel the table lists, at the published CU count and
// peak clock of its arch's part.
void print_estimates_table();

// The copy-paste block printed at the end of a run: the same invocation writing a report file,
// the clock queries of the vendor's tools, and where to send the file.
std::string send_back_block(const std::string& invocation, bool amd);

}  // namespace zyfa_check
