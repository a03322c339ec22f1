//! MGLRU behaviour: generation bounds under random operations, protection of
//! pages accessed since the last aging, type selection at the swappiness
//! extremes, insertion by origin, the debugfs interface.

use mm::{CacheEntry, FileId, Mm, Owner, PageFlags, Pte, RegionId, VmEvent};
use proptest::prelude::*;
use reclaim::direct::Untimed;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::mglru::gens::{folio_gen, gen_from_seq, ANON, FILE, MAX_NR_GENS, MIN_NR_GENS};
use reclaim::policy::mglru::Mglru;
use reclaim::policy::{AccessKind, ControlError, ControlOp, Origin, ReclaimPolicy};
use reclaim::{LruGenConfig, ReclaimConfig, Reclaimer, ScanControl};

const ENV: PageoutEnv = PageoutEnv::TODAY;

struct World {
    mm: Mm,
    p: Mglru,
    anon: RegionId,
    file: FileId,
    map: RegionId,
}

fn world(frames: u32, pages: u32, swappiness: u32, rework: bool) -> World {
    let mut mm = Mm::new(frames, 4 * pages);
    let anon = mm.add_anon_region(pages);
    let file = mm.add_file(pages);
    let map = mm.map_file(file, 0, pages);
    let cfg = ReclaimConfig {
        swappiness,
        lru_gen: LruGenConfig { rework_6_14: rework, ..LruGenConfig::default() },
        ..ReclaimConfig::default()
    };
    World { mm, p: Mglru::new(cfg), anon, file, map }
}

impl World {
    /// A write to the `lru_gen` control.
    fn write(&mut self, text: &str, sc: &mut ScanControl) -> Result<String, ControlError> {
        self.p.control(&mut self.mm, "lru_gen", ControlOp::Write(text), sc, ENV)
    }

    /// The `lru_gen` listing at `now_ns`.
    fn read_lru_gen(&mut self, now_ns: u64) -> String {
        let mut sc = ScanControl::new(Reclaimer::Direct, 0);
        sc.now_ns = now_ns;
        self.p.control(&mut self.mm, "lru_gen", ControlOp::Read, &mut sc, ENV).unwrap()
    }
    /// A fault on anon page `i`: first touch or swap-in (synchronous device: the slot is freed).
    fn fault_anon(&mut self, i: u32) -> bool {
        let pte = self.mm.regions[self.anon.0 as usize].ptes[i as usize];
        if pte.is_present() {
            self.mm.regions[self.anon.0 as usize].ptes[i as usize].touch(false);
            return true;
        }
        let Some(pfn) = self.mm.frames.alloc(Owner::anon(self.anon), i, PageFlags::SWAPBACKED) else { return false };
        let (origin, shadow) = match pte.swap_slot() {
            Some(slot) => {
                let shadow = self.mm.swap.slot(slot).cache.as_shadow();
                *self.mm.swap.cache_mut(slot) = CacheEntry::EMPTY;
                self.mm.swap_free(slot);
                (Origin::SwapIn, shadow)
            }
            None => (Origin::AnonFault, None),
        };
        self.mm.regions[self.anon.0 as usize].ptes[i as usize] = Pte::present(pfn, false);
        self.p.add_page(&mut self.mm, pfn, origin, shadow);
        true
    }

    /// A file access: through the mapping (`mapped`) or through `read()`.
    fn access_file(&mut self, i: u32, mapped: bool) -> bool {
        let slot = self.mm.files[self.file.0 as usize].cache[i as usize];
        let pfn = match slot.pfn() {
            Some(pfn) => {
                if !mapped {
                    self.p.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
                }
                pfn
            }
            None => {
                let Some(pfn) = self.mm.frames.alloc(Owner::file(self.file), i, 0) else { return false };
                self.mm.insert_cache_page(self.file, i, pfn);
                self.p.add_page(
                    &mut self.mm,
                    pfn,
                    if mapped { Origin::FileFault } else { Origin::FileRead },
                    slot.as_shadow(),
                );
                if !mapped {
                    self.p.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
                }
                pfn
            }
        };
        if mapped {
            let pte = &mut self.mm.regions[self.map.0 as usize].ptes[i as usize];
            if pte.pfn() == Some(pfn) {
                pte.touch(false);
            } else {
                *pte = Pte::present(pfn, false);
            }
        }
        true
    }

    fn sc(&self, who: Reclaimer) -> ScanControl {
        let mut sc = ScanControl::new(who, 32);
        sc.priority = 10;
        sc
    }

    fn clear_young(&mut self) {
        for r in [self.anon, self.map] {
            for pte in &mut self.mm.regions[r.0 as usize].ptes {
                pte.test_clear_young();
            }
        }
    }

    fn check(&self) {
        self.p.check_invariants(&self.mm);
        let g = self.p.lrugen();
        for ty in [ANON, FILE] {
            let n = g.nr_gens(ty);
            assert!((MIN_NR_GENS..=MAX_NR_GENS).contains(&n), "type {ty}: {n} generations");
        }
        let slab = self.mm.slab.reclaimable_pages();
        assert_eq!(self.p.lru_sizes().total() + self.mm.nr_free() + slab, self.mm.frames.len() as u64, "pages lost");
    }
}

#[derive(Clone, Debug)]
enum Op {
    Anon(u32),
    FileMapped(u32),
    FileRead(u32),
    ClearYoung,
    Age { force: bool },
    Evict { swappiness: u32, kswapd: bool },
    Shrink { kswapd: bool, priority: i32 },
    AgeNode,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u32..96).prop_map(Op::Anon),
        3 => (0u32..96).prop_map(Op::FileMapped),
        3 => (0u32..96).prop_map(Op::FileRead),
        1 => Just(Op::ClearYoung),
        1 => any::<bool>().prop_map(|force| Op::Age { force }),
        2 => (0u32..=200, any::<bool>()).prop_map(|(swappiness, kswapd)| Op::Evict { swappiness, kswapd }),
        1 => (any::<bool>(), 0i32..=12).prop_map(|(kswapd, priority)| Op::Shrink { kswapd, priority }),
        1 => Just(Op::AgeNode),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// MIN_NR_GENS <= max_seq - min_seq + 1 <= MAX_NR_GENS for both types, every
    /// page's generation within its type's window, sizes consistent, whatever happens.
    #[test]
    fn generation_bounds_never_violated(ops in prop::collection::vec(op(), 1..400), rework in any::<bool>(), swappiness in 0u32..=200) {
        let mut w = world(80, 96, swappiness, rework);
        for (i, op) in ops.iter().enumerate() {
            let now_ns = i as u64 * 1_000_000;
            match *op {
                Op::Anon(i) => { w.fault_anon(i); }
                Op::FileMapped(i) => { w.access_file(i, true); }
                Op::FileRead(i) => { w.access_file(i, false); }
                Op::ClearYoung => w.clear_young(),
                Op::Age { force } => {
                    let mut sc = w.sc(Reclaimer::Kswapd);
                    sc.now_ns = now_ns;
                    w.p.age(&mut w.mm, true, force, &mut sc);
                }
                Op::Evict { swappiness, kswapd } => {
                    let mut sc = w.sc(if kswapd { Reclaimer::Kswapd } else { Reclaimer::Direct });
                    w.p.evict(&mut w.mm, &mut sc, ENV, swappiness);
                }
                Op::Shrink { kswapd, priority } => {
                    let mut sc = w.sc(if kswapd { Reclaimer::Kswapd } else { Reclaimer::Direct });
                    sc.priority = priority;
                    sc.now_ns = now_ns;
                    w.p.shrink_node(&mut w.mm, &mut sc, ENV, &mut Untimed);
                }
                Op::AgeNode => {
                    let mut sc = w.sc(Reclaimer::Kswapd);
                    sc.now_ns = now_ns;
                    w.p.age_node(&mut w.mm, &mut sc);
                }
            }
            w.check();
        }
    }

    /// v6.1: a page whose accessed bit was set after the last aging survives
    /// every eviction from the oldest generations (it is activated or kept,
    /// never freed). Not v6.14: its two-step aging needs two looks, so a page
    /// used once that a neighbour's look-around marks is reclaimed when its
    /// own turn comes (see the exact v6.14 test below).
    #[test]
    fn page_accessed_since_last_aging_is_never_evicted(
        touched in prop::collection::btree_set(0u32..128, 1..40),
        swappiness in 1u32..=200,
        kswapd in any::<bool>(),
    ) {
        let mut w = world(256, 128, swappiness, false);
        for i in 0..128 {
            assert!(w.fault_anon(i));
        }
        // Nothing accessed: three agings push every page to the oldest generations.
        for _ in 0..3 {
            w.clear_young();
            let mut sc = w.sc(Reclaimer::Kswapd);
            w.p.age(&mut w.mm, true, true, &mut sc);
        }
        w.clear_young();
        for &i in &touched {
            w.mm.regions[w.anon.0 as usize].ptes[i as usize].touch(false);
        }
        // Evict until no progress, without aging.
        let mut sc = w.sc(if kswapd { Reclaimer::Kswapd } else { Reclaimer::Direct });
        let mut rounds = 0;
        while w.p.evict(&mut w.mm, &mut sc, ENV, swappiness) > 0 {
            rounds += 1;
            prop_assert!(rounds < 1000);
        }
        prop_assert!(w.mm.stat.get(VmEvent::PgstealAnon) > 0, "nothing was evicted");
        for &i in &touched {
            prop_assert!(w.mm.regions[w.anon.0 as usize].ptes[i as usize].is_present(), "accessed page {} was evicted", i);
        }
        w.check();
    }
}

/// Anon and file pages in every generation, so both types can be evicted.
fn mixed_world(swappiness: u32) -> World {
    let mut w = world(512, 128, swappiness, false);
    for i in 0..128 {
        w.fault_anon(i);
        w.access_file(i, true);
    }
    for _ in 0..3 {
        w.clear_young();
        let mut sc = w.sc(Reclaimer::Kswapd);
        w.p.age(&mut w.mm, true, true, &mut sc);
    }
    w.clear_young();
    w
}

#[test]
fn swappiness_0_evicts_only_file_and_200_only_anon() {
    let mut w = mixed_world(0);
    assert_eq!(w.p.type_to_scan(0), FILE);
    let mut sc = w.sc(Reclaimer::Direct);
    while w.p.evict(&mut w.mm, &mut sc, ENV, 0) > 0 {}
    assert_eq!(w.mm.stat.get(VmEvent::PgscanAnon), 0);
    assert!(w.mm.stat.get(VmEvent::PgstealFile) > 0);

    let mut w = mixed_world(200);
    assert_eq!(w.p.type_to_scan(200), ANON);
    let mut sc = w.sc(Reclaimer::Direct);
    // One batch: 64 anon pages isolated, file untouched.
    assert!(w.p.evict(&mut w.mm, &mut sc, ENV, 200) > 0);
    assert_eq!(w.mm.stat.get(VmEvent::PgscanFile), 0);
    assert_eq!(w.mm.stat.get(VmEvent::PgscanAnon), 64);
}

#[test]
fn insertion_by_origin() {
    let mut w = world(64, 16, 60, false);
    let max_seq = w.p.lrugen().max_seq;
    w.fault_anon(0);
    w.access_file(0, false);
    w.access_file(1, true);
    let gen = |w: &World, pfn| folio_gen(&w.mm.frames[pfn]).unwrap();
    let anon = w.mm.regions[w.anon.0 as usize].ptes[0].pfn().unwrap();
    let read = w.mm.files[w.file.0 as usize].cache[0].pfn().unwrap();
    let fault = w.mm.files[w.file.0 as usize].cache[1].pfn().unwrap();
    // Faulted pages start in the youngest generation; read() pages in the oldest.
    assert_eq!(gen(&w, anon), gen_from_seq(max_seq));
    assert_eq!(gen(&w, fault), gen_from_seq(max_seq));
    assert_eq!(gen(&w, read), gen_from_seq(w.p.lrugen().min_seq[FILE]));
    assert!(w.mm.frames[read].flags.has(PageFlags::REFERENCED), "read() marks the page accessed");
}

#[test]
fn aging_promotes_young_pages_and_retires_the_oldest_generation() {
    let mut w = world(64, 16, 60, false);
    for i in 0..4 {
        w.fault_anon(i);
    }
    // 4 generations (max 3, min 0): the aging must retire seq 0 for both types.
    let mut sc = w.sc(Reclaimer::Kswapd);
    sc.now_ns = 5_000_000;
    assert!(w.p.age(&mut w.mm, true, true, &mut sc));
    let g = w.p.lrugen();
    assert_eq!((g.max_seq, g.min_seq), (4, [1, 1]));
    // All four pages had young PTEs (from the fault): the walk moved them to the
    // walk's max_seq (3), before the new generation 4 opened; PTEs cleared.
    assert_eq!(g.nr_pages(gen_from_seq(3), ANON), 4);
    assert_eq!(g.nr_pages(gen_from_seq(4), ANON), 0);
    assert!(w.mm.regions[w.anon.0 as usize].ptes[..4].iter().all(|p| !p.young()));
    // force_scan visits both regions (2 mms, one PMD each); the file mapping's
    // PMD is not young (non-leaf shortcut), so only the anon table's 16 PTEs are read.
    assert_eq!((sc.work.walk_mms, sc.work.walk_pmds, sc.work.walk_ptes), (2, 2, 16));
    let dump = w.read_lru_gen(9_000_000);
    let lines: Vec<&str> = dump.lines().collect();
    assert_eq!(lines[0], "memcg     0 ");
    assert_eq!(lines[1], " node     0");
    // seq 3 born at 0, seq 4 at 5 ms: ages 9 and 4 ms at 9 ms.
    assert_eq!(lines[4], format!(" {:10} {:10} {:10}  {:10} ", 3, 9, 4, 0));
    assert_eq!(lines[5], format!(" {:10} {:10} {:10}  {:10} ", 4, 4, 0, 0));
}

/// A store through a shared file mapping leaves only the PTE dirty bit (S-WB3);
/// the aging's walk moves it into `PG_dirty` as `folio_mark_dirty()` does: the
/// page is counted in `nr_dirty` and queued for the flusher, once.
#[test]
fn walk_marks_a_dirty_shared_file_page_dirty_with_accounting() {
    let mut w = world(64, 16, 60, false);
    w.access_file(0, true);
    w.access_file(1, true);
    let pfn = |w: &World, i: u32| w.mm.regions[w.map.0 as usize].ptes[i as usize].pfn().unwrap();
    let (p0, p1) = (pfn(&w, 0), pfn(&w, 1));
    w.mm.regions[w.map.0 as usize].ptes[0].touch(true);
    let mut sc = w.sc(Reclaimer::Kswapd);
    assert!(w.p.age(&mut w.mm, true, true, &mut sc));
    assert!(w.mm.frames[p0].flags.has(PageFlags::DIRTY));
    assert!(!w.mm.frames[p1].flags.has(PageFlags::DIRTY));
    assert_eq!((w.mm.dirty.nr_dirty, w.mm.dirty.newly_dirtied.clone()), (1, vec![p0]));
    assert_eq!(w.mm.stat.get(VmEvent::NrDirtied), 1);
    // The PTE stays dirty (no write-protect cycle): a second walk finds the page
    // dirty already and counts nothing.
    w.mm.regions[w.map.0 as usize].ptes[0].touch(false);
    assert!(w.p.age(&mut w.mm, true, true, &mut sc));
    assert_eq!((w.mm.dirty.nr_dirty, w.mm.stat.get(VmEvent::NrDirtied)), (1, 1));
}

#[test]
fn debugfs_commands_check_their_sequence_numbers() {
    let mut w = world(64, 16, 60, false);
    let mut sc = w.sc(Reclaimer::Direct);
    assert_eq!(w.write("+ 0 0 9", &mut sc), Err(ControlError::Refused("EINVAL")));
    // Without force_scan and with 4 generations the aging would be pointless.
    assert_eq!(w.write("+ 0 0 3 60 0", &mut sc), Err(ControlError::Refused("ERANGE")));
    assert_eq!(w.write("+ 0 0 3", &mut sc), Ok(String::new()));
    assert_eq!(w.p.lrugen().max_seq, 4);
    // Eviction needs min_gen + 2 <= max_seq.
    assert_eq!(w.write("- 0 0 3", &mut sc), Err(ControlError::Refused("EINVAL")));
    assert_eq!(w.write("- 0 0 2", &mut sc), Ok(String::new()));
    assert_eq!(w.write("x 0 0 2", &mut sc), Err(ControlError::Refused("EINVAL")));
}

#[test]
fn min_ttl_protects_a_young_oldest_generation() {
    let mut w = world(64, 16, 60, false);
    w.p = Mglru::new(ReclaimConfig {
        lru_gen: LruGenConfig { min_ttl_ms: 1000, ..LruGenConfig::default() },
        ..ReclaimConfig::default()
    });
    for i in 0..8 {
        w.fault_anon(i);
    }
    // Everything is in seq 3: an eviction attempt skips the empty seqs 0 and 1,
    // leaving two generations, so the aging is needed.
    let mut sc = w.sc(Reclaimer::Kswapd);
    assert_eq!(w.p.evict(&mut w.mm, &mut sc, ENV, 60), 0);
    assert_eq!(w.p.lrugen().min_seq, [2, 2]);
    // The oldest file generation (seq 2, born at 0) is younger than min_ttl at
    // 500 ms: kswapd does not age (the kernel would invoke the OOM killer).
    sc.now_ns = 500_000_000;
    w.p.age_node(&mut w.mm, &mut sc);
    assert_eq!(w.p.lrugen().max_seq, 3);
    assert!(w.read_lru_gen(sc.now_ns).contains("min_ttl OOM invocations 1"));
    // At 1.5 s and the default priority it is old enough: the aging runs.
    sc.now_ns = 1_500_000_000;
    sc.priority = 12;
    w.p.age_node(&mut w.mm, &mut sc);
    assert_eq!(w.p.lrugen().max_seq, 4);
}

#[test]
fn direct_reclaim_that_ages_with_two_generations_left_still_evicts() {
    let mut w = world(64, 32, 200, false);
    for i in 0..32 {
        w.fault_anon(i);
    }
    // The pages sit in seq 3; an unforced aging with cold PTEs opens seq 4 and
    // an eviction attempt skips the empty seqs 0..2: two generations, 3 and 4.
    w.clear_young();
    let mut sc = w.sc(Reclaimer::Direct);
    assert!(w.p.age(&mut w.mm, true, false, &mut sc));
    assert_eq!(w.p.evict(&mut w.mm, &mut sc, ENV, 200), 0);
    assert_eq!((w.p.lrugen().max_seq, w.p.lrugen().min_seq), (4, [3, 3]));
    // v6.1 get_nr_to_scan: below the default priority a direct reclaimer ages
    // (seq 5) and then evicts from seq 3 until 32 >> 1 = 16 pages were scanned:
    // one batch takes all 32 (fewer than 64).
    let mut sc = w.sc(Reclaimer::Direct);
    sc.priority = 1;
    w.p.shrink_node(&mut w.mm, &mut sc, ENV, &mut Untimed);
    assert_eq!(w.p.lrugen().max_seq, 5);
    assert_eq!(w.mm.stat.get(VmEvent::PgscanDirect), 32);
    assert_eq!(w.mm.stat.get(VmEvent::PgstealDirect), 32);
    w.check();
}

/// One direct-reclaim eviction of 128 cold anon pages (one PTE table) in which
/// the last page of the isolated batch (63) and `young` listed neighbours
/// (64..) have young PTEs and two accesses through `read()` each (v6.1:
/// `PG_referenced` and `PG_workingset`). Returns the world and the
/// `pgactivate` count.
fn look_around_after_eviction(young: u32, v6_12: bool) -> (World, u64) {
    let mut w = world(256, 128, 60, false);
    w.p = Mglru::new(ReclaimConfig {
        swappiness: 60,
        lru_gen: LruGenConfig { v6_12, ..LruGenConfig::default() },
        ..ReclaimConfig::default()
    });
    for i in 0..128 {
        w.fault_anon(i);
    }
    // Two unforced agings with cold PTEs: the pages stay in seq 3, max_seq is 5.
    w.clear_young();
    let mut sc = w.sc(Reclaimer::Direct);
    assert!(w.p.age(&mut w.mm, true, false, &mut sc));
    assert!(w.p.age(&mut w.mm, true, false, &mut sc));
    assert_eq!(w.p.lrugen().max_seq, 5);
    // The first eviction attempt finds seq 2 empty and skips it.
    let mut sc = w.sc(Reclaimer::Direct);
    assert_eq!(w.p.evict(&mut w.mm, &mut sc, ENV, 60), 1);
    assert_eq!(w.p.lrugen().min_seq, [3, 3]);
    for i in (63..64).chain(64..64 + young) {
        w.fault_anon(i);
        let pfn = w.mm.regions[w.anon.0 as usize].ptes[i as usize].pfn().unwrap();
        w.p.on_access(&mut w.mm, pfn, AccessKind::MarkAccessed);
        w.p.on_access(&mut w.mm, pfn, AccessKind::MarkAccessed);
    }
    let before = w.mm.stat.get(VmEvent::Pgactivate);
    // The batch is pages 0..63 (the tail of seq 3). Page 63's rmap walk finds it
    // young and looks around PTEs 31..94: 0..62 are gone (reclaimed first),
    // 64.. are listed in seq 3.
    let mut sc = w.sc(Reclaimer::Direct);
    assert_eq!(w.p.evict(&mut w.mm, &mut sc, ENV, 60), 64);
    assert_eq!(w.mm.stat.get(VmEvent::PgstealDirect), 63);
    w.check();
    let activated = w.mm.stat.get(VmEvent::Pgactivate) - before;
    (w, activated)
}

#[test]
fn v6_1_look_around_activates_few_pages_and_updates_many_in_place() {
    let pfn = |w: &World, i: u32| w.mm.regions[w.anon.0 as usize].ptes[i as usize].pfn().unwrap();
    let linked_on = |w: &World, seq: u64, p| {
        w.p.lrugen().list(gen_from_seq(seq), ANON).iter(w.mm.frames.as_slice()).any(|x| x == p)
    };
    // 5 young neighbours (< PAGEVEC_SIZE): folio_activate() each: counted, moved
    // to the head of the youngest generation (seq 5) with their references kept.
    // Page 63 itself is activated by shrink_folio_list (the sixth count).
    let (w, activated) = look_around_after_eviction(5, false);
    assert_eq!(activated, 5 + 1);
    for i in 64..69 {
        let p = pfn(&w, i);
        assert_eq!(folio_gen(&w.mm.frames[p]), Some(gen_from_seq(5)));
        assert!(linked_on(&w, 5, p), "page {i} relinked on seq 5");
        assert_eq!(w.p.refs_model().refs(&w.mm.frames[p]), 1, "page {i} keeps its references");
        assert!(w.mm.frames[p].flags.has(PageFlags::REFERENCED));
    }
    // 20 young neighbours: folio_update_gen() in place: not counted, logically in
    // seq 5 but still linked on seq 3 (the eviction sorts them later), refs cleared.
    let (w, activated) = look_around_after_eviction(20, false);
    assert_eq!(activated, 1);
    for i in 64..84 {
        let p = pfn(&w, i);
        assert_eq!(folio_gen(&w.mm.frames[p]), Some(gen_from_seq(5)));
        assert!(linked_on(&w, 3, p), "page {i} stays linked on seq 3");
        let f = &w.mm.frames[p];
        assert_eq!(w.p.refs_model().refs(f), 0, "page {i} lost its references");
        assert!(!f.flags.has(PageFlags::REFERENCED));
    }
    // v6.3..v6.12 update every young neighbour in place, walk or not: only
    // the evicted page itself is activated (by shrink_folio_list).
    let (w, activated) = look_around_after_eviction(20, true);
    assert_eq!(activated, 1);
    for i in 64..84 {
        assert_eq!(folio_gen(&w.mm.frames[pfn(&w, i)]), Some(gen_from_seq(5)), "page {i}");
    }
}

/// v6.14's two-step aging in eviction (rework): the walk's first look only
/// marks a page (`PG_referenced`, in place). The eviction keeps an isolated
/// page found young on its first look (with its mark, unless it would go back
/// to the oldest generation), activates it on its second, and reclaims a
/// marked page not used since (v6.1's "folio_update_gen() tried to promote"
/// keep is gone). The look-around skips isolated pages, so each isolated
/// neighbour is judged by its own young PTE.
#[test]
fn v6_14_eviction_keeps_first_looks_activates_second_looks_and_reclaims_old_marks() {
    let mut w = world(64, 32, 200, true);
    let pfn = |w: &World, i: u32| w.mm.regions[w.anon.0 as usize].ptes[i as usize].pfn().unwrap();
    for i in 0..32 {
        w.fault_anon(i);
    }
    w.clear_young();
    let mut sc = w.sc(Reclaimer::Direct);
    assert!(w.p.age(&mut w.mm, true, false, &mut sc));
    // Pages 4..8 used: the next walk (forced: the Bloom filter holds no table
    // after a walk that found nothing young) marks them and clears their PTEs.
    for i in 4..8 {
        w.fault_anon(i);
    }
    assert!(w.p.age(&mut w.mm, true, true, &mut sc));
    // A fault adds a page at max_seq - 1 (v6.14: active, not in the working
    // set): the 32 pages are in seq 2, now the oldest (max_seq 5).
    assert_eq!((w.p.lrugen().max_seq, w.p.lrugen().min_seq), (5, [2, 2]));
    for i in 4..8 {
        let f = &w.mm.frames[pfn(&w, i)];
        assert!(f.flags.has(PageFlags::REFERENCED) && folio_gen(f) == Some(gen_from_seq(2)), "page {i}");
    }
    // Pages 0..4 used for the first time since, 4..6 for the second.
    for i in 0..6 {
        w.fault_anon(i);
    }
    let before = w.mm.stat.get(VmEvent::Pgactivate);
    let mut sc = w.sc(Reclaimer::Direct);
    // One batch of all 32 (tail first: page 0); seq 3 is empty, so min_seq
    // moves on to 4.
    w.p.evict(&mut w.mm, &mut sc, ENV, 200);
    assert_eq!(w.mm.stat.get(VmEvent::PgscanDirect), 32);
    // 0..4 kept, 4..6 activated, 6..32 reclaimed (6 and 7 carry the walk's mark).
    assert_eq!(w.mm.stat.get(VmEvent::PgstealDirect), 26);
    assert_eq!(w.mm.stat.get(VmEvent::Pgactivate) - before, 2);
    // Anon outside the swap cache goes back to max_seq - 1, which is now the
    // oldest generation (seqs 2 and 3 emptied by the isolation): the pages go
    // in active, their mark cleared (LRU_REFS_FLAGS).
    assert_eq!(w.p.lrugen().min_seq, [4, 4]);
    for i in 0..4 {
        let f = &w.mm.frames[pfn(&w, i)];
        assert!(!f.flags.has(PageFlags::REFERENCED) && folio_gen(f) == Some(gen_from_seq(4)), "page {i}");
    }
    for i in 4..6 {
        let f = &w.mm.frames[pfn(&w, i)];
        assert!(f.flags.has(PageFlags::WORKINGSET) && folio_gen(f) == Some(gen_from_seq(5)), "page {i}");
    }
    w.check();
}

/// v6.3+ (`mglru_6_12` here): kswapd's `lru_gen_age_node()` no longer ages;
/// kswapd ages on its eviction path like direct reclaim. With two
/// generations left (seq 2 and 3, the aging due), v6.1's aging pass opens
/// seq 4; v6.12's leaves max_seq at 3, and the pass below the default
/// priority ages there (seq 4) and leaves the lruvec without evicting.
#[test]
fn kswapd_ages_in_its_aging_pass_only_before_v6_3() {
    for v6_12 in [false, true] {
        let mut w = world(64, 16, 60, false);
        w.p = Mglru::new(ReclaimConfig {
            lru_gen: LruGenConfig { v6_12, ..LruGenConfig::default() },
            ..ReclaimConfig::default()
        });
        for i in 0..8 {
            w.fault_anon(i);
        }
        let mut sc = w.sc(Reclaimer::Kswapd);
        assert_eq!(w.p.evict(&mut w.mm, &mut sc, ENV, 60), 0);
        assert_eq!((w.p.lrugen().max_seq, w.p.lrugen().min_seq), (3, [2, 2]));
        w.p.age_node(&mut w.mm, &mut sc);
        assert_eq!(w.p.lrugen().max_seq, if v6_12 { 3 } else { 4 }, "v6_12 {v6_12}");
        if v6_12 {
            let mut sc = w.sc(Reclaimer::Kswapd);
            sc.priority = 6;
            w.p.shrink_node(&mut w.mm, &mut sc, ENV, &mut Untimed);
            assert_eq!((w.p.lrugen().max_seq, w.mm.stat.get(VmEvent::PgscanKswapd)), (4, 0));
        }
        w.check();
    }
}
