//! Which `/proc` file each reported gauge belongs to: most are `/proc/vmstat`
//! lines, but free swap is a `/proc/meminfo` value and the watermarks are
//! per-zone `/proc/zoneinfo` lines; the output keeps them apart.

/// A `/proc` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// `/proc/vmstat`.
    Vmstat,
    /// `/proc/meminfo` (free swap, in pages here).
    Meminfo,
    /// `/proc/zoneinfo` (the one zone's `min`/`low`/`high` watermarks, pages).
    Zoneinfo,
}

/// The section of a report counter by name.
pub fn section_of(name: &str) -> Section {
    match name {
        "nr_swap_free" => Section::Meminfo,
        n if n.starts_with("wmark_") => Section::Zoneinfo,
        _ => Section::Vmstat,
    }
}
