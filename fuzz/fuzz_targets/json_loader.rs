//! Fuzz target over `checks::json_loader` (fuzz/src/checks.rs): `cargo +nightly fuzz run json_loader --features
//! libfuzzer`, or without the feature the plain driver (fuzz/src/driver.rs).
#![cfg_attr(feature = "libfuzzer", no_main)]
stream_alloc_fuzz::target!(json_loader);
