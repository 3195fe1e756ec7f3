//! Finds libzyfa: ZYFA_LIB_DIR (with ZYFA_INCLUDE_DIR, default $ZYFA_LIB_DIR/../include), else the
//! `pkg-config` program (PKG_CONFIG_PATH applies). Links it dynamically; compiles nothing (no C,
//! no GPU code): GPU runtimes are loaded by libzyfa itself at run time.
//!
//! Run time: this crate's own tests get an rpath to the library folder, so `cargo test` finds
//! libzyfa.so.0 without LD_LIBRARY_PATH. Cargo passes rustc-link-arg only to the targets of the
//! package whose build script prints it, never to dependents, so the folder is also published as
//! DEP_ZYFA_LIBDIR: a direct dependent's build script can print the same rpath for its own targets
//! (bindings/rust/zyfa/build.rs does). An application sets it itself (docs/bindings.md, Rust).
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    for var in ["ZYFA_LIB_DIR", "ZYFA_INCLUDE_DIR", "PKG_CONFIG_PATH", "PKG_CONFIG"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    let (lib_dirs, include_dirs) = match env::var_os("ZYFA_LIB_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let include = env::var_os("ZYFA_INCLUDE_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| dir.join("..").join("include"));
            (vec![dir], vec![include])
        }
        None => from_pkg_config(),
    };
    for dir in &lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=zyfa");
    // The library folder(s) for dependents' build scripts (DEP_ZYFA_LIBDIR, ':'-separated).
    let joined: Vec<String> = lib_dirs.iter().map(|d| d.display().to_string()).collect();
    println!("cargo:libdir={}", joined.join(":"));
    // Where zyfa.h is, for dependents (DEP_ZYFA_INCLUDE) and for the layout test of this crate.
    let include = env::var_os("ZYFA_INCLUDE_DIR")
        .map(PathBuf::from)
        .or_else(|| include_dirs.first().cloned())
        .unwrap_or_default();
    println!("cargo:include={}", include.display());
    println!("cargo:rustc-env=ZYFA_SYS_INCLUDE_DIR={}", include.display());
}

fn from_pkg_config() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let output = Command::new(&program).args(["--libs", "--cflags", "zyfa"]).output();
    let output = match output {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!(
            "zyfa-sys: `{} --libs --cflags zyfa` failed: {}\nSet PKG_CONFIG_PATH to the folder of \
             zyfa.pc, or ZYFA_LIB_DIR to the folder of libzyfa.so.",
            program,
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!(
            "zyfa-sys: cannot run `{}` ({}); install pkg-config or set ZYFA_LIB_DIR to the folder of \
             libzyfa.so",
            program, e
        ),
    };
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    let mut libs = Vec::new();
    let mut includes = Vec::new();
    for word in text.split_whitespace() {
        if let Some(dir) = word.strip_prefix("-L") {
            libs.push(PathBuf::from(dir));
        } else if let Some(dir) = word.strip_prefix("-I") {
            includes.push(PathBuf::from(dir));
        }
    }
    (libs, includes)
}
