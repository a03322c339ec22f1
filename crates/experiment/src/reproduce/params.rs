//! Provenance: every machine and workload parameter of every reproduction,
//! with where its value comes from. `docs/reproductions/parameters.md` is
//! generated from these lists ([`markdown`]); a test keeps it current.

use super::ENTRIES;
use std::fmt::Write;

/// Where a parameter's value comes from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// The seed's own words (quoted).
    Seed(&'static str),
    /// A seed figure scaled down to our machine (the seed's words, and how it is scaled).
    Scaled(&'static str),
    /// The kernel's default (where it is set).
    Kernel(&'static str),
    /// mmtests' configuration default (which config).
    Mmtests(&'static str),
    /// Another published source (which).
    Published(&'static str),
    /// Computed from the seed's own figures, not from our results (which figures, and how).
    Derived(&'static str),
    /// A modelling choice the seed leaves open, not set after a result.
    Choice(&'static str),
    /// Set after a result came out wrong, rather than from a source (why).
    Fitted(&'static str),
}

impl Origin {
    /// Whether the value was fitted.
    pub fn is_fitted(&self) -> bool {
        matches!(self, Origin::Fitted(_))
    }

    fn text(&self) -> String {
        match self {
            Origin::Seed(q) => format!("seed: \"{q}\""),
            Origin::Scaled(q) => format!("seed, scaled: {q}"),
            Origin::Kernel(k) => format!("kernel default: {k}"),
            Origin::Mmtests(c) => format!("mmtests: {c}"),
            Origin::Published(p) => format!("published: {p}"),
            Origin::Derived(d) => format!("seed, derived: {d}"),
            Origin::Choice(c) => format!("choice: {c}"),
            Origin::Fitted(r) => format!("**fitted**: {r}"),
        }
    }
}

/// One parameter of a reproduction.
#[derive(Debug, Clone)]
pub struct Param {
    /// Which table(s) it applies to.
    pub table: &'static str,
    /// The setting or workload key (`memory`, `tabs:heap`).
    pub name: &'static str,
    /// Its value, full scale (and quick where it differs).
    pub value: String,
    /// Where the value comes from.
    pub origin: Origin,
}

impl Param {
    /// A parameter.
    pub fn new(table: &'static str, name: &'static str, value: impl ToString, origin: Origin) -> Param {
        Param { table, name, value: value.to_string(), origin }
    }
}

/// `docs/reproductions/parameters.md`: a table per seed of every parameter and its source.
pub fn markdown() -> String {
    let mut md = String::from(
        "# Reproduction parameters and their sources\n\n\
         Generated from the code (`reclaimsim reproduce params`). Every machine and workload parameter of every \
         reproduction table, with where its value comes from: the seed's words (quoted), a seed figure scaled to \
         our machine, a value computed from the seed's own figures, a kernel default, an mmtests configuration \
         default, another published source, a modelling choice the seed leaves open, or **fitted** (set after a \
         result, with the reason). Values are full scale; `quick` values follow where they differ.\n\n",
    );
    let mut fitted = 0;
    for e in ENTRIES {
        let params = (e.params)();
        let n = params.iter().filter(|p| p.origin.is_fitted()).count();
        fitted += n;
        let _ = writeln!(md, "## {}: {}\n\nfitted parameters: {n}\n", e.name, e.about);
        md += "| table | parameter | value | source |\n|---|---|---|---|\n";
        for p in params {
            let _ =
                writeln!(md, "| {} | `{}` | {} | {} |", p.table, p.name, p.value.replace('|', "\\|"), p.origin.text());
        }
        md += "\n";
    }
    let _ = writeln!(md, "Fitted parameters in all: {fitted}.");
    md
}

#[cfg(test)]
mod tests {
    use super::ENTRIES;

    #[test]
    fn no_reproduction_parameter_is_fitted() {
        for e in ENTRIES {
            let fitted: Vec<&str> = (e.params)().iter().filter(|p| p.origin.is_fitted()).map(|p| p.name).collect();
            assert!(
                fitted.is_empty(),
                "{}: fitted {fitted:?}: find a source or state a choice made before the result",
                e.name
            );
        }
    }

    #[test]
    fn the_committed_parameter_table_is_generated_from_the_code() {
        let committed = include_str!("../../../../docs/reproductions/parameters.md");
        assert!(
            committed == super::markdown(),
            "docs/reproductions/parameters.md is stale: run `reclaimsim reproduce params > docs/reproductions/parameters.md`"
        );
    }
}
