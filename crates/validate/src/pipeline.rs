//! `validate --jobs N`: the kernel side of each row (a boot, or its cached
//! report) is prepared in order on the calling thread, so that two guests
//! never run at once, while up to N simulator runs go on beside it, each on a
//! thread of its own. The results come back in the order of the rows, so
//! the output does not depend on N (each simulator run is deterministic and
//! shares nothing with the others).

use std::collections::VecDeque;
use std::thread::{Scope, ScopedJoinHandle};

/// Up to `jobs` pieces of work under way on scoped threads, taken back in the
/// order they were started.
pub struct Pipeline<'scope, 'env, R> {
    scope: &'scope Scope<'scope, 'env>,
    jobs: usize,
    pending: VecDeque<ScopedJoinHandle<'scope, R>>,
}

impl<'scope, 'env, R: Send + 'scope> Pipeline<'scope, 'env, R> {
    /// A pipeline of at most `jobs` (at least one) runs at once in `scope`.
    pub fn new(scope: &'scope Scope<'scope, 'env>, jobs: usize) -> Self {
        Pipeline { scope, jobs: jobs.max(1), pending: VecDeque::new() }
    }

    /// Starts `work` on a thread of its own. While `jobs` runs are under way it
    /// first waits for the oldest, whose result it returns.
    pub fn push(&mut self, work: impl FnOnce() -> R + Send + 'scope) -> Option<R> {
        let oldest = if self.pending.len() >= self.jobs { self.pending.pop_front().map(join) } else { None };
        self.pending.push_back(self.scope.spawn(work));
        oldest
    }

    /// Waits for the runs still under way; their results in the order they were started.
    pub fn finish(self) -> Vec<R> {
        self.pending.into_iter().map(join).collect()
    }
}

/// The thread's result; a panic in it goes on in the caller.
fn join<R>(handle: ScopedJoinHandle<'_, R>) -> R {
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Work items finish out of order (later ones sleep less); the results
    /// come back in order and equal the sequential ones for every N, and no
    /// more than N run at once.
    #[test]
    fn results_in_order_whatever_the_number_of_jobs() {
        let sequential: Vec<u64> = (0..24u64).map(|i| i * i + 7).collect();
        for jobs in [1, 2, 3, 8] {
            let running = AtomicUsize::new(0);
            let most = AtomicUsize::new(0);
            let mut got = Vec::new();
            std::thread::scope(|s| {
                let mut pipe = Pipeline::new(s, jobs);
                for i in 0..24u64 {
                    let (running, most) = (&running, &most);
                    let work = move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis((24 - i) % 5));
                        running.fetch_sub(1, Ordering::SeqCst);
                        i * i + 7
                    };
                    got.extend(pipe.push(work));
                }
                got.extend(pipe.finish());
            });
            assert_eq!(got, sequential, "jobs {jobs}");
            assert!(most.load(Ordering::SeqCst) <= jobs, "jobs {jobs}: {} at once", most.load(Ordering::SeqCst));
        }
    }
}
