//! The sweep's progress line on stderr: runs done, running, failed.

use std::io::{IsTerminal, Write};

/// Counts shown on the progress line.
pub struct Progress {
    total: usize,
    /// Runs with a result (including those found done when the sweep started).
    pub done: usize,
    /// Runs in progress.
    pub running: usize,
    /// Runs that failed in this invocation.
    pub failed: usize,
    tty: bool,
}

impl Progress {
    /// A sweep of `total` runs of which `done` are already finished.
    pub fn new(total: usize, done: usize) -> Progress {
        Progress { total, done, running: 0, failed: 0, tty: std::io::stderr().is_terminal() }
    }

    /// Redraws the line on a terminal; elsewhere prints a line only when a run `finished`.
    pub fn show(&self, finished: bool) {
        let line =
            format!("sweep: {}/{} done, {} running, {} failed", self.done, self.total, self.running, self.failed);
        let mut err = std::io::stderr().lock();
        // Progress output is best effort: a closed stderr must not stop the sweep.
        let _ = if self.tty {
            write!(err, "\r{line}")
        } else if finished {
            writeln!(err, "{line}")
        } else {
            Ok(())
        };
    }

    /// Ends the line on a terminal.
    pub fn finish(&self) {
        if self.tty {
            eprintln!();
        }
    }
}
