//! `reclaimsim`: the command line. Turns arguments into a configuration, runs
//! the engine, prints `/proc/vmstat`-style output and writes JSON results.
//! A library too, so that the Python package's `reclaimsim` command runs the
//! same command line ([`main_with`]).

mod bench;
mod compare;
mod events;
mod explain;
mod listing;
mod mrc;
mod output;
mod report;
mod reproduce;
mod runner;
mod sweep;
mod trace_cmd;

use clap::{CommandFactory, Parser, Subcommand};

/// A fast, deterministic simulator of Linux page reclaim.
#[derive(Parser)]
#[command(name = "reclaimsim", version = experiment::VERSION, about, long_about = None)]
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
    /// Explain a page's life (insertion, activation, eviction, refault) and who produced each reclaim counter, from `run --events`.
    Explain(explain::ExplainArgs),
    /// Write one self-contained HTML page of a run: time series, counters and, with --events, the event timeline.
    Report(report::ReportArgs),
    /// Measure simulation speed (accesses per second) and memory per page frame.
    Bench(bench::BenchArgs),
    /// Miss-ratio curve of the simulated kernel: faults, refaults and swap-ins against memory size, one run per size in parallel.
    Mrc(mrc::MrcArgs),
    /// Check the simulator against the real kernel: the driver in a memory cgroup vs the simulator on its trace.
    Validate(validate::ValidateArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) for `reclaimsim`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of `reclaimsim` and its commands.
    Man,
    /// The workload driver (`driver run|dry PATTERN ...`, `driver patterns`), as the `reclaimsim-driver` binary.
    Driver {
        /// Driver arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Runs the command line on `args` (the first is the program name) and returns the exit code:
/// 0, 1 for a failed run, 2 for bad input, 3 for `validate` refusing.
pub fn main_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    // Writing into a closed pipe (`reclaimsim run ... | head`) ends the
    // process quietly, as it does other command-line tools, instead of a
    // panic in `println!`. Scratch files are unlinked when created, so none is left.
    // SAFETY: restores the default disposition before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; usage errors exit 2.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Run(args) => runner::run(args),
        Command::Profiles(args) => listing::profiles(args),
        Command::Workloads => {
            output::print_workloads();
            Ok(())
        }
        Command::Settings(args) => listing::settings(args),
        Command::Bench(args) => bench::bench(args),
        Command::Mrc(args) => mrc::mrc(args),
        Command::Explain(args) => explain::run(args),
        Command::Report(args) => report::run(args),
        Command::Compare(args) => compare::compare(args),
        Command::Reproduce(args) => reproduce::reproduce(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Trace(args) => trace_cmd::trace(args),
        Command::Validate(args) => validate::validate(args),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "reclaimsim", &mut std::io::stdout());
            Ok(())
        }
        Command::Man => man(),
        Command::Driver { args } => driver::cli::main(&args).map_err(|e| anyhow::Error::new(runner::UsageError(e))),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("reclaimsim: error: {e:#}");
            if e.downcast_ref::<runner::UsageError>().is_some() {
                2
            } else if let Some(stop) = e.downcast_ref::<validate::Stop>() {
                stop.exit_code()
            } else {
                1
            }
        }
    }
}

/// `reclaimsim man`: the top-level page, then one section per command.
fn man() -> anyhow::Result<()> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let title = format!("reclaimsim-{}", sub.get_name());
        clap_mangen::Man::new(sub.clone()).title(title).render(&mut out)?;
    }
    std::io::Write::write_all(&mut std::io::stdout(), &out)?;
    Ok(())
}
