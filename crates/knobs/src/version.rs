//! Kernel versions, `major.minor`.

use std::fmt;

/// A Linux release, `major.minor` (patch levels do not change reclaim here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major number.
    pub major: u16,
    /// Minor number.
    pub minor: u16,
}

impl Version {
    /// `major.minor`.
    pub const fn new(major: u16, minor: u16) -> Version {
        Version { major, minor }
    }

    /// Parses `5.8` or `v5.8`.
    pub fn parse(s: &str) -> Option<Version> {
        let (major, minor) = s.strip_prefix('v').unwrap_or(s).split_once('.')?;
        Some(Version::new(major.parse().ok()?, minor.parse().ok()?))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_numerically_and_round_trip() {
        assert!(Version::new(4, 20) > Version::new(4, 6));
        assert!(Version::new(6, 1) > Version::new(5, 19));
        assert_eq!(Version::parse("v6.12"), Some(Version::new(6, 12)));
        assert_eq!(Version::parse("3.9"), Some(Version::new(3, 9)));
        assert_eq!(Version::parse("6"), None);
        assert_eq!(Version::new(4, 20).to_string(), "v4.20");
    }
}
