//! The per-CPU page lists' knobs (`pcp`, `vm.percpu_pagelist_fraction`,
//! `vm.percpu_pagelist_high_fraction`); the lists are in `mm::pcp`.

use knobs::{History, Kind, Knob, Version};
use mm::PcpForm;

/// The per-CPU page lists' generation and sysctls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcpKnobs {
    /// `pcp`: which generation of lists (or none).
    pub form: PcpForm,
    /// `vm.percpu_pagelist_fraction` (v2.6.16..v5.13): 0 = `high` is 6 batches.
    pub fraction: u64,
    /// `vm.percpu_pagelist_high_fraction` (v5.14+): 0 = `high` from the low watermark.
    pub high_fraction: u64,
}

impl Default for PcpKnobs {
    /// The lists of the default profile's kernel (v6.2: `lowmark`).
    fn default() -> Self {
        PcpKnobs { form: PcpForm::LowMark, fraction: 0, high_fraction: 0 }
    }
}

/// KERNEL: the kernel's lowest accepted fraction, `min_percpu_pagelist_fract`
/// (v5.10 kernel/sysctl.c) and `MIN_PERCPU_PAGELIST_HIGH_FRACTION` (v5.14+ mm/page_alloc.c).
pub const MIN_FRACTION: u64 = 8;

/// KERNEL: the generations of mm/page_alloc.c's per-CPU lists: 6 batches
/// since v2.6; v5.14 Mel Gorman's "mm/page_alloc: Calculate pcp->high based
/// on zone sizes and active CPUs" (and `free_factor`, `ZONE_RECLAIM_ACTIVE`);
/// v6.7 Huang Ying's "mm, pcp: PCP high auto-tuning".
const FORMS: &[(Version, &str)] =
    &[(Version::new(2, 6), "batch"), (Version::new(5, 14), "lowmark"), (Version::new(6, 7), "tuned")];

/// Reads a fraction: 0, or at least [`MIN_FRACTION`].
fn parse_fraction(v: &str) -> Result<u64, String> {
    match knobs::parse_u64(v, 0, u32::MAX as u64)? {
        f @ (0 | MIN_FRACTION..) => Ok(f),
        _ => Err(format!("0 (the kernel's default sizing) or an integer >= {MIN_FRACTION}")),
    }
}

/// The per-CPU page lists' knobs.
pub const KNOBS: &[Knob<PcpKnobs>] = &[
    Knob {
        key: "pcp",
        help: "per-CPU page lists (free pages outside NR_FREE_PAGES and the watermark checks): off; batch (before v5.14: high = 6 batches); lowmark (v5.14+: high = the zone's low watermark over the node's CPUs, capped at 4 batches while kswapd balances); tuned (v6.7+: high auto-tuned up to an eighth of the zone)",
        kind: Kind::Choice,
        history: History::Forms(FORMS),
        get: |c| c.form.name().into(),
        set: |c, v| {
            c.form = PcpForm::parse(v).ok_or("one of: off, batch, lowmark, tuned")?;
            Ok(())
        },
    },
    Knob {
        key: "vm.percpu_pagelist_fraction",
        help: "v2.6.16..v5.13 (pcp=batch): each CPU's list holds at most managed/N pages of its zone (batch high/4, at most 96); 0 = 6 batches; 0 or >= 8",
        kind: Kind::Integer,
        history: History::Tunable { since: Version::new(2, 6) },
        get: |c| c.fraction.to_string(),
        set: |c, v| {
            c.fraction = parse_fraction(v)?;
            Ok(())
        },
    },
    Knob {
        key: "vm.percpu_pagelist_high_fraction",
        help: "v5.14+ (pcp=lowmark or tuned): the lists of a node's CPUs hold at most managed/N pages of a zone (no auto-tuning); 0 = from the low watermark; 0 or >= 8",
        kind: Kind::Integer,
        history: History::Tunable { since: Version::new(5, 14) },
        get: |c| c.high_fraction.to_string(),
        set: |c, v| {
            c.high_fraction = parse_fraction(v)?;
            Ok(())
        },
    },
];

impl PcpKnobs {
    /// The lists' setup for a machine of `cpus` CPUs, or which knob does not fit the form.
    pub fn setup(&self, cpus: u32) -> Result<mm::PcpSetup, String> {
        let fraction = match self.form {
            PcpForm::Off | PcpForm::Batch if self.high_fraction != 0 => {
                return Err(format!(
                    "vm.percpu_pagelist_high_fraction={} needs pcp=lowmark or pcp=tuned (v5.14+), not pcp={}",
                    self.high_fraction,
                    self.form.name()
                ))
            }
            PcpForm::Off | PcpForm::LowMark | PcpForm::Tuned if self.fraction != 0 => {
                return Err(format!(
                    "vm.percpu_pagelist_fraction={} needs pcp=batch (the kernels before v5.14), not pcp={}",
                    self.fraction,
                    self.form.name()
                ))
            }
            PcpForm::Off | PcpForm::Batch => self.fraction,
            PcpForm::LowMark | PcpForm::Tuned => self.high_fraction,
        };
        Ok(mm::PcpSetup { form: self.form, fraction, cpus })
    }
}
