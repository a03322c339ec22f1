//! Parsing `NAME:key=value,...` workload specifications.

use std::fmt;

/// A bad workload specification.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// No workload of that name.
    UnknownWorkload {
        /// The name given.
        name: String,
        /// The valid names.
        valid: Vec<&'static str>,
    },
    /// A parameter the workload does not have.
    UnknownParam {
        /// Workload name.
        workload: String,
        /// The key given.
        key: String,
        /// The valid keys.
        valid: Vec<&'static str>,
    },
    /// A parameter value that does not parse or is out of range.
    BadValue {
        /// Workload name.
        workload: String,
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// A `key=value` item without `=`.
    Malformed {
        /// The offending item.
        item: String,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::UnknownWorkload { name, valid } => {
                write!(f, "unknown workload `{name}`; valid workloads: {}", valid.join(", "))
            }
            SpecError::UnknownParam { workload, key, valid } => {
                write!(f, "workload `{workload}` has no parameter `{key}`; valid parameters: {}", valid.join(", "))
            }
            SpecError::BadValue { workload, key, value, expected } => {
                write!(f, "workload `{workload}`: bad value `{value}` for `{key}`: expected {expected}")
            }
            SpecError::Malformed { item } => write!(f, "malformed workload parameter `{item}`: expected key=value"),
        }
    }
}

impl std::error::Error for SpecError {}

/// A parsed specification: the name and its `key=value` pairs, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadSpec {
    /// Workload name.
    pub name: String,
    /// Parameters as given.
    pub params: Vec<(String, String)>,
}

impl WorkloadSpec {
    /// Parses `NAME[:key=value,...]`.
    pub fn parse(s: &str) -> Result<WorkloadSpec, SpecError> {
        let (name, rest) = s.split_once(':').unwrap_or((s, ""));
        let mut params = Vec::new();
        for item in rest.split(',').filter(|i| !i.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| SpecError::Malformed { item: item.into() })?;
            params.push((k.trim().into(), v.trim().into()));
        }
        Ok(WorkloadSpec { name: name.trim().into(), params })
    }
}

impl fmt::Display for WorkloadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        let s = WorkloadSpec::parse("ebizzy:threads=8,alpha=1.3").unwrap();
        assert_eq!(s.name, "ebizzy");
        assert_eq!(s.params, vec![("threads".into(), "8".into()), ("alpha".into(), "1.3".into())]);
        assert_eq!(s.to_string(), "ebizzy:threads=8,alpha=1.3");
        assert_eq!(WorkloadSpec::parse("hotcold").unwrap().params, vec![]);
        assert_eq!(WorkloadSpec::parse("x:a").unwrap_err(), SpecError::Malformed { item: "a".into() });
    }
}
