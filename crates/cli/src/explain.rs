//! `reclaimsim explain EVENTS`: from a run's events file (`run --events`),
//! the life of a page — insertion, activations and deactivations, isolation
//! and eviction (by whom, at which priority, from which list, with or
//! without a shadow), refault with its distance against the workingset size,
//! activated or not — and, per reclaim counter, which actor produced it at
//! which priority.

use crate::events::parse::{read_all, Line};
use crate::runner::usage;
use anyhow::{Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// Arguments of `explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The events file of a run (`reclaimsim run --events FILE`).
    pub events: PathBuf,
    /// Explain this page: `rR:I` (index I of anon region R) or `fF:I` (page I of file F).
    #[arg(long, value_name = "REGION:INDEX", conflicts_with = "top")]
    pub page: Option<String>,
    /// Explain the N pages that came back most often after eviction (default 3).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Show at most the last N steps of each page's history.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub steps: usize,
}

/// One step of a page's history.
struct Step {
    at_ns: u64,
    text: String,
}

/// What happened to one page.
#[derive(Default)]
struct History {
    steps: Vec<Step>,
    evictions: u64,
    comebacks: u64,
    /// Refault checks that activated the page, and that did not.
    refaults: [u64; 2],
}

/// Counters rebuilt from the events, by counter name, actor and priority.
type Attribution = BTreeMap<(String, &'static str, Option<i64>), u64>;

/// The whole file digested.
#[derive(Default)]
struct Digest {
    pages: BTreeMap<String, History>,
    /// Which page each frame holds now.
    pfn_page: BTreeMap<u64, String>,
    /// Tasks inside a direct or memcg reclaim call, and which.
    in_reclaim: BTreeMap<String, &'static str>,
    counters: Attribution,
}

impl Digest {
    /// The actor of `l`: kswapd, or direct/memcg reclaim in a task, or the task itself.
    fn actor(&self, l: &Line) -> (&'static str, String) {
        if l.comm.starts_with("kswapd") {
            return ("kswapd", l.task());
        }
        match self.in_reclaim.get(&l.task()) {
            Some(&mode) => (mode, format!("{mode} reclaim in {}", l.task())),
            None => ("task", l.task()),
        }
    }

    fn count(&mut self, counter: &str, actor: &'static str, priority: Option<i64>, n: u64) {
        if n > 0 {
            *self.counters.entry((counter.to_string(), actor, priority)).or_default() += n;
        }
    }

    fn step(&mut self, page: &str, at_ns: u64, text: String) -> &mut History {
        let h = self.pages.entry(page.to_string()).or_default();
        h.steps.push(Step { at_ns, text });
        h
    }

    /// The page a per-page line is about: its `page=` field, else the frame's current page.
    fn page_of(&self, l: &Line) -> Result<Option<String>> {
        if let Some(p) = l.field("page").filter(|_| l.event.starts_with("reclaimsim_")) {
            return Ok(Some(p.to_string()));
        }
        Ok(self.pfn_page.get(&l.num("pfn")?).cloned())
    }

    fn feed(&mut self, l: &Line) -> Result<()> {
        let (actor, who) = self.actor(l);
        let prio = || l.num("priority").map(|p| Some(p as i64));
        match l.event.as_str() {
            "mm_vmscan_direct_reclaim_begin" | "mm_vmscan_memcg_reclaim_begin" => {
                let mode = if l.event.contains("memcg") { "memcg" } else { "direct" };
                self.in_reclaim.insert(l.task(), mode);
                if mode == "direct" {
                    self.count("allocstall_normal", "direct", None, 1);
                }
            }
            "mm_vmscan_direct_reclaim_end" | "mm_vmscan_memcg_reclaim_end" => {
                self.in_reclaim.remove(&l.task());
            }
            "reclaimsim_direct_reclaim_retry" => self.count("allocstall_normal", "direct", None, 1),
            "mm_vmscan_kswapd_wake" => self.count("pageoutrun", "kswapd", None, 1),
            "mm_vmscan_lru_shrink_inactive" => {
                let p = prio()?;
                let global = actor != "memcg";
                let (scan, steal) = if global {
                    (format!("pgscan_{actor}"), format!("pgsteal_{actor}"))
                } else {
                    ("pgscan (memcg)".into(), "pgsteal (memcg)".into())
                };
                self.count(&scan, actor, p, l.num("nr_scanned")?);
                self.count(&steal, actor, p, l.num("nr_reclaimed")?);
            }
            "mm_vmscan_lru_shrink_active" => {
                let p = prio()?;
                if actor != "memcg" {
                    self.count("pgrefill", actor, p, l.num("nr_taken")?);
                }
                self.count("pgdeactivate", actor, p, l.num("nr_deactivated")?);
            }
            "reclaimsim_lru_add" => {
                let page = l.field("page").unwrap_or("none").to_string();
                self.pfn_page.insert(l.num("pfn")?, page.clone());
                let (origin, list) = (l.field("origin").unwrap_or("?"), l.field("lru").unwrap_or("?"));
                let shadow = l.field("shadow") == Some("yes");
                let back = self.pages.get(&page).is_some_and(|h| h.evictions > 0);
                let note = match (back, shadow) {
                    (true, true) => " (its shadow was found: the refault check above decided the list)",
                    (true, false) => {
                        " (no shadow entry was found in its slot, so no refault check ran: it starts as a new page would)"
                    }
                    _ => "",
                };
                let h = self.step(&page, l.at_ns, format!("inserted by {who} ({origin}) on {list}{note}"));
                h.comebacks += back as u64;
            }
            "mm_lru_activate" => {
                self.count("pgactivate", actor, None, 1);
                if let Some(page) = self.page_of(l)? {
                    let swapped_in = self.pages[&page].steps.last().is_some_and(|s| {
                        s.at_ns == l.at_ns && s.text.starts_with("inserted") && s.text.contains("(swapin)")
                    });
                    let text = if swapped_in {
                        format!(
                            "activated by the swap fault itself in {who}: before v5.9 do_swap_page() activated a \
                             swapped-in page already on the LRU (activate_page), whatever its refault distance"
                        )
                    } else {
                        format!("activated by an access in {who} (folio_activate)")
                    };
                    self.step(&page, l.at_ns, text);
                }
            }
            "reclaimsim_lru_move" => {
                let page = self.page_of(l)?.unwrap_or_default();
                let text = if l.field("to") == Some("active") {
                    self.count("pgactivate", actor, None, 1);
                    format!("activated by {who}: referenced when reclaim looked at it (shrink_folio_list)")
                } else {
                    format!("deactivated by {who} (shrink_active_list)")
                };
                self.step(&page, l.at_ns, text);
            }
            "mm_vmscan_write_folio" | "mm_vmscan_writepage" => {
                self.count("nr_vmscan_write", actor, None, 1);
                if let Some(page) = self.page_of(l)? {
                    self.step(&page, l.at_ns, format!("written out by {who} (pageout); freed once clean"));
                }
            }
            "reclaimsim_evict" => {
                let page = self.page_of(l)?.unwrap_or_default();
                let (list, p) = (l.field("lru").unwrap_or("?"), l.num("priority")?);
                let shadow = match l.field("shadow") {
                    Some("none") | None => "no shadow left (this kernel keeps none for this page type)".to_string(),
                    Some(s) => format!("shadow {s} left in its slot"),
                };
                let h = self.step(
                    &page,
                    l.at_ns,
                    format!(
                        "evicted by {who} at priority {p} from {list} (not used again since reclaim last \
                         looked at it or since it was listed, so nothing spared it); {shadow}"
                    ),
                );
                h.evictions += 1;
            }
            "reclaimsim_refault" => {
                let page = self.page_of(l)?.unwrap_or_default();
                let (d, ws) = (l.num("distance")?, l.num("workingset_size")?);
                let lists = l.field("lists").unwrap_or("?");
                let ty = if page.starts_with('r') { "anon" } else { "file" };
                self.count(&format!("workingset_refault_{ty}"), actor, None, 1);
                let activated = l.field("activate") == Some("1");
                self.pages.entry(page.clone()).or_default().refaults[activated as usize] += 1;
                let text = if activated {
                    self.count(&format!("workingset_activate_{ty}"), actor, None, 1);
                    format!(
                        "refault in {who}: distance {d} <= workingset size {ws} ({lists}): it would have stayed \
                         resident had those pages been given to it, so it is activated"
                    )
                } else {
                    format!(
                        "refault in {who}: distance {d} > workingset size {ws} ({lists}): it was out too long to \
                         count as thrashing, so it is not activated"
                    )
                };
                self.step(&page, l.at_ns, text);
            }
            _ => {}
        }
        Ok(())
    }
}

fn secs(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// The text `explain` prints for `events` (the lines of one events file).
fn explain(lines: &[Line], args: &ExplainArgs) -> Result<String> {
    let mut d = Digest::default();
    for l in lines {
        d.feed(l)?;
    }
    let mut out = String::new();
    let chosen: Vec<&String> = match &args.page {
        Some(p) => {
            if !d.pages.contains_key(p) {
                return Err(usage(format!(
                    "--page {p}: no event names this page (pages are rR:I for anon region R, fF:I for file F; \
                     was it recorded, and not filtered out?)"
                )));
            }
            vec![d.pages.get_key_value(p).map(|(k, _)| k).expect("checked above")]
        }
        None => {
            let mut by: Vec<(&String, &History)> = d.pages.iter().filter(|(_, h)| h.comebacks > 0).collect();
            by.sort_by(|a, b| b.1.comebacks.cmp(&a.1.comebacks).then(a.0.cmp(b.0)));
            by.into_iter().take(args.top.unwrap_or(3)).map(|(k, _)| k).collect()
        }
    };
    if chosen.is_empty() {
        out.push_str("no page came back after an eviction in these events\n");
    }
    for page in chosen {
        let h = &d.pages[page];
        let _ = writeln!(
            out,
            "page {page}: evicted {} times, came back {} times; refault checks: {} activated it, {} did not",
            h.evictions, h.comebacks, h.refaults[1], h.refaults[0]
        );
        let skip = h.steps.len().saturating_sub(args.steps);
        if skip > 0 {
            let _ = writeln!(out, "  ... {skip} earlier steps (--steps shows more)");
        }
        for s in &h.steps[skip..] {
            let _ = writeln!(out, "  {:>12}  {}", secs(s.at_ns), s.text);
        }
        out.push('\n');
    }
    out.push_str("counters rebuilt from the events: who produced them (and at which scan priority: pages)\n");
    let mut rows: BTreeMap<(&str, &str), (u64, String)> = BTreeMap::new();
    for ((counter, actor, prio), n) in d.counters.iter().rev() {
        let row = rows.entry((counter, actor)).or_default();
        row.0 += n;
        if let Some(p) = prio {
            let _ = write!(row.1, " {p}:{n}");
        }
    }
    for ((counter, actor), (total, by_prio)) in rows {
        let _ = writeln!(out, "  {counter:<26} {actor:<7} {total:>10}{by_prio}");
    }
    Ok(out)
}

/// `reclaimsim explain`.
pub fn run(args: ExplainArgs) -> Result<()> {
    let label = args.events.display().to_string();
    let f = std::fs::File::open(&args.events).with_context(|| format!("opening {label}"))?;
    let lines = read_all(std::io::BufReader::new(f), &label).map_err(|e| usage(format!("{e:#}")))?;
    print!("{}", explain(&lines, &args)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::parse::parse_line;

    fn lines(text: &str) -> Vec<Line> {
        text.lines().enumerate().filter_map(|(i, t)| parse_line(t, i + 1).unwrap()).collect()
    }

    fn args(page: Option<&str>) -> ExplainArgs {
        ExplainArgs { events: PathBuf::new(), page: page.map(str::to_string), top: None, steps: 40 }
    }

    #[test]
    fn chain_of_a_page_and_counters_by_actor() {
        let ev = lines(
            "t-1000 [000] ..... 0.000001: reclaimsim_lru_add: pfn=0x5 page=r0:7 origin=anon_fault shadow=no lru=inactive_anon
             t-1000 [000] ..... 0.000002: mm_vmscan_direct_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE
             t-1000 [000] ..... 0.000003: reclaimsim_evict: pfn=0x5 page=r0:7 lru=inactive_anon priority=11 shadow=0x40
             t-1000 [000] ..... 0.000004: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32 nr_reclaimed=1 priority=11 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC
             t-1000 [000] ..... 0.000005: mm_vmscan_direct_reclaim_end: nr_reclaimed=1
             kswapd0-50 [001] ..... 0.000006: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=64 nr_reclaimed=9 priority=12 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC
             t-1000 [000] ..... 0.000007: reclaimsim_refault: pfn=0x9 page=r0:7 distance=10 workingset_size=4 lists=active_file workingset=0 activate=0
             t-1000 [000] ..... 0.000008: reclaimsim_lru_add: pfn=0x9 page=r0:7 origin=swapin shadow=yes lru=inactive_anon",
        );
        let out = explain(&ev, &args(Some("r0:7"))).unwrap();
        assert!(
            out.contains("page r0:7: evicted 1 times, came back 1 times; refault checks: 0 activated it, 1 did not")
        );
        assert!(out.contains("evicted by direct reclaim in t-1000 at priority 11 from inactive_anon (not used again"));
        assert!(out.contains("so nothing spared it); shadow 0x40"), "{out}");
        assert!(out.contains("distance 10 > workingset size 4 (active_file)"), "{out}");
        assert!(out.contains("so it is not activated"));
        assert!(out.contains("pgsteal_direct             direct           1 11:1\n"), "{out}");
        assert!(out.contains("pgsteal_kswapd             kswapd           9 12:9\n"), "{out}");
        assert!(out.contains("allocstall_normal          direct           1\n"), "{out}");
        let top = explain(&ev, &args(None)).unwrap();
        assert!(top.starts_with("page r0:7:"), "{top}");
        let e = explain(&ev, &args(Some("r9:9"))).unwrap_err().to_string();
        assert!(e.contains("--page r9:9: no event names this page"), "{e}");
    }
}
