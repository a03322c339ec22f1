//! The ftrace text of one tracepoint record: `task-pid [cpu] flags timestamp:
//! event: fields`, each event's fields laid out as its kernel `TP_printk`
//! (Linux v6.x: include/trace/events/vmscan.h, pagemap.h, filemap.h; the
//! congestion waits of kernels before v5.16 as writeback.h had them). The
//! `reclaimsim_` events are ours (docs/events.md). [`Layout::V3_2`] writes
//! instead the layouts of Linux v3.2 for the five events that mmtests'
//! trace-vmscan-postprocess.pl parses (its built-in patterns are of that era).

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

/// Which kernel's layouts to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Layout {
    /// Linux v6.x (today's `TP_printk` strings).
    #[value(name = "v6")]
    V6,
    /// Linux v3.2 for `mm_vmscan_direct_reclaim_begin`, `mm_vmscan_wakeup_kswapd`,
    /// `mm_vmscan_lru_isolate`, `mm_vmscan_lru_shrink_inactive` and
    /// `mm_vmscan_writepage` (then the name of `mm_vmscan_write_folio`); v6 for the rest.
    #[value(name = "v3.2")]
    V3_2,
}

/// The event name of `tp` in `layout`.
pub fn event_name(tp: &Tracepoint, layout: Layout) -> &'static str {
    match tp {
        Tracepoint::WriteFolio { .. } if layout == Layout::V3_2 => "mm_vmscan_writepage",
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
    if layout == Layout::V3_2 && write_v3_2_fields(out, mm, tp) {
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

/// The v3.2 layouts (include/trace/events/vmscan.h of Linux v3.2); false for
/// an event whose layout is today's. KERNEL: v3.2's isolate modes are bits,
/// `ISOLATE_INACTIVE` 1 and `ISOLATE_ACTIVE` 2; lumpy reclaim's `contig_*`
/// counts are 0 (order-0 only).
fn write_v3_2_fields(out: &mut String, mm: &Mm, tp: &Tracepoint) -> bool {
    let zid = mm::ZoneId::Normal as u32;
    let _ = match *tp {
        Tracepoint::ReclaimBegin { .. } => write!(out, "order=0 may_writepage=1 gfp_flags={GFP}"),
        Tracepoint::WakeupKswapd { nid, zid } => write!(out, "nid={nid} zid={} order=0", zid as u32),
        Tracepoint::LruIsolate { nr_requested, nr_scanned, nr_taken, lru } => write!(
            out,
            "isolate_mode={} order=0 nr_requested={nr_requested} nr_scanned={nr_scanned} nr_taken={nr_taken} \
             contig_taken=0 contig_dirty=0 contig_failed=0",
            if matches!(lru, Lru::ActiveAnon | Lru::ActiveFile) { 2 } else { 1 }
        ),
        Tracepoint::ShrinkInactive { nr_scanned, nr_reclaimed, priority, file, nid, .. } => write!(
            out,
            "nid={nid} zid={zid} nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} priority={priority} flags={}",
            reclaim_flags(file)
        ),
        Tracepoint::WriteFolio { pfn } => write_page(out, mm, pfn, Layout::V3_2),
        _ => return false,
    };
    true
}

/// `mm_vmscan_write_folio`'s fields (v3.2's `mm_vmscan_writepage` printed the pfn in decimal).
fn write_page(out: &mut String, mm: &Mm, pfn: Pfn, layout: Layout) -> std::fmt::Result {
    let flags = reclaim_flags(!mm.frames[pfn].flags.has(PageFlags::SWAPBACKED));
    match layout {
        Layout::V6 => write!(out, "page={:016x} pfn=0x{pfn:x} flags={flags}", page_ptr(pfn)),
        Layout::V3_2 => write!(out, "page={:016x} pfn={pfn} flags={flags}", page_ptr(pfn)),
    }
}

fn write_shrink_inactive(out: &mut String, nid: u8, nr: (u64, u64), st: &ShrinkStat, priority: i32, file: bool) {
    let _ = write!(
        out,
        "nid={nid} nr_scanned={} nr_reclaimed={} nr_dirty={} nr_writeback={} nr_congested={} nr_immediate={} \
         nr_activate_anon={} nr_activate_file={} nr_ref_keep={} nr_unmap_fail={} priority={} flags={}",
        nr.0,
        nr.1,
        st.dirty,
        st.writeback,
        st.congested,
        st.immediate,
        st.activate[0],
        st.activate[1],
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
        Tracepoint::ShrinkInactive { nr_scanned, nr_reclaimed, ref stat, priority, file, nid } => {
            write_shrink_inactive(out, nid, (nr_scanned, nr_reclaimed), stat, priority, file);
            Ok(())
        }
        Tracepoint::ShrinkActive { nr_taken, nr_active, nr_deactivated, nr_referenced, priority, file, nid } => write!(
            out,
            "nid={nid} nr_taken={nr_taken} nr_active={nr_active} nr_deactivated={nr_deactivated} \
             nr_referenced={nr_referenced} priority={priority} flags={}",
            reclaim_flags(file)
        ),
        Tracepoint::WriteFolio { pfn } => write_page(out, mm, pfn, Layout::V6),
        Tracepoint::Throttled { usec_timeout, usec_delayed, reason } => match reason {
            ThrottleState::CongestionWait | ThrottleState::WaitIffCongested => {
                write!(out, "usec_timeout={usec_timeout} usec_delayed={usec_delayed}")
            }
            // KERNEL: the format string spells it `usect_delayed`.
            _ => write!(
                out,
                "nid=0 usec_timeout={usec_timeout} usect_delayed={usec_delayed} reason=VMSCAN_THROTTLE_{}",
                match reason {
                    ThrottleState::Writeback => "WRITEBACK",
                    ThrottleState::NoProgress => "NOPROGRESS",
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
        assert!(line(Task::Thread(0), wakeup, Layout::V3_2).ends_with(": nid=1 zid=1 order=0\n"));
        let stat = ShrinkStat { activate: [3, 0], ..Default::default() };
        let tp =
            Tracepoint::ShrinkInactive { nr_scanned: 32, nr_reclaimed: 5, stat, priority: 12, file: false, nid: 0 };
        assert!(line(Task::Kswapd(0), tp, Layout::V6).ends_with(
            ": mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32 nr_reclaimed=5 nr_dirty=0 nr_writeback=0 \
             nr_congested=0 nr_immediate=0 nr_activate_anon=3 nr_activate_file=0 nr_ref_keep=0 nr_unmap_fail=0 \
             priority=12 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC\n"
        ));
        assert!(line(Task::Kswapd(0), tp, Layout::V3_2).ends_with(
            ": mm_vmscan_lru_shrink_inactive: nid=0 zid=2 nr_scanned=32 nr_reclaimed=5 priority=12 \
             flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC\n"
        ));
        let write = Tracepoint::WriteFolio { pfn: 3 };
        assert!(line(Task::Kswapd(0), write, Layout::V6).ends_with(
            ": mm_vmscan_write_folio: page=ffffea00000000c0 pfn=0x3 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC\n"
        ));
        assert!(line(Task::Kswapd(0), write, Layout::V3_2)
            .ends_with(": mm_vmscan_writepage: page=ffffea00000000c0 pfn=3 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC\n"));
        let iso = Tracepoint::LruIsolate { nr_requested: 32, nr_scanned: 32, nr_taken: 32, lru: Lru::ActiveFile };
        assert!(line(Task::Kswapd(0), iso, Layout::V3_2).contains(": isolate_mode=2 order=0 nr_requested=32 "));
        assert!(line(Task::Kswapd(0), iso, Layout::V6).contains(" nr_skipped=0 nr_taken=32 lru=active_file\n"));
        let begin = Tracepoint::ReclaimBegin { memcg: false };
        assert!(line(Task::Thread(0), begin, Layout::V3_2)
            .ends_with("order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"));
        let throttled =
            Tracepoint::Throttled { usec_timeout: 100_000, usec_delayed: 40, reason: ThrottleState::Writeback };
        assert!(line(Task::Kswapd(0), throttled, Layout::V6).ends_with(
            ": mm_vmscan_throttled: nid=0 usec_timeout=100000 usect_delayed=40 reason=VMSCAN_THROTTLE_WRITEBACK\n"
        ));
    }
}
