//! The Rust structs against the C compiler's sizeof/offsetof of include/zyfa.h: a small C program
//! is compiled with $CC (default cc) and its output compared field by field.
use std::mem::{size_of, MaybeUninit};
use std::path::PathBuf;
use std::process::Command;
use zyfa_sys::*;

macro_rules! offset {
    ($ty:ty, $field:ident) => {{
        let value = MaybeUninit::<$ty>::uninit();
        let base = value.as_ptr();
        // addr_of! takes the field's address without reading or referencing uninitialised memory.
        let field = unsafe { std::ptr::addr_of!((*base).$field) };
        field as usize - base as usize
    }};
}

macro_rules! layout {
    ($ty:ident; $($field:ident),*) => {{
        let mut v = vec![(format!("{} size", stringify!($ty)), size_of::<$ty>())];
        $( v.push((format!("{} {}", stringify!($ty), stringify!($field)), offset!($ty, $field))); )*
        v
    }};
}

fn rust_layout() -> Vec<(String, usize)> {
    let mut all = Vec::new();
    all.extend(layout!(zyfa_context_options; struct_size, backend, device, num_threads));
    all.extend(layout!(zyfa_tensor; data, dtype, reserved, stride_batch, stride_seq, stride_head));
    all.extend(layout!(zyfa_attn_params; struct_size, mask, batch, seqlen_q, seqlen_k, heads_q, heads_kv,
        head_dim_qk, head_dim_v, softmax_scale, softmax, window_left, window_right, cu_seqlens_q, cu_seqlens_k,
        q_descale, k_descale, v_descale, lse, flags, key_block, reserved, sinks, block_table, seqused_k,
        block_table_stride, num_pages, page_size, reserved2, q_descale_per_token, k_descale_per_block,
        workspace, workspace_bytes, num_splits, reserved3, key_bias));
    all.extend(layout!(zyfa_quant_params; struct_size, flags, batch, seqlen, heads, head_dim, cu_seqlens,
        smooth_mean, scale_rows, reserved, query_mean, key_bias, query_heads, key_bias_scale, reserved2));
    all.extend(layout!(zyfa_merge_params; struct_size, num_parts, batch, seqlen_q, heads, head_dim_v, cu_seqlens_q,
        lse));
    all
}

#[test]
fn struct_sizes_and_offsets_equal_the_c_ones() {
    let layout = rust_layout();
    let mut c = String::from("#include <stddef.h>\n#include <stdio.h>\n#include <zyfa.h>\nint main(void) {\n");
    for (key, _) in &layout {
        let mut words = key.split(' ');
        let (ty, what) = (words.next().unwrap(), words.next().unwrap());
        let expr = if what == "size" { format!("sizeof({})", ty) } else { format!("offsetof({}, {})", ty, what) };
        c += &format!("    printf(\"{} %zu\\n\", {});\n", key, expr);
    }
    c += "    return 0;\n}\n";
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("zyfa_layout.c");
    let exe = dir.join("zyfa_layout");
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args(["-std=c99", "-I", env!("ZYFA_SYS_INCLUDE_DIR")])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {}: {}", cc, e));
    assert!(status.success(), "{} failed on the layout probe", cc);
    let out = Command::new(&exe).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let c_values: Vec<(String, usize)> = text
        .lines()
        .map(|line| {
            let (key, value) = line.rsplit_once(' ').unwrap();
            (key.to_string(), value.parse().unwrap())
        })
        .collect();
    assert_eq!(c_values.len(), layout.len());
    for ((key, rust), (c_key, c_value)) in layout.iter().zip(&c_values) {
        assert_eq!(key, c_key);
        assert_eq!(rust, c_value, "{}: Rust {} != C {}", key, rust, c_value);
    }
}

#[test]
fn library_version_matches_the_declarations() {
    let number = unsafe { zyfa_version() };
    assert_eq!(number / 10000, ZYFA_VERSION_MAJOR);
    let mut p = MaybeUninit::<zyfa_attn_params>::uninit();
    unsafe { zyfa_attn_params_init(p.as_mut_ptr(), size_of::<zyfa_attn_params>()) };
    let p = unsafe { p.assume_init() };
    assert_eq!(p.struct_size as usize, size_of::<zyfa_attn_params>());
    assert_eq!((p.window_left, p.window_right, p.softmax), (-1, -1, ZYFA_SOFTMAX_AUTO));
}
