//! Checks that keep a bad request from hurting the host: the simulator's own
//! memory for a machine (page frames, swap slots, a trace's declared pages)
//! against the memory this host has, and device parameters that cost time per
//! unit. Each check fails before anything large is allocated, naming the
//! limit; none changes a result (a run either fits and runs as before, or is
//! refused).

use crate::request::InputError;
use engine::Config;

/// Simulator bytes per page frame of the simulated machine (frame table + free-list slot).
pub const FRAME_BYTES: u64 = (std::mem::size_of::<mm::Frame>() + std::mem::size_of::<mm::Pfn>()) as u64;
/// Simulator bytes per swap slot (+2 on zram for the stored object's size).
pub const SLOT_BYTES: u64 = std::mem::size_of::<mm::SwapSlot>() as u64 + 2;
/// More simulator bytes per swap slot with zswap: the stored object's size, the LRU links, the referenced bit.
pub const ZSWAP_SLOT_BYTES: u64 = 2 + 8 + 1;
/// Simulator bytes per declared virtual page (PTE or page-cache slot).
pub const VPAGE_BYTES: u64 = 8;
/// The most parallel channels a device may have (the cost of a request is linear in them).
pub const MAX_CHANNELS: u64 = 1024;

/// Memory this host can give a run: `MemAvailable` from `/proc/meminfo` (else
/// `MemTotal`), bytes; `None` when it cannot be read (then no size check).
pub fn host_memory() -> Option<(u64, &'static str)> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

/// `MemAvailable` (or `MemTotal`) from a `/proc/meminfo` text, in bytes, with its name.
fn parse_meminfo(text: &str) -> Option<(u64, &'static str)> {
    let field = |name: &'static str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some((kb * 1024, name))
        })
    };
    field("MemAvailable").or_else(|| field("MemTotal"))
}

/// Bytes the simulator needs for `config`'s memory and swap, plus `vpages` declared virtual pages.
pub fn estimate(config: &Config, vpages: u64) -> u64 {
    let pages = config.memory_bytes / mm::PAGE_SIZE;
    let slots = config.swap_bytes / mm::PAGE_SIZE;
    let slot_bytes = SLOT_BYTES + if config.zswap.enabled { ZSWAP_SLOT_BYTES } else { 0 };
    pages
        .saturating_mul(FRAME_BYTES)
        .saturating_add(slots.saturating_mul(slot_bytes))
        .saturating_add(vpages.saturating_mul(VPAGE_BYTES))
}

/// Refuses a run whose simulator memory (`estimate`) exceeds `host` bytes; `what` names the input.
pub fn check_fits(config: &Config, vpages: u64, what: &str, host: Option<(u64, &str)>) -> Result<(), InputError> {
    let Some((avail, name)) = host else { return Ok(()) };
    let need = estimate(config, vpages);
    if need <= avail {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    Err(InputError(format!(
        "{what} needs about {:.1} GiB of simulator memory ({FRAME_BYTES} bytes per page frame of `memory`, \
         {SLOT_BYTES} per swap slot (+{ZSWAP_SLOT_BYTES} with zswap), {VPAGE_BYTES} per declared trace page), more than this host's {:.1} GiB \
         ({name} in /proc/meminfo); choose a smaller memory, swap or trace",
        gib(need),
        gib(avail)
    )))
}

/// Device parameters that the settings parser accepts but a run cannot use:
/// zero channels, or more than [`MAX_CHANNELS`].
pub fn check_devices(config: &Config) -> Result<(), InputError> {
    for (key, o) in [("swap.channels", &config.swap_params), ("fs.channels", &config.fs_params)] {
        match o.channels {
            Some(0) => return Err(InputError(format!("--set {key}=0: a device serves at least 1 request at a time"))),
            Some(n) if n > MAX_CHANNELS => {
                return Err(InputError(format!(
                    "--set {key}={n}: at most {MAX_CHANNELS} channels (each request's cost grows with the number)"
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_available_then_total() {
        let t = "MemTotal:       16000000 kB\nMemFree: 1 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(parse_meminfo(t), Some((8_000_000 * 1024, "MemAvailable")));
        assert_eq!(parse_meminfo("MemTotal: 4 kB\n"), Some((4096, "MemTotal")));
        assert_eq!(parse_meminfo("nothing\n"), None);
    }

    #[test]
    fn too_large_for_the_host_is_refused_naming_the_limit() {
        let mut c = Config::default();
        c.set("memory", "1T").unwrap();
        let e = check_fits(&c, 0, "memory=1T", Some((4 << 30, "MemAvailable"))).unwrap_err();
        assert!(e.0.contains("memory=1T needs about 7.0 GiB") && e.0.contains("4.0 GiB (MemAvailable"), "{}", e.0);
        assert!(check_fits(&c, 0, "memory=1T", Some((8 << 30, "MemAvailable"))).is_ok());
        // A trace's declared pages count too: 2^30 pages are 8 GiB.
        c.set("memory", "64M").unwrap();
        assert!(check_fits(&c, 1 << 30, "trace", Some((4 << 30, "MemTotal"))).is_err());
        assert!(check_fits(&c, 1 << 30, "trace", None).is_ok());
        // zswap's per-slot state counts when it is on.
        let swap = estimate(&c, 0);
        c.set("zswap.enabled", "1").unwrap();
        assert_eq!(estimate(&c, 0) - swap, (c.swap_bytes / mm::PAGE_SIZE) * ZSWAP_SLOT_BYTES);
    }

    #[test]
    fn channels_zero_and_huge_are_refused() {
        let mut c = Config::default();
        c.set("swap.channels", "0").unwrap();
        assert!(check_devices(&c).unwrap_err().0.contains("at least 1"));
        c.set("swap.channels", "18446744073709551615").unwrap();
        assert!(check_devices(&c).unwrap_err().0.contains("at most 1024"));
        c.set("swap.channels", "1024").unwrap();
        assert!(check_devices(&c).is_ok());
    }
}
