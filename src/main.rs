//! Thin entry point: everything lives in the library so tests and examples can drive it.
#![forbid(unsafe_code)]

/// mimalloc: the stream allocates and frees a few small strings per source row, in FIFO
/// order across tasks, where glibc's allocator spends more time than the pivot itself.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    eavpivot::cli::main()
}
