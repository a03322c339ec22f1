//! The guest's report, as the init script writes it to the second serial port,
//! and its parser.
//!
//! ```text
//! @guest kernel=6.12.117+deb12-amd64 lru_gen=0x0007 page_cluster=3
//! @run 0
//! @section vmstat_before
//! nr_free_pages 120000
//! ...
//! @section vmstat_after | memory_stat | driver
//! ...
//! @result status=0 polls=812 start=3.51 end=9.02
//! @end
//! @done
//! ```
//!
//! Lines before `@guest` (firmware noise) are skipped; `\r` from the tty is
//! dropped.

use super::stat::{parse_stats, Stats};
use std::collections::BTreeMap;

/// One run of the driver inside the guest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GuestRun {
    /// Position in the boot (0 is the discarded warm-up run).
    pub index: u32,
    /// A global run's starting state (`/proc/meminfo`, zones, watermark sysctls).
    pub start: Stats,
    /// `/proc/vmstat` before the run.
    pub vmstat_before: Stats,
    /// `/proc/vmstat` after the run.
    pub vmstat_after: Stats,
    /// The group's `memory.stat` after the run.
    pub memory_stat: Stats,
    /// Each tenant group's `memory.stat` and `memory.events` after the run (`@section group NAME`).
    pub groups: std::collections::BTreeMap<String, Stats>,
    /// The driver's standard output (`ops N digest D`) and errors.
    pub driver: String,
    /// The driver's exit status.
    pub status: i32,
    /// `memory.stat` reads by the guest's poller during the run.
    pub polls: u64,
    /// Guest seconds the run took (`/proc/uptime`).
    pub seconds: f64,
}

/// Everything the guest reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GuestReport {
    /// `key=value` pairs of the `@guest` line.
    pub info: BTreeMap<String, String>,
    /// The runs, in order.
    pub runs: Vec<GuestRun>,
    /// The guest reached its end (`@done`).
    pub done: bool,
}

fn pairs(line_no: usize, rest: &str) -> Result<BTreeMap<String, String>, String> {
    rest.split_whitespace()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("guest output line {line_no}: expected key=value, found `{kv}`"))
        })
        .collect()
}

fn field<T: std::str::FromStr>(line_no: usize, m: &BTreeMap<String, String>, key: &str) -> Result<T, String> {
    let v = m.get(key).ok_or_else(|| format!("guest output line {line_no}: `@result` lacks `{key}=`"))?;
    v.parse().map_err(|_| format!("guest output line {line_no}: `{key}={v}` is not a number"))
}

/// Parses the guest's report. Errors name the line.
pub fn parse(text: &str) -> Result<GuestReport, String> {
    let mut rep = GuestReport::default();
    let mut started = false;
    let mut run: Option<GuestRun> = None;
    // The open section: name, first line number, text.
    let mut section: Option<(String, usize, String)> = None;
    let close = |run: &mut Option<GuestRun>, section: &mut Option<(String, usize, String)>| -> Result<(), String> {
        let Some((name, at, body)) = section.take() else { return Ok(()) };
        let r = run.as_mut().expect("sections open inside runs");
        let src = format!("guest {name} (from line {at})");
        match name.as_str() {
            "start" => r.start = parse_stats(&src, &body)?,
            "vmstat_before" => r.vmstat_before = parse_stats(&src, &body)?,
            "vmstat_after" => r.vmstat_after = parse_stats(&src, &body)?,
            "memory_stat" => r.memory_stat = parse_stats(&src, &body)?,
            "driver" => r.driver = body,
            group if group.starts_with("group ") => {
                r.groups.insert(group["group ".len()..].to_string(), parse_stats(&src, &body)?);
            }
            _ => return Err(format!("guest output line {at}: unknown section `{name}`")),
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\r');
        if !started {
            if let Some(rest) = line.strip_prefix("@guest") {
                rep.info = pairs(n, rest)?;
                started = true;
            }
            continue;
        }
        let Some(directive) = line.strip_prefix('@') else {
            match &mut section {
                Some((_, _, body)) => {
                    body.push_str(line);
                    body.push('\n');
                    continue;
                }
                None if line.trim().is_empty() => continue,
                None => return Err(format!("guest output line {n}: text outside a section: `{line}`")),
            }
        };
        let (word, rest) = directive.split_once(' ').unwrap_or((directive, ""));
        match word {
            "run" => {
                if run.is_some() {
                    return Err(format!("guest output line {n}: `@run` before the previous run's `@end`"));
                }
                let index = rest
                    .trim()
                    .parse()
                    .map_err(|_| format!("guest output line {n}: `@run {rest}`: expected a run number"))?;
                run = Some(GuestRun { index, ..GuestRun::default() });
            }
            "section" if run.is_some() => {
                close(&mut run, &mut section)?;
                section = Some((rest.trim().to_string(), n + 1, String::new()));
            }
            "result" if run.is_some() => {
                close(&mut run, &mut section)?;
                let m = pairs(n, rest)?;
                let r = run.as_mut().expect("checked");
                r.status = field(n, &m, "status")?;
                r.polls = field(n, &m, "polls")?;
                r.seconds = field::<f64>(n, &m, "end")? - field::<f64>(n, &m, "start")?;
            }
            "end" => {
                close(&mut run, &mut section)?;
                rep.runs.push(run.take().ok_or_else(|| format!("guest output line {n}: `@end` without `@run`"))?);
            }
            "done" => {
                if run.is_some() {
                    return Err(format!("guest output line {n}: `@done` inside a run"));
                }
                rep.done = true;
                return Ok(rep);
            }
            _ => return Err(format!("guest output line {n}: unexpected `@{word}`")),
        }
    }
    if !started {
        return Err("the guest printed no `@guest` line (did the kernel boot and run /init?)".into());
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "SeaBIOS noise\r\n@guest kernel=6.12.1 lru_gen=0x0007 page_cluster=3\r\n@run 0\r\n@section vmstat_before\r\npswpin 5\r\npgsteal_anon 1\r\n@section vmstat_after\r\npswpin 105\r\npgsteal_anon 301\r\n@section memory_stat\r\npgmajfault 100\r\n@section driver\r\nops 10 digest 00ff\r\n@result status=0 polls=42 start=3.50 end=5.75\r\n@end\r\n@run 1\r\n@section driver\r\nkilled\r\n@result status=137 polls=1 start=6.00 end=6.25\r\n@end\r\n@done\r\n";

    #[test]
    fn parses_runs_sections_and_results() {
        let r = parse(SAMPLE).unwrap();
        assert!(r.done);
        assert_eq!(r.info["kernel"], "6.12.1");
        assert_eq!(r.info["lru_gen"], "0x0007");
        assert_eq!(r.runs.len(), 2);
        let a = &r.runs[0];
        assert_eq!(
            (a.index, a.vmstat_before["pswpin"], a.vmstat_after["pgsteal_anon"], a.memory_stat["pgmajfault"]),
            (0, 5, 301, 100)
        );
        assert_eq!((a.driver.as_str(), a.status, a.polls, a.seconds), ("ops 10 digest 00ff\n", 0, 42, 2.25));
        assert_eq!((r.runs[1].status, r.runs[1].driver.as_str()), (137, "killed\n"));
        assert!(r.runs[1].vmstat_after.is_empty());
        let g = parse("@guest k=1\n@run 0\n@section start\nMemFree 150000\nzone_DMA32_min 400\n@section vmstat_before\npswpin 0\n@end\n@done\n").unwrap();
        assert_eq!((g.runs[0].start["MemFree"], g.runs[0].start["zone_DMA32_min"]), (150_000, 400));
        let t = parse(
            "@guest k=1\n@run 0\n@section group svc\nanon 4096\nlow 3\n@section group batch\nlow 0\n@end\n@done\n",
        )
        .unwrap();
        assert_eq!((t.runs[0].groups["svc"]["low"], t.runs[0].groups["batch"]["low"]), (3, 0));
    }

    #[test]
    fn a_truncated_report_is_not_done() {
        let cut = &SAMPLE[..SAMPLE.find("@run 1").unwrap()];
        let r = parse(cut).unwrap();
        assert!(!r.done);
        assert_eq!(r.runs.len(), 1);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            parse("nothing\n").unwrap_err(),
            "the guest printed no `@guest` line (did the kernel boot and run /init?)"
        );
        let bad = "@guest k=1\n@run 0\n@section vmstat_before\npswpin x\n@end\n";
        assert_eq!(
            parse(bad).unwrap_err(),
            "guest vmstat_before (from line 4):1: expected `name value`, found `pswpin x`"
        );
        assert_eq!(
            parse("@guest k=1\n@run 0\n@result status=0 polls=1 start=1\n").unwrap_err(),
            "guest output line 3: `@result` lacks `end=`"
        );
        assert_eq!(parse("@guest k=1\nstray\n").unwrap_err(), "guest output line 2: text outside a section: `stray`");
        assert_eq!(
            parse("@guest k=1\n@run 0\n@run 1\n").unwrap_err(),
            "guest output line 3: `@run` before the previous run's `@end`"
        );
        assert_eq!(parse("@guest k=1\n@bogus\n").unwrap_err(), "guest output line 2: unexpected `@bogus`");
    }
}
