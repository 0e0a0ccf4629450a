//! Fuzz target: `checks::pipeline` (see fuzz/src/checks.rs). With the `libfuzzer` feature this is a
//! libFuzzer target (`cargo +nightly fuzz run pipeline --features libfuzzer`); without it, a plain
//! driver (fuzz/src/driver.rs).
#![cfg_attr(feature = "libfuzzer", no_main)]

#[cfg(feature = "libfuzzer")]
libfuzzer_sys::fuzz_target!(|data: &[u8]| stream_alloc_fuzz::checks::pipeline(data));

#[cfg(not(feature = "libfuzzer"))]
fn main() {
    std::process::exit(stream_alloc_fuzz::driver::main("pipeline", stream_alloc_fuzz::checks::pipeline));
}
