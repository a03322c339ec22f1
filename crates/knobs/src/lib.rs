//! One declaration per knob.
//!
//! Every setting of a run (a kernel behaviour flag, a `vm.*` sysctl, a device
//! or policy parameter, a CPU cost) is a [`Knob`] declared next to the config
//! struct of the code that reads it. A knob carries its key, help text, the
//! shape of its values, and its [`History`]: which kernel versions had it and,
//! for behaviour that changed between versions, which value each version had.
//! The engine gathers the declarations into one settings table
//! ([`Setting::lift`]); profiles, `reclaimsim settings`, its JSON and the docs'
//! tables are all derived from it, so adding a knob is one declaration plus
//! its use.
//!
//! This crate depends on nothing: the lowest layer that declares knobs
//! (`reclaim`) can use it.

mod parse;
mod version;

pub use parse::{format_fixed, format_size, parse_bool, parse_fixed, parse_size, parse_u64};
pub use version::Version;

/// Where a knob comes from, and how its value depends on the kernel version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum History {
    /// A parameter of the model (device timing, CPU cost, a simulator choice):
    /// no kernel has it, and profiles leave it alone.
    Model,
    /// A kernel tunable (sysctl, sysfs or cgroup file) present since `since`;
    /// its default is the same in every version, so profiles leave it alone.
    Tunable {
        /// First kernel with the file.
        since: Version,
    },
    /// A behaviour the kernel had from `since` through `until` (inclusive):
    /// profiles of those versions get `1`, every other profile `0`.
    Behaviour {
        /// First kernel with the behaviour (`None`: older than every profile).
        since: Option<Version>,
        /// Last kernel with it (`None`: still there).
        until: Option<Version>,
    },
    /// A behaviour with more than two forms: the value from each version on,
    /// oldest first (the first entry's version is the oldest form's first kernel).
    Forms(&'static [(Version, &'static str)]),
    /// A step of a posted patch series that was never released as such: off in
    /// every release; the series' profile turns it on.
    Patch {
        /// The series, as the profiles name it.
        series: &'static str,
    },
}

impl History {
    /// A behaviour from `major.minor` on.
    pub const fn since(major: u16, minor: u16) -> History {
        History::Behaviour { since: Some(Version::new(major, minor)), until: None }
    }

    /// A behaviour up to and including `major.minor`.
    pub const fn until(major: u16, minor: u16) -> History {
        History::Behaviour { since: None, until: Some(Version::new(major, minor)) }
    }

    /// The value a kernel of version `v` had, or `None` where the knob is not
    /// version-dependent (profiles keep the default).
    pub fn value_at(&self, v: Version) -> Option<&'static str> {
        match *self {
            History::Model | History::Tunable { .. } => None,
            History::Behaviour { since, until } => {
                let on = since.is_none_or(|s| s <= v) && until.is_none_or(|u| v <= u);
                Some(if on { "1" } else { "0" })
            }
            History::Forms(forms) => {
                Some(forms.iter().rev().find(|(from, _)| *from <= v).map_or(forms[0].1, |(_, value)| *value))
            }
            History::Patch { .. } => Some("0"),
        }
    }

    /// First and last kernel versions that had the knob or behaviour
    /// (`None`: not a kernel knob, older than every profile, or still present).
    pub fn span(&self) -> (Option<Version>, Option<Version>) {
        match *self {
            History::Model | History::Patch { .. } => (None, None),
            History::Tunable { since } => (Some(since), None),
            History::Behaviour { since, until } => (since, until),
            History::Forms(forms) => (forms.first().map(|f| f.0), None),
        }
    }

    /// A short label: `model`, `tunable`, `behaviour`, `forms` or `patch`.
    pub fn label(&self) -> &'static str {
        match self {
            History::Model => "model",
            History::Tunable { .. } => "tunable",
            History::Behaviour { .. } => "behaviour",
            History::Forms(_) => "forms",
            History::Patch { .. } => "patch",
        }
    }
}

/// The shape of a knob's values, for typed output (JSON) and help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `1`/`0` (also true/false, on/off, yes/no).
    Bool,
    /// A non-negative integer.
    Integer,
    /// A byte size with an optional K/M/G/T suffix.
    Size,
    /// A decimal number with a fixed number of digits after the point.
    Decimal,
    /// One of a fixed set of words.
    Choice,
    /// Anything else: a compound value (`ssd:4G`), or a number with a word for
    /// its special case (`auto`, `none`, `preset`).
    Text,
}

impl Kind {
    /// The label used by `reclaimsim settings --json`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Integer => "integer",
            Kind::Size => "size",
            Kind::Decimal => "decimal",
            Kind::Choice => "choice",
            Kind::Text => "text",
        }
    }
}

/// One knob of a config struct `T`: its key, meaning, history and accessors.
pub struct Knob<T: 'static> {
    /// The key without its group's prefix, with the kernel's name where there is one.
    pub key: &'static str,
    /// What it means, its unit and range.
    pub help: &'static str,
    /// The shape of its values.
    pub kind: Kind,
    /// Which kernels had it, and with which value.
    pub history: History,
    /// The current value, as `--set` accepts it.
    pub get: fn(&T) -> String,
    /// Parses and stores a value; the error says what was expected.
    pub set: fn(&mut T, &str) -> Result<(), String>,
}

/// A knob of some part `T` of a whole configuration `C`, reached through the
/// part's accessors: the engine's settings table is a list of these.
pub struct Setting<C: 'static> {
    /// The full key (`swap.latency_us`).
    pub key: &'static str,
    /// What it means, its unit and range (with the group's words in front).
    pub help: String,
    /// The shape of its values.
    pub kind: Kind,
    /// Which kernels had it, and with which value.
    pub history: History,
    get: Box<dyn Fn(&C) -> String + Send + Sync>,
    set: Box<Setter<C>>,
}

/// Stores a parsed value into the whole configuration.
type Setter<C> = dyn Fn(&mut C, &str) -> Result<(), String> + Send + Sync;

impl<C: 'static> Setting<C> {
    /// The knobs `knobs` of the part of `C` that `part` and `part_mut` reach;
    /// keys get `prefix` in front and help texts `help_prefix`.
    pub fn lift<T: 'static>(
        knobs: &'static [Knob<T>],
        prefix: &'static str,
        help_prefix: &'static str,
        part: fn(&C) -> &T,
        part_mut: fn(&mut C) -> &mut T,
    ) -> impl Iterator<Item = Setting<C>> {
        knobs.iter().map(move |k| Setting {
            // Leaked once per prefixed key: the table is built once per process.
            key: if prefix.is_empty() { k.key } else { Box::leak(format!("{prefix}{}", k.key).into_boxed_str()) },
            help: format!("{help_prefix}{}", k.help),
            kind: k.kind,
            history: k.history,
            get: Box::new(move |c| (k.get)(part(c))),
            set: Box::new(move |c, v| (k.set)(part_mut(c), v)),
        })
    }

    /// The current value in `c`.
    pub fn get(&self, c: &C) -> String {
        (self.get)(c)
    }

    /// Parses `value` into `c`; the error says what was expected.
    pub fn set(&self, c: &mut C, value: &str) -> Result<(), String> {
        (self.set)(c, value)
    }
}

/// A boolean knob over a `bool` field reached by `$($field).+` (a macro so the
/// accessors stay plain function pointers).
#[macro_export]
macro_rules! bool_knob {
    ($key:literal, $($field:ident).+, $history:expr, $help:literal) => {
        $crate::Knob {
            key: $key,
            help: $help,
            kind: $crate::Kind::Bool,
            history: $history,
            get: |c| (c.$($field).+ as u8).to_string(),
            set: |c, v| {
                c.$($field).+ = $crate::parse_bool(v)?;
                Ok(())
            },
        }
    };
}

/// A byte-size knob over a `u64` field (`4096`, `512K`, `4G`).
#[macro_export]
macro_rules! size_knob {
    ($key:literal, $($field:ident).+, $history:expr, $help:literal) => {
        $crate::Knob {
            key: $key,
            help: $help,
            kind: $crate::Kind::Size,
            history: $history,
            get: |c| $crate::format_size(c.$($field).+),
            set: |c, v| {
                c.$($field).+ = $crate::parse_size(v)?;
                Ok(())
            },
        }
    };
}

/// An integer knob over an unsigned field with an inclusive range (which must fit the field).
#[macro_export]
macro_rules! u64_knob {
    ($key:literal, $($field:ident).+, $lo:expr, $hi:expr, $history:expr, $help:literal) => {
        $crate::Knob {
            key: $key,
            help: $help,
            kind: $crate::Kind::Integer,
            history: $history,
            get: |c| c.$($field).+.to_string(),
            set: |c, v| {
                c.$($field).+ = $crate::parse_u64(v, $lo, $hi)? as _;
                Ok(())
            },
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaviour_is_on_within_its_versions() {
        let h = History::Behaviour { since: Some(Version::new(4, 20)), until: Some(Version::new(6, 0)) };
        assert_eq!(h.value_at(Version::new(4, 19)), Some("0"));
        assert_eq!(h.value_at(Version::new(4, 20)), Some("1"));
        assert_eq!(h.value_at(Version::new(6, 0)), Some("1"));
        assert_eq!(h.value_at(Version::new(6, 1)), Some("0"));
        assert_eq!(h.span(), (Some(Version::new(4, 20)), Some(Version::new(6, 0))));
        let old = History::Behaviour { since: None, until: Some(Version::new(3, 10)) };
        assert_eq!(old.value_at(Version::new(3, 9)), Some("1"));
        assert_eq!(old.value_at(Version::new(3, 11)), Some("0"));
    }

    #[test]
    fn forms_take_the_last_form_at_or_before_the_version() {
        const FORMS: &[(Version, &str)] =
            &[(Version::new(2, 6), "a"), (Version::new(5, 8), "b"), (Version::new(6, 2), "c")];
        let h = History::Forms(FORMS);
        assert_eq!(h.value_at(Version::new(5, 7)), Some("a"));
        assert_eq!(h.value_at(Version::new(5, 8)), Some("b"));
        assert_eq!(h.value_at(Version::new(6, 12)), Some("c"));
        // Older than every form: the oldest form.
        assert_eq!(h.value_at(Version::new(2, 4)), Some("a"));
    }

    #[test]
    fn tunables_and_model_parameters_do_not_depend_on_the_version() {
        assert_eq!(History::Model.value_at(Version::new(3, 9)), None);
        assert_eq!(History::Tunable { since: Version::new(4, 6) }.value_at(Version::new(3, 9)), None);
        assert_eq!(History::Patch { series: "x" }.value_at(Version::new(6, 1)), Some("0"));
    }

    struct Part {
        on: bool,
        n: u64,
    }
    struct Whole {
        part: Part,
    }
    const PART_KNOBS: &[Knob<Part>] =
        &[bool_knob!("on", on, History::Model, "a flag"), u64_knob!("n", n, 1, 9, History::Model, "a number")];

    #[test]
    fn lifted_settings_reach_the_part_under_their_prefix() {
        let table: Vec<Setting<Whole>> =
            Setting::lift(PART_KNOBS, "part.", "the part: ", |w: &Whole| &w.part, |w| &mut w.part).collect();
        let mut w = Whole { part: Part { on: false, n: 1 } };
        assert_eq!(table[0].key, "part.on");
        assert_eq!(table[1].help, "the part: a number");
        table[0].set(&mut w, "yes").unwrap();
        table[1].set(&mut w, "7").unwrap();
        assert!(w.part.on);
        assert_eq!(table[1].get(&w), "7");
        assert_eq!(table[1].set(&mut w, "10"), Err("an integer in 1..=9".into()));
    }
}
