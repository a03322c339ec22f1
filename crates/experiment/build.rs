//! Records the git commit of the checkout being built as `RECLAIMSIM_COMMIT`
//! (for `--version` and the result document); `unknown` when there is no git
//! or no `.git` (a source archive, a crates.io package) unless the
//! environment sets `RECLAIMSIM_COMMIT`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

fn main() {
    let commit = std::env::var("RECLAIMSIM_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=RECLAIMSIM_COMMIT={commit}");
    // Build again when HEAD moves: HEAD itself, the branch it points to, packed refs.
    for path in ["HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(p) = git(&["symbolic-ref", "-q", "HEAD"]).and_then(|r| git(&["rev-parse", "--git-path", &r])) {
        println!("cargo:rerun-if-changed={p}");
    }
    println!("cargo:rerun-if-env-changed=RECLAIMSIM_COMMIT");
}
