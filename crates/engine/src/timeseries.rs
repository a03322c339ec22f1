//! Periodic samples of the machine state, for time-series output.
//!
//! Sampling is off unless asked for ([`crate::SimBuilder::sample_every`]); when
//! off it costs nothing on the access path. A sample is stamped with its
//! boundary time `k * interval`.
//!
//! Simplification S-TS1: a sample is taken when the first actor passes its
//! time with every other actor already at or past it, so it may include the one
//! access (or fault) that crossed the boundary.

use crate::Nanos;
use mm::{Mm, VmEvent};
use reclaim::policy::LruSizes;

/// Cumulative `/proc/vmstat` counters in every sample, after the gauges.
const COUNTERS: [VmEvent; 13] = [
    VmEvent::Pswpin,
    VmEvent::Pswpout,
    VmEvent::Pgmajfault,
    VmEvent::WorkingsetRefaultAnon,
    VmEvent::WorkingsetRefaultFile,
    VmEvent::WorkingsetActivateAnon,
    VmEvent::WorkingsetActivateFile,
    VmEvent::PgscanKswapd,
    VmEvent::PgscanDirect,
    VmEvent::PgstealKswapd,
    VmEvent::PgstealDirect,
    VmEvent::AllocstallNormal,
    VmEvent::Pgactivate,
];

/// Columns of a sample row, in order: virtual time, gauges, cumulative counters.
pub const COLUMNS: [&str; 19] = [
    "time_ns",
    "nr_free_pages",
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "allocstall_normal",
    "pgactivate",
];

/// One sample: a value per entry of [`COLUMNS`].
pub type Sample = [u64; COLUMNS.len()];

/// The samples of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeseries {
    /// Virtual time between samples.
    pub interval_ns: Nanos,
    /// Rows in time order, the first at `interval_ns`.
    pub rows: Vec<Sample>,
}

/// Takes samples at fixed virtual-time boundaries.
pub(crate) struct Sampler {
    series: Option<Timeseries>,
    next_at: Nanos,
}

impl Sampler {
    /// A sampler that never samples.
    pub(crate) fn off() -> Sampler {
        Sampler { series: None, next_at: Nanos::MAX }
    }

    /// A sampler every `interval_ns` (at least 1 ns).
    pub(crate) fn every(interval_ns: Nanos) -> Sampler {
        let interval_ns = interval_ns.max(1);
        Sampler { series: Some(Timeseries { interval_ns, rows: Vec::new() }), next_at: interval_ns }
    }

    /// The time of the next sample (`Nanos::MAX` when off).
    #[inline]
    pub(crate) fn next_at(&self) -> Nanos {
        self.next_at
    }

    /// Records the sample due at [`Sampler::next_at`] from the current state.
    pub(crate) fn record(&mut self, mm: &Mm, lru: LruSizes) {
        let Some(series) = &mut self.series else {
            return;
        };
        let mut row: Sample = [0; COLUMNS.len()];
        row[0] = self.next_at;
        row[1] = mm.nr_free();
        row[2] = lru.inactive_anon;
        row[3] = lru.active_anon;
        row[4] = lru.inactive_file;
        row[5] = lru.active_file;
        for (slot, ev) in row[6..].iter_mut().zip(COUNTERS) {
            *slot = mm.stat.get(ev);
        }
        series.rows.push(row);
        self.next_at += series.interval_ns;
    }

    /// The samples taken, if sampling was on.
    pub(crate) fn finish(&mut self) -> Option<Timeseries> {
        self.next_at = Nanos::MAX;
        self.series.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_columns_name_their_counters() {
        for (name, ev) in COLUMNS[6..].iter().zip(COUNTERS) {
            assert_eq!(*name, ev.name());
        }
    }

    #[test]
    fn samples_are_stamped_at_their_boundaries() {
        let mm = Mm::new(64, 0);
        let mut s = Sampler::every(250);
        s.record(&mm, LruSizes { inactive_anon: 3, ..Default::default() });
        s.record(&mm, LruSizes::default());
        assert_eq!(s.next_at(), 750);
        let ts = s.finish().unwrap();
        assert_eq!(ts.rows.len(), 2);
        assert_eq!((ts.rows[0][0], ts.rows[0][1], ts.rows[0][2]), (250, 64, 3));
        assert_eq!(ts.rows[1][0], 500);
        assert_eq!(Sampler::off().next_at(), Nanos::MAX);
    }
}
