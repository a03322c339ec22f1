//! Parsing and printing of knob values: booleans, ranged integers, fixed-point decimals, sizes.

/// Parses `1`/`0`, `true`/`false`, `on`/`off`, `yes`/`no`.
pub fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err("a boolean (1/0, true/false, on/off)".into()),
    }
}

/// Parses an integer within `lo..=hi`.
pub fn parse_u64(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let expected = || format!("an integer in {lo}..={hi}");
    let n: u64 = v.parse().map_err(|_| expected())?;
    if n < lo || n > hi {
        return Err(expected());
    }
    Ok(n)
}

/// Parses a decimal with at most `decimals` fractional digits into an integer
/// scaled by `10^decimals` (`2.7` with 2 decimals is 270), within `lo..=hi` (scaled).
pub fn parse_fixed(v: &str, decimals: u32, lo: u64, hi: u64) -> Result<u64, String> {
    let scale = 10u64.pow(decimals);
    let show = |x: u64| format_fixed(x, decimals);
    let expected = || format!("a number in {}..={} with at most {decimals} decimals", show(lo), show(hi));
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if int.is_empty()
        || v.ends_with('.')
        || frac.len() > decimals as usize
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(expected());
    }
    let int: u64 = int.parse().map_err(|_| expected())?;
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().map_err(|_| expected())? * 10u64.pow(decimals - frac.len() as u32)
    };
    let n = int.checked_mul(scale).and_then(|n| n.checked_add(frac)).ok_or_else(expected)?;
    if n < lo || n > hi {
        return Err(expected());
    }
    Ok(n)
}

/// Shows an integer scaled by `10^decimals` as a decimal without trailing zeros (`270` -> `2.7`).
pub fn format_fixed(n: u64, decimals: u32) -> String {
    let scale = 10u64.pow(decimals);
    let frac = format!("{:0width$}", n % scale, width = decimals as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        (n / scale).to_string()
    } else {
        format!("{}.{frac}", n / scale)
    }
}

/// Parses a size such as `512M`, `4G`, `65536K` or a plain byte count.
pub fn parse_size(v: &str) -> Result<u64, String> {
    let expected = || "a size such as 4096, 512K, 256M or 4G".to_string();
    let (num, mult) = match v.chars().last() {
        Some('K' | 'k') => (&v[..v.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&v[..v.len() - 1], 1 << 20),
        Some('G' | 'g') => (&v[..v.len() - 1], 1 << 30),
        Some('T' | 't') => (&v[..v.len() - 1], 1 << 40),
        _ => (v, 1),
    };
    let n: u64 = num.parse().map_err(|_| expected())?;
    n.checked_mul(mult).ok_or_else(expected)
}

/// Formats a byte count with the largest exact binary suffix.
pub fn format_size(b: u64) -> String {
    for (suffix, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if b != 0 && b.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", b >> shift);
        }
    }
    b.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_decimals() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("99999999999999T").is_err());
        assert_eq!(format_size(3 << 30), "3G");
        assert_eq!(format_size(1536 << 20), "1536M");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(parse_fixed("2.7", 2, 100, 1000), Ok(270));
        assert_eq!(parse_fixed("3", 2, 100, 1000), Ok(300));
        assert_eq!(parse_fixed("0.0001", 4, 0, 1_000_000), Ok(1));
        for bad in ["2.715", "0.5", "x", ".5", "2.", "-1", "1e3"] {
            assert!(parse_fixed(bad, 2, 100, 1000).is_err(), "{bad}");
        }
        assert_eq!(format_fixed(270, 2), "2.7");
        assert_eq!(format_fixed(300, 2), "3");
        assert_eq!(format_fixed(12_3400, 4), "12.34");
    }
}
