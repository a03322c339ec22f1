//! The driver's command line, shared by `reclaimsim-driver` and `reclaimsim driver`.
//!
//! ```text
//! reclaimsim-driver run PATTERN [--file PATH] [--cgroup DIR] [--cpu N] [--snapshot PATH] [--phase N] [--write N:PATH:TEXT]
//! reclaimsim-driver dry PATTERN [--out FILE]
//! reclaimsim-driver patterns
//! reclaimsim-driver calibrate [--pages N] [--ops N] [--file PATH]
//! ```

use crate::exec::{run_real, RealOpts, Write as WriteAt};
use crate::pattern::{Pattern, PATTERNS};
use crate::trace::write_trace;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// What `--phase N` reads after every N accesses.
pub const PHASE_STAT: &str = "/proc/vmstat";

/// How to call the driver.
pub const USAGE: &str = "usage: reclaimsim-driver run PATTERN [--file PATH] [--cgroup DIR] [--cpu N] [--snapshot PATH]... [--phase N] [--write N:PATH:TEXT]...\n       reclaimsim-driver dry PATTERN [--out FILE]\n       reclaimsim-driver patterns\n       reclaimsim-driver calibrate [--pages N] [--ops N] [--file PATH]";

/// Runs the driver's command line (`args` without the program name).
pub fn main(args: &[String]) -> Result<(), String> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    if cmd == "patterns" {
        for d in PATTERNS {
            let params: Vec<String> = d.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!("{:<10} {}\n           {}", d.name, d.summary, params.join(","));
        }
        return Ok(());
    }
    if cmd == "calibrate" {
        let (mut pages, mut ops, mut file) = (crate::calibrate::PAGES, crate::calibrate::OPS, None);
        let mut it = rest.iter();
        while let Some(flag) = it.next() {
            let value = it.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            let bad = || format!("{flag} {value}: expected a number > 0");
            match flag.as_str() {
                "--pages" => pages = value.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?,
                "--ops" => ops = value.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?,
                "--file" => file = Some(std::path::PathBuf::from(value)),
                _ => return Err(format!("unknown option {flag} for calibrate\n{USAGE}")),
            }
        }
        let c = crate::calibrate::calibrate(pages, ops, file.as_deref()).map_err(|e| e.to_string())?;
        println!("{}", c.line());
        return Ok(());
    }
    let (spec, flags) = rest.split_first().ok_or(USAGE)?;
    let pattern = Pattern::parse(spec).map_err(|e| e.to_string())?;
    let mut opts = RealOpts::default();
    let mut out: Option<PathBuf> = None;
    let mut it = flags.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match (cmd.as_str(), flag.as_str()) {
            ("run", "--file") => opts.file = Some(value.into()),
            ("run", "--cgroup") => opts.cgroup = Some(value.into()),
            ("run", "--cpu") => {
                opts.cpu = Some(value.parse().map_err(|_| format!("--cpu {value}: expected a CPU number"))?)
            }
            ("run", "--snapshot") => opts.snapshot.push(value.into()),
            ("run", "--phase") => {
                let every = value.parse().ok().filter(|&n: &u64| n > 0);
                let every = every.ok_or_else(|| format!("--phase {value}: expected a number of accesses > 0"))?;
                opts.phases = Some((every, PHASE_STAT.into()));
            }
            ("run", "--write") => opts.writes.push(WriteAt::parse(value)?),
            ("dry", "--out") => out = Some(value.into()),
            _ => return Err(format!("unknown option {flag} for {cmd}\n{USAGE}")),
        }
    }
    match cmd.as_str() {
        "run" => {
            let done = run_real(&pattern, &opts).map_err(|e| e.to_string())?;
            println!("ops {} digest {}", done.ops, done.digest);
            for (path, text) in opts.snapshot.iter().zip(&done.snapshot) {
                println!("snapshot {} {}", path.display(), text.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            for (w, status) in opts.writes.iter().zip(&done.writes) {
                println!("write {} {} status {status}", w.after, w.path.display());
            }
            for (ops, text) in &done.phases {
                println!("phase {ops} {}", text.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        "dry" => {
            let sink: Box<dyn Write> = match &out {
                Some(p) => Box::new(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?),
                None => Box::new(std::io::stdout().lock()),
            };
            let mut w = BufWriter::with_capacity(1 << 20, sink);
            write_trace(&pattern, &mut w).and_then(|_| w.flush()).map_err(|e| format!("writing the trace: {e}"))?;
        }
        _ => return Err(USAGE.into()),
    }
    Ok(())
}
