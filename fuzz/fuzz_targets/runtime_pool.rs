//! Fuzz target over `checks::runtime_pool` (fuzz/src/checks.rs): `cargo +nightly fuzz run runtime_pool --features
//! libfuzzer`, or without the feature the plain driver (fuzz/src/driver.rs).
#![cfg_attr(feature = "libfuzzer", no_main)]
stream_alloc_fuzz::target!(runtime_pool);
