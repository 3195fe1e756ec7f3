#include "manifest_writer.hpp"

#include <cstddef>
#include <cstdio>
#include <sstream>

#include "../../../amd/attention_extra_args.h"
#include "../../../common/attention_kernel_args.h"
#include "../../../common/block_scale.h"
#include "../../../common/lean_p.h"

namespace zyfa {
namespace gfx950_fp8 {
namespace {

// One field of AttnKernelArgs as the manifest describes it. Offsets and sizes come from the
// struct itself (offsetof / sizeof), so the manifest cannot drift from what the host passes.
struct KernargField {
    const char* name;
    std::size_t offset;
    std::size_t size;
    const char* type;  // pointer (64-bit device address), int64, int32, float32
    const char* meaning;
};

#define ZYFA_KERNARG_FIELD(field, type, meaning) \
    KernargField { #field, offsetof(AttnKernelArgs, field), sizeof(AttnKernelArgs::field), type, meaning }

const KernargField kKernargFields[] = {
    ZYFA_KERNARG_FIELD(q, "pointer",
                       "Q, the variant's in_dtype (e4m3fn, zyfa dtype 4, or bf16, 3), device memory; element (b, s, h, d) at "
                       "q + b*q_stride_batch + s*q_stride_seq + h*q_stride_head + d (last dim contiguous)"),
    ZYFA_KERNARG_FIELD(k, "pointer", "K, in_dtype, device memory; addressed like q with the k_stride_* fields"),
    ZYFA_KERNARG_FIELD(v, "pointer", "V, in_dtype, device memory; addressed like q with the v_stride_* fields"),
    ZYFA_KERNARG_FIELD(o, "pointer",
                       "O, out_dtype, device memory, written; addressed like q with the o_stride_* fields"),
    ZYFA_KERNARG_FIELD(lse, "pointer",
                       "fp32 natural-log sum-exp of the scaled scores per query row, written: [batch, "
                       "heads_q, seqlen_q] contiguous, or [heads_q, total_q] when varlen (total_q = "
                       "cu_seqlens_q[batch]); null: not written; -inf for a row that sees no key"),
    ZYFA_KERNARG_FIELD(cu_seqlens_q, "pointer",
                       "int32[batch + 1] cumulative query lengths (varlen, device memory); null: every "
                       "sequence has seqlen_q rows"),
    ZYFA_KERNARG_FIELD(cu_seqlens_k, "pointer",
                       "int32[batch + 1] cumulative key lengths; null exactly when cu_seqlens_q is null"),
    ZYFA_KERNARG_FIELD(q_descale, "pointer",
                       "fp32[batch, heads_kv] dequantisation factor of Q (value = code * descale), "
                       "device memory; null: 1"),
    ZYFA_KERNARG_FIELD(k_descale, "pointer", "fp32[batch, heads_kv] dequantisation factor of K; null: 1"),
    ZYFA_KERNARG_FIELD(v_descale, "pointer", "fp32[batch, heads_kv] dequantisation factor of V; null: 1"),
    ZYFA_KERNARG_FIELD(q_stride_batch, "int64", "Q stride between sequences, in elements; 0 when varlen"),
    ZYFA_KERNARG_FIELD(q_stride_seq, "int64", "Q stride between rows (tokens), in elements"),
    ZYFA_KERNARG_FIELD(q_stride_head, "int64", "Q stride between heads, in elements"),
    ZYFA_KERNARG_FIELD(k_stride_batch, "int64", "K stride between sequences, in elements; 0 when varlen"),
    ZYFA_KERNARG_FIELD(k_stride_seq, "int64",
                       "K stride between rows (tokens), in elements"),
    ZYFA_KERNARG_FIELD(k_stride_head, "int64", "K stride between heads, in elements"),
    ZYFA_KERNARG_FIELD(v_stride_batch, "int64", "V stride between sequences, in elements; 0 when varlen"),
    ZYFA_KERNARG_FIELD(v_stride_seq, "int64",
                       "V stride between rows (tokens), in elements"),
    ZYFA_KERNARG_FIELD(v_stride_head, "int64", "V stride between heads, in elements"),
    ZYFA_KERNARG_FIELD(o_stride_batch, "int64", "O stride between sequences, in elements; 0 when varlen"),
    ZYFA_KERNARG_FIELD(o_stride_seq, "int64", "O stride between rows (tokens), in elements"),
    ZYFA_KERNARG_FIELD(o_stride_head, "int64", "O stride between heads, in elements"),
    ZYFA_KERNARG_FIELD(batch, "int32", "number of sequences (grid z)"),
    ZYFA_KERNARG_FIELD(seqlen_q, "int32", "query rows per sequence; the longest sequence when varlen"),
    ZYFA_KERNARG_FIELD(seqlen_k, "int32", "keys per sequence; the longest sequence when varlen"),
    ZYFA_KERNARG_FIELD(heads_q, "int32", "query heads (grid y)"),
    ZYFA_KERNARG_FIELD(heads_kv, "int32",
                       "key/value heads; divides heads_q; query head h reads kv head h / (heads_q / heads_kv)"),
    ZYFA_KERNARG_FIELD(head_dim_qk, "int32", "head dimension of Q and K; must equal the variant's"),
    ZYFA_KERNARG_FIELD(head_dim_v, "int32", "head dimension of V and O; must equal the variant's"),
    ZYFA_KERNARG_FIELD(mask, "int32",
                       "zyfa_mask value: 0 none, 1 causal top-left (query i sees keys j <= i), 2 causal "
                       "bottom-right (j <= i + seqlen_k - seqlen_q, per sequence); must equal the variant's"),
    ZYFA_KERNARG_FIELD(window_left, "int32", "sliding window: keys before row + diagonal offset - window_left are masked; -1 = none"),
    ZYFA_KERNARG_FIELD(window_right, "int32", "sliding window: keys after row + diagonal offset + window_right are masked; -1 = none"),
    ZYFA_KERNARG_FIELD(in_dtype, "int32", "zyfa_dtype of Q, K, V: must be the variant's in_dtype_value (4 FP8 e4m3fn, 5 FP8 e4m3fnuz, 3 bf16)"),
    ZYFA_KERNARG_FIELD(out_dtype, "int32", "zyfa_dtype of O: 1 fp32, 2 fp16, 3 bf16 (see supported_out_dtypes)"),
    ZYFA_KERNARG_FIELD(softmax, "int32", "zyfa_softmax value, resolved: must be the variant's softmax_value (2 LEAN, 1 EXACT)"),
    ZYFA_KERNARG_FIELD(max_block_exponent, "int32",
                       "cap on the per-64-key-block power-of-two exponent k of LEAN's block scaling (unused by bf16)"),
    ZYFA_KERNARG_FIELD(softmax_scale, "float32",
                       "scale applied to Q.K before the softmax (typically 1/sqrt(head_dim_qk)); never 0"),
    ZYFA_KERNARG_FIELD(lean_centre, "float32",
                       "Lean P constant c for gfx950's truncating v_cvt_i32_f32: the round-to-nearest "
                       "constant + 0.5 (unused by bf16)"),
    ZYFA_KERNARG_FIELD(sinks, "pointer",
                       "fp32 [heads_q] attention sinks (one logit per query head, natural-log units of the "
                       "scaled scores) or null for none: folded into each row after its last key block"),
};

#undef ZYFA_KERNARG_FIELD

// Minimal JSON string escaping: every text here is ASCII we wrote, but stay correct anyway.
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
                out += escaped;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

// Shortest decimal that reads back as the same float (the values here are short binary fractions).
std::string float_text(float value) {
    char text[32];
    for (int digits = 1; digits <= 9; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(value));
        float back = 0.0f;
        if (std::sscanf(text, "%f", &back) == 1 && back == value) break;
    }
    return text;
}

int mask_value(VariantMask mask) {  // = zyfa_mask values
    switch (mask) {
    case VariantMask::None: return 0;
    case VariantMask::CausalTopLeft: return 1;
    case VariantMask::CausalBottomRight: return 2;
    }
    return -1;
}

const char* mask_name(VariantMask mask) {
    switch (mask) {
    case VariantMask::None: return "none";
    case VariantMask::CausalTopLeft: return "causal";
    case VariantMask::CausalBottomRight: return "causal_bottom_right";
    }
    return "unknown";
}

int out_dtype_value(const std::string& name) {  // = zyfa_dtype values; -1 for a name we do not know
    if (name == "fp32") return kKernelFp32;
    if (name == "fp16") return kKernelFp16;
    if (name == "bf16") return kKernelBf16;
    return -1;
}

// The value a loader must put in a field for this kernel, or "" when the caller chooses it.
std::string required_value(const std::string& field, const EmittedKernel& kernel) {
    if (field == "head_dim_qk") return std::to_string(kernel.variant.head_dim_qk);
    if (field == "head_dim_v") return std::to_string(kernel.variant.head_dim_v);
    if (field == "mask") return std::to_string(mask_value(kernel.variant.mask));
    const bool bf16 = kernel.variant.input == VariantInput::Bf16;
    const bool lean = kernel.variant.input == VariantInput::Fp8Lean;
    const bool fnuz = kernel.variant.arch == VariantArch::Gfx942;  // gfx942 reads e4m3fnuz
    if (field == "in_dtype") return std::to_string(static_cast<int>(bf16 ? kKernelBf16 : fnuz ? kKernelE4m3fnuz : kKernelE4m3fn));
    if (field == "softmax") return lean ? "2" : "1";
    if (!lean) return "";
    if (field == "max_block_exponent") return std::to_string(numerics::kBlockScaleMaxExponent);
    if (field == "lean_centre")
        return float_text(numerics::lean_p_centre_for(numerics::FloatToIntRounding::TowardZero));
    return "";
}

void write_kernarg(std::ostringstream& out, const EmittedKernel& kernel) {
    out << "      \"kernarg\": {\n";
    out << "        \"size\": " << (kernel.variant.paged ? kExtraArgsOffset + sizeof(amd::AttnExtraArgs) : sizeof(AttnKernelArgs))
        << ",\n";
    out << "        \"alignment\": " << alignof(AttnKernelArgs) << ",\n";
    out << "        \"version\": " << kAttnKernelArgsVersion << ",\n";
    out << "        \"passing\": "
        << quoted(std::string(kernel.variant.paged ? "one AttnKernelArgs struct by value at kernarg offset 0, then the "
                                                      "extra struct below (little-endian, natural "
                                                    : "one AttnKernelArgs struct by value at kernarg offset 0 (little-endian, natural ") +
                  "alignment, no hidden arguments): hipModuleLaunchKernel extra = "
                  "{HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, "
                  "HIP_LAUNCH_PARAM_END}")
        << ",\n";
    out << "        \"fields\": [\n";
    const std::size_t count = sizeof(kKernargFields) / sizeof(kKernargFields[0]);
    for (std::size_t i = 0; i < count; ++i) {
        const KernargField& f = kKernargFields[i];
        out << "          {\"name\": " << quoted(f.name) << ", \"offset\": " << f.offset << ", \"size\": " << f.size
            << ", \"type\": " << quoted(f.type);
        const std::string required = required_value(f.name, kernel);
        if (!required.empty()) out << ", \"required_value\": " << required;
        out << ", \"meaning\": " << quoted(f.meaning) << "}" << (i + 1 < count ? "," : "") << "\n";
    }
    out << "        ]";
    if (kernel.variant.paged) {
        // kernels/amd/attention_extra_args.h: only its paged part is read (split and key_bias must be zero).
        out << ",\n";
        out << "        \"extra\": {\"offset\": " << kExtraArgsOffset << ", \"size\": " << sizeof(amd::AttnExtraArgs)
            << ", \"meaning\": "
            << quoted("amd::AttnExtraArgs (kernels/amd/attention_extra_args.h) by value: paged = the block table "
                      "(kernels/common/paged_kv_args.h; page_size a power of two, 8 to 256; k/v_stride_batch are the "
                      "pools' page strides, cu_seqlens_k null, seqused_k null or the keys per sequence); split and "
                      "key_bias zero")
            << "}\n";
    } else {
        out << "\n";
    }
    out << "      },\n";
}

void write_kernel(std::ostringstream& out, const EmittedKernel& kernel, bool last) {
    const KernelVariant& v = kernel.variant;
    out << "    {\n";
    out << "      \"symbol\": " << quoted(kernel.symbol) << ",\n";
    out << "      \"kernel_descriptor\": " << quoted(kernel.symbol + ".kd") << ",\n";
    out << "      \"code_object\": " << quoted(kernel.symbol + ".co") << ",\n";
    out << "      \"assembly\": " << quoted(kernel.symbol + ".s") << ",\n";
    out << "      \"arch\": \"" << variant_arch_name(v) << "\",\n";
    out << "      \"target\": \"amdgcn-amd-amdhsa--" << variant_arch_name(v) << "\",\n";
    out << "      \"variant\": {\n";
    out << "        \"mask\": " << quoted(mask_name(v.mask)) << ",\n";
    out << "        \"mask_value\": " << mask_value(v.mask) << ",\n";
    out << "        \"window\": \"window_left, window_right at run time\",\n";
    out << "        \"head_dim_qk\": " << v.head_dim_qk << ",\n";
    out << "        \"head_dim_v\": " << v.head_dim_v << ",\n";
    const bool bf16 = v.input == VariantInput::Bf16;
    const bool lean = v.input == VariantInput::Fp8Lean;
    const bool fnuz = v.arch == VariantArch::Gfx942;  // gfx942 reads e4m3fnuz
    out << "        \"in_dtype\": \"" << (bf16 ? "bf16" : fnuz ? "e4m3fnuz" : "e4m3fn") << "\",\n";
    out << "        \"in_dtype_value\": " << static_cast<int>(bf16 ? kKernelBf16 : fnuz ? kKernelE4m3fnuz : kKernelE4m3fn) << ",\n";
    out << "        \"softmax\": \"" << (lean ? "LEAN" : "EXACT") << "\",\n";
    out << "        \"softmax_value\": " << (lean ? 2 : 1) << ",\n";
    out << "        \"keys_per_block\": " << kKeysPerBlock << ",\n";
    out << "        \"paged\": " << (v.paged ? "true" : "false") << ",\n";
    out << "        \"supported_out_dtypes\": [";
    for (std::size_t i = 0; i < kernel.supported_out_dtypes.size(); ++i) {
        const std::string& name = kernel.supported_out_dtypes[i];
        out << (i ? ", " : "") << "{\"name\": " << quoted(name) << ", \"value\": " << out_dtype_value(name) << "}";
    }
    out << "],\n";
    out << "        \"supports\": [\"gqa\", \"mqa\", \"varlen\", \"lse\", \"q_descale\", \"k_descale\", "
           "\"v_descale\", \"window\"]\n";
    out << "      },\n";
    write_kernarg(out, kernel);
    out << "      \"launch\": {\n";
    out << "        \"grid_workgroups\": [\"ceil(seqlen_q / " << kRowsPerWorkgroup
        << ")\", \"heads_q\", \"batch\"],\n";
    out << "        \"workgroup_threads\": [" << kThreadsPerWorkgroup << ", 1, 1],\n";
    out << "        \"wavefront_size\": 64,\n";
    out << "        \"waves_per_workgroup\": " << kWavesPerWorkgroup << ",\n";
    out << "        \"rows_per_wave\": " << kRowsPerWave << ",\n";
    out << "        \"rows_per_workgroup\": " << kRowsPerWorkgroup << ",\n";
    out << "        \"mapping\": "
        << quoted("workgroup (x, y, z) computes query tile t = ceil(seqlen_q / " + std::to_string(kRowsPerWorkgroup) +
                  ") - 1 - x (tiles in reverse, so the heaviest causal tiles start first; seqlen_q is the "
                  "kernarg, the longest sequence when varlen), i.e. query rows [" +
                  std::to_string(kRowsPerWorkgroup) + "t, " + std::to_string(kRowsPerWorkgroup) + "t + " +
                  std::to_string(kRowsPerWorkgroup) +
                  ") of query head y of sequence z; wave w of the workgroup owns rows " +
                  std::to_string(kRowsPerWave) + "w .. " + std::to_string(kRowsPerWave) +
                  "w + " + std::to_string(kRowsPerWave - 1) +
                  " of that range; rows past the sequence's length (varlen: a shorter sequence) do nothing")
        << ",\n";
    out << "        \"dynamic_lds_bytes\": 0\n";
    out << "      },\n";
    out << "      \"resources\": {\n";
    out << "        \"lds_bytes\": " << kernel.lds_bytes << ",\n";
    out << "        \"vgprs\": " << kernel.vgprs << ",\n";
    out << "        \"agprs\": " << kernel.agprs << ",\n";
    out << "        \"sgprs\": " << kernel.sgprs << ",\n";
    // The generator refuses a schedule that needs scratch, and tests/amd checks each code object's
    // private segment is 0, so this is a fact of every kernel here, not a measurement per kernel.
    out << "        \"scratch_bytes\": 0\n";
    out << "      }\n";
    out << "    }" << (last ? "" : ",") << "\n";
}

}  // namespace

std::string manifest_json(const std::vector<EmittedKernel>& kernels) {
    std::ostringstream out;
    out << "{\n";
    out << "  \"format\": \"zyfa-gfx950-fp8-manifest\",\n";
    out << "  \"format_version\": 1,\n";
    out << "  \"description\": "
        << quoted("FlashAttention forward for AMD gfx950 (MI350X/MI355X): FP8 e4m3fn in with the LEAN softmax (ZYFA), "
                  "BF16 in with the exact online softmax (fp32, P rounded to bf16), and FP8 e4m3fn in with the exact online "
                  "softmax (fp32, P 2^8 rounded to e4m3fn); and for gfx942 (MI300X/MI325X, the kernels whose arch is gfx942) "
                  "BF16 in with the same exact online softmax, and FP8 e4m3fnuz in with the exact online softmax "
                  "(fp32, P 2^7 rounded to e4m3fnuz) or with the LEAN softmax (O kept as O 2^k of the latest key "
                  "block's P scale exponent k, rescaled by alpha 2^(k_new - k_old)). "
                  "Load <code_object> with hipModuleLoadData, get <symbol> with hipModuleGetFunction, launch "
                  "with the grid, workgroup and kernarg described per kernel.")
        << ",\n";
    out << "  \"kernels\": [\n";
    for (std::size_t i = 0; i < kernels.size(); ++i) write_kernel(out, kernels[i], i + 1 == kernels.size());
    out << "  ]\n";
    out << "}\n";
    return out.str();
}

}  // namespace gfx950_fp8
}  // namespace zyfa
