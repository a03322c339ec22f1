//! The validation scenarios, as data: one [`TABLE`] row per scenario. A row's
//! pattern is a driver pattern whose sizes are fractions of the run's memory
//! (`{3/2}` is 1.5 times it, in MiB: the group's limit, or for a global row
//! the guest's RAM) and whose operation count is `{ops}`; [`Scale`] fills them
//! in for the host, the guest and `--quick`.

/// One scenario, sizes filled in.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Name (`anon-zipf`, `mixed-sw60`).
    pub name: String,
    /// The driver pattern with every size filled in.
    pub pattern: String,
    /// `memory.limit_in_bytes` / `memory.max`.
    pub limit_bytes: u64,
    /// `memory.swappiness` (the guest: `vm.swappiness`).
    pub swappiness: u32,
    /// Global reclaim: no memory group, the guest's RAM in MiB is this small.
    pub global_ram_mb: Option<u64>,
}

/// A row of [`TABLE`].
struct Row {
    name: &'static str,
    /// Driver pattern with `{N/D}` (N/D times the limit, MiB) and `{ops}` holes.
    pattern: &'static str,
    swappiness: u32,
    /// No memory group: the guest's RAM is the scale's `global_ram_mb` (guest only).
    global: bool,
}

/// Every scenario. Adding one is adding a row; a pattern with file pages runs
/// on the host only (the guest has no disk: initramfs pages cannot be
/// reclaimed), a global row in the guest only (on the host it would reclaim
/// the whole machine).
const TABLE: &[Row] = &[
    Row { name: "anon-seq", pattern: "anon-seq:anon={3/2},passes=4", swappiness: 60, global: false },
    Row {
        name: "anon-zipf",
        pattern: "anon-zipf:anon={3/2},ops={ops},alpha=0.8,seed=1",
        swappiness: 60,
        global: false,
    },
    Row { name: "hotcold", pattern: HOTCOLD, swappiness: 60, global: false },
    Row { name: "file-seq", pattern: "file-seq:file={3/2},passes=4", swappiness: 60, global: false },
    Row {
        name: "file-zipf",
        pattern: "file-zipf:file={3/2},ops={ops},alpha=0.8,seed=1",
        swappiness: 60,
        global: false,
    },
    Row { name: "mixed-sw0", pattern: MIXED, swappiness: 0, global: false },
    Row { name: "mixed-sw60", pattern: MIXED, swappiness: 60, global: false },
    Row { name: "mixed-sw100", pattern: MIXED, swappiness: 100, global: false },
    Row { name: "mixed-sw200", pattern: MIXED, swappiness: 200, global: false },
    Row { name: "global-hotcold", pattern: GLOBAL_HOTCOLD, swappiness: 60, global: true },
    Row { name: "global-zipf", pattern: "anon-zipf:anon={1},ops={ops},alpha=0.8,seed=1", swappiness: 60, global: true },
];

/// Seed 004's pattern: cold pages of the limit, hot sets of a quarter.
const HOTCOLD: &str = "hotcold:anon={1},hot={1/4},step={1/4},activate=2,rounds=8";
/// Seed 004's pattern in a guest of RAM R: R/2 cold, hot sets and steps of R/8,
/// so that the hot sets and a step no longer fit beside the cold pages.
const GLOBAL_HOTCOLD: &str = "hotcold:anon={1/2},hot={1/8},step={1/8},activate=2,rounds=8";

/// Half the limit of anon, the limit of file, accesses split evenly.
const MIXED: &str = "mixed:anon={1/2},file={1},ops={ops},alpha=0.8,share=50,seed=1";

/// The sizes a set of scenarios runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// The memory limit, MiB.
    pub limit_mb: u64,
    /// Random operations of the zipf patterns.
    pub ops: u64,
    /// The guest's RAM for global rows, MiB; 0: no global rows (the host).
    pub global_ram_mb: u64,
}

impl Scale {
    /// The host: a 128M limit with 1.5x that touched; `quick` divides by 4.
    pub fn host(quick: bool) -> Scale {
        if quick {
            Scale { limit_mb: 32, ops: 250_000, global_ram_mb: 0 }
        } else {
            Scale { limit_mb: 128, ops: 1_000_000, global_ram_mb: 0 }
        }
    }

    /// A guest under emulation: a 64M limit, global rows in 256M of RAM;
    /// `quick` 16M, 128M and 60k operations.
    pub fn guest(quick: bool) -> Scale {
        if quick {
            Scale { limit_mb: 16, ops: 60_000, global_ram_mb: 128 }
        } else {
            Scale { limit_mb: 64, ops: 500_000, global_ram_mb: 256 }
        }
    }
}

/// `pattern` with its holes filled in at `scale`.
fn fill(pattern: &str, scale: Scale) -> String {
    let mut out = String::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}').expect("TABLE: unclosed `{`");
        out += &rest[..open];
        let hole = &rest[open + 1..close];
        out += &match hole {
            "ops" => scale.ops.to_string(),
            fraction => {
                let (num, den) = fraction.split_once('/').unwrap_or((fraction, "1"));
                let n: u64 = num.parse().expect("TABLE: hole numerator");
                let d: u64 = den.parse().expect("TABLE: hole denominator");
                format!("{}M", scale.limit_mb * n / d)
            }
        };
        rest = &rest[close + 1..];
    }
    out + rest
}

/// Every scenario at `scale`; `anon_only` leaves out those with file pages;
/// global rows where the scale has a guest RAM for them.
pub fn all(scale: Scale, anon_only: bool) -> Vec<Scenario> {
    TABLE
        .iter()
        .filter(|r| !(anon_only && r.pattern.contains("file=")) && (!r.global || scale.global_ram_mb > 0))
        .map(|r| {
            let base = if r.global { scale.global_ram_mb } else { scale.limit_mb };
            Scenario {
                name: r.name.to_string(),
                pattern: fill(r.pattern, Scale { limit_mb: base, ..scale }),
                limit_bytes: base << 20,
                swappiness: r.swappiness,
                global_ram_mb: r.global.then_some(base),
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_filled_from_the_scale() {
        let s = Scale { limit_mb: 64, ops: 500, global_ram_mb: 0 };
        assert_eq!(fill("hotcold:anon={1},hot={1/4},x={3/2},ops={ops}", s), "hotcold:anon=64M,hot=16M,x=96M,ops=500");
        assert_eq!(fill("no-holes", s), "no-holes");
    }

    #[test]
    fn the_host_and_guest_sets() {
        let host = all(Scale::host(false), false);
        assert_eq!(host.len(), 9, "no global rows on the host");
        assert!(host.iter().all(|s| s.global_ram_mb.is_none()));
        let zipf = host.iter().find(|s| s.name == "anon-zipf").unwrap();
        assert_eq!(zipf.pattern, "anon-zipf:anon=192M,ops=1000000,alpha=0.8,seed=1");
        assert_eq!(zipf.limit_bytes, 128 << 20);
        let sw200 = host.iter().find(|s| s.name == "mixed-sw200").unwrap();
        assert_eq!(sw200.pattern, "mixed:anon=64M,file=128M,ops=1000000,alpha=0.8,share=50,seed=1");
        assert_eq!(sw200.swappiness, 200);
        let guest: Vec<String> = all(Scale::guest(true), true).into_iter().map(|s| s.name).collect();
        assert_eq!(guest, ["anon-seq", "anon-zipf", "hotcold", "global-hotcold", "global-zipf"]);
        let quick = all(Scale::guest(true), true);
        assert_eq!(quick[2].pattern, "hotcold:anon=16M,hot=4M,step=4M,activate=2,rounds=8");
        assert_eq!(quick[3].pattern, "hotcold:anon=64M,hot=16M,step=16M,activate=2,rounds=8");
        assert_eq!(quick[3].global_ram_mb, Some(128));
        assert_eq!(all(Scale::guest(false), true)[4].pattern, "anon-zipf:anon=256M,ops=500000,alpha=0.8,seed=1");
    }

    #[test]
    fn selection_by_name() {
        let set = || all(Scale::host(true), false);
        assert_eq!(select("all", set()).unwrap().len(), 9);
        assert_eq!(select("hotcold", set()).unwrap()[0].name, "hotcold");
        assert!(select("nosuch", set())
            .unwrap_err()
            .starts_with("unknown scenario `nosuch`; scenarios: all, anon-seq,"));
    }
}
