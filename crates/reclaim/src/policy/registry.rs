//! The one place that names every reclaim policy.

use crate::config::ReclaimConfig;
use crate::policy::classic::Classic;
use crate::policy::mglru::Mglru;
use crate::policy::ReclaimPolicy;

/// A registered policy.
pub struct PolicyEntry {
    /// Name used in configuration (`lru=classic`).
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Builds the policy.
    pub build: fn(&ReclaimConfig) -> Box<dyn ReclaimPolicy>,
}

/// All policies, alphabetically.
pub const POLICIES: &[PolicyEntry] = &[
    PolicyEntry {
        name: "classic",
        summary: "two-list active/inactive LRU per type with workingset detection (mm/vmscan.c without MGLRU)",
        build: |cfg| Box::new(Classic::new(cfg.clone())),
    },
    PolicyEntry {
        name: "mglru",
        summary: "multi-generational LRU (CONFIG_LRU_GEN, v6.1; v6.14 rework with mglru_rework=1)",
        build: |cfg| Box::new(Mglru::new(cfg.clone())),
    },
];

/// Looks a policy up by name.
pub fn find(name: &str) -> Option<&'static PolicyEntry> {
    POLICIES.iter().find(|p| p.name == name)
}
