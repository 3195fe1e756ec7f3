//! Gives this crate's tests and examples an rpath to libzyfa's folder, which zyfa-sys found
//! (DEP_ZYFA_LIBDIR), so `cargo test` and `cargo run --example` need no LD_LIBRARY_PATH. Cargo
//! applies rustc-link-arg only to this package's own targets: an application that depends on zyfa
//! sets its rpath itself (docs/bindings.md, Rust).
use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(dirs) = env::var("DEP_ZYFA_LIBDIR") {
        for dir in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        }
    }
}
