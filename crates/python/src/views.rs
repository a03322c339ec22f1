//! What a Python policy plug-in sees during a call: the machine's memory
//! (`mm`) and, in `shrink_node`/`age_node`, the reclaim invocation (`sc`).
//!
//! Both are handles valid only during the call that passed them: the adapter
//! attaches the engine's state before calling into Python and detaches it
//! afterwards; a handle kept and used later raises `RuntimeError`.
//!
//! Safety: a view holds a raw pointer to state the adapter has borrowed
//! mutably from the engine. The adapter does not touch that state while
//! Python runs, and detaches the pointer before it does again; the views are
//! `unsendable`, so Python can use them only on the thread running the engine.

use mm::{Mm, PageFlags, Pfn, Shadow, VmEvent, Watermark};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use reclaim::config::DirtyConfig;
use reclaim::pageout::{self, FolioHooks, FolioStat, PageoutEnv, References};
use reclaim::{rmap, throttle, Reclaimer, ScanControl};

fn detached() -> PyErr {
    PyRuntimeError::new_err("this handle is only valid during the plug-in call that received it")
}

/// The machine's memory, as a plug-in sees it.
#[pyclass(unsendable, module = "reclaimsim._core", name = "Memory")]
pub struct MmView {
    ptr: *mut Mm,
}

impl MmView {
    /// A detached view.
    pub fn new() -> MmView {
        MmView { ptr: std::ptr::null_mut() }
    }

    /// Points the view at `mm` (or detaches it with a null pointer); returns the previous pointer.
    pub fn attach(&mut self, mm: *mut Mm) -> *mut Mm {
        std::mem::replace(&mut self.ptr, mm)
    }

    // A view hands out the engine's state it points to (see the module comment).
    #[allow(clippy::mut_from_ref)]
    fn mm(&self) -> PyResult<&mut Mm> {
        // SAFETY: see the module comment; non-null only while attached.
        unsafe { self.ptr.as_mut() }.ok_or_else(detached)
    }

    #[allow(clippy::mut_from_ref)]
    fn checked(&self, pfn: Pfn) -> PyResult<&mut Mm> {
        let mm = self.mm()?;
        if pfn >= mm.frames.len() {
            return Err(PyValueError::new_err(format!(
                "pfn {pfn} out of range: the machine has {} page frames",
                mm.frames.len()
            )));
        }
        Ok(mm)
    }
}

#[pymethods]
impl MmView {
    /// Page frames of the machine.
    #[getter]
    fn nr_frames(&self) -> PyResult<u32> {
        Ok(self.mm()?.frames.len())
    }

    /// Free page frames now (`nr_free_pages`).
    fn nr_free(&self) -> PyResult<u64> {
        Ok(self.mm()?.nr_free())
    }

    /// Free swap slots (`nr_swap_free`); 0 without swap.
    fn swap_free(&self) -> PyResult<u32> {
        Ok(self.mm()?.swap.nr_free())
    }

    /// A watermark in pages: `"min"`, `"low"` or `"high"`.
    fn watermark(&self, name: &str) -> PyResult<u64> {
        let w = match name {
            "min" => Watermark::Min,
            "low" => Watermark::Low,
            "high" => Watermark::High,
            _ => return Err(PyValueError::new_err(format!("watermark `{name}`: expected min, low or high"))),
        };
        Ok(self.mm()?.zones[0].wmark(w))
    }

    /// True for an anonymous (swap-backed) page.
    fn is_anon(&self, pfn: Pfn) -> PyResult<bool> {
        Ok(self.checked(pfn)?.frames[pfn].is_anon())
    }

    /// True for a dirty page or one under writeback.
    fn is_dirty(&self, pfn: Pfn) -> PyResult<bool> {
        Ok(self.checked(pfn)?.frames[pfn].flags.has(PageFlags::DIRTY | PageFlags::WRITEBACK))
    }

    /// Adds `n` to the `/proc/vmstat` counter `name` (e.g. `pgrefill`).
    fn count(&self, name: &str, n: u64) -> PyResult<()> {
        let ev = VmEvent::ALL
            .iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown vmstat counter `{name}`")))?;
        self.mm()?.stat.count(*ev, n);
        Ok(())
    }
}

/// One reclaim invocation (`struct scan_control`), as a plug-in sees it.
#[pyclass(unsendable, module = "reclaimsim._core", name = "ScanControl")]
pub struct ScanView {
    mm: Py<MmView>,
    sc: *mut ScanControl,
    /// Set in `shrink_node`; `None` in `age_node`, where nothing may be reclaimed.
    env: Option<PageoutEnv>,
    /// Pages freed by `reclaim`, anon and file, since attached.
    pub freed: [u64; 2],
    shadow_hook: Option<Py<PyAny>>,
    dirty: DirtyConfig,
}

impl ScanView {
    /// A detached view over the memory view `mm`; `shadow_hook` is the
    /// plug-in's `eviction_shadow` method, if it has one; `dirty` the
    /// kernel's dirty-page handling (throttling after each batch).
    pub fn new(mm: Py<MmView>, shadow_hook: Option<Py<PyAny>>, dirty: DirtyConfig) -> ScanView {
        ScanView { mm, sc: std::ptr::null_mut(), env: None, freed: [0; 2], shadow_hook, dirty }
    }

    /// Points the view at `sc` (null to detach); `env` allows `reclaim`.
    pub fn attach(&mut self, sc: *mut ScanControl, env: Option<PageoutEnv>) {
        self.sc = sc;
        self.env = env;
        self.freed = [0; 2];
    }

    #[allow(clippy::mut_from_ref)]
    fn sc(&self) -> PyResult<&mut ScanControl> {
        // SAFETY: see the module comment; non-null only while attached.
        unsafe { self.sc.as_mut() }.ok_or_else(detached)
    }
}

/// The pipeline's policy steps for a plug-in: the plug-in already chose the
/// pages, so every page is reclaimed if the pipeline can; shadows come from
/// the plug-in's `eviction_shadow(pfn, anon)` if it has one.
struct PluginHooks<'a, 'py> {
    py: Python<'py>,
    shadow_hook: Option<&'a Py<PyAny>>,
    error: Option<PyErr>,
}

impl FolioHooks for PluginHooks<'_, '_> {
    fn check_references(&mut self, _mm: &mut Mm, _pfn: Pfn, _sc: &mut ScanControl) -> References {
        References::Reclaim
    }

    fn eviction_shadow(&mut self, mm: &Mm, pfn: Pfn) -> Option<Shadow> {
        let hook = self.shadow_hook?;
        if self.error.is_some() {
            return None;
        }
        let value =
            hook.call1(self.py, (pfn, mm.frames[pfn].is_anon())).and_then(|v| v.extract::<Option<u64>>(self.py));
        match value {
            Ok(Some(v)) if v <= Shadow::MAX => Some(Shadow(v)),
            Ok(Some(v)) => {
                self.error = Some(PyValueError::new_err(format!(
                    "eviction_shadow returned {v}, more than the largest shadow {}",
                    Shadow::MAX
                )));
                None
            }
            Ok(None) => None,
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

#[pymethods]
impl ScanView {
    /// `"kswapd"`, `"direct"` or `"memcg"` (limit reclaim).
    #[getter]
    fn reclaimer(&self) -> PyResult<&'static str> {
        Ok(match self.sc()?.reclaimer {
            Reclaimer::Kswapd => "kswapd",
            Reclaimer::Direct => "direct",
            Reclaimer::Memcg => "memcg",
        })
    }

    /// Scan priority, 12 (gentle) down to 0: a pass looks at `size >> priority` pages.
    #[getter]
    fn priority(&self) -> PyResult<i32> {
        Ok(self.sc()?.priority)
    }

    /// Pages this invocation tries to free.
    #[getter]
    fn nr_to_reclaim(&self) -> PyResult<u64> {
        Ok(self.sc()?.nr_to_reclaim)
    }

    /// Pages freed so far by this invocation.
    #[getter]
    fn nr_reclaimed(&self) -> PyResult<u64> {
        Ok(self.sc()?.nr_reclaimed)
    }

    /// Pages looked at so far by this invocation.
    #[getter]
    fn nr_scanned(&self) -> PyResult<u64> {
        Ok(self.sc()?.nr_scanned)
    }

    /// Reclaim has hit a throttle (dirty or writeback pages): stop and return;
    /// the engine makes the reclaimer wait, as the kernel does.
    #[getter]
    fn throttled(&self) -> PyResult<bool> {
        Ok(self.sc()?.throttle.is_some())
    }

    /// Anon pages may be swapped (swap is configured and not full).
    #[getter]
    fn may_swap(&self, py: Python<'_>) -> PyResult<bool> {
        let may = self.sc()?.may_swap;
        Ok(may && self.mm.borrow(py).mm()?.swap.nr_free() > 0)
    }

    /// `folio_referenced()`: mappings of `pfn` whose accessed bit was set; clears them.
    fn referenced(&self, py: Python<'_>, pfn: Pfn) -> PyResult<u32> {
        let view = self.mm.borrow(py);
        let mm = view.checked(pfn)?;
        let r = rmap::folio_referenced(mm, pfn);
        self.sc()?.work.rmap_ptes += r.ptes_checked as u64;
        Ok(r.young)
    }

    /// Runs `shrink_folio_list()` over `pfns`, pages the plug-in holds, chosen
    /// for eviction: unmaps, swaps out or drops each page that can go now.
    /// Returns the survivors (under writeback, dirty, or without a swap slot),
    /// which stay the plug-in's; every other page is freed.
    fn reclaim(&mut self, py: Python<'_>, pfns: Vec<Pfn>) -> PyResult<Vec<Pfn>> {
        let env = self.env.ok_or_else(|| PyRuntimeError::new_err("reclaim() is available in shrink_node only"))?;
        // The memory view is detached while the pipeline runs: eviction_shadow may not use it.
        let mm_ptr = self.mm.borrow_mut(py).attach(std::ptr::null_mut());
        // SAFETY: the pointer came from the attached view (checked non-null below).
        let Some(mm) = (unsafe { mm_ptr.as_mut() }) else { return Err(detached()) };
        let result = self.reclaim_in(py, mm, env, pfns);
        self.mm.borrow_mut(py).attach(mm_ptr);
        result
    }
}

impl ScanView {
    fn reclaim_in(&mut self, py: Python<'_>, mm: &mut Mm, env: PageoutEnv, pfns: Vec<Pfn>) -> PyResult<Vec<Pfn>> {
        // SAFETY: see the module comment; non-null only while attached.
        let sc = unsafe { self.sc.as_mut() }.ok_or_else(detached)?;
        for (i, &pfn) in pfns.iter().enumerate() {
            let bad = if pfn >= mm.frames.len() {
                Some("out of range")
            } else if !mm.frames[pfn].flags.has(PageFlags::LRU) {
                Some("not held by the plug-in (freed, never added, or given twice)")
            } else {
                None
            };
            if let Some(why) = bad {
                for &p in &pfns[..i] {
                    mm.frames[p].flags.set(PageFlags::LRU);
                }
                return Err(PyValueError::new_err(format!("reclaim(): pfn {pfn} {why}")));
            }
            mm.frames[pfn].flags.clear(PageFlags::LRU);
        }
        let anon_count = |mm: &Mm, list: &[Pfn]| list.iter().filter(|&&p| mm.frames[p].is_anon()).count() as u64;
        let scanned = [anon_count(mm, &pfns), pfns.len() as u64 - anon_count(mm, &pfns)];
        let mut list = pfns;
        let mut stat = FolioStat::default();
        let mut hooks = PluginHooks { py, shadow_hook: self.shadow_hook.as_ref(), error: None };
        let nr_reclaimed = pageout::shrink_folio_list(mm, &mut hooks, sc, env, &mut list, &mut stat);
        for &pfn in &list {
            let f = &mut mm.frames[pfn];
            f.flags.clear(PageFlags::ACTIVE);
            f.flags.set(PageFlags::LRU);
        }
        let kept_anon = anon_count(mm, &list);
        let freed = [scanned[0] - kept_anon, nr_reclaimed - (scanned[0] - kept_anon)];
        self.freed[0] += freed[0];
        self.freed[1] += freed[1];
        let n = scanned[0] + scanned[1];
        // Memcg limit reclaim counts neither the kswapd nor the direct events.
        if let Some(ev) = sc.reclaimer.pgscan() {
            mm.stat.count(ev, n);
        }
        mm.stat.count(VmEvent::PgscanAnon, scanned[0]);
        mm.stat.count(VmEvent::PgscanFile, scanned[1]);
        if let Some(ev) = sc.reclaimer.pgsteal() {
            mm.stat.count(ev, nr_reclaimed);
        }
        mm.stat.count(VmEvent::PgstealAnon, freed[0]);
        mm.stat.count(VmEvent::PgstealFile, freed[1]);
        sc.work.pages_scanned += n;
        sc.nr_reclaimed += nr_reclaimed;
        stat.add_to(&mut sc.nr);
        sc.nr.taken += n;
        sc.nr.file_taken += scanned[1];
        throttle::after_inactive_batch(mm, sc, &self.dirty, env, &stat, n);
        match hooks.error {
            Some(e) => Err(e),
            None => Ok(list),
        }
    }
}
