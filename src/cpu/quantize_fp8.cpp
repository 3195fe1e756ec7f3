// zyfa_quantize_fp8 on the CPU. Two passes over every (batch, head) slice, three with K
// smoothing: the optional first one sums each channel over the slice's rows into its mean
// (common/smooth_mean.h, kept in scratch); the next finds the slice's amax (over all its rows and
// dims, after the optional smoothing and Hadamard rotation) and checks that everything is finite;
// only when every slice passed does the last pass write codes, descales and means, so a rejected
// call writes nothing. The smoothed, rotated rows are recomputed in the last pass rather than
// stored: deterministic, cheap (n log n per row) and needing no scratch tensor.
#include "quantize_fp8.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "common/fp8_e4m3.h"
#include "common/hadamard.h"
#include "common/smooth_mean.h"
#include "core/errors.hpp"
#include "tensor_access.hpp"

namespace zyfa {
namespace cpu {
namespace {

// Below this amax, fp8_max / amax could overflow fp32 (0 * inf would then be NaN); such slices are
// first multiplied by kTinyShift, a power of two, so exactly and far from overflow: the codes are
// those the unshifted scale would give.
constexpr float kTinyAmax = 0x1p-100f;
constexpr float kTinyShift = 0x1p100f;

// One (batch, head) slice of the problem.
struct Slice {
    int64_t batch;
    int64_t head;
};

class SliceRows {
public:
    // mean: the slice's head_dim channel means when the problem smooths, else null.
    SliceRows(const QuantProblem& problem, Slice slice, const float* mean = nullptr)
        : problem_(problem), slice_(slice), mean_(mean) {}

    int64_t count() const { return problem_.len(slice_.batch); }

    // Reads row s as fp32 into `row` (head_dim values).
    void load(int64_t s, float* row) const {
        const int64_t base = offset(problem_.in, s);
        for (int64_t d = 0; d < problem_.head_dim; ++d) row[d] = load_as_float(problem_.in.data, problem_.in.dtype, base + d);
    }

    // Subtracts the channel means from a loaded row, when the problem smooths (before rotating).
    void smooth(float* row) const {
        if (mean_ == nullptr) return;
        for (int64_t d = 0; d < problem_.head_dim; ++d) row[d] = numerics::smooth_subtract(row[d], mean_[d]);
    }

    // The Hadamard rotation of a loaded row, when the problem asks for it.
    void rotate(float* row) const {
        if (problem_.hadamard && !numerics::hadamard_rotate_row(row, problem_.head_dim)) {
            // The validator rejects such head dims; reaching this is a bug, not a caller error.
            throw Error(ZYFA_ERROR_INTERNAL, "quantize_fp8: Hadamard rotation of head_dim " +
                                                 std::to_string(problem_.head_dim) + " is unsupported");
        }
    }

    int64_t offset(const TensorView& t, int64_t s) const {
        // Varlen rows are packed along seq: stride_batch is ignored there, per the ABI.
        const int64_t batch_term = problem_.varlen() ? 0 : slice_.batch * t.stride_batch;
        return batch_term + (problem_.first(slice_.batch) + s) * t.stride_seq + slice_.head * t.stride_head;
    }

private:
    const QuantProblem& problem_;
    Slice slice_;
    const float* mean_;
};

std::string slice_name(Slice slice) {
    return "batch " + std::to_string(slice.batch) + ", head " + std::to_string(slice.head);
}

// Pass 0 (K smoothing): the slice's channel means into `mean` (head_dim floats), in the order
// common/smooth_mean.h defines. `row` is the slot's scratch row, `lanes` its kSmoothLanes x
// head_dim partial sums. A non-finite input makes a non-finite mean here; pass 1 rejects it.
void slice_mean(const QuantProblem& problem, Slice slice, float* row, double* lanes, float* mean) {
    const SliceRows rows(problem, slice);
    const int64_t n = problem.head_dim;
    for (int64_t i = 0; i < numerics::kSmoothLanes * n; ++i) lanes[i] = 0.0;
    for (int64_t s = 0; s < rows.count(); ++s) {
        rows.load(s, row);
        double* lane = lanes + numerics::smooth_lane(s) * n;
        for (int64_t d = 0; d < n; ++d) lane[d] = numerics::smooth_accumulate(lane[d], row[d]);
    }
    double channel[numerics::kSmoothLanes];
    for (int64_t d = 0; d < n; ++d) {
        for (int l = 0; l < numerics::kSmoothLanes; ++l) channel[l] = lanes[l * n + d];
        mean[d] = numerics::smooth_mean_from_lanes(channel, rows.count());
    }
}

// Pass 1: amax of the (smoothed, rotated) slice; throws INVALID_ARGUMENT on a non-finite value.
// `row` is the running slot's scratch row of head_dim floats.
float slice_amax(const QuantProblem& problem, Slice slice, const float* mean, float* row) {
    const SliceRows rows(problem, slice, mean);
    float amax = 0.0f;
    for (int64_t s = 0; s < rows.count(); ++s) {
        rows.load(s, row);
        for (int64_t d = 0; d < problem.head_dim; ++d) {
            const float x = row[d];
            if (!std::isfinite(x)) {
                throw_invalid("input holds a non-finite value (" + slice_name(slice) +
                              ", row " + std::to_string(s) + ")");
            }
        }
        rows.smooth(row);
        for (int64_t d = 0; mean != nullptr && d < problem.head_dim; ++d) {
            if (!std::isfinite(row[d])) {
                throw_invalid("subtracting the mean (ZYFA_QUANT_SMOOTH) overflows fp32 (" + slice_name(slice) +
                              ", row " + std::to_string(s) + ")");
            }
        }
        rows.rotate(row);
        for (int64_t d = 0; d < problem.head_dim; ++d) {
            const float magnitude = std::fabs(row[d]);
            if (!std::isfinite(magnitude)) {
                throw_invalid("the Hadamard rotation overflows fp32 (" + slice_name(slice) +
                              ", row " + std::to_string(s) + ")");
            }
            if (magnitude > amax) amax = magnitude;
        }
    }
    return amax;
}

// Pass 2: codes of the slice, its descale and its means, with the slot's scratch row as in pass 1.
void write_slice(const QuantProblem& problem, Slice slice, float amax, const float* mean, float* row) {
    const numerics::Fp8Format format = fp8_format_of(problem.out.dtype);
    const float fp8_max = numerics::fp8_max(format);
    float* descale = problem.descale + slice.batch * problem.heads + slice.head;
    const SliceRows rows(problem, slice, mean);
    auto* out = static_cast<uint8_t*>(problem.out.data);
    if (mean != nullptr) {
        float* mean_out = problem.smooth_mean + (slice.batch * problem.heads + slice.head) * problem.head_dim;
        for (int64_t d = 0; d < problem.head_dim; ++d) mean_out[d] = mean[d];
    }

    if (amax == 0.0f) {  // all zeros: any scale is exact; 1 keeps the descale harmless
        for (int64_t s = 0; s < rows.count(); ++s) {
            const int64_t base = rows.offset(problem.out, s);
            for (int64_t d = 0; d < problem.head_dim; ++d) out[base + d] = 0;
        }
        *descale = 1.0f;
        return;
    }

    const float pre_shift = amax < kTinyAmax ? kTinyShift : 1.0f;
    const float scale = fp8_max / (amax * pre_shift);
    for (int64_t s = 0; s < rows.count(); ++s) {
        rows.load(s, row);
        rows.smooth(row);
        rows.rotate(row);
        const int64_t base = rows.offset(problem.out, s);
        // Saturating RNE encoder: amax * scale may round a hair above fp8_max; it still maps to max.
        for (int64_t d = 0; d < problem.head_dim; ++d) {
            out[base + d] = numerics::fp8_encode((row[d] * pre_shift) * scale, format);
        }
    }
    *descale = amax / fp8_max;
}

}  // namespace

void quantize_fp8(const QuantProblem& problem, WorkerPool& pool) {
    // An empty problem (batch or seqlen 0) writes nothing, like every zyfa call on an empty problem.
    if (problem.empty() || problem.heads == 0 || problem.head_dim == 0) return;
    if (!dtype_is_fp8(problem.out.dtype)) {
        throw Error(ZYFA_ERROR_INTERNAL, "quantize_fp8: output dtype is not FP8 (validation missed it)");
    }
    const int64_t slices = problem.batch * problem.heads;
    auto slice_of = [&](int64_t i) { return Slice{i / problem.heads, i % problem.heads}; };

    // Everything the passes need, acquired before the first store: one row (and, smoothing, one set
    // of lane sums) per worker slot, the amax and the means of every slice.
    const size_t n = static_cast<size_t>(problem.head_dim);
    const size_t slots = static_cast<size_t>(pool.slot_count(slices));
    std::vector<float> amax(static_cast<size_t>(slices));
    std::vector<float> rows(slots * n);
    std::vector<float> means(problem.smooth ? static_cast<size_t>(slices) * n : 0);
    std::vector<double> lanes(problem.smooth ? slots * numerics::kSmoothLanes * n : 0);
    auto row_of = [&](int slot) { return rows.data() + static_cast<size_t>(slot) * n; };
    auto mean_of = [&](int64_t i) { return problem.smooth ? means.data() + static_cast<size_t>(i) * n : nullptr; };
    if (problem.smooth) {
        pool.parallel_for(slices, [&](int64_t i, int slot) {
            double* slot_lanes = lanes.data() + static_cast<size_t>(slot) * numerics::kSmoothLanes * n;
            slice_mean(problem, slice_of(i), row_of(slot), slot_lanes, mean_of(i));
        });
    }
    pool.parallel_for(slices, [&](int64_t i, int slot) {
        amax[static_cast<size_t>(i)] = slice_amax(problem, slice_of(i), mean_of(i), row_of(slot));
    });
    pool.parallel_for(slices, [&](int64_t i, int slot) {
        write_slice(problem, slice_of(i), amax[static_cast<size_t>(i)], mean_of(i), row_of(slot));
    });
}

}  // namespace cpu
}  // namespace zyfa
