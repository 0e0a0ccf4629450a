//! Build script: gives the shared library its SONAME (so installs can carry the versioned
//! `libstream_alloc.so.0` symlink chain) and generates the C header from src/capi into
//! `OUT_DIR`. The checked-in `include/stream_alloc.h` is compared with a fresh generation by
//! `tests/header.rs`.

use std::path::{Path, PathBuf};

/// Major version in the SONAME: bumped only by an ABI break.
const SONAME_MAJOR: &str = "0";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src/capi");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libstream_alloc.so.{SONAME_MAJOR}");
    }
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // A parse failure here must not break builds of the Rust library; tests/header.rs fails
    // loudly instead.
    match generate(&root) {
        Ok(bindings) => {
            bindings.write_to_file(out.join("stream_alloc.h"));
        }
        Err(e) => println!("cargo:warning=cbindgen could not generate stream_alloc.h: {e}"),
    }
}

fn generate(root: &Path) -> Result<cbindgen::Bindings, String> {
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).map_err(|e| e.to_string())?;
    // cbindgen follows the `mod` items of src/capi/mod.rs to the other files.
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"))
        .generate()
        .map_err(|e| e.to_string())
}
