//! Fuzz target: `checks::json_loader` (see fuzz/src/checks.rs). With the `libfuzzer` feature this is a
//! libFuzzer target (`cargo +nightly fuzz run json_loader --features libfuzzer`); without it, a plain
//! driver (fuzz/src/driver.rs).
#![cfg_attr(feature = "libfuzzer", no_main)]

#[cfg(feature = "libfuzzer")]
libfuzzer_sys::fuzz_target!(|data: &[u8]| stream_alloc_fuzz::checks::json_loader(data));

#[cfg(not(feature = "libfuzzer"))]
fn main() {
    std::process::exit(stream_alloc_fuzz::driver::main("json_loader", stream_alloc_fuzz::checks::json_loader));
}
