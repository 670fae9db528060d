//! Thin entry point: everything lives in the library so tests and examples can drive it.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    eavpivot::cli::main()
}
