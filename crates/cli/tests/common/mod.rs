//! Helpers shared by the command-line tests: running the binary, scratch
//! directories and JSON documents.
// Each test binary (one per file in tests/) uses a subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `reclaimsim` binary under test, as a command to add arguments to.
pub fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
}

/// Runs `reclaimsim` with `args` to completion.
pub fn reclaimsim(args: &[&str]) -> Output {
    command().args(args).output().unwrap()
}

/// Runs `reclaimsim` with `args`, which must succeed; returns its standard output.
pub fn ok(args: &[&str]) -> String {
    let out = reclaimsim(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A fresh, empty directory `reclaimsim-NAME-PID` under the temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reclaimsim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The JSON document at `path`.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `p` as a command-line argument.
pub fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The table of a `reproduce --json` document (its first seed) whose title starts with `title`.
pub fn table<'a>(doc: &'a serde_json::Value, title: &str) -> &'a serde_json::Value {
    doc["seeds"][0]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["title"].as_str().unwrap().starts_with(title))
        .unwrap_or_else(|| panic!("no table {title}"))
}

/// The row `name` of a reproduction table: our figures and the direction verdict.
pub fn row(table: &serde_json::Value, name: &str) -> (Vec<f64>, String) {
    let m = metric(table, name);
    (
        m["ours"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect(),
        m["direction"].as_str().unwrap().to_string(),
    )
}

/// The row `name` of a reproduction table as JSON.
pub fn metric<'a>(table: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    let m = table["metrics"].as_array().unwrap().iter().find(|m| m["name"] == name);
    m.unwrap_or_else(|| panic!("no row {name}"))
}

/// The size verdict of row `name` (`within 2x`, `OUTSIDE 2x`, or null when not judged).
pub fn size(table: &serde_json::Value, name: &str) -> Option<String> {
    metric(table, name)["size"].as_str().map(str::to_string)
}

/// Our first two figures of row `name` (the before and after of a pair of runs).
pub fn pair(table: &serde_json::Value, name: &str) -> (f64, f64) {
    let (ours, _) = row(table, name);
    (ours[0], ours[1])
}
