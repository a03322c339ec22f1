//! `reclaimsim-driver`: run a pattern on real memory, or emit its trace (see [`driver::cli`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match driver::cli::main(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reclaimsim-driver: {e}");
            ExitCode::from(2)
        }
    }
}
