#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "common/lean_p.h"
#include "common/score_scale.h"
#include "common/block_scale.h"
#include "common/attention_mask.h"
#include "common/row_max.h"
#include "common/exp2_polynomial.h"
#include "common/hadamard.h"
#include "common/key_block.h"
#include "common/online_softmax.h"
#include "common/row_epilogue.h"
#include "common/attention_sink.h"
using namespace zyfa::numerics;
// Instantiates every function of kernels/common in device code: the numerics the CPU backend uses
// are the ones the CUDA (and HIP) kernels will include.
__global__ void numerics_in_device_code(const float* in, uint8_t* out, float* f) {
  int i = threadIdx.x;
  int e = block_scale_exponent(in[0], in[i], 64, Fp8Format::E4M3FN);
  f[0] = exp2_integral(block_scale_exponent_integral(in[0], in[i], 64, Fp8Format::E4M3FN));
  out[i] = lean_p_code(in[i], 8.f, lean_p_bias(in[0], e, kLeanPCentre, Fp8Format::E4M3FN), FloatToIntRounding::NearestEven, Fp8Format::E4M3FN);
  f[i] = fp8_decode(fp8_encode(in[i], Fp8Format::E4M3FNUZ), Fp8Format::E4M3FNUZ) + bf16_to_float(float_to_bf16(in[i])) + fp16_to_float(float_to_fp16(in[i]));
  float row[192];
  for (int d = 0; d < 192; ++d) row[d] = in[d];
  hadamard_rotate_row(row, 192);
  f[i] += row[i % 192] * score_scale_log2(in[1], in[2], in[3]) + kLn2;
  KeyRange r = visible_keys(i, 10, 10, MaskKind::Causal, -1, -1); f[i] += r.end + key_visible(i, 3, 10, 10, MaskKind::None, 2, 2);
  const float alpha = running_max_rescale(in[0], in[1]) + running_max_rescale(in[0], in[1], Exp2WithoutTranscendental{});
  const float l = running_sum_update(in[2], alpha, in[3]);
  f[i] += accumulator_update(in[i], alpha, in[4], exp2_int(-e)) * scaled_accumulator_rescale(alpha, in[7], in[8]) * output_scale(in[5], l) + kKeyBlock;
  f[i] += row_output(f[i], in[6] > 0.0f, row_saw_key(l)) + row_lse(row_natural_lse(in[0], l), row_max_is_poisoned(in[0]), row_saw_key(l));
  const SinkedRow sinked = fold_sink(in[0], l, sink_log2(in + 9, i));
  f[i] += sinked_output_scale(in[5], sinked) + row_lse(sinked_row_lse(sinked), sinked_row_poisoned(sinked), sinked_row_seen(sinked));
}
