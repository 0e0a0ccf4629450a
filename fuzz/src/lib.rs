//! Shared code of the fuzz targets: the checks (also run by `cargo test` through
//! tests/fuzz_props.rs), the fake device runtime, and a libFuzzer-free driver.

pub mod checks;
pub mod driver;
pub mod fake_rt;
