//! `reclaimsim`: the command line. Turns arguments into a configuration, runs
//! the engine, prints `/proc/vmstat`-style output and writes JSON results.

mod bench;
mod compare;
mod listing;
mod output;
mod reproduce;
mod runner;
mod sweep;
mod trace_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A fast, deterministic simulator of Linux page reclaim.
#[derive(Parser)]
#[command(name = "reclaimsim", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run workloads on a simulated machine and print /proc/vmstat-style counters.
    Run(runner::RunArgs),
    /// List kernel profiles (kernel version + LRU design) and the flags each takes from its kernel.
    Profiles(listing::ListingArgs),
    /// List built-in workloads and their parameters.
    Workloads,
    /// List every `--set` key with its default value and the kernels that had it.
    Settings(listing::ListingArgs),
    /// Run a seed document's experiment before and after its change and print its table beside ours.
    Reproduce(reproduce::ReproduceArgs),
    /// Run the cartesian product of a sweep specification (TOML) locally or on Ray; resumable.
    Sweep(sweep::SweepArgs),
    /// Compare result documents side by side, mmtests style (vmstat rows, derived ratios, changes).
    Compare(compare::CompareArgs),
    /// Convert, record, inspect and synthesize traces (see docs/trace-format.md).
    Trace(trace_cmd::TraceArgs),
    /// Measure simulation speed (accesses per second) and memory per page frame.
    Bench(bench::BenchArgs),
    /// Check the simulator against the real kernel: the driver in a memory cgroup vs the simulator on its trace.
    Validate(validate::ValidateArgs),
    /// The workload driver (`driver run|dry PATTERN ...`, `driver patterns`), as the `reclaimsim-driver` binary.
    Driver {
        /// Driver arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => runner::run(args),
        Command::Profiles(args) => listing::profiles(args),
        Command::Workloads => {
            output::print_workloads();
            Ok(())
        }
        Command::Settings(args) => listing::settings(args),
        Command::Bench(args) => bench::bench(args),
        Command::Compare(args) => compare::compare(args),
        Command::Reproduce(args) => reproduce::reproduce(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Trace(args) => trace_cmd::trace(args),
        Command::Validate(args) => validate::validate(args),
        Command::Driver { args } => driver::cli::main(&args).map_err(|e| anyhow::Error::new(runner::UsageError(e))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reclaimsim: error: {e:#}");
            if e.downcast_ref::<runner::UsageError>().is_some() {
                ExitCode::from(2)
            } else if let Some(stop) = e.downcast_ref::<validate::Stop>() {
                ExitCode::from(stop.exit_code())
            } else {
                ExitCode::from(1)
            }
        }
    }
}
