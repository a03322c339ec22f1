//! The Python side of sweeps: the Ray backend and the Parquet table are in
//! the `reclaimsim` Python package. Its environment is `.venv` at the
//! repository root (or `$RECLAIMSIM_PYTHON`), set up on first use by
//! `python/setup-venv.sh`.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository holding this executable or the working directory: the
/// first ancestor with `python/setup-venv.sh`.
fn repo_root() -> Option<PathBuf> {
    let starts = [std::env::current_exe().ok(), std::env::current_dir().ok()];
    starts
        .into_iter()
        .flatten()
        .find_map(|start| start.ancestors().find(|d| d.join("python/setup-venv.sh").is_file()).map(Path::to_path_buf))
}

/// The interpreter to use, if one is set up (never installs anything).
fn existing_python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RECLAIMSIM_PYTHON") {
        return Some(PathBuf::from(p));
    }
    repo_root().map(|r| r.join(".venv/bin/python")).filter(|p| p.is_file())
}

/// True if `python` can import `modules`.
fn imports(python: &Path, modules: &str) -> bool {
    Command::new(python)
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An interpreter with the `reclaimsim` package and Ray; runs the setup script
/// the first time.
fn python_with_ray() -> Result<PathBuf> {
    if let Some(p) = existing_python() {
        if imports(&p, "reclaimsim, ray") {
            return Ok(p);
        }
        if std::env::var_os("RECLAIMSIM_PYTHON").is_some() {
            bail!("$RECLAIMSIM_PYTHON ({}) cannot import reclaimsim and ray", p.display());
        }
    }
    let root = repo_root().context("--ray needs the reclaimsim Python package: run python/setup-venv.sh in the repository, or set RECLAIMSIM_PYTHON")?;
    eprintln!("sweep: setting up the Python environment (first use): python/setup-venv.sh");
    let status =
        Command::new("bash").arg(root.join("python/setup-venv.sh")).status().context("running python/setup-venv.sh")?;
    let p = root.join(".venv/bin/python");
    if !status.success() || !imports(&p, "reclaimsim, ray") {
        bail!("python/setup-venv.sh did not give an environment with reclaimsim and ray (is Ray available for this Python version?)");
    }
    Ok(p)
}

/// Runs the pending runs of `plan` on Ray (`python -m reclaimsim.sweep`).
pub fn run_ray(plan: &Path, address: &str) -> Result<()> {
    let python = python_with_ray()?;
    let status = Command::new(&python)
        .args(["-m", "reclaimsim.sweep", "--plan"])
        .arg(plan)
        .args(["--ray", address])
        .status()
        .with_context(|| format!("starting {}", python.display()))?;
    // Exit code 1: some runs failed (recorded in their .error files); the table says which.
    if !status.success() && status.code() != Some(1) {
        bail!("the Ray backend failed ({status})");
    }
    Ok(())
}

/// Writes `parquet` from `csv` when a Python environment with pyarrow is
/// already there; returns why not otherwise.
pub fn parquet(csv: &Path, parquet: &Path) -> Result<(), String> {
    let python = existing_python().ok_or("no Python environment (python/setup-venv.sh)")?;
    if !imports(&python, "reclaimsim, pyarrow") {
        return Err(format!("{} has no pyarrow", python.display()));
    }
    let out = Command::new(&python)
        .args(["-m", "reclaimsim.sweep", "--parquet"])
        .args([csv, parquet])
        .stdout(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
