//! Reclaim policies written in Python: an adapter implementing the engine's
//! `ReclaimPolicy` trait by calling a Python object's methods of the same
//! names (see `python/reclaimsim/policy.py` for the Python side):
//!
//! - `add_page(mm, pfn, origin, shadow)`, `on_swap_cache_hit(mm, pfn)`,
//!   `mark_accessed(mm, pfn)`, `rotate_reclaimable(mm, pfn)`,
//!   `snapshot_refaults()`;
//! - `shrink_node(mm, sc)` and `age_node(mm, sc)`, where `sc.reclaim(pfns)`
//!   runs the kernel's per-page pipeline (`shrink_folio_list`) on the pages
//!   the plug-in chose and `sc.referenced(pfn)` reads and clears accessed bits;
//! - optionally `lru_sizes()` (a dict of `inactive_anon`, `active_anon`,
//!   `inactive_file`, `active_file`; default: every page counts as inactive)
//!   and `eviction_shadow(pfn, anon)` (an int stored in the page's slot and
//!   given back to `add_page` on a refault; default: none).
//!
//! The adapter keeps `PG_lru` on the pages the plug-in holds and counts them
//! by type, so page accounting holds whatever the plug-in does.
//!
//! Simplification S-PY1: a plug-in's first exception stops every later call
//! into it; the run then ends (usually out of memory, nothing being
//! reclaimed) and the exception is raised to the caller.

use crate::views::{MmView, ScanView};
use mm::{Mm, PageFlags, Pfn, Shadow};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use reclaim::config::DirtyConfig;
use reclaim::direct::PassTime;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::{AccessKind, LruSizes, Origin, ReclaimPolicy};
use reclaim::{throttle, ReclaimConfig, ScanControl};
use std::cell::RefCell;
use std::rc::Rc;

/// The first exception a plug-in raised, shared with the caller of the run.
#[derive(Clone, Default)]
pub struct Failed(Rc<RefCell<Option<PyErr>>>);

impl Failed {
    /// Takes the exception, if any.
    pub fn take(&self) -> Option<PyErr> {
        self.0.borrow_mut().take()
    }

    fn is_set(&self) -> bool {
        self.0.borrow().is_some()
    }

    fn set(&self, e: PyErr) {
        self.0.borrow_mut().get_or_insert(e);
    }
}

/// A policy whose decisions are made by a Python object.
pub struct PyPolicy {
    obj: Py<PyAny>,
    label: String,
    has_sizes: bool,
    mm: Py<MmView>,
    sc: Py<ScanView>,
    /// Pages the plug-in holds: anon, file.
    resident: [u64; 2],
    dirty: DirtyConfig,
    failed: Failed,
}

fn origin_name(o: Origin) -> &'static str {
    match o {
        Origin::AnonFault => "anon_fault",
        Origin::SwapIn => "swap_in",
        Origin::FileRead => "file_read",
        Origin::FileFault => "file_fault",
    }
}

impl PyPolicy {
    /// Wraps `obj`; returns the adapter and the handle to its first exception.
    pub fn new(py: Python<'_>, obj: Py<PyAny>, cfg: &ReclaimConfig) -> PyResult<(PyPolicy, Failed)> {
        let o = obj.bind(py);
        let label = match o.getattr("name") {
            Ok(n) => n.extract::<String>()?,
            Err(_) => o.get_type().name()?.to_string(),
        };
        let shadow_hook =
            if o.hasattr("eviction_shadow")? { Some(o.getattr("eviction_shadow")?.unbind()) } else { None };
        let mm = Py::new(py, MmView::new())?;
        let sc = Py::new(py, ScanView::new(mm.clone_ref(py), shadow_hook, cfg.dirty))?;
        let failed = Failed::default();
        let has_sizes = o.hasattr("lru_sizes")?;
        Ok((
            PyPolicy { obj, label, has_sizes, mm, sc, resident: [0; 2], dirty: cfg.dirty, failed: failed.clone() },
            failed,
        ))
    }

    /// The plug-in's name: its `name` attribute, or its class name.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Calls `method(mm, [sc,] *extra)` with the memory view attached to `mm`
    /// (and the scan view to `sc`, if given); records an exception.
    fn call(
        &mut self,
        mm: &mut Mm,
        sc: Option<(&mut ScanControl, Option<PageoutEnv>)>,
        method: &str,
        extra: impl FnOnce(Python<'_>) -> PyResult<Vec<Py<PyAny>>>,
    ) {
        if self.failed.is_set() {
            return;
        }
        Python::attach(|py| {
            self.mm.borrow_mut(py).attach(mm);
            let mut args = vec![self.mm.clone_ref(py).into_any()];
            let scan = sc.is_some();
            if let Some((sc, env)) = sc {
                self.sc.borrow_mut(py).attach(sc, env);
                args.push(self.sc.clone_ref(py).into_any());
            }
            let result = extra(py).and_then(|more| {
                args.extend(more);
                self.obj.bind(py).call_method1(method, PyTuple::new(py, args)?)
            });
            if scan {
                let mut view = self.sc.borrow_mut(py);
                self.resident[0] -= view.freed[0];
                self.resident[1] -= view.freed[1];
                view.attach(std::ptr::null_mut(), None);
            }
            self.mm.borrow_mut(py).attach(std::ptr::null_mut());
            if let Err(e) = result {
                self.failed.set(e);
            }
        })
    }

    /// Calls a per-page method `method(mm, pfn)`.
    fn call_page(&mut self, mm: &mut Mm, method: &str, pfn: Pfn) {
        self.call(mm, None, method, |py| Ok(vec![pfn.into_pyobject(py)?.into_any().unbind()]));
    }

    fn sizes_from_plugin(&self) -> Option<LruSizes> {
        Python::attach(|py| {
            let read = || -> PyResult<LruSizes> {
                let d = self.obj.bind(py).call_method0("lru_sizes")?;
                let d = d.cast::<PyDict>()?;
                let get = |k: &str| -> PyResult<u64> { d.get_item(k)?.map_or(Ok(0), |v| v.extract()) };
                let sizes = LruSizes {
                    inactive_anon: get("inactive_anon")?,
                    active_anon: get("active_anon")?,
                    inactive_file: get("inactive_file")?,
                    active_file: get("active_file")?,
                    unevictable: 0,
                };
                let (anon, file) = (sizes.inactive_anon + sizes.active_anon, sizes.inactive_file + sizes.active_file);
                if [anon, file] != self.resident {
                    return Err(PyValueError::new_err(format!(
                        "lru_sizes() counts {anon} anon and {file} file pages, but the plug-in holds {} and {}",
                        self.resident[0], self.resident[1]
                    )));
                }
                Ok(sizes)
            };
            read().map_err(|e| self.failed.set(e)).ok()
        })
    }
}

impl ReclaimPolicy for PyPolicy {
    fn name(&self) -> &'static str {
        "python"
    }

    fn add_page(&mut self, mm: &mut Mm, pfn: Pfn, origin: Origin, shadow: Option<Shadow>) {
        let f = &mut mm.frames[pfn];
        f.flags.set(PageFlags::LRU);
        self.resident[!f.is_anon() as usize] += 1;
        self.call(mm, None, "add_page", |py| {
            Ok(vec![
                pfn.into_pyobject(py)?.into_any().unbind(),
                origin_name(origin).into_pyobject(py)?.into_any().unbind(),
                shadow.map(|s| s.0).into_pyobject(py)?.unbind(),
            ])
        });
    }

    fn on_access(&mut self, mm: &mut Mm, pfn: Pfn, via: AccessKind) {
        match via {
            AccessKind::MarkAccessed => self.call_page(mm, "mark_accessed", pfn),
            AccessKind::SwapCacheHit => self.call_page(mm, "on_swap_cache_hit", pfn),
            // The plug-in interface has no pre-v5.9 swap-in activation.
            AccessKind::SwapInListed => {}
        }
    }

    /// Time passes between passes only (the Python side runs a pass as one batch).
    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, _clock: &mut dyn PassTime) {
        sc.nr = Default::default();
        self.call(mm, Some((sc, Some(env))), "shrink_node", |_| Ok(Vec::new()));
        let reclaimable = self.resident[1] + if mm.swap.nr_free() > 0 { self.resident[0] } else { 0 };
        throttle::after_shrink_node(mm, sc, &self.dirty, reclaimable);
    }

    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        // Only pages the plug-in still holds; a page it already let go of is not its business.
        if mm.frames[pfn].flags.has(PageFlags::LRU) {
            self.call_page(mm, "rotate_reclaimable", pfn);
        }
    }

    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        self.call(mm, Some((sc, None)), "age_node", |_| Ok(Vec::new()));
    }

    fn snapshot_refaults(&mut self, _mm: &Mm) {
        if self.failed.is_set() {
            return;
        }
        Python::attach(|py| {
            if let Err(e) = self.obj.bind(py).call_method0("snapshot_refaults") {
                self.failed.set(e);
            }
        });
    }

    fn lru_sizes(&self) -> LruSizes {
        let own = LruSizes { inactive_anon: self.resident[0], inactive_file: self.resident[1], ..Default::default() };
        if !self.has_sizes || self.failed.is_set() {
            return own;
        }
        self.sizes_from_plugin().unwrap_or(own)
    }

    fn check_invariants(&self, mm: &Mm) {
        let held = mm.frames.used().filter(|(_, f)| f.flags.has(PageFlags::LRU)).count() as u64;
        assert_eq!(held, self.resident[0] + self.resident[1], "plug-in page accounting: {held} pages with PG_lru");
    }
}
