//! The one place that names every reclaim policy.

use crate::config::ReclaimConfig;
use crate::policy::classic::Classic;
use crate::policy::mglru::{debugfs, Mglru};
use crate::policy::noded::NodedPolicy;
use crate::policy::{ControlSpec, ReclaimPolicy};
use knobs::Knob;

/// Builds the lruvec of node N of a machine of several nodes.
pub type NodeLruvec = fn(&ReclaimConfig, u8) -> Box<dyn ReclaimPolicy>;

/// A registered policy.
pub struct PolicyEntry {
    /// Name used in configuration (`lru=classic`).
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Builds the policy.
    pub build: fn(&ReclaimConfig) -> Box<dyn ReclaimPolicy>,
    /// Builds the lruvec of one node of a machine of several nodes; `None`
    /// for a policy whose machine-wide lists take one node's pages themselves.
    pub on_node: Option<NodeLruvec>,
    /// Its named controls ([`ReclaimPolicy::control`]).
    pub controls: &'static [ControlSpec],
    /// Its own parameters, as settings (over its part of [`ReclaimConfig`]).
    pub knobs: &'static [Knob<ReclaimConfig>],
}

/// All policies, alphabetically.
pub const POLICIES: &[PolicyEntry] = &[
    PolicyEntry {
        name: "classic",
        summary: "two-list active/inactive LRU per type with workingset detection (mm/vmscan.c without MGLRU)",
        build: |cfg| Box::new(Classic::new(cfg.clone())),
        // S-MM1: one set of lists; a node's reclaim skips the other nodes' pages.
        on_node: None,
        controls: &[],
        knobs: &[],
    },
    PolicyEntry {
        name: "clock",
        summary: "CLOCK (second chance), one list per type: a textbook baseline",
        build: |cfg| Box::new(crate::policy::clock::Clock::new(cfg.clone())),
        on_node: Some(|cfg, _| Box::new(crate::policy::clock::Clock::new(cfg.clone()))),
        controls: &[],
        knobs: &[],
    },
    PolicyEntry {
        name: "mglru",
        summary: "multi-generational LRU (CONFIG_LRU_GEN, v6.1; v6.14 rework with mglru_rework=1)",
        build: |cfg| Box::new(Mglru::new(cfg.clone())),
        on_node: Some(|cfg, node| Box::new(Mglru::on_node(cfg.clone(), node))),
        controls: debugfs::CONTROLS,
        knobs: crate::policy::mglru::config::KNOBS,
    },
];

impl PolicyEntry {
    /// The policy for a machine of `nodes` nodes: one lruvec per node when it
    /// keeps per-node state ([`NodedPolicy`]), else one for the machine.
    pub fn for_nodes(&self, cfg: &ReclaimConfig, nodes: usize) -> Box<dyn ReclaimPolicy> {
        match self.on_node {
            Some(on_node) if nodes > 1 => {
                Box::new(NodedPolicy::new((0..nodes as u8).map(|n| on_node(cfg, n)).collect()))
            }
            _ => (self.build)(cfg),
        }
    }
}

/// Looks a policy up by name.
pub fn find(name: &str) -> Option<&'static PolicyEntry> {
    POLICIES.iter().find(|p| p.name == name)
}

/// Every policy's controls, in registry order.
pub fn controls() -> impl Iterator<Item = &'static ControlSpec> {
    POLICIES.iter().flat_map(|p| p.controls)
}

/// Looks a control up by name among every policy's controls; the error lists them.
pub fn control(name: &str) -> Result<&'static ControlSpec, String> {
    match controls().find(|c| c.name == name) {
        Some(c) => Ok(c),
        None => Err(format!(
            "no policy has a control named `{name}` (controls: {})",
            controls().map(|c| c.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_found_by_unique_names_and_unknown_ones_are_listed() {
        let names: Vec<&str> = controls().map(|c| c.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "{names:?}");
        assert_eq!(control("lru_gen").unwrap().name, "lru_gen");
        assert!((control("lru_gen").unwrap().check)("* 0 0 1").unwrap_err().contains("expected `+`"));
        assert_eq!(control("nope").unwrap_err(), "no policy has a control named `nope` (controls: lru_gen)");
    }
}
