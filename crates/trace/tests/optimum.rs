//! Belady's MIN and the LRU miss-ratio curve: exact counts on hand-checked
//! sequences, agreement with brute force and naive simulations, OPT <= LRU.

use proptest::prelude::*;
use std::collections::BTreeMap;
use trace::belady::min_faults_in_memory;
use trace::stack::StackDistances;

fn lru_curve(ids: &[u32], pages: u32, sizes: &[u64]) -> Vec<u64> {
    let mut s = StackDistances::new(pages);
    ids.iter().for_each(|&p| {
        s.reference(p);
    });
    s.lru_misses(sizes)
}

/// LRU by the book: a list, most recent first.
fn naive_lru(ids: &[u32], cap: usize) -> u64 {
    let mut list: Vec<u32> = Vec::new();
    let mut misses = 0;
    for &p in ids {
        match list.iter().position(|&q| q == p) {
            Some(i) => {
                list.remove(i);
            }
            None => {
                misses += 1;
                if list.len() == cap {
                    list.pop();
                }
            }
        }
        list.insert(0, p);
    }
    misses
}

/// MIN by the book: on a fault with memory full, scan ahead for each resident page's next use.
fn naive_min(ids: &[u32], cap: usize) -> u64 {
    let mut mem: Vec<u32> = Vec::new();
    let mut faults = 0;
    for (i, &p) in ids.iter().enumerate() {
        if mem.contains(&p) {
            continue;
        }
        faults += 1;
        if mem.len() == cap {
            let next = |q: u32| ids[i + 1..].iter().position(|&x| x == q).unwrap_or(usize::MAX);
            let victim = (0..mem.len()).max_by_key(|&k| (next(mem[k]), k)).unwrap();
            mem.swap_remove(victim);
        }
        mem.push(p);
    }
    faults
}

/// The true optimum by exhaustive search over every eviction choice.
fn brute_force_optimum(ids: &[u32], cap: u32) -> u64 {
    let mut states: BTreeMap<u32, u64> = BTreeMap::from([(0, 0)]);
    for &p in ids {
        let bit = 1u32 << p;
        let mut next: BTreeMap<u32, u64> = BTreeMap::new();
        let mut put = |s: u32, f: u64| {
            let e = next.entry(s).or_insert(u64::MAX);
            *e = (*e).min(f);
        };
        for (&s, &f) in &states {
            if s & bit != 0 {
                put(s, f);
            } else if s.count_ones() < cap {
                put(s | bit, f + 1);
            } else {
                for q in (0..32).filter(|q| s & (1 << q) != 0) {
                    put((s & !(1 << q)) | bit, f + 1);
                }
            }
        }
        states = next;
    }
    *states.values().min().unwrap()
}

#[test]
fn textbook_reference_string() {
    // The reference string of Silberschatz et al., Operating System Concepts, ch. 9:
    // with 3 frames OPT has 9 faults and LRU 12 (both counting the first touches).
    let s = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1];
    assert_eq!(min_faults_in_memory(&s, 8, &[3]), vec![9]);
    assert_eq!(lru_curve(&s, 8, &[3]), vec![12]);
    // Every size: one frame faults on every reference (no page repeats back to back);
    // five frames fault once beyond the 6 first touches (page 7 is evicted for page 4
    // and comes back at the 18th reference); six hold everything.
    let sizes = [1, 2, 3, 4, 5, 6];
    assert_eq!(min_faults_in_memory(&s, 8, &sizes), vec![20, 13, 9, 8, 7, 6]);
    for c in sizes {
        assert_eq!(min_faults_in_memory(&s, 8, &[c])[0], brute_force_optimum(&s, c as u32));
        assert_eq!(lru_curve(&s, 8, &[c])[0], naive_lru(&s, c as usize));
    }
}

#[test]
fn hand_checked_cyclic_scan() {
    // A loop over 4 pages, 3 times, in 3 frames: LRU misses every reference
    // (12). MIN: 4 first touches (page 3 evicts page 2, needed last), then a
    // fault on the 2nd pass's page 2 (evicting 1) and on the 3rd pass's page 1
    // (evicting 0, never needed again): 6.
    let s: Vec<u32> = (0..12).map(|i| i % 4).collect();
    assert_eq!(lru_curve(&s, 4, &[3]), vec![12]);
    assert_eq!(min_faults_in_memory(&s, 4, &[3]), vec![6]);
    assert_eq!(naive_min(&s, 3), 6);
}

#[test]
fn long_sequences_match_the_naive_models_through_compaction() {
    // 30,000 references over 700 pages: the stack-distance slot array compacts
    // many times and the MIN heap drops stale entries.
    let mut x = 12345u64;
    let ids: Vec<u32> = (0..30_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = (x >> 33) as u32;
            if r & 3 == 0 {
                r % 700
            } else {
                r % 60
            }
        })
        .collect();
    let sizes = [1u64, 10, 50, 100, 300, 700];
    let lru = lru_curve(&ids, 700, &sizes);
    let opt = min_faults_in_memory(&ids, 700, &sizes);
    for (i, &c) in sizes.iter().enumerate() {
        assert_eq!(lru[i], naive_lru(&ids, c as usize), "LRU at {c}");
        assert_eq!(opt[i], naive_min(&ids, c as usize), "MIN at {c}");
        assert!(opt[i] <= lru[i]);
    }
}

proptest! {
    #[test]
    fn min_is_the_true_optimum_on_tiny_sequences(ids in proptest::collection::vec(0u32..6, 0..14), cap in 1u32..5) {
        prop_assert_eq!(min_faults_in_memory(&ids, 6, &[cap as u64])[0], brute_force_optimum(&ids, cap));
    }

    #[test]
    fn opt_at_most_lru_and_both_curves_monotone(ids in proptest::collection::vec(0u32..64, 0..600)) {
        let sizes: Vec<u64> = (1..=70).collect();
        let lru = lru_curve(&ids, 64, &sizes);
        let opt = min_faults_in_memory(&ids, 64, &sizes);
        let distinct = ids.iter().collect::<std::collections::BTreeSet<_>>().len() as u64;
        for i in 0..sizes.len() {
            prop_assert!(opt[i] <= lru[i], "size {}: opt {} > lru {}", sizes[i], opt[i], lru[i]);
            prop_assert!(opt[i] >= distinct);
            if i > 0 {
                prop_assert!(lru[i] <= lru[i - 1] && opt[i] <= opt[i - 1]);
            }
        }
        prop_assert_eq!(lru[4], naive_lru(&ids, 5));
    }
}

#[test]
fn lirs_multi1_min_matches_the_naive_scan_ahead() {
    // The LIRS paper's multi1 trace (tests/fixtures): our one-pass MIN against
    // the scan-ahead definition at the sizes `run --trace` tests use.
    let gz =
        std::fs::File::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/lirs-multi1.trace.gz")).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz), &mut text).unwrap();
    let ids: Vec<u32> = text.lines().filter(|l| *l != "*").map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(ids.len(), 15_858);
    let sizes = [256u64, 1024];
    let opt = min_faults_in_memory(&ids, 10_000, &sizes);
    for (i, &c) in sizes.iter().enumerate() {
        assert_eq!(opt[i], naive_min(&ids, c as usize), "size {c}");
    }
    assert_eq!(opt[0], 7512, "the value crates/cli/tests/trace.rs expects at memory=1M");
}
