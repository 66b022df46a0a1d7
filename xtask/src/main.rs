//! `cargo xtask`: see `cargo xtask --help`.

fn main() -> std::process::ExitCode {
    xtask::cli::main()
}
