// The kernels' input families and softmax modes, template parameters of every NVIDIA kernel and of
// the PTX wrappers that differ by input type (primitives/wgmma.cuh).
#ifndef ZYFA_KERNELS_NVIDIA_INPUT_KIND_H
#define ZYFA_KERNELS_NVIDIA_INPUT_KIND_H

namespace zyfa {
namespace nvidia {

// Int8: the INT8 Q/K mode (kernels/common/int8_qk.h): q and k s8, S in s32, V and P e4m3.
enum class InKind { Bf16, Fp16, E4m3, Int8 };
enum class PMode { Exact, Lean };

}  // namespace nvidia
}  // namespace zyfa

#endif
