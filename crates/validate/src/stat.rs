//! Parsers for the kernel's `name value` statistics files (`memory.stat`,
//! `/proc/vmstat`) and deltas between two readings.

use std::collections::BTreeMap;

/// One reading: counter name to value, in name order.
pub type Stats = BTreeMap<String, u64>;

/// Parses `name value` lines. `source` names the file in errors, which give
/// the 1-based line number and the line.
pub fn parse_stats(source: &str, text: &str) -> Result<Stats, String> {
    let mut out = Stats::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = || format!("{source}:{}: expected `name value`, found `{line}`", i + 1);
        let (name, value) = line.split_once(' ').ok_or_else(bad)?;
        let value: u64 = value.trim().parse().map_err(|_| bad())?;
        if name.is_empty() || out.insert(name.to_string(), value).is_some() {
            return Err(format!("{source}:{}: empty or repeated counter `{name}`", i + 1));
        }
    }
    Ok(out)
}

/// `after - before` for every counter of `after` (counters that went down, e.g.
/// gauges, give 0).
pub fn delta(before: &Stats, after: &Stats) -> Stats {
    after.iter().map(|(k, &v)| (k.clone(), v.saturating_sub(before.get(k).copied().unwrap_or(0)))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_stat_lines() {
        let text = "cache 4096\nrss 8192\nworkingset_refault_anon 17\nhierarchical_memory_limit 9223372036854771712\n";
        let s = parse_stats("memory.stat", text).unwrap();
        assert_eq!(s["cache"], 4096);
        assert_eq!(s["workingset_refault_anon"], 17);
        assert_eq!(s["hierarchical_memory_limit"], 9223372036854771712);
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn errors_name_file_and_line() {
        assert_eq!(
            parse_stats("memory.stat", "cache 1\nrss x\n").unwrap_err(),
            "memory.stat:2: expected `name value`, found `rss x`"
        );
        assert_eq!(parse_stats("vmstat", "pswpin\n").unwrap_err(), "vmstat:1: expected `name value`, found `pswpin`");
        assert!(parse_stats("vmstat", "a 1\na 2\n").unwrap_err().contains("repeated counter `a`"));
    }

    #[test]
    fn deltas() {
        let a = parse_stats("a", "pswpin 10\nnr_free_pages 500\n").unwrap();
        let b = parse_stats("b", "pswpin 25\nnr_free_pages 400\npgsteal_anon 3\n").unwrap();
        let d = delta(&a, &b);
        assert_eq!((d["pswpin"], d["nr_free_pages"], d["pgsteal_anon"]), (15, 0, 3));
    }
}
