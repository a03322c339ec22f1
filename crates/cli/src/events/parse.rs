//! Reading an events file back: each line's task, pid, timestamp, event and
//! `key=value` fields. Lines that are not events (the `#` header and notes)
//! are skipped; a malformed event line is an error naming its line number.

use anyhow::{bail, Result};
use std::io::BufRead;

/// One event line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// 1-based line number in the file.
    pub line_no: usize,
    /// `comm` of the task.
    pub comm: String,
    /// Its pid.
    pub pid: u32,
    /// Virtual time, ns (microsecond resolution).
    pub at_ns: u64,
    /// Event name.
    pub event: String,
    /// The fields after the event name, as written.
    pub fields: String,
}

impl Line {
    /// The value of field `key` (`key=value`, space separated), if present.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.split(' ').find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
    }

    /// Field `key` as a number (decimal, or hex with `0x`); an error names the line.
    pub fn num(&self, key: &str) -> Result<u64> {
        let Some(v) = self.field(key) else { bail!("line {}: {} has no field `{key}`", self.line_no, self.event) };
        let parsed = match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => v.parse(),
        };
        parsed.map_err(|_| anyhow::anyhow!("line {}: field `{key}={v}` is not a number", self.line_no))
    }

    /// A human form of the task: `kswapd0`, `hotcold-1000`.
    pub fn task(&self) -> String {
        format!("{}-{}", self.comm, self.pid)
    }
}

/// Parses one line (`line_no` for errors); `None` for comments and blank lines.
pub fn parse_line(text: &str, line_no: usize) -> Result<Option<Line>> {
    let t = text.trim_start();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    let bad =
        |what: &str| anyhow::anyhow!("line {line_no}: {what}; expected `task-pid [cpu] flags seconds: event: fields`");
    let (task, rest) = t.split_once(" [").ok_or_else(|| bad("no `[cpu]`"))?;
    let (comm, pid) = task.trim_end().rsplit_once('-').ok_or_else(|| bad("no `-pid` after the task name"))?;
    let pid = pid.parse().map_err(|_| bad("the pid is not a number"))?;
    let (_, rest) = rest.split_once("] ").ok_or_else(|| bad("`[cpu` not closed"))?;
    let (head, rest) = rest.split_once(": ").ok_or_else(|| bad("no `: ` after the timestamp"))?;
    let stamp = head.split_whitespace().last().ok_or_else(|| bad("no timestamp"))?;
    let (secs, micros) = stamp.split_once('.').ok_or_else(|| bad("the timestamp is not seconds.microseconds"))?;
    let (secs, micros): (u64, u64) = match (secs.parse(), micros.parse()) {
        (Ok(s), Ok(u)) if micros.len() == 6 => (s, u),
        _ => return Err(bad("the timestamp is not seconds.microseconds")),
    };
    let (event, fields) = rest.split_once(": ").unwrap_or((rest.trim_end_matches(':'), ""));
    Ok(Some(Line {
        line_no,
        comm: comm.to_string(),
        pid,
        at_ns: secs * 1_000_000_000 + micros * 1000,
        event: event.to_string(),
        fields: fields.to_string(),
    }))
}

/// Reads every event line of `input` (`label` names it in errors).
pub fn read_all(input: impl BufRead, label: &str) -> Result<Vec<Line>> {
    let mut out = Vec::new();
    for (i, text) in input.lines().enumerate() {
        let text = text.map_err(|e| anyhow::anyhow!("{label}: line {}: {e}", i + 1))?;
        if let Some(l) = parse_line(&text, i + 1).map_err(|e| anyhow::anyhow!("{label}: {e}"))? {
            out.push(l);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_an_event_line_and_rejects_a_broken_one() {
        let l =
            parse_line("         kswapd0-50      [002] .....     1.000250: mm_vmscan_kswapd_wake: nid=0 order=0", 7)
                .unwrap()
                .unwrap();
        assert_eq!(
            (l.comm.as_str(), l.pid, l.at_ns, l.event.as_str()),
            ("kswapd0", 50, 1_000_250_000, "mm_vmscan_kswapd_wake")
        );
        assert_eq!(l.num("order").unwrap(), 0);
        assert!(l.num("zid").unwrap_err().to_string().contains("line 7: mm_vmscan_kswapd_wake has no field `zid`"));
        assert_eq!(parse_line("# tracer: nop", 1).unwrap(), None);
        let e = parse_line("hotcold-1000 [000] ..... 1.5: x: y", 3).unwrap_err().to_string();
        assert!(e.contains("line 3: the timestamp is not seconds.microseconds"), "{e}");
    }
}
