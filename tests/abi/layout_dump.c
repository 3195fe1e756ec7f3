/*
 * Prints the binary layout of the public ABI as include/zyfa.h defines it, one fact per line:
 *   struct <name> size <bytes> align <bytes>
 *   field <struct>.<member> offset <bytes> size <bytes>
 *   const <NAME> <value>
 * check_layout.sh compares this with the recorded layouts (layout-<version>.txt). A field that is
 * appended here without a new record, or a record that no longer matches, fails abi_layout_record.
 */
#include <stddef.h>
#include <stdio.h>

#include "zyfa.h"

#define STRUCT(type) printf("struct %s size %zu align %zu\n", #type, sizeof(type), _Alignof(type))
#define FIELD(type, member) \
    printf("field %s.%s offset %zu size %zu\n", #type, #member, offsetof(type, member), sizeof(((type*)0)->member))
#define CONST(name) printf("const %s %lld\n", #name, (long long)(name))

int main(void) {
    STRUCT(zyfa_context_options);
    FIELD(zyfa_context_options, struct_size);
    FIELD(zyfa_context_options, backend);
    FIELD(zyfa_context_options, device);
    FIELD(zyfa_context_options, num_threads);

    STRUCT(zyfa_tensor);
    FIELD(zyfa_tensor, data);
    FIELD(zyfa_tensor, dtype);
    FIELD(zyfa_tensor, reserved);
    FIELD(zyfa_tensor, stride_batch);
    FIELD(zyfa_tensor, stride_seq);
    FIELD(zyfa_tensor, stride_head);

    STRUCT(zyfa_attn_params);
    FIELD(zyfa_attn_params, struct_size);
    FIELD(zyfa_attn_params, mask);
    FIELD(zyfa_attn_params, batch);
    FIELD(zyfa_attn_params, seqlen_q);
    FIELD(zyfa_attn_params, seqlen_k);
    FIELD(zyfa_attn_params, heads_q);
    FIELD(zyfa_attn_params, heads_kv);
    FIELD(zyfa_attn_params, head_dim_qk);
    FIELD(zyfa_attn_params, head_dim_v);
    FIELD(zyfa_attn_params, softmax_scale);
    FIELD(zyfa_attn_params, softmax);
    FIELD(zyfa_attn_params, window_left);
    FIELD(zyfa_attn_params, window_right);
    FIELD(zyfa_attn_params, cu_seqlens_q);
    FIELD(zyfa_attn_params, cu_seqlens_k);
    FIELD(zyfa_attn_params, q_descale);
    FIELD(zyfa_attn_params, k_descale);
    FIELD(zyfa_attn_params, v_descale);
    FIELD(zyfa_attn_params, lse);
    FIELD(zyfa_attn_params, flags);
    FIELD(zyfa_attn_params, key_block);
    FIELD(zyfa_attn_params, reserved);
    FIELD(zyfa_attn_params, sinks);
    FIELD(zyfa_attn_params, block_table);
    FIELD(zyfa_attn_params, seqused_k);
    FIELD(zyfa_attn_params, block_table_stride);
    FIELD(zyfa_attn_params, num_pages);
    FIELD(zyfa_attn_params, page_size);
    FIELD(zyfa_attn_params, reserved2);
    FIELD(zyfa_attn_params, q_descale_per_token);
    FIELD(zyfa_attn_params, k_descale_per_block);
    FIELD(zyfa_attn_params, workspace);
    FIELD(zyfa_attn_params, workspace_bytes);
    FIELD(zyfa_attn_params, num_splits);
    FIELD(zyfa_attn_params, reserved3);
    FIELD(zyfa_attn_params, key_bias);

    STRUCT(zyfa_quant_params);
    FIELD(zyfa_quant_params, struct_size);
    FIELD(zyfa_quant_params, flags);
    FIELD(zyfa_quant_params, batch);
    FIELD(zyfa_quant_params, seqlen);
    FIELD(zyfa_quant_params, heads);
    FIELD(zyfa_quant_params, head_dim);
    FIELD(zyfa_quant_params, cu_seqlens);
    FIELD(zyfa_quant_params, smooth_mean);
    FIELD(zyfa_quant_params, scale_rows);
    FIELD(zyfa_quant_params, reserved);
    FIELD(zyfa_quant_params, query_mean);
    FIELD(zyfa_quant_params, key_bias);
    FIELD(zyfa_quant_params, query_heads);
    FIELD(zyfa_quant_params, key_bias_scale);
    FIELD(zyfa_quant_params, reserved2);

    STRUCT(zyfa_merge_params);
    FIELD(zyfa_merge_params, struct_size);
    FIELD(zyfa_merge_params, num_parts);
    FIELD(zyfa_merge_params, batch);
    FIELD(zyfa_merge_params, seqlen_q);
    FIELD(zyfa_merge_params, heads);
    FIELD(zyfa_merge_params, head_dim_v);
    FIELD(zyfa_merge_params, cu_seqlens_q);
    FIELD(zyfa_merge_params, lse);

    printf("struct zyfa_status size %zu align %zu\n", sizeof(zyfa_status), _Alignof(zyfa_status));
    CONST(ZYFA_SUCCESS);
    CONST(ZYFA_ERROR_INVALID_ARGUMENT);
    CONST(ZYFA_ERROR_NOT_SUPPORTED);
    CONST(ZYFA_ERROR_NO_DEVICE);
    CONST(ZYFA_ERROR_DEVICE);
    CONST(ZYFA_ERROR_OUT_OF_MEMORY);
    CONST(ZYFA_ERROR_INTERNAL);
    CONST(ZYFA_DTYPE_FP32);
    CONST(ZYFA_DTYPE_FP16);
    CONST(ZYFA_DTYPE_BF16);
    CONST(ZYFA_DTYPE_FP8_E4M3FN);
    CONST(ZYFA_DTYPE_FP8_E4M3FNUZ);
    CONST(ZYFA_DTYPE_INT8);
    CONST(ZYFA_BACKEND_AUTO);
    CONST(ZYFA_BACKEND_CPU);
    CONST(ZYFA_BACKEND_HIP);
    CONST(ZYFA_BACKEND_CUDA);
    CONST(ZYFA_MASK_NONE);
    CONST(ZYFA_MASK_CAUSAL);
    CONST(ZYFA_MASK_CAUSAL_BOTTOM_RIGHT);
    CONST(ZYFA_SOFTMAX_AUTO);
    CONST(ZYFA_SOFTMAX_EXACT);
    CONST(ZYFA_SOFTMAX_LEAN);
    CONST(ZYFA_QUANT_HADAMARD);
    CONST(ZYFA_QUANT_SMOOTH);
    CONST(ZYFA_QUANT_V_TRANSPOSED);
    CONST(ZYFA_ATTN_V_TRANSPOSED);
    CONST(ZYFA_QUANT_KEY_BIAS);
    CONST(ZYFA_INT8_KEY_BLOCK);
    CONST(ZYFA_VERSION_MAJOR);
    return 0;
}
