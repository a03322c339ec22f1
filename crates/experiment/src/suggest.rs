//! "Did you mean": the known name closest to a misspelt one.

/// The candidate closest to `given` by edit distance, comparing with the whole
/// name and with its last dotted part (`swapiness` finds `vm.swappiness`);
/// `None` when nothing is within a third of the length (at least 2 edits).
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (given.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| {
            let tail = c.rsplit('.').next().unwrap_or(c);
            (strsim::damerau_levenshtein(given, c).min(strsim::damerau_levenshtein(given, tail)), c)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `unknown KIND `given``, with the closest of `candidates` when one is near,
/// and where to find them all.
pub fn unknown(kind: &str, given: &str, candidates: impl IntoIterator<Item = &'static str>, list: &str) -> String {
    match closest(given, candidates) {
        Some(c) => format!("unknown {kind} `{given}`; did you mean `{c}`? (`{list}` lists them)"),
        None => format!("unknown {kind} `{given}`; `{list}` lists them"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_by_whole_name_or_last_part() {
        let keys = ["memory", "vm.swappiness", "swap"];
        assert_eq!(closest("swapiness", keys), Some("vm.swappiness"));
        assert_eq!(closest("memroy", keys), Some("memory"));
        assert_eq!(closest("hotcld", ["hotcold", "ebizzy"]), Some("hotcold"));
        assert_eq!(closest("v5.0", ["v5.9", "v6.2"]), Some("v5.9"));
        assert_eq!(closest("completely-different", keys), None);
        let keys = engine::config::SETTINGS.iter().map(|s| s.key);
        let m = unknown("setting", "swapiness", keys, "reclaimsim settings");
        assert_eq!(m, "unknown setting `swapiness`; did you mean `vm.swappiness`? (`reclaimsim settings` lists them)");
    }
}
