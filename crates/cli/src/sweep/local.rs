//! The local backend: each run is a child process of this executable, or of
//! `$RECLAIMSIM_BIN` when set (`reclaimsim run ... --json runs/ID.json`), `jobs` at a time. The child
//! writes its result atomically, so a result file on disk marks a finished run.

use super::progress::Progress;
use super::spec::RunSpec;
use crate::runner::write_text_atomic;
use anyhow::{Context, Result};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex};

/// The `reclaimsim run` arguments of a run.
pub fn run_args(r: &RunSpec, json: &Path) -> Vec<String> {
    let mut args = vec!["run".to_string()];
    for w in &r.workloads {
        args.extend(["--workload".into(), w.clone()]);
    }
    if let Some(t) = &r.trace {
        args.extend(["--trace".into(), t.clone()]);
    }
    args.extend(["--profile".into(), r.profile.clone()]);
    for s in &r.settings {
        args.extend(["--set".into(), s.clone()]);
    }
    args.extend(["--seed".into(), r.seed.to_string(), "--json".into(), json.display().to_string(), "--quiet".into()]);
    if let Some(ns) = r.timeseries_ns {
        args.extend(["--timeseries".into(), format!("{}", ns as f64 / 1e6)]);
    }
    args
}

/// Runs one child; `Err` holds its error output.
fn run_child(exe: &Path, r: &RunSpec, runs_dir: &Path) -> Result<(), String> {
    let json = runs_dir.join(format!("{}.json", r.id));
    let out = Command::new(exe)
        .args(run_args(r, &json))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    if out.status.success() && json.exists() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(if stderr.is_empty() { format!("reclaimsim run exited with {}", out.status) } else { stderr })
}

enum Note {
    Started,
    Finished(usize, Result<(), String>),
}

/// Runs `runs` with `jobs` children at a time; results go to `runs_dir`,
/// errors to `runs_dir/ID.error`.
pub fn run_local(runs: &[&RunSpec], runs_dir: &Path, jobs: usize, progress: &mut Progress) -> Result<()> {
    // `$RECLAIMSIM_BIN` when set (the Python package's command sets it: there
    // this process is the Python interpreter), else this executable.
    let exe: PathBuf = match std::env::var_os("RECLAIMSIM_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => std::env::current_exe().context("locating the reclaimsim executable")?,
    };
    let queue = Mutex::new(runs.iter().copied().collect::<VecDeque<_>>());
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| -> Result<()> {
        for _ in 0..jobs.max(1).min(runs.len()) {
            let (tx, queue, exe) = (tx.clone(), &queue, &exe);
            s.spawn(move || {
                while let Some(r) = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None) {
                    if tx.send(Note::Started).is_err() {
                        break;
                    }
                    let result = run_child(exe, r, runs_dir);
                    if tx.send(Note::Finished(r.index, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for note in rx {
            match note {
                Note::Started => {
                    progress.running += 1;
                    progress.show(false);
                }
                Note::Finished(index, result) => {
                    progress.running -= 1;
                    let r = runs.iter().find(|r| r.index == index).expect("a run of this sweep");
                    let error = runs_dir.join(format!("{}.error", r.id));
                    match result {
                        Ok(()) => {
                            progress.done += 1;
                            if error.exists() {
                                std::fs::remove_file(&error)
                                    .with_context(|| format!("removing {}", error.display()))?;
                            }
                        }
                        Err(text) => {
                            progress.failed += 1;
                            write_text_atomic(&error, &(text + "\n"))?;
                        }
                    }
                    progress.show(true);
                }
            }
        }
        Ok(())
    })
}
