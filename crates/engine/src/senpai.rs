//! Senpai, the published proactive-reclaim controller (facebookincubator/
//! senpai, `senpai.py`): once a second it reads a group's memory pressure
//! (`memory.pressure`'s `some total`) and keeps the group just short of
//! stalling, so that the memory it settles at says how much the group needs.
//!
//! The pressure accrued since the last adjustment is compared with a
//! target per interval: above it, the controller backs off (raises the
//! limit by a share that grows with the square of the excess); at or below
//! it for `interval` ticks, it probes (lowers the limit by a share that
//! grows with the square of the shortfall). The defaults are the script's.
//!
//! Two ways to apply an adjustment ([`SenpaiMode`]): `high`, the script's,
//! moves `memory.high`; `reclaim` (a modelling choice, for kernels with
//! `memory.reclaim`) writes the probe's share of `memory.current` to
//! `memory.reclaim` and only resets the accrued pressure on a backoff.

/// How an adjustment reaches the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenpaiMode {
    /// Scale `memory.high` (the published script).
    High,
    /// Write `memory.current x share` to `memory.reclaim` on a probe.
    Reclaim,
}

/// The controller's settings (the script's command-line options).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenpaiConfig {
    /// How adjustments are applied.
    pub mode: SenpaiMode,
    /// `--interval`: ticks (seconds) between probes.
    pub interval: u32,
    /// `--pressure`: the target memory-stall time per interval, us.
    pub pressure_us: u64,
    /// `--max-probe`: the largest share a probe takes off.
    pub max_probe: f64,
    /// `--max-backoff`: the largest share a backoff adds.
    pub max_backoff: f64,
    /// `--coeff-probe`: the probe reaches `max_probe` at 1/coeff of the target.
    pub coeff_probe: f64,
    /// `--coeff-backoff`: the backoff reaches `max_backoff` at coeff x the target.
    pub coeff_backoff: f64,
    /// `--min-size`: the lowest limit, bytes.
    pub min_bytes: u64,
    /// `--max-size`: the highest limit, bytes.
    pub max_bytes: u64,
}

impl Default for SenpaiConfig {
    /// The script's defaults.
    fn default() -> Self {
        SenpaiConfig {
            mode: SenpaiMode::High,
            interval: 6,
            pressure_us: 10_000,
            max_probe: 0.01,
            max_backoff: 1.0,
            coeff_probe: 10.0,
            coeff_backoff: 20.0,
            min_bytes: 100 << 20,
            max_bytes: 100 << 30,
        }
    }
}

/// What one tick decided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SenpaiAction {
    /// Nothing this tick.
    Wait,
    /// Write this many bytes to `memory.high`.
    SetHigh(u64),
    /// Write this many bytes to `memory.reclaim`.
    Reclaim(u64),
}

/// The controller's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Senpai {
    /// Its settings.
    pub cfg: SenpaiConfig,
    last_total_us: Option<u64>,
    integral_us: u64,
    grace_ticks: u32,
    /// The `memory.high` it last wrote (mode `high`).
    limit: Option<u64>,
    /// The share of the last adjustment (+ backoff, - probe) and the pressure accrued then.
    pub last_adjust: Option<(f64, u64)>,
}

impl Senpai {
    /// A controller that starts at its first tick.
    pub fn new(cfg: SenpaiConfig) -> Senpai {
        Senpai { cfg, last_total_us: None, integral_us: 0, grace_ticks: cfg.interval, limit: None, last_adjust: None }
    }

    /// One tick, given the group's `some total` (us), `memory.current` and
    /// `memory.high` (bytes; `u64::MAX` for `max`).
    pub fn tick(&mut self, total_us: u64, current: u64, high: u64) -> SenpaiAction {
        let Some(last) = self.last_total_us.replace(total_us) else {
            // Start-up: the limit begins at memory.current.
            return self.set_limit(current, current, high);
        };
        self.integral_us += total_us - last;
        let (integral, target) = (self.integral_us as f64, self.cfg.pressure_us as f64);
        if self.integral_us > self.cfg.pressure_us {
            // Back off, harder the further over the target.
            let adj = ((integral / target) / self.cfg.coeff_backoff).powi(2);
            let adj = (adj * self.cfg.max_backoff).min(self.cfg.max_backoff);
            self.grace_ticks = self.cfg.interval - 1;
            return self.adjust(adj, current, high);
        }
        if self.grace_ticks > 0 {
            self.grace_ticks -= 1;
            return SenpaiAction::Wait;
        }
        // Probe, harder the further under the target.
        let adj = ((target / integral.max(1.0)) / self.cfg.coeff_probe).powi(2);
        let adj = (adj * self.cfg.max_probe).min(self.cfg.max_probe);
        self.grace_ticks = self.cfg.interval - 1;
        self.adjust(-adj, current, high)
    }

    fn adjust(&mut self, share: f64, current: u64, high: u64) -> SenpaiAction {
        self.last_adjust = Some((share, self.integral_us));
        self.integral_us = 0;
        match self.cfg.mode {
            SenpaiMode::High => {
                let x = high.min(self.cfg.max_bytes) as f64;
                self.set_limit((x + x * share) as u64, current, high)
            }
            SenpaiMode::Reclaim if share < 0.0 => SenpaiAction::Reclaim((current as f64 * -share) as u64),
            SenpaiMode::Reclaim => SenpaiAction::Wait,
        }
    }

    /// The script's `set_limit()`: a limit someone else changed restarts
    /// from `memory.current`; clamped to the sizes, page-aligned.
    fn set_limit(&mut self, want: u64, current: u64, high: u64) -> SenpaiAction {
        if self.cfg.mode == SenpaiMode::Reclaim {
            return SenpaiAction::Wait;
        }
        let want = if Some(high) != self.limit { current } else { want };
        let limit = want.clamp(self.cfg.min_bytes, self.cfg.max_bytes) & !4095;
        self.limit = Some(limit);
        SenpaiAction::SetHigh(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: SenpaiMode) -> SenpaiConfig {
        SenpaiConfig { mode, min_bytes: 1 << 20, ..SenpaiConfig::default() }
    }

    #[test]
    fn starts_at_current_probes_after_the_interval_and_backs_off_under_pressure() {
        let mut s = Senpai::new(cfg(SenpaiMode::High));
        let mb = 1u64 << 20;
        assert_eq!(s.tick(0, 64 * mb, u64::MAX), SenpaiAction::SetHigh(64 * mb));
        // Six quiet ticks of grace, then a full probe: no pressure at all
        // is far under 1/10 of the target, so the share is max_probe (1%).
        for _ in 0..6 {
            assert_eq!(s.tick(0, 64 * mb, 64 * mb), SenpaiAction::Wait);
        }
        let probed = ((64 * mb) as f64 * 0.99) as u64 & !4095;
        assert_eq!(s.tick(0, 64 * mb, 64 * mb), SenpaiAction::SetHigh(probed));
        // 40 ms of stalls against a 10 ms target: err 4, (4/20)^2 = 4% more.
        let backed = (probed as f64 * 1.04) as u64 & !4095;
        assert_eq!(s.tick(40_000, 63 * mb, probed), SenpaiAction::SetHigh(backed));
        // A limit changed behind its back restarts from memory.current.
        for _ in 0..5 {
            s.tick(40_000, 63 * mb, 50 * mb);
        }
        assert_eq!(s.tick(40_000, 63 * mb, 50 * mb), SenpaiAction::SetHigh(63 * mb));
    }

    #[test]
    fn reclaim_mode_writes_the_probe_share_of_current() {
        let mut s = Senpai::new(cfg(SenpaiMode::Reclaim));
        assert_eq!(s.tick(0, 100 << 20, u64::MAX), SenpaiAction::Wait);
        for _ in 0..6 {
            s.tick(0, 100 << 20, u64::MAX);
        }
        // 3 ms of stalls: err 10/3, (0.333)^2 = 11% of max_probe.
        let SenpaiAction::Reclaim(bytes) = s.tick(3_000, 100 << 20, u64::MAX) else { panic!("a probe") };
        let want = (100u64 << 20) as f64 * 0.01 * (10.0f64 / 3.0 / 10.0).powi(2);
        assert!((bytes as f64 - want).abs() < 2.0, "{bytes} vs {want}");
        // Pressure over the target only resets the integral.
        assert_eq!(s.tick(20_000, 100 << 20, u64::MAX), SenpaiAction::Wait);
        let (share, integral) = s.last_adjust.unwrap();
        assert_eq!(integral, 17_000);
        assert!((share - (1.7f64 / 20.0).powi(2)).abs() < 1e-12);
    }
}
