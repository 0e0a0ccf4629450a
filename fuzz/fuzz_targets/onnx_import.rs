//! Fuzz target over `checks::onnx_import` (fuzz/src/checks.rs): `cargo +nightly fuzz run onnx_import
//! --features libfuzzer`, or without the feature the plain driver, seeded with tests/fixtures/onnx.
#![cfg_attr(feature = "libfuzzer", no_main)]
stream_alloc_fuzz::target!(onnx_import);
