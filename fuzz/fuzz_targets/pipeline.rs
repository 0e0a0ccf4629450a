//! Fuzz target over `checks::pipeline` (fuzz/src/checks.rs): `cargo +nightly fuzz run pipeline --features
//! libfuzzer`, or without the feature the plain driver (fuzz/src/driver.rs).
#![cfg_attr(feature = "libfuzzer", no_main)]
stream_alloc_fuzz::target!(pipeline);
