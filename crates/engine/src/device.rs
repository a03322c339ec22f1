//! Block and memory devices backing swap and files.
//!
//! A device is a FIFO queue with a fixed per-request latency and a transfer
//! bandwidth (issue #2's "simple latency model"; richer models come with swap
//! readahead). Rotational devices serialise whole requests (seek + transfer);
//! flash devices overlap latency and only serialise transfers. Synchronous
//! devices (zram, pmem) do the work on the caller's CPU with no queue.

use crate::Nanos;
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
    pub const ALL: [DeviceKind; 5] = [DeviceKind::Hdd, DeviceKind::Ssd, DeviceKind::Nvme, DeviceKind::Zram, DeviceKind::Pmem];

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

    /// Preset parameters. SIM-CHOICE: typical datasheet figures, to be refined
    /// with measured device models (issue #3):
    /// HDD 7200 rpm: ~8 ms seek + rotation, 150 MB/s; SATA SSD: ~100 us, 500 MB/s;
    /// NVMe: ~20 us, 3 GB/s; zram: ~3 us to compress, ~1 us to decompress a page
    /// (lzo-rle); pmem: ~1 us per page either way.
    pub fn preset(self) -> Device {
        let (latency_ns, bytes_per_sec, serial, sync, read_cpu_ns, write_cpu_ns) = match self {
            DeviceKind::Hdd => (8_000_000, 150_000_000, true, false, 0, 0),
            DeviceKind::Ssd => (100_000, 500_000_000, false, false, 0, 0),
            DeviceKind::Nvme => (20_000, 3_000_000_000, false, false, 0, 0),
            DeviceKind::Zram => (0, 0, false, true, 1_000, 3_000),
            DeviceKind::Pmem => (0, 0, false, true, 1_000, 1_000),
        };
        Device { kind: self, latency_ns, bytes_per_sec, serial, sync, read_cpu_ns, write_cpu_ns, busy_until: 0, next_pos: u64::MAX, inflight: VecDeque::new() }
    }
}

/// One device instance with its queue state.
#[derive(Clone, Debug)]
pub struct Device {
    /// Which kind.
    pub kind: DeviceKind,
    /// Per-request latency (seek, rotation, flash access), ns.
    pub latency_ns: Nanos,
    /// Transfer bandwidth, bytes per second (0 for synchronous devices).
    pub bytes_per_sec: u64,
    /// Requests are served one at a time, latency included (rotational).
    pub serial: bool,
    /// `SWP_SYNCHRONOUS_IO`: no queue, the caller's CPU does the work.
    pub sync: bool,
    /// CPU time per page read on a synchronous device, ns.
    pub read_cpu_ns: Nanos,
    /// CPU time per page written on a synchronous device, ns.
    pub write_cpu_ns: Nanos,
    busy_until: Nanos,
    /// Position (in pages) just after the last request, for sequential detection.
    next_pos: u64,
    /// Completion time and size of requests not yet complete, in completion order.
    inflight: VecDeque<(Nanos, u64)>,
}

impl Device {
    /// True for rotational devices (the kernel's `SWP_SOLIDSTATE` unset).
    pub fn rotational(&self) -> bool {
        self.kind == DeviceKind::Hdd
    }

    /// Submits a request of `pages` contiguous pages at `now`; returns when it completes.
    /// A synchronous device completes at once after its CPU cost.
    pub fn submit(&mut self, now: Nanos, pages: u64, write: bool) -> Nanos {
        self.submit_at(now, u64::MAX, pages, write)
    }

    /// Submits a request for pages `pos..pos + pages` of the device's address
    /// space. On a rotational device a request that starts where the previous
    /// one ended needs no seek. Simplification S-DV1: no request merging or
    /// reordering (FIFO); `pos == u64::MAX` means "somewhere else" (always seeks).
    pub fn submit_at(&mut self, now: Nanos, pos: u64, pages: u64, write: bool) -> Nanos {
        if self.sync {
            return now + pages * if write { self.write_cpu_ns } else { self.read_cpu_ns };
        }
        let transfer = pages * mm::PAGE_SIZE * 1_000_000_000 / self.bytes_per_sec;
        let start = now.max(self.busy_until);
        let sequential = self.serial && pos != u64::MAX && pos == self.next_pos;
        let done = start + if sequential { 0 } else { self.latency_ns } + transfer;
        self.busy_until = if self.serial { done } else { start + transfer };
        self.next_pos = pos.saturating_add(pages);
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
    /// Simplification S-DV2: no hysteresis latch; congestion ends at
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
        self.inflight.iter().find(|&&(_, n)| {
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
    fn hdd_serialises_requests() {
        let mut d = DeviceKind::Hdd.preset();
        let a = d.submit(0, 1, false);
        let b = d.submit(0, 1, false);
        let xfer = 4096 * 1_000_000_000 / 150_000_000;
        assert_eq!(a, 8_000_000 + xfer);
        assert_eq!(b, 2 * (8_000_000 + xfer));
    }

    #[test]
    fn ssd_overlaps_latency() {
        let mut d = DeviceKind::Ssd.preset();
        let a = d.submit(0, 1, false);
        let b = d.submit(0, 1, false);
        let xfer = 4096 * 1_000_000_000 / 500_000_000;
        assert_eq!(a, 100_000 + xfer);
        assert_eq!(b, 100_000 + 2 * xfer);
    }

    #[test]
    fn hdd_sequential_requests_skip_the_seek_and_congestion_clears_in_order() {
        let mut d = DeviceKind::Hdd.preset();
        let xfer = 4096 * 1_000_000_000 / 150_000_000;
        assert_eq!(d.submit_at(0, 100, 1, true), 8_000_000 + xfer);
        assert_eq!(d.submit_at(0, 101, 1, true), 8_000_000 + 2 * xfer);
        assert_eq!(d.submit_at(0, 500, 1, true), 2 * 8_000_000 + 3 * xfer);
        assert_eq!(d.queued(8_000_000 + xfer), 2);
        assert_eq!(d.pages_done_at(0, 2), Some(2 * 8_000_000 + 3 * xfer));
        for i in 0..CONGESTION_ON as u64 {
            d.submit_at(0, 1000 + 2 * i, 1, true);
        }
        assert!(d.congested(0));
        let q = d.queued(0);
        // The queue must lose q - CONGESTION_OFF + 1 requests to get below the off mark.
        let t = d.uncongested_at(0);
        assert!(!d.congested(t) && d.queued(t) == CONGESTION_OFF - 1, "{q} {}", d.queued(t));
    }

    #[test]
    fn zram_costs_cpu_only() {
        let mut d = DeviceKind::Zram.preset();
        assert_eq!(d.submit(10, 1, true), 10 + 3_000);
        assert_eq!(d.submit(10, 2, false), 10 + 2_000);
    }
}
