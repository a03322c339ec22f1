//! The `reclaimsim` binary: the command line of [`reclaimsim_cli`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(reclaimsim_cli::main_with(std::env::args_os()))
}
