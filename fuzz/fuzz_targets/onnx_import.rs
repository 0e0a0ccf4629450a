//! Fuzz target: `checks::onnx_import` (see fuzz/src/checks.rs). With the `libfuzzer` feature this is a
//! libFuzzer target (`cargo +nightly fuzz run onnx_import --features libfuzzer`); without it, a plain
//! driver (fuzz/src/driver.rs) seeded with tests/fixtures/onnx.
#![cfg_attr(feature = "libfuzzer", no_main)]

#[cfg(feature = "libfuzzer")]
libfuzzer_sys::fuzz_target!(|data: &[u8]| stream_alloc_fuzz::checks::onnx_import(data));

#[cfg(not(feature = "libfuzzer"))]
fn main() {
    std::process::exit(stream_alloc_fuzz::driver::main("onnx_import", stream_alloc_fuzz::checks::onnx_import));
}
