//! Block and memory devices backing swap and files.
//!
//! A device is a FIFO queue with a fixed per-request latency and a transfer
//! bandwidth (issue #2's "simple latency model"; richer models come with swap
//! readahead). Rotational devices serialise whole requests (seek + transfer);
//! flash devices overlap latency and only serialise transfers. Synchronous
//! devices (zram, pmem) do the work on the caller's CPU with no queue.

use crate::Nanos;

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
        Device { kind: self, latency_ns, bytes_per_sec, serial, sync, read_cpu_ns, write_cpu_ns, busy_until: 0 }
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
}

impl Device {
    /// True for rotational devices (the kernel's `SWP_SOLIDSTATE` unset).
    pub fn rotational(&self) -> bool {
        self.kind == DeviceKind::Hdd
    }

    /// Submits a request of `pages` contiguous pages at `now`; returns when it completes.
    /// A synchronous device completes at once after its CPU cost.
    pub fn submit(&mut self, now: Nanos, pages: u64, write: bool) -> Nanos {
        if self.sync {
            return now + pages * if write { self.write_cpu_ns } else { self.read_cpu_ns };
        }
        let transfer = pages * mm::PAGE_SIZE * 1_000_000_000 / self.bytes_per_sec;
        let start = now.max(self.busy_until);
        let done = start + self.latency_ns + transfer;
        self.busy_until = if self.serial { done } else { start + transfer };
        done
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
    fn zram_costs_cpu_only() {
        let mut d = DeviceKind::Zram.preset();
        assert_eq!(d.submit(10, 1, true), 10 + 3_000);
        assert_eq!(d.submit(10, 2, false), 10 + 2_000);
    }
}
