//! The ftrace text of one tracepoint record: `task-pid [cpu] flags timestamp:
//! event: fields`, each event's fields laid out as its kernel `TP_printk`
//! (Linux v6.x: include/trace/events/vmscan.h, pagemap.h, filemap.h; the
//! congestion waits of kernels before v5.16 as writeback.h had them). The
//! `reclaimsim_` events are ours (docs/events.md). A [`Layout`] names the
//! kernel whose layouts to write: the run's profile's by default, so a v4.6
//! run reads as a v4.6 kernel's trace; v3.2's are those mmtests'
//! trace-vmscan-postprocess.pl parses (its built-in patterns are of that era).

use knobs::Version;
use mm::tracepoint::{Lru, ShrinkStat, Task, ThrottleState, Tracepoint};
use mm::{Mm, PageFlags, Pfn};
use std::fmt::Write;

/// Every event name the formatter writes, for `--events-filter` and `explain`.
pub const EVENT_NAMES: &[&str] = &[
    "mm_filemap_add_to_page_cache",
    "mm_filemap_delete_from_page_cache",
    "mm_lru_activate",
    "mm_lru_insertion",
    "mm_vmscan_direct_reclaim_begin",
    "mm_vmscan_direct_reclaim_end",
    "mm_vmscan_kswapd_sleep",
    "mm_vmscan_kswapd_wake",
    "mm_vmscan_lru_isolate",
    "mm_vmscan_lru_shrink_active",
    "mm_vmscan_lru_shrink_inactive",
    "mm_vmscan_memcg_reclaim_begin",
    "mm_vmscan_memcg_reclaim_end",
    "mm_vmscan_throttled",
    "mm_vmscan_wakeup_kswapd",
    "mm_vmscan_write_folio",
    "mm_vmscan_writepage",
    "reclaimsim_direct_reclaim_retry",
    "reclaimsim_evict",
    "reclaimsim_lru_add",
    "reclaimsim_lru_move",
    "reclaimsim_refault",
    "writeback_congestion_wait",
    "writeback_wait_iff_congested",
];

/// SIM-CHOICE: kswapd0's pid (node N's kswapd has `KSWAPD_PID + N`), and the
/// first workload thread's (threads get consecutive pids in the order they
/// were added), so pids are stable.
pub const KSWAPD_PID: u32 = 50;
/// The first workload thread's pid.
pub const THREAD_PID_BASE: u32 = 1000;

/// KERNEL: the gfp mask of a user page allocation (`GFP_HIGHUSER_MOVABLE`).
const GFP: &str = "GFP_HIGHUSER_MOVABLE";

/// Which kernel's layouts to write: each event as the kernel of this version
/// printed it. KERNEL: the versions where the layouts changed (include/trace/
/// events/vmscan.h, pagemap.h, filemap.h): v3.5 (lumpy reclaim's `contig_*`
/// counts gone from `mm_vmscan_lru_isolate`), v4.8 (node-based reclaim: `zid`
/// out of `mm_vmscan_lru_shrink_inactive`, `classzone` into isolate, `zid`
/// into `mm_vmscan_kswapd_wake`, `classzone_idx` into the reclaim-begin
/// events), v4.11 (shrink_inactive's `reclaim_stat` counts, isolate's
/// `nr_skipped` and `lru`), v4.16 (`gfp_flags` in `mm_vmscan_wakeup_kswapd`),
/// v5.2 (`zid`, `may_writepage` and `classzone_idx` dropped,
/// `nr_activate_anon/file`), v5.14 (pfns in hex), v5.16 (`folio=` in the
/// pagemap events), v5.18 (`mm_vmscan_writepage` renamed `mm_vmscan_write_folio`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout(pub Version);

impl Layout {
    /// Today's layouts.
    pub const V6: Layout = Layout(Version::new(6, 12));

    /// The kernel is older than `major.minor`.
    fn before(self, major: u16, minor: u16) -> bool {
        self.0 < Version::new(major, minor)
    }
}

/// The event name of `tp` in `layout`.
pub fn event_name(tp: &Tracepoint, layout: Layout) -> &'static str {
    match tp {
        Tracepoint::WriteFolio { .. } if layout.before(5, 18) => "mm_vmscan_writepage",
        Tracepoint::KswapdSleep { .. } => "mm_vmscan_kswapd_sleep",
        Tracepoint::KswapdWake { .. } => "mm_vmscan_kswapd_wake",
        Tracepoint::WakeupKswapd { .. } => "mm_vmscan_wakeup_kswapd",
        Tracepoint::ReclaimBegin { memcg: false } => "mm_vmscan_direct_reclaim_begin",
        Tracepoint::ReclaimBegin { memcg: true } => "mm_vmscan_memcg_reclaim_begin",
        Tracepoint::ReclaimEnd { memcg: false, .. } => "mm_vmscan_direct_reclaim_end",
        Tracepoint::ReclaimEnd { memcg: true, .. } => "mm_vmscan_memcg_reclaim_end",
        Tracepoint::LruIsolate { .. } => "mm_vmscan_lru_isolate",
        Tracepoint::ShrinkInactive { .. } => "mm_vmscan_lru_shrink_inactive",
        Tracepoint::ShrinkActive { .. } => "mm_vmscan_lru_shrink_active",
        Tracepoint::WriteFolio { .. } => "mm_vmscan_write_folio",
        Tracepoint::Throttled { reason: ThrottleState::CongestionWait, .. } => "writeback_congestion_wait",
        Tracepoint::Throttled { reason: ThrottleState::WaitIffCongested, .. } => "writeback_wait_iff_congested",
        Tracepoint::Throttled { .. } => "mm_vmscan_throttled",
        Tracepoint::LruInsertion { .. } => "mm_lru_insertion",
        Tracepoint::LruActivate { .. } => "mm_lru_activate",
        Tracepoint::FilemapAdd { .. } => "mm_filemap_add_to_page_cache",
        Tracepoint::FilemapDelete { .. } => "mm_filemap_delete_from_page_cache",
        Tracepoint::SimLruAdd { .. } => "reclaimsim_lru_add",
        Tracepoint::SimRefault { .. } => "reclaimsim_refault",
        Tracepoint::SimEvict { .. } => "reclaimsim_evict",
        Tracepoint::SimLruMove { .. } => "reclaimsim_lru_move",
        Tracepoint::SimReclaimRetry => "reclaimsim_direct_reclaim_retry",
    }
}

/// A task's `comm`, pid and CPU. Threads keep their names (characters other
/// than letters, digits and `-` become `-`, as trace parsers split `comm-pid`
/// on them; at most 15 characters, `TASK_COMM_LEN`); S-EN1: each thread and
/// kswapd run on a CPU of their own, node N's kswapd (`kswapdN`) on the N-th
/// after the threads'.
pub fn task_ident(task: Task, names: &[String]) -> (String, u32, u32) {
    match task {
        Task::Kswapd(nid) => (format!("kswapd{nid}"), KSWAPD_PID + nid as u32, names.len() as u32 + nid as u32),
        Task::Thread(n) => {
            let name = names.get(n as usize).map_or("thread", String::as_str);
            let comm: String =
                name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).take(15).collect();
            (comm, THREAD_PID_BASE + n, n)
        }
    }
}

/// Appends the line of `tp` in `layout` (with its newline) to `out`.
pub fn write_line(
    out: &mut String,
    at_ns: u64,
    task: Task,
    names: &[String],
    mm: &Mm,
    tp: &Tracepoint,
    layout: Layout,
) {
    let (comm, pid, cpu) = task_ident(task, names);
    let _ = write!(
        out,
        "{:>16}-{:<7} [{:03}] ..... {:>5}.{:06}: {}: ",
        comm,
        pid,
        cpu,
        at_ns / 1_000_000_000,
        at_ns % 1_000_000_000 / 1000,
        event_name(tp, layout)
    );
    if write_old_fields(out, mm, tp, layout) {
        out.push('\n');
        return;
    }
    write_fields(out, mm, tp);
    out.push('\n');
}

fn lru_name(lru: Lru) -> &'static str {
    match lru {
        Lru::InactiveAnon => "inactive_anon",
        Lru::ActiveAnon => "active_anon",
        Lru::InactiveFile => "inactive_file",
        Lru::ActiveFile => "active_file",
        Lru::Unevictable => "unevictable",
    }
}

/// `show_reclaim_flags(trace_reclaim_flags(file))`.
fn reclaim_flags(file: bool) -> &'static str {
    if file {
        "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
    } else {
        "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
    }
}

/// A stable stand-in for `%p` of a page: its `struct page` address in the
/// x86-64 vmemmap (64 bytes a page).
fn page_ptr(pfn: Pfn) -> u64 {
    0xffff_ea00_0000_0000 + pfn as u64 * 64
}

/// The page's list as the kernel numbers it (`folio_lru_list`).
fn page_lru(mm: &Mm, pfn: Pfn) -> Lru {
    let f = &mm.frames[pfn];
    if f.flags.has(PageFlags::UNEVICTABLE) {
        return Lru::Unevictable;
    }
    Lru::of(!f.flags.has(PageFlags::SWAPBACKED), f.flags.has(PageFlags::ACTIVE))
}

/// Which page a frame holds: `r<region>:<index>` (anon) or `f<file>:<index>`.
pub fn page_name(mm: &Mm, pfn: Pfn) -> String {
    let f = &mm.frames[pfn];
    match (f.owner.as_anon(), f.owner.as_file()) {
        (Some(r), _) => format!("r{}:{}", r.0, f.index),
        (None, Some(file)) => format!("f{}:{}", file.0, f.index),
        (None, None) => "none".into(),
    }
}

/// `trace_pagemap_flags()` as `mm_lru_insertion` prints it. Simplification:
/// `M` (mapped) is shown for anon pages only; file pages show ` `.
fn pagemap_flags(mm: &Mm, pfn: Pfn) -> String {
    let f = &mm.frames[pfn];
    let mapped = f.owner.as_anon().is_some_and(|r| mm.regions[r.0 as usize].ptes[f.index as usize].pfn() == Some(pfn));
    let flag = |on: bool, c: char| if on { c } else { ' ' };
    let mut s = String::with_capacity(6);
    s.push(flag(mapped, 'M'));
    s.push(if f.is_anon() { 'a' } else { 'f' });
    s.push(flag(f.flags.has(PageFlags::SWAPCACHE), 's'));
    s.push(flag(f.flags.has(PageFlags::SWAPBACKED), 'b'));
    s.push_str("  ");
    s
}

/// The layouts of kernels older than today's (see [`Layout`]); false for an
/// event whose layout is today's. KERNEL: before v3.5 the isolate modes were
/// `ISOLATE_INACTIVE` 1 and `ISOLATE_ACTIVE` 2, and lumpy reclaim's
/// `contig_*` counts are 0 here (order-0 only); `may_writepage` is 1.
fn write_old_fields(out: &mut String, mm: &Mm, tp: &Tracepoint, k: Layout) -> bool {
    let zid = mm::ZoneId::Normal as u32;
    let _ = match *tp {
        Tracepoint::KswapdWake { nid } if !k.before(4, 8) && k.before(5, 2) => {
            write!(out, "nid={nid} zid={zid} order=0")
        }
        Tracepoint::WakeupKswapd { nid, zid } if k.before(4, 16) => write!(out, "nid={nid} zid={} order=0", zid as u32),
        Tracepoint::WakeupKswapd { nid, zid } if k.before(5, 2) => {
            write!(out, "nid={nid} zid={} order=0 gfp_flags={GFP}", zid as u32)
        }
        Tracepoint::ReclaimBegin { .. } if k.before(4, 8) => write!(out, "order=0 may_writepage=1 gfp_flags={GFP}"),
        Tracepoint::ReclaimBegin { .. } if k.before(5, 2) => {
            write!(out, "order=0 may_writepage=1 gfp_flags={GFP} classzone_idx={zid}")
        }
        Tracepoint::LruIsolate { nr_requested, nr_scanned, nr_taken, lru } if k.before(3, 5) => write!(
            out,
            "isolate_mode={} order=0 nr_requested={nr_requested} nr_scanned={nr_scanned} nr_taken={nr_taken} \
             contig_taken=0 contig_dirty=0 contig_failed=0",
            if matches!(lru, Lru::ActiveAnon | Lru::ActiveFile) { 2 } else { 1 }
        ),
        Tracepoint::LruIsolate { nr_requested, nr_scanned, nr_taken, lru } if k.before(4, 8) => write!(
            out,
            "isolate_mode=0 order=0 nr_requested={nr_requested} nr_scanned={nr_scanned} nr_taken={nr_taken} file={}",
            matches!(lru, Lru::InactiveFile | Lru::ActiveFile) as u8
        ),
        Tracepoint::ShrinkInactive { nr_scanned, nr_reclaimed, priority, file, nid, zid: z, .. } if k.before(4, 11) => {
            let zone = if k.before(4, 8) { format!(" zid={}", z as u32) } else { String::new() };
            write!(
                out,
                "nid={nid}{zone} nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} priority={priority} flags={}",
                reclaim_flags(file)
            )
        }
        Tracepoint::ShrinkInactive { nr_scanned, nr_reclaimed, ref stat, priority, file, nid, .. }
            if k.before(5, 2) =>
        {
            write_shrink_inactive(out, nid, (nr_scanned, nr_reclaimed), stat, priority, file, true);
            Ok(())
        }
        Tracepoint::WriteFolio { pfn } if k.before(5, 14) => write_page(out, mm, pfn, k),
        Tracepoint::LruInsertion { pfn } if k.before(5, 16) => write!(
            out,
            "page={:016x} pfn={} lru={} flags={}",
            page_ptr(pfn),
            pfn_text(pfn, k),
            page_lru(mm, pfn) as u32,
            pagemap_flags(mm, pfn)
        ),
        Tracepoint::LruActivate { pfn } if k.before(5, 16) => {
            write!(out, "page={:016x} pfn={}", page_ptr(pfn), pfn_text(pfn, k))
        }
        Tracepoint::FilemapAdd { pfn } if k.before(5, 14) => {
            let f = &mm.frames[pfn];
            let ino = f.owner.as_file().map_or(0, |file| file.0 as u64 + 1);
            let ofs = (f.index as u64) << mm::PAGE_SHIFT;
            write!(out, "dev 8:1 ino {ino:x} page={:016x} pfn={pfn} ofs={ofs}", page_ptr(pfn))
        }
        Tracepoint::FilemapDelete { pfn, file, index } if k.before(5, 14) => write!(
            out,
            "dev 8:1 ino {:x} page={:016x} pfn={pfn} ofs={}",
            file.0 as u64 + 1,
            page_ptr(pfn),
            (index as u64) << mm::PAGE_SHIFT
        ),
        _ => return false,
    };
    true
}

/// A pfn as the kernel printed it: in decimal before v5.14, then in hex.
fn pfn_text(pfn: Pfn, k: Layout) -> String {
    if k.before(5, 14) {
        pfn.to_string()
    } else {
        format!("0x{pfn:x}")
    }
}

/// `mm_vmscan_write_folio`'s fields (`mm_vmscan_writepage`'s before v5.18).
fn write_page(out: &mut String, mm: &Mm, pfn: Pfn, k: Layout) -> std::fmt::Result {
    let flags = reclaim_flags(!mm.frames[pfn].flags.has(PageFlags::SWAPBACKED));
    write!(out, "page={:016x} pfn={} flags={flags}", page_ptr(pfn), pfn_text(pfn, k))
}

/// `mm_vmscan_lru_shrink_inactive` with `reclaim_stat`'s counts (v4.11+);
/// `one_activate`: one `nr_activate` count, as before v5.2.
fn write_shrink_inactive(
    out: &mut String,
    nid: u8,
    nr: (u64, u64),
    st: &ShrinkStat,
    priority: i32,
    file: bool,
    one_activate: bool,
) {
    let activate = if one_activate {
        format!("nr_activate={}", st.activate[0] + st.activate[1])
    } else {
        format!("nr_activate_anon={} nr_activate_file={}", st.activate[0], st.activate[1])
    };
    let _ = write!(
        out,
        "nid={nid} nr_scanned={} nr_reclaimed={} nr_dirty={} nr_writeback={} nr_congested={} nr_immediate={} \
         {activate} nr_ref_keep={} nr_unmap_fail={} priority={} flags={}",
        nr.0,
        nr.1,
        st.dirty,
        st.writeback,
        st.congested,
        st.immediate,
        st.ref_keep,
        st.unmap_fail,
        priority,
        reclaim_flags(file)
    );
}

fn write_fields(out: &mut String, mm: &Mm, tp: &Tracepoint) {
    let _ = match *tp {
        Tracepoint::KswapdSleep { nid } => write!(out, "nid={nid}"),
        Tracepoint::KswapdWake { nid } => write!(out, "nid={nid} order=0"),
        Tracepoint::WakeupKswapd { nid, .. } => write!(out, "nid={nid} order=0 gfp_flags={GFP}"),
        Tracepoint::ReclaimBegin { .. } => write!(out, "order=0 gfp_flags={GFP}"),
        Tracepoint::ReclaimEnd { nr_reclaimed, .. } => write!(out, "nr_reclaimed={nr_reclaimed}"),
        Tracepoint::LruIsolate { nr_requested, nr_scanned, nr_taken, lru } => write!(
            out,
            "isolate_mode=0 classzone={} order=0 nr_requested={nr_requested} nr_scanned={nr_scanned} \
             nr_skipped=0 nr_taken={nr_taken} lru={}",
            mm::ZoneId::Normal as u32,
            lru_name(lru)
        ),
        Tracepoint::ShrinkInactive { nr_scanned, nr_reclaimed, ref stat, priority, file, nid, .. } => {
            write_shrink_inactive(out, nid, (nr_scanned, nr_reclaimed), stat, priority, file, false);
            Ok(())
        }
        Tracepoint::ShrinkActive { nr_taken, nr_active, nr_deactivated, nr_referenced, priority, file, nid } => write!(
            out,
            "nid={nid} nr_taken={nr_taken} nr_active={nr_active} nr_deactivated={nr_deactivated} \
             nr_referenced={nr_referenced} priority={priority} flags={}",
            reclaim_flags(file)
        ),
        Tracepoint::WriteFolio { pfn } => write_page(out, mm, pfn, Layout::V6),
        Tracepoint::Throttled { nid, usec_timeout, usec_delayed, reason } => match reason {
            ThrottleState::CongestionWait | ThrottleState::WaitIffCongested => {
                write!(out, "usec_timeout={usec_timeout} usec_delayed={usec_delayed}")
            }
            // KERNEL: the format string spells it `usect_delayed`.
            _ => write!(
                out,
                "nid={nid} usec_timeout={usec_timeout} usect_delayed={usec_delayed} reason=VMSCAN_THROTTLE_{}",
                match reason {
                    ThrottleState::Writeback => "WRITEBACK",
                    ThrottleState::NoProgress => "NOPROGRESS",
                    ThrottleState::Isolated => "ISOLATED",
                    _ => "CONGESTED",
                }
            ),
        },
        Tracepoint::LruInsertion { pfn } => write!(
            out,
            "folio={:016x} pfn=0x{pfn:x} lru={} flags={}",
            page_ptr(pfn),
            page_lru(mm, pfn) as u32,
            pagemap_flags(mm, pfn)
        ),
        Tracepoint::LruActivate { pfn } => write!(out, "folio={:016x} pfn=0x{pfn:x}", page_ptr(pfn)),
        Tracepoint::FilemapAdd { pfn } => {
            let f = &mm.frames[pfn];
            let ino = f.owner.as_file().map_or(0, |file| file.0 as u64 + 1);
            write!(out, "dev 8:1 ino {ino:x} pfn=0x{pfn:x} ofs={} order=0", (f.index as u64) << mm::PAGE_SHIFT)
        }
        Tracepoint::FilemapDelete { pfn, file, index } => write!(
            out,
            "dev 8:1 ino {:x} pfn=0x{pfn:x} ofs={} order=0",
            file.0 as u64 + 1,
            (index as u64) << mm::PAGE_SHIFT
        ),
        Tracepoint::SimLruAdd { pfn, shadow, origin } => write!(
            out,
            "pfn=0x{pfn:x} page={} origin={origin} shadow={} lru={}",
            page_name(mm, pfn),
            if shadow { "yes" } else { "no" },
            lru_name(page_lru(mm, pfn))
        ),
        Tracepoint::SimRefault { pfn, distance, workingset_size, workingset_lists, workingset, activated } => {
            let lists: Vec<&str> = [Lru::ActiveFile, Lru::InactiveFile, Lru::ActiveAnon, Lru::InactiveAnon]
                .into_iter()
                .filter(|&l| workingset_lists >> l as u32 & 1 != 0)
                .map(lru_name)
                .collect();
            write!(
                out,
                "pfn=0x{pfn:x} page={} distance={distance} workingset_size={workingset_size} lists={} \
                 workingset={} activate={}",
                page_name(mm, pfn),
                lists.join("+"),
                workingset as u8,
                activated as u8
            )
        }
        Tracepoint::SimEvict { pfn, priority, shadow } => {
            let _ = write!(
                out,
                "pfn=0x{pfn:x} page={} lru={} priority={priority} shadow=",
                page_name(mm, pfn),
                lru_name(page_lru(mm, pfn))
            );
            match shadow {
                Some(s) => write!(out, "0x{s:x}"),
                None => write!(out, "none"),
            }
        }
        Tracepoint::SimLruMove { pfn, to_active, why } => write!(
            out,
            "pfn=0x{pfn:x} page={} to={} why={why}",
            page_name(mm, pfn),
            if to_active { "active" } else { "inactive" }
        ),
        Tracepoint::SimReclaimRetry => write!(out, "force_deactivate=1"),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const V3_2: Layout = Layout(Version::new(3, 2));

    #[test]
    fn lines_in_both_layouts() {
        let mm = Mm::new(4, 0);
        let names = vec!["hot cold#0".to_string()];
        let line = |task, tp: Tracepoint, layout| {
            let mut s = String::new();
            write_line(&mut s, 1_500_000_999, task, &names, &mm, &tp, layout);
            s
        };
        let wake = line(Task::Thread(0), Tracepoint::KswapdWake { nid: 0 }, Layout::V6);
        assert_eq!(wake, "      hot-cold-0-1000    [000] .....     1.500000: mm_vmscan_kswapd_wake: nid=0 order=0\n");
        assert!(
            line(Task::Kswapd(0), Tracepoint::KswapdSleep { nid: 0 }, Layout::V6).contains(" kswapd0-50      [001] ")
        );
        // Node 2's kswapd: its own name, pid and CPU, and its node in the fields.
        let sleep2 = line(Task::Kswapd(2), Tracepoint::KswapdSleep { nid: 2 }, Layout::V6);
        assert!(sleep2.starts_with("         kswapd2-52      [003] ") && sleep2.ends_with(": nid=2\n"), "{sleep2}");
        let wakeup = Tracepoint::WakeupKswapd { nid: 1, zid: mm::ZoneId::Dma32 };
        assert!(line(Task::Thread(0), wakeup, Layout::V6).ends_with(": nid=1 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE\n"));
        assert!(line(Task::Thread(0), wakeup, V3_2).ends_with(": nid=1 zid=1 order=0\n"));
        let stat = ShrinkStat { activate: [3, 0], ..Default::default() };
        let tp = Tracepoint::ShrinkInactive {
            nr_scanned: 32,
            nr_reclaimed: 5,
            stat,
            priority: 12,
            file: false,
            nid: 0,
            zid: mm::ZoneId::Dma32,
        };
        assert!(line(Task::Kswapd(0), tp, Layout::V6).ends_with(
            ": mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32 nr_reclaimed=5 nr_dirty=0 nr_writeback=0 \
             nr_congested=0 nr_immediate=0 nr_activate_anon=3 nr_activate_file=0 nr_ref_keep=0 nr_unmap_fail=0 \
             priority=12 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC\n"
        ));
        assert!(line(Task::Kswapd(0), tp, V3_2).ends_with(
            ": mm_vmscan_lru_shrink_inactive: nid=0 zid=1 nr_scanned=32 nr_reclaimed=5 priority=12 \
             flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC\n"
        ));
        let write = Tracepoint::WriteFolio { pfn: 3 };
        assert!(line(Task::Kswapd(0), write, Layout::V6).ends_with(
            ": mm_vmscan_write_folio: page=ffffea00000000c0 pfn=0x3 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC\n"
        ));
        assert!(line(Task::Kswapd(0), write, V3_2)
            .ends_with(": mm_vmscan_writepage: page=ffffea00000000c0 pfn=3 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC\n"));
        let iso = Tracepoint::LruIsolate { nr_requested: 32, nr_scanned: 32, nr_taken: 32, lru: Lru::ActiveFile };
        assert!(line(Task::Kswapd(0), iso, V3_2).contains(": isolate_mode=2 order=0 nr_requested=32 "));
        assert!(line(Task::Kswapd(0), iso, Layout::V6).contains(" nr_skipped=0 nr_taken=32 lru=active_file\n"));
        let begin = Tracepoint::ReclaimBegin { memcg: false };
        assert!(
            line(Task::Thread(0), begin, V3_2).ends_with("order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n")
        );
        let throttled =
            Tracepoint::Throttled { nid: 1, usec_timeout: 100_000, usec_delayed: 40, reason: ThrottleState::Writeback };
        assert!(line(Task::Kswapd(1), throttled, Layout::V6).ends_with(
            ": mm_vmscan_throttled: nid=1 usec_timeout=100000 usect_delayed=40 reason=VMSCAN_THROTTLE_WRITEBACK\n"
        ));
    }

    #[test]
    fn each_profile_kernel_gets_its_layouts() {
        let mut mm = Mm::new(64, 0);
        let r = mm.add_anon_region(4);
        let pfn = mm.frames.alloc(mm::Owner::anon(r), 0, PageFlags::SWAPBACKED).unwrap();
        let at = |major, minor, tp: Tracepoint| {
            let mut s = String::new();
            write_line(&mut s, 0, Task::Kswapd(0), &[], &mm, &tp, Layout(Version::new(major, minor)));
            s.split_once(": ").unwrap().1.trim_end().to_string()
        };
        let ptr = format!("{:016x}", page_ptr(pfn));
        let stat = ShrinkStat { activate: [3, 1], ..Default::default() };
        let shrink = Tracepoint::ShrinkInactive {
            nr_scanned: 32,
            nr_reclaimed: 5,
            stat,
            priority: 9,
            file: true,
            nid: 1,
            zid: mm::ZoneId::Normal,
        };
        let flags = "flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC";
        assert_eq!(
            at(4, 6, shrink),
            format!("mm_vmscan_lru_shrink_inactive: nid=1 zid=2 nr_scanned=32 nr_reclaimed=5 priority=9 {flags}")
        );
        assert_eq!(
            at(4, 9, shrink),
            format!("mm_vmscan_lru_shrink_inactive: nid=1 nr_scanned=32 nr_reclaimed=5 priority=9 {flags}")
        );
        assert!(at(4, 19, shrink).contains(" nr_immediate=0 nr_activate=4 nr_ref_keep=0 "));
        assert!(at(5, 7, shrink).contains(" nr_activate_anon=3 nr_activate_file=1 "));
        let wake = Tracepoint::KswapdWake { nid: 0 };
        assert_eq!(at(4, 6, wake), "mm_vmscan_kswapd_wake: nid=0 order=0");
        assert_eq!(at(4, 19, wake), "mm_vmscan_kswapd_wake: nid=0 zid=2 order=0");
        assert_eq!(at(5, 9, wake), "mm_vmscan_kswapd_wake: nid=0 order=0");
        let wakeup = Tracepoint::WakeupKswapd { nid: 0, zid: mm::ZoneId::Normal };
        assert_eq!(at(4, 6, wakeup), "mm_vmscan_wakeup_kswapd: nid=0 zid=2 order=0");
        assert!(at(4, 19, wakeup).ends_with(": nid=0 zid=2 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE"));
        assert!(at(5, 9, wakeup).ends_with(": nid=0 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE"));
        let begin = Tracepoint::ReclaimBegin { memcg: false };
        assert!(at(4, 6, begin).ends_with(": order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE"));
        assert!(at(4, 19, begin).ends_with(" gfp_flags=GFP_HIGHUSER_MOVABLE classzone_idx=2"));
        assert!(at(5, 9, begin).ends_with(": order=0 gfp_flags=GFP_HIGHUSER_MOVABLE"));
        let iso = Tracepoint::LruIsolate { nr_requested: 32, nr_scanned: 32, nr_taken: 30, lru: Lru::InactiveFile };
        assert!(at(4, 6, iso).ends_with(": isolate_mode=0 order=0 nr_requested=32 nr_scanned=32 nr_taken=30 file=1"));
        assert!(at(5, 9, iso).contains(": isolate_mode=0 classzone=2 order=0 "));
        let write = Tracepoint::WriteFolio { pfn };
        assert_eq!(
            at(5, 9, write),
            format!("mm_vmscan_writepage: page={ptr} pfn={pfn} flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC")
        );
        assert!(at(5, 15, write).starts_with(&format!("mm_vmscan_writepage: page={ptr} pfn=0x{pfn:x} ")));
        assert!(at(6, 1, write).starts_with("mm_vmscan_write_folio: "));
        let insert = Tracepoint::LruInsertion { pfn };
        assert!(at(4, 6, insert).starts_with(&format!("mm_lru_insertion: page={ptr} pfn={pfn} lru=0 ")));
        assert!(at(5, 15, insert).starts_with(&format!("mm_lru_insertion: page={ptr} pfn=0x{pfn:x} ")));
        assert!(at(6, 1, insert).starts_with(&format!("mm_lru_insertion: folio={ptr} ")));
        assert_eq!(at(5, 9, Tracepoint::LruActivate { pfn }), format!("mm_lru_activate: page={ptr} pfn={pfn}"));
    }
}
