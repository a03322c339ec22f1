//! Helpers shared by the unit tests of the workload programs.

use engine::{Program, Step};

/// Runs `p` to its end and returns every step it took, `Done` included.
pub(crate) fn steps(p: &mut dyn Program) -> Vec<Step> {
    let mut v = Vec::new();
    loop {
        let s = p.next();
        v.push(s);
        if s == Step::Done {
            return v;
        }
    }
}
