//! Named access patterns: a deterministic stream of page accesses on one
//! anonymous region and one file, from `NAME:key=value,...`.

use simrng::Sampler;
use simrng::SimRng;
use std::fmt;

/// Bytes per page.
pub const PAGE: u64 = 4096;

/// One access of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A load or store to page `page` of the anonymous region.
    Anon {
        /// Page index.
        page: u32,
        /// A store.
        write: bool,
    },
    /// A one-page `pread()` (or, writing, `pwrite()`) of page `page` of the file.
    File {
        /// Page index.
        page: u32,
        /// A `pwrite()` of the whole page (dirties it in the page cache).
        write: bool,
    },
}

/// A pattern that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError(pub String);

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatternError {}

/// One named pattern: its parameters and their defaults.
pub struct PatternDef {
    /// Name.
    pub name: &'static str,
    /// What it does.
    pub summary: &'static str,
    /// Parameters with defaults.
    pub params: &'static [(&'static str, &'static str)],
}

/// Every pattern.
pub const PATTERNS: &[PatternDef] = &[
    PatternDef { name: "anon-seq", summary: "sequential store passes over an anonymous region", params: &[("anon", "192M"), ("passes", "4")] },
    PatternDef {
        name: "anon-zipf",
        summary: "stores to every anonymous page, then zipf(alpha) accesses (seeded); fill=N: N bytes of each store do not compress",
        params: &[("anon", "192M"), ("ops", "1000000"), ("alpha", "0.8"), ("seed", "1"), ("write", "1"), ("fill", "0")],
    },
    PatternDef {
        name: "hotcold",
        summary: "seed 004: cold region, hot-1 activated while cold is resident, hot-2, then a step of cold and all of hot-2 each round",
        params: &[("anon", "128M"), ("hot", "32M"), ("step", "32M"), ("activate", "2"), ("rounds", "8")],
    },
    PatternDef {
        name: "file-seq",
        summary: "sequential one-page preads (write=1: pwrites) over a file, repeated passes",
        params: &[("file", "192M"), ("passes", "4"), ("write", "0")],
    },
    PatternDef {
        name: "file-zipf",
        summary: "zipf(alpha) one-page preads (write=1: pwrites) of a file (seeded)",
        params: &[("file", "192M"), ("ops", "1000000"), ("alpha", "0.8"), ("seed", "1"), ("write", "0")],
    },
    PatternDef {
        name: "mixed",
        summary: "stores to every anonymous page, then zipf accesses to anon and zipf preads of a file, `share` percent to the file (seeded)",
        params: &[("anon", "64M"), ("file", "128M"), ("ops", "1000000"), ("alpha", "0.8"), ("share", "50"), ("seed", "1"), ("write", "1")],
    },
];

#[derive(Clone, Debug)]
enum Phase {
    Sweep { file: bool, start: u32, len: u32, passes: u32, write: bool },
    Zipf { file: bool, sampler: Sampler, ops: u64, write: bool },
    Mixed { anon: Sampler, file: Sampler, ops: u64, share: u32, write: bool },
}

impl Phase {
    fn len(&self) -> u64 {
        match self {
            Phase::Sweep { len, passes, .. } => *len as u64 * *passes as u64,
            Phase::Zipf { ops, .. } | Phase::Mixed { ops, .. } => *ops,
        }
    }
}

/// A parsed pattern: sizes and the phases that generate its accesses.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The pattern with every parameter, `NAME:key=value,...`.
    pub canonical: String,
    /// Pages of the anonymous region (0 = none).
    pub anon_pages: u32,
    /// Pages of the file (0 = none).
    pub file_pages: u32,
    phases: Vec<Phase>,
    seed: u64,
    /// Bytes of every anonymous store that do not compress (`fill=`; at
    /// least the first byte is written): the real run's page contents only.
    pub fill: u32,
}

fn parse_size(key: &str, v: &str) -> Result<u32, PatternError> {
    let (num, mult) = match v.as_bytes().last() {
        Some(b'K' | b'k') => (&v[..v.len() - 1], 1u64 << 10),
        Some(b'M' | b'm') => (&v[..v.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&v[..v.len() - 1], 1 << 30),
        _ => (v, 1),
    };
    let bad = || PatternError(format!("`{key}={v}`: expected a size such as 64M (a multiple of 4K, at most 64G)"));
    let bytes = num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)).ok_or_else(bad)?;
    if bytes % PAGE != 0 || bytes > 64 << 30 {
        return Err(bad());
    }
    Ok((bytes / PAGE) as u32)
}

fn parse_num<T: std::str::FromStr>(key: &str, v: &str, what: &str) -> Result<T, PatternError> {
    v.parse().map_err(|_| PatternError(format!("`{key}={v}`: expected {what}")))
}

impl Pattern {
    /// Parses `NAME[:key=value,...]`.
    pub fn parse(spec: &str) -> Result<Pattern, PatternError> {
        let (name, args) = spec.split_once(':').unwrap_or((spec, ""));
        let def = PATTERNS.iter().find(|d| d.name == name).ok_or_else(|| {
            PatternError(format!(
                "unknown pattern `{name}`; patterns: {}",
                PATTERNS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let mut values: Vec<(&str, String)> = def.params.iter().map(|&(k, v)| (k, v.to_string())).collect();
        for kv in args.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| PatternError(format!("`{kv}`: expected key=value")))?;
            let slot = values.iter_mut().find(|(key, _)| *key == k).ok_or_else(|| {
                PatternError(format!(
                    "pattern `{name}` has no parameter `{k}`; parameters: {}",
                    def.params.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
                ))
            })?;
            slot.1 = v.to_string();
        }
        let get = |k: &str| {
            values.iter().find(|(key, _)| *key == k).map(|(_, v)| v.as_str()).expect("parameter of this pattern")
        };
        let size = |k: &str| parse_size(k, get(k));
        let int = |k: &str| parse_num::<u64>(k, get(k), "an integer");
        let canonical =
            format!("{name}:{}", values.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","));
        let seed = if def.params.iter().any(|p| p.0 == "seed") { int("seed")? } else { 0 };
        let zipf = |n: u32, stream: u64| -> Result<Sampler, PatternError> {
            let alpha: f64 = parse_num("alpha", get("alpha"), "a number")?;
            if !(0.0..=5.0).contains(&alpha) || n == 0 {
                return Err(PatternError(format!("`alpha={alpha}` must be in 0..=5 and the region non-empty")));
            }
            Ok(Sampler::zipf(n, alpha, &mut SimRng::new(seed, stream)))
        };
        let (mut anon_pages, mut file_pages) = (0, 0);
        let phases = match name {
            "anon-seq" => {
                anon_pages = size("anon")?;
                vec![Phase::Sweep {
                    file: false,
                    start: 0,
                    len: anon_pages,
                    passes: int("passes")? as u32,
                    write: true,
                }]
            }
            "anon-zipf" => {
                anon_pages = size("anon")?;
                vec![
                    Phase::Sweep { file: false, start: 0, len: anon_pages, passes: 1, write: true },
                    Phase::Zipf {
                        file: false,
                        sampler: zipf(anon_pages, 1)?,
                        ops: int("ops")?,
                        write: int("write")? != 0,
                    },
                ]
            }
            "hotcold" => {
                let (cold, hot, step) = (size("anon")?, size("hot")?, size("step")?);
                if step == 0 || step > cold {
                    return Err(PatternError("hotcold: `step` must be in 4K..=anon".into()));
                }
                anon_pages = cold + 2 * hot;
                let sweep = |start, len, passes, write| Phase::Sweep { file: false, start, len, passes, write };
                let mut ph = vec![
                    sweep(0, cold, 1, true),
                    sweep(cold, hot, 1, true),
                    sweep(cold, hot, int("activate")? as u32, false),
                    sweep(cold + hot, hot, 1, true),
                ];
                let windows = cold / step;
                for round in 0..int("rounds")? as u32 {
                    ph.push(sweep((round % windows) * step, step, 1, false));
                    ph.push(sweep(cold + hot, hot, 1, false));
                }
                ph
            }
            "file-seq" => {
                file_pages = size("file")?;
                vec![Phase::Sweep {
                    file: true,
                    start: 0,
                    len: file_pages,
                    passes: int("passes")? as u32,
                    write: int("write")? != 0,
                }]
            }
            "file-zipf" => {
                file_pages = size("file")?;
                let write = int("write")? != 0;
                vec![Phase::Zipf { file: true, sampler: zipf(file_pages, 2)?, ops: int("ops")?, write }]
            }
            "mixed" => {
                anon_pages = size("anon")?;
                file_pages = size("file")?;
                let share = int("share")?.min(100) as u32;
                vec![
                    Phase::Sweep { file: false, start: 0, len: anon_pages, passes: 1, write: true },
                    Phase::Mixed {
                        anon: zipf(anon_pages, 1)?,
                        file: zipf(file_pages, 2)?,
                        ops: int("ops")?,
                        share,
                        write: int("write")? != 0,
                    },
                ]
            }
            _ => unreachable!("pattern {name} listed in PATTERNS"),
        };
        let fill = if def.params.iter().any(|p| p.0 == "fill") { int("fill")?.min(PAGE) as u32 } else { 0 };
        Ok(Pattern { canonical, anon_pages, file_pages, phases, seed, fill })
    }

    /// Total accesses.
    pub fn len(&self) -> u64 {
        self.phases.iter().map(Phase::len).sum()
    }

    /// True if the pattern writes file pages (the file is opened for writing).
    pub fn writes_file(&self) -> bool {
        self.phases.iter().any(|ph| match ph {
            Phase::Sweep { file, write, .. } | Phase::Zipf { file, write, .. } => *file && *write,
            Phase::Mixed { .. } => false,
        })
    }

    /// True if the pattern makes no access.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The access stream, from the start.
    pub fn ops(&self) -> Ops<'_> {
        Ops { phases: &self.phases, phase: 0, i: 0, rng: SimRng::new(self.seed, 0) }
    }
}

/// Iterator over a pattern's accesses.
pub struct Ops<'a> {
    phases: &'a [Phase],
    phase: usize,
    i: u64,
    rng: SimRng,
}

impl Iterator for Ops<'_> {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        loop {
            let ph = self.phases.get(self.phase)?;
            if self.i >= ph.len() {
                self.phase += 1;
                self.i = 0;
                continue;
            }
            let i = self.i;
            self.i += 1;
            let op = |file: bool, page: u32, write: bool| {
                if file {
                    Op::File { page, write }
                } else {
                    Op::Anon { page, write }
                }
            };
            return Some(match ph {
                Phase::Sweep { file, start, len, write, .. } => op(*file, start + (i % *len as u64) as u32, *write),
                Phase::Zipf { file, sampler, write, .. } => op(*file, sampler.sample(&mut self.rng), *write),
                Phase::Mixed { anon, file, share, write, .. } => {
                    if self.rng.below(100) < *share {
                        Op::File { page: file.sample(&mut self.rng), write: false }
                    } else {
                        Op::Anon { page: anon.sample(&mut self.rng), write: *write }
                    }
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotcold_phases_in_order() {
        let p = Pattern::parse("hotcold:anon=16K,hot=8K,step=8K,activate=1,rounds=2").unwrap();
        assert_eq!((p.anon_pages, p.file_pages), (8, 0));
        let pages: Vec<(u32, bool)> =
            p.ops().map(|o| if let Op::Anon { page, write } = o { (page, write) } else { panic!("file op") }).collect();
        let w = |v: &[u32]| v.iter().map(|&x| (x, true)).collect::<Vec<_>>();
        let r = |v: &[u32]| v.iter().map(|&x| (x, false)).collect::<Vec<_>>();
        let want =
            [w(&[0, 1, 2, 3]), w(&[4, 5]), r(&[4, 5]), w(&[6, 7]), r(&[0, 1]), r(&[6, 7]), r(&[2, 3]), r(&[6, 7])]
                .concat();
        assert_eq!(pages, want);
        assert_eq!(p.len(), want.len() as u64);
    }

    #[test]
    fn seeded_and_bad_input() {
        let a: Vec<Op> = Pattern::parse("mixed:anon=64K,file=64K,ops=500,seed=7").unwrap().ops().collect();
        let b: Vec<Op> = Pattern::parse("mixed:anon=64K,file=64K,ops=500,seed=7").unwrap().ops().collect();
        let c: Vec<Op> = Pattern::parse("mixed:anon=64K,file=64K,ops=500,seed=8").unwrap().ops().collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 16 + 500);
        assert!(
            a[16..].iter().any(|o| matches!(o, Op::File { .. }))
                && a[16..].iter().any(|o| matches!(o, Op::Anon { .. }))
        );
        assert!(Pattern::parse("anon-seq:anon=5000").unwrap_err().0.contains("multiple of 4K"));
        assert!(Pattern::parse("nope").unwrap_err().0.contains("unknown pattern `nope`"));
        assert!(Pattern::parse("file-seq:anon=4K").unwrap_err().0.contains("no parameter `anon`"));
    }
}
