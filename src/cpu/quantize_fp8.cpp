// zyfa_quantize_fp8 and zyfa_quantize_int8 on the CPU. Two passes over every (batch, head) slice,
// three with K smoothing: the optional first one sums each channel over the slice's rows into its
// mean (common/smooth_mean.h, kept in scratch); the next finds the amax of each scale group of the
// slice (FP8: all its rows; INT8: each token or each 64 rows; over all dims, after the optional
// smoothing and Hadamard rotation) and checks that everything is finite;
// only when every slice passed does the last pass write codes, descales, means and Q smoothing's
// key biases (ZYFA_QUANT_KEY_BIAS), so a rejected
// call writes nothing. The smoothed, rotated rows are recomputed in the last pass rather than
// stored: deterministic, cheap (n log n per row) and needing no scratch tensor.
#include "quantize_fp8.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "common/fp8_e4m3.h"
#include "common/hadamard.h"
#include "common/int8_qk.h"
#include "common/key_bias.h"
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

// ZYFA_QUANT_KEY_BIAS: calls emit(query head, bias) for each query head that reads this slice's K
// head, with Q smoothing's bias of one key (common/key_bias.h) from its smoothed, unrotated row.
template <typename Emit>
void for_each_key_bias(const QuantProblem& problem, Slice slice, const float* smoothed_row, Emit emit) {
    if (problem.key_bias == nullptr) return;
    const int64_t group = problem.query_heads / problem.heads;
    for (int64_t hq = slice.head * group; hq < (slice.head + 1) * group; ++hq) {
        const float* query_mean = problem.query_mean + (slice.batch * problem.query_heads + hq) * problem.head_dim;
        emit(hq, numerics::smoothing_key_bias(query_mean, smoothed_row, problem.head_dim, problem.key_bias_scale));
    }
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

// The scale group of row s: 0 for one scale per slice, else s / scale_rows.
int64_t group_of(const QuantProblem& problem, int64_t s) { return problem.scale_rows == 0 ? 0 : s / problem.scale_rows; }

// Pass 1: amax of each scale group of the (smoothed, rotated) slice into amax[0, scale_groups());
// throws INVALID_ARGUMENT on a non-finite value. `row` is the running slot's scratch row of
// head_dim floats.
void slice_amax(const QuantProblem& problem, Slice slice, const float* mean, float* row, float* amax) {
    const SliceRows rows(problem, slice, mean);
    for (int64_t g = 0; g < problem.scale_groups(); ++g) amax[g] = 0.0f;
    for (int64_t s = 0; s < rows.count(); ++s) {
        float& group_amax = amax[group_of(problem, s)];
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
        // Computed again in pass 2; here only so that a NaN or infinite bias writes nothing.
        for_each_key_bias(problem, slice, row, [&](int64_t hq, float bias) {
            if (!std::isfinite(bias)) {
                throw_invalid("the key bias (ZYFA_QUANT_KEY_BIAS) of query head " + std::to_string(hq) +
                              " is not finite (" + slice_name(slice) + ", row " + std::to_string(s) +
                              "): params.query_mean holds a non-finite value or the product overflows fp32");
            }
        });
        rows.rotate(row);
        for (int64_t d = 0; d < problem.head_dim; ++d) {
            const float magnitude = std::fabs(row[d]);
            if (!std::isfinite(magnitude)) {
                throw_invalid("the Hadamard rotation overflows fp32 (" + slice_name(slice) +
                              ", row " + std::to_string(s) + ")");
            }
            if (magnitude > group_amax) group_amax = magnitude;
        }
    }
}

// The encoder and scale of one output format: FP8 (saturating RNE to e4m3) or symmetric INT8.
struct Encoder {
    bool int8;
    numerics::Fp8Format format;
    float max_code;  // fp8_max, or 127

    explicit Encoder(zyfa_dtype dtype)
        : int8(dtype == ZYFA_DTYPE_INT8),
          format(fp8_format_of(dtype)),
          max_code(int8 ? numerics::kInt8MaxCode : numerics::fp8_max(fp8_format_of(dtype))) {}
    float scale(float shifted_amax) const {
        return int8 ? numerics::int8_quant_scale(shifted_amax) : max_code / shifted_amax;
    }
    float descale(float amax) const { return int8 ? numerics::int8_quant_descale(amax) : amax / max_code; }
    // Saturating: amax * scale may round a hair above the largest code; it still maps to it.
    uint8_t encode(float scaled) const {
        return int8 ? static_cast<uint8_t>(numerics::int8_encode(scaled)) : numerics::fp8_encode(scaled, format);
    }
};

// Pass 2: codes of the slice, its descales (one per scale group that holds a row) and its means,
// with the slot's scratch row as in pass 1.
void write_slice(const QuantProblem& problem, Slice slice, const float* amax, const float* mean, float* row) {
    const Encoder encoder(problem.out.dtype);
    const int64_t groups = problem.scale_groups();
    float* descale = problem.descale + (slice.batch * problem.heads + slice.head) * groups;
    const SliceRows rows(problem, slice, mean);
    auto* out = static_cast<uint8_t*>(problem.out.data);
    if (mean != nullptr) {
        float* mean_out = problem.smooth_mean + (slice.batch * problem.heads + slice.head) * problem.head_dim;
        for (int64_t d = 0; d < problem.head_dim; ++d) mean_out[d] = mean[d];
    }

    // One scale per slice is written even for an empty sequence (1); per-row groups only where
    // the sequence has rows.
    const int64_t used_groups = problem.scale_rows == 0 ? 1 : (rows.count() + problem.scale_rows - 1) / problem.scale_rows;
    for (int64_t g = 0; g < used_groups; ++g) descale[g] = amax[g] == 0.0f ? 1.0f : encoder.descale(amax[g]);

    // Element (s, d) of the output: row-major, or the transposed V layout (kernels/common/v_transposed.h).
    // A slice without rows has no element, and validation bounds the strides only where elements are:
    // its base is never formed (it could overflow).
    const int64_t transposed_slice = problem.v_transposed && rows.count() > 0
                                         ? slice.batch * problem.out.stride_batch + slice.head * problem.out.stride_head
                                         : 0;
    auto out_index = [&](int64_t s, int64_t d) {
        return problem.v_transposed ? transposed_slice + numerics::vt_offset(s, d, problem.out.stride_seq)
                                    : rows.offset(problem.out, s) + d;
    };
    for (int64_t s = 0; s < rows.count(); ++s) {
        const float group_amax = amax[group_of(problem, s)];
        rows.load(s, row);
        rows.smooth(row);
        for_each_key_bias(problem, slice, row, [&](int64_t hq, float bias) {
            problem.key_bias[problem.key_bias_index(slice.batch, hq, s)] = bias;
        });
        if (group_amax == 0.0f) {  // all zeros: any scale is exact; 1 keeps the descale harmless
            for (int64_t d = 0; d < problem.head_dim; ++d) out[out_index(s, d)] = 0;
            continue;
        }
        const float pre_shift = group_amax < kTinyAmax ? kTinyShift : 1.0f;
        const float scale = encoder.scale(group_amax * pre_shift);
        rows.rotate(row);
        for (int64_t d = 0; d < problem.head_dim; ++d) {
            out[out_index(s, d)] = encoder.encode((row[d] * pre_shift) * scale);
        }
    }
    // The transposed layout's padding keys, up to a whole 128-key block: zero (a kernel multiplies
    // them by probabilities of 0, which a NaN would not survive).
    if (problem.v_transposed) {
        for (int64_t s = rows.count(); s < numerics::vt_padded_keys(rows.count()); ++s) {
            for (int64_t d = 0; d < problem.head_dim; ++d) out[out_index(s, d)] = 0;
        }
    }
}

}  // namespace

void quantize_fp8(const QuantProblem& problem, WorkerPool& pool) {
    // An empty problem (batch or seqlen 0) writes nothing, like every zyfa call on an empty problem.
    if (problem.empty() || problem.heads == 0 || problem.head_dim == 0) return;
    if (!dtype_is_fp8(problem.out.dtype) && problem.out.dtype != ZYFA_DTYPE_INT8) {
        throw Error(ZYFA_ERROR_INTERNAL, "quantize: output dtype is neither FP8 nor INT8 (validation missed it)");
    }
    const int64_t slices = problem.batch * problem.heads;
    auto slice_of = [&](int64_t i) { return Slice{i / problem.heads, i % problem.heads}; };

    // Everything the passes need, acquired before the first store: one row (and, smoothing, one set
    // of lane sums) per worker slot, the amax and the means of every slice.
    const size_t n = static_cast<size_t>(problem.head_dim);
    const size_t slots = static_cast<size_t>(pool.slot_count(slices));
    const size_t groups = static_cast<size_t>(problem.scale_groups());
    std::vector<float> amax(static_cast<size_t>(slices) * groups);
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
        slice_amax(problem, slice_of(i), mean_of(i), row_of(slot), amax.data() + static_cast<size_t>(i) * groups);
    });
    pool.parallel_for(slices, [&](int64_t i, int slot) {
        write_slice(problem, slice_of(i), amax.data() + static_cast<size_t>(i) * groups, mean_of(i), row_of(slot));
    });
}

}  // namespace cpu
}  // namespace zyfa
