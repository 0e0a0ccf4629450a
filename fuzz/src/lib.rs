//! Shared code of the fuzz targets: the checks (also run by `cargo test` through
//! tests/fuzz_props.rs), the fake device runtime, and a libFuzzer-free driver.

pub mod checks;
pub mod driver;
pub mod fake_rt;

/// The whole of a fuzz target file, over `checks::$name`: a libFuzzer target with the
/// `libfuzzer` feature, else a `main` that runs the plain driver.
#[macro_export]
macro_rules! target {
    ($name:ident) => {
        #[cfg(feature = "libfuzzer")]
        libfuzzer_sys::fuzz_target!(|data: &[u8]| $crate::checks::$name(data));

        #[cfg(not(feature = "libfuzzer"))]
        fn main() {
            std::process::exit($crate::driver::main(stringify!($name), $crate::checks::$name));
        }
    };
}
