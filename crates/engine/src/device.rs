//! Block and memory devices backing swap and files.
//!
//! A device is a FIFO queue with a fixed per-request latency and a transfer
//! bandwidth (issue #2's "simple latency model"; richer models come with swap
//! readahead). Rotational devices serialise whole requests (seek + transfer);
//! flash devices overlap latency and only serialise transfers. Synchronous
//! devices (zram, pmem) do the work on the caller's CPU with no queue.

use crate::Nanos;
use knobs::{History, Kind, Knob};
use std::collections::VecDeque;

/// KERNEL: `nr_requests`, the default block queue depth (128).
pub const NR_REQUESTS: usize = 128;
/// KERNEL: `blk_queue_congestion_threshold()`: a queue is congested from
/// `nr_requests - nr_requests/8 + 1` queued requests...
pub const CONGESTION_ON: usize = NR_REQUESTS - NR_REQUESTS / 8 + 1;
/// ...until it drains below `nr_requests - nr_requests/8 - nr_requests/16 - 1`.
pub const CONGESTION_OFF: usize = NR_REQUESTS - NR_REQUESTS / 8 - NR_REQUESTS / 16 - 1;

/// Device kinds with preset parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// Rotating disk.
    Hdd,
    /// SATA flash disk.
    Ssd,
    /// NVMe flash disk.
    Nvme,
    /// Compressed RAM block device (`SWP_SYNCHRONOUS_IO`).
    Zram,
    /// Persistent memory (`SWP_SYNCHRONOUS_IO`).
    Pmem,
}

impl DeviceKind {
    /// All kinds.
    pub const ALL: [DeviceKind; 5] =
        [DeviceKind::Hdd, DeviceKind::Ssd, DeviceKind::Nvme, DeviceKind::Zram, DeviceKind::Pmem];

    /// The name used in settings (`swap=ssd:4G`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Hdd => "hdd",
            DeviceKind::Ssd => "ssd",
            DeviceKind::Nvme => "nvme",
            DeviceKind::Zram => "zram",
            DeviceKind::Pmem => "pmem",
        }
    }

    /// Parses a kind name.
    pub fn from_name(s: &str) -> Option<DeviceKind> {
        DeviceKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Preset parameters. SIM-CHOICE: datasheet-class figures, each overridable
    /// in a later issue:
    /// - HDD 7200 rpm: 4.2 ms average seek + 4.17 ms half rotation, skipped when a
    ///   request starts where the previous one ended; 160 MB/s; one request at a time
    ///   (e.g. Seagate BarraCuda 3.5" datasheet class).
    /// - SATA SSD: 90 us per request, 8 requests in flight (flash channels),
    ///   520 MB/s shared (SATA 6 Gb/s ceiling; e.g. Samsung 860 EVO class).
    /// - NVMe: 20 us per request, 32 in flight, 2.8 GB/s (Intel P3700 class, the
    ///   seed 001 machine's device type).
    /// - zram: 1 us to decompress and 3 us to compress a page on the caller's CPU
    ///   (lzo-rle); pmem: 1 us per page either way.
    pub fn preset(self) -> Device {
        let (latency_ns, seek_ns, bytes_per_sec, channels, sync, read_cpu_ns, write_cpu_ns) = match self {
            DeviceKind::Hdd => (4_170_000, 4_200_000, 160_000_000, 1, false, 0, 0),
            DeviceKind::Ssd => (90_000, 0, 520_000_000, 8, false, 0, 0),
            DeviceKind::Nvme => (20_000, 0, 2_800_000_000, 32, false, 0, 0),
            DeviceKind::Zram => (0, 0, 0, 0, true, 1_000, 3_000),
            DeviceKind::Pmem => (0, 0, 0, 0, true, 1_000, 1_000),
        };
        Device {
            kind: self,
            latency_ns,
            seek_ns,
            bytes_per_sec,
            sync,
            read_cpu_ns,
            write_cpu_ns,
            channels: vec![0; channels],
            oldest: Some(0),
            bus_free: 0,
            head: u64::MAX,
            inflight: VecDeque::new(),
        }
    }
}

/// Overrides of a device preset's parameters, by name (`swap.latency_us=50`).
/// `None` keeps the preset's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceOverrides {
    /// Per-request access latency, ns.
    pub latency_ns: Option<Nanos>,
    /// Seek time of a non-sequential request (rotational devices), ns.
    pub seek_ns: Option<Nanos>,
    /// Shared transfer bandwidth, bytes per second.
    pub bytes_per_sec: Option<u64>,
    /// Requests served in parallel (internal channels).
    pub channels: Option<u64>,
    /// CPU time per page read on a synchronous device, ns.
    pub read_cpu_ns: Option<Nanos>,
    /// CPU time per page written on a synchronous device, ns.
    pub write_cpu_ns: Option<Nanos>,
}

/// A preset override in the knob's unit: `scale` converts it to the field's
/// (1000 for microseconds to ns, 1_000_000 for MB/s); `preset` keeps the preset.
macro_rules! dev_param {
    ($key:literal, $field:ident, $scale:literal, $help:literal) => {
        Knob {
            key: $key,
            help: $help,
            kind: Kind::Text,
            history: History::Model,
            get: |o| o.$field.map_or_else(|| "preset".to_string(), |v| (v / $scale).to_string()),
            set: |o, v| {
                o.$field = if v == "preset" { None } else { Some(knobs::parse_u64(v, 0, u64::MAX / $scale)? * $scale) };
                Ok(())
            },
        }
    };
}

/// The device parameters, as `swap.NAME` and `fs.NAME` settings.
pub const KNOBS: &[Knob<DeviceOverrides>] = &[
    dev_param!(
        "latency_us",
        latency_ns,
        1000,
        "access latency per request, us (presets: hdd 4170 = half a 7200 rpm turn, ssd 90, nvme 20)"
    ),
    dev_param!("seek_us", seek_ns, 1000, "seek per non-sequential request, us (preset: hdd 4200, others 0)"),
    dev_param!(
        "bandwidth_mbps",
        bytes_per_sec,
        1_000_000,
        "transfer bandwidth, MB/s (presets: hdd 160, ssd 520, nvme 2800)"
    ),
    dev_param!("channels", channels, 1, "requests served in parallel (presets: hdd 1, ssd 8, nvme 32)"),
    dev_param!(
        "read_cpu_ns",
        read_cpu_ns,
        1,
        "CPU per page read on zram/pmem, ns (presets: zram 1000 lzo-rle decompress, pmem 1000)"
    ),
    dev_param!(
        "write_cpu_ns",
        write_cpu_ns,
        1,
        "CPU per page written on zram/pmem, ns (presets: zram 3000 lzo-rle compress, pmem 1000)"
    ),
];

impl DeviceKind {
    /// The preset with `o` applied.
    pub fn build(self, o: &DeviceOverrides) -> Device {
        let mut d = self.preset();
        d.latency_ns = o.latency_ns.unwrap_or(d.latency_ns);
        d.seek_ns = o.seek_ns.unwrap_or(d.seek_ns);
        d.bytes_per_sec = o.bytes_per_sec.unwrap_or(d.bytes_per_sec);
        d.read_cpu_ns = o.read_cpu_ns.unwrap_or(d.read_cpu_ns);
        d.write_cpu_ns = o.write_cpu_ns.unwrap_or(d.write_cpu_ns);
        if let (Some(n), false) = (o.channels, d.sync) {
            d.channels = vec![0; n.max(1) as usize];
        }
        d
    }
}

/// One device instance with its queue state.
#[derive(Clone, Debug)]
pub struct Device {
    /// Which kind.
    pub kind: DeviceKind,
    /// Per-request access latency (flash read, or half a rotation), ns.
    pub latency_ns: Nanos,
    /// Head movement before a request that does not continue the previous one (HDD), ns.
    pub seek_ns: Nanos,
    /// Transfer bandwidth, bytes per second, shared by all requests (0 for synchronous devices).
    pub bytes_per_sec: u64,
    /// `SWP_SYNCHRONOUS_IO`: no queue, the caller's CPU does the work.
    pub sync: bool,
    /// CPU time per page read on a synchronous device, ns.
    pub read_cpu_ns: Nanos,
    /// CPU time per page written on a synchronous device, ns.
    pub write_cpu_ns: Nanos,
    /// When each internal channel (request slot) is next free.
    channels: Vec<Nanos>,
    /// The channel that frees first, while it is simply the one served
    /// longest ago: each request ends after the transfer before it on the
    /// shared bus, so every channel's next-free time is later than all the
    /// others' as it is set, and the channels are taken round robin. `None`
    /// once a request moved no bytes (transfer 0: a tie), from when the
    /// channels are searched instead.
    oldest: Option<usize>,
    /// When the transfer path is next free.
    bus_free: Nanos,
    /// Position after the last request (HDD head), `u64::MAX` when unknown.
    head: u64,
    /// Completion time and size of requests not yet complete, in completion order.
    inflight: VecDeque<(Nanos, u64)>,
}

impl Device {
    /// Requests served in parallel (the preset's or the override's channels).
    pub fn channels(&self) -> usize {
        self.channels.len()
    }

    /// True for rotational devices (the kernel's `SWP_SOLIDSTATE` unset).
    pub fn rotational(&self) -> bool {
        self.kind == DeviceKind::Hdd
    }

    /// Submits a request of `pages` pages at an unknown position (never sequential).
    pub fn submit(&mut self, now: Nanos, pages: u64, write: bool) -> Nanos {
        self.submit_at(now, u64::MAX, pages, write)
    }

    /// Submits a request of `pages` contiguous pages starting at page `pos` of the
    /// device at `now`; returns when it completes. A request costs its access
    /// latency once (plus a seek on a rotational device unless it starts where the
    /// previous request ended), then its transfer on the shared bandwidth. A
    /// synchronous device completes after its CPU cost.
    pub fn submit_at(&mut self, now: Nanos, pos: u64, pages: u64, write: bool) -> Nanos {
        if self.sync {
            return now + pages * if write { self.write_cpu_ns } else { self.read_cpu_ns };
        }
        let transfer = pages * mm::PAGE_SIZE * 1_000_000_000 / self.bytes_per_sec;
        let sequential = pos != u64::MAX && pos == self.head;
        let access = if sequential { 0 } else { self.latency_ns + self.seek_ns };
        self.head = pos.saturating_add(pages);
        // The channel that frees first takes the request (the lowest of a tie).
        let ch = match self.oldest {
            Some(ch) => ch,
            None => self.channels.iter().enumerate().min_by_key(|&(i, &t)| (t, i)).expect("a device has channels").0,
        };
        let accessed = now.max(self.channels[ch]) + access;
        let done = accessed.max(self.bus_free) + transfer;
        debug_assert!(self.oldest.is_none() || self.channels.iter().all(|&t| t < done || transfer == 0));
        self.bus_free = done;
        self.channels[ch] = done;
        self.oldest = self.oldest.filter(|_| transfer > 0).map(|_| (ch + 1) % self.channels.len());
        // Completions are in submission order: each waits for the previous transfer.
        self.retire(now);
        self.inflight.push_back((done, pages));
        done
    }

    fn retire(&mut self, now: Nanos) {
        while self.inflight.front().is_some_and(|&(done, _)| done <= now) {
            self.inflight.pop_front();
        }
    }

    /// Requests queued or in service at `now`.
    pub fn queued(&mut self, now: Nanos) -> usize {
        self.retire(now);
        self.inflight.len()
    }

    /// `bdi_write_congested()`: at least [`CONGESTION_ON`] requests queued.
    /// Simplification S-DV1: no hysteresis latch; congestion ends at
    /// [`Device::uncongested_at`].
    pub fn congested(&mut self, now: Nanos) -> bool {
        self.queued(now) >= CONGESTION_ON
    }

    /// When the queue drains below [`CONGESTION_OFF`] (`clear_bdi_congested`
    /// wakes `congestion_wait` sleepers then); `now` if it already is.
    pub fn uncongested_at(&mut self, now: Nanos) -> Nanos {
        let q = self.queued(now);
        if q < CONGESTION_OFF {
            now
        } else {
            self.inflight[q - CONGESTION_OFF].0
        }
    }

    /// When `pages` more pages of the queued requests will have completed, if that many are queued.
    pub fn pages_done_at(&mut self, now: Nanos, pages: u64) -> Option<Nanos> {
        self.retire(now);
        let mut sum = 0;
        self.inflight
            .iter()
            .find(|&&(_, n)| {
                sum += n;
                sum >= pages
            })
            .map(|&(done, _)| done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdd_serialises_requests_and_skips_seeks_when_sequential() {
        let mut d = DeviceKind::Hdd.preset();
        let xfer = 4096 * 1_000_000_000 / 160_000_000;
        let access = 4_170_000 + 4_200_000;
        let a = d.submit(0, 1, false);
        let b = d.submit(0, 1, false);
        assert_eq!(a, access + xfer);
        assert_eq!(b, 2 * (access + xfer));
        // A request continuing the previous one pays only its transfer.
        let c = d.submit_at(0, 100, 8, false);
        let e = d.submit_at(0, 108, 8, false);
        let xfer8 = 8 * 4096 * 1_000_000_000 / 160_000_000;
        assert_eq!(c, b + access + xfer8);
        assert_eq!(e, c + xfer8);
    }

    #[test]
    fn ssd_overlaps_latency_across_channels() {
        let mut d = DeviceKind::Ssd.preset();
        let xfer = 4096 * 1_000_000_000 / 520_000_000;
        let a = d.submit(0, 1, false);
        let b = d.submit(0, 1, false);
        assert_eq!(a, 90_000 + xfer);
        assert_eq!(b, 90_000 + 2 * xfer);
        // Eight channels: the ninth request waits for the first to finish.
        for _ in 2..8 {
            d.submit(0, 1, false);
        }
        assert_eq!(d.submit(0, 1, false), a + 90_000 + xfer);
        // One request of k pages costs one latency, not k.
        let mut d = DeviceKind::Ssd.preset();
        assert_eq!(d.submit_at(0, 7, 8, false), 90_000 + 8 * 4096 * 1_000_000_000 / 520_000_000);
    }

    /// The round-robin shortcut picks what the search over the channels picks,
    /// for any arrival times and sizes, also after a transfer of 0 ns (a bus
    /// too fast for one page to take a nanosecond) makes ties.
    #[test]
    fn the_channel_served_longest_ago_is_the_one_free_first() {
        for (kind, bytes_per_sec) in
            [(DeviceKind::Ssd, None), (DeviceKind::Nvme, None), (DeviceKind::Nvme, Some(1 << 43))]
        {
            let o = DeviceOverrides { bytes_per_sec, ..DeviceOverrides::default() };
            let (mut fast, mut searched) = (kind.build(&o), kind.build(&o));
            searched.oldest = None;
            let mut x = 12345u64;
            let mut now = 0;
            for _ in 0..5000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                now += (x >> 33) % 30_000;
                let (pos, pages) = ((x >> 20) % 64, 1 + (x >> 50) % 4);
                assert_eq!(fast.submit_at(now, pos, pages, false), searched.submit_at(now, pos, pages, false));
            }
            assert_eq!(fast.oldest.is_some(), bytes_per_sec.is_none(), "searching after a zero transfer");
        }
    }

    #[test]
    fn congestion_comes_with_a_full_queue_and_clears_in_completion_order() {
        let mut d = DeviceKind::Ssd.preset();
        let done: Vec<Nanos> = (0..CONGESTION_ON as u64).map(|i| d.submit_at(0, 2 * i, 1, true)).collect();
        assert!(done.windows(2).all(|w| w[0] <= w[1]));
        assert!(d.congested(0));
        assert!(!d.congested(done[0]));
        // It must lose CONGESTION_ON - CONGESTION_OFF + 1 requests to get below the off mark.
        let t = d.uncongested_at(0);
        assert_eq!(t, done[CONGESTION_ON - CONGESTION_OFF]);
        assert_eq!(d.queued(t), CONGESTION_OFF - 1);
        assert_eq!(d.pages_done_at(t, 2), Some(done[CONGESTION_ON - CONGESTION_OFF + 2]));
        assert_eq!(d.pages_done_at(t, 1000), None);
    }

    #[test]
    fn overrides_replace_preset_parameters_by_name() {
        let o = DeviceOverrides { latency_ns: Some(50_000), channels: Some(1), ..DeviceOverrides::default() };
        let mut d = DeviceKind::Ssd.build(&o);
        let xfer = 4096 * 1_000_000_000 / 520_000_000;
        assert_eq!(d.submit(0, 1, false), 50_000 + xfer);
        // One channel: the second request waits for the first.
        assert_eq!(d.submit(0, 1, false), 2 * (50_000 + xfer));
        assert_eq!(DeviceKind::Ssd.build(&DeviceOverrides::default()).latency_ns, 90_000);
    }

    #[test]
    fn zram_costs_cpu_only() {
        let mut d = DeviceKind::Zram.preset();
        assert_eq!(d.submit(10, 1, true), 10 + 3_000);
        assert_eq!(d.submit(10, 2, false), 10 + 2_000);
    }
}
