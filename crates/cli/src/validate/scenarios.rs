//! The validation scenarios: a driver pattern, a group limit and swappiness.

/// One scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Name (`anon-zipf`, `mixed-sw60`).
    pub name: String,
    /// The driver pattern with every size filled in.
    pub pattern: String,
    /// `memory.limit_in_bytes`.
    pub limit_bytes: u64,
    /// `memory.swappiness`.
    pub swappiness: u32,
}

/// The host's scenario set. `quick` scales everything down by 4 (32M limit) for
/// the integration tests; the full set uses a 128M limit with 1.5x that touched.
pub fn all(quick: bool) -> Vec<Scenario> {
    if quick {
        sized(32, 250_000)
    } else {
        sized(128, 1_000_000)
    }
}

/// The scenarios a guest kernel runs: the anonymous-memory ones (the guest has
/// no disk; file pages in its initramfs could not be reclaimed). Under
/// emulation the full set uses a 64M limit; `quick` 16M.
pub fn guest(quick: bool) -> Vec<Scenario> {
    let set = if quick { sized(16, 60_000) } else { sized(64, 500_000) };
    set.into_iter().filter(|s| !s.pattern.contains("file")).collect()
}

/// Every scenario at `limit_mb` with `ops` random accesses.
fn sized(limit_mb: u64, ops: u64) -> Vec<Scenario> {
    let m = |num: u64, den: u64| format!("{}M", limit_mb * num / den);
    let mut v = vec![
        ("anon-seq", format!("anon-seq:anon={},passes=4", m(3, 2)), 60),
        ("anon-zipf", format!("anon-zipf:anon={},ops={ops},alpha=0.8,seed=1", m(3, 2)), 60),
        ("hotcold", format!("hotcold:anon={},hot={},step={},activate=2,rounds=8", m(1, 1), m(1, 4), m(1, 4)), 60),
        ("file-seq", format!("file-seq:file={},passes=4", m(3, 2)), 60),
        ("file-zipf", format!("file-zipf:file={},ops={ops},alpha=0.8,seed=1", m(3, 2)), 60),
    ];
    for sw in [0, 60, 100, 200] {
        v.push(("mixed", format!("mixed:anon={},file={},ops={ops},alpha=0.8,share=50,seed=1", m(1, 2), m(1, 1)), sw));
    }
    v.into_iter()
        .map(|(name, pattern, swappiness)| Scenario {
            name: if name == "mixed" { format!("mixed-sw{swappiness}") } else { name.to_string() },
            pattern,
            limit_bytes: limit_mb << 20,
            swappiness,
        })
        .collect()
}

/// The scenarios of `set` that `name` selects: one by name, or `all`.
pub fn select(name: &str, set: Vec<Scenario>) -> Result<Vec<Scenario>, String> {
    if name == "all" {
        return Ok(set);
    }
    let names: Vec<String> = set.iter().map(|s| s.name.clone()).collect();
    let found: Vec<Scenario> = set.into_iter().filter(|s| s.name == name).collect();
    if found.is_empty() {
        return Err(format!("unknown scenario `{name}`; scenarios: all, {}", names.join(", ")));
    }
    Ok(found)
}
