use super::*;
use crate::test_util::steps;

fn pages_of(s: &[Step], region: RegionId) -> Vec<(u32, bool)> {
    s.iter()
        .filter_map(|s| match s {
            Step::Access(Access::Mem { region: r, page, write }) if *r == region => Some((*page, *write)),
            _ => None,
        })
        .collect()
}

#[test]
fn sixteen_k_values_take_memcacheds_17352_byte_class() {
    // memcached 1.4.15's classes at -n 48 -f 1.25: class 24 is 17352 bytes, 60 to a slab page.
    let l = SlabLayout::new(16384, 5242).unwrap();
    assert_eq!((l.chunk, l.per_slab), (17352, 60));
    // 48 header + 8 CAS + "5241\0" + " 0 16384\r\n" + 16384 + "\r\n".
    assert_eq!(l.item, 48 + 8 + 5 + 10 + 16386);
    assert_eq!(l.pages(), 5242u64.div_ceil(60) * 256);
    // Items sit at chunk offsets within 1 MB slab pages and span the pages their bytes cover.
    assert_eq!(l.span(0), (0, 4));
    assert_eq!(l.span(1), (4, 8));
    assert_eq!(l.span(60), (256, 260));
    assert_eq!(SlabLayout::new(100, 10).unwrap().chunk, 192);
    assert_eq!(SlabLayout::new(900_000, 1), None);
}

#[test]
fn page_items_fill_then_serve_with_service_time() {
    let r = RegionId(0);
    let s = steps(&mut MemcacheTest::new(r, Items::Pages(2), 3, (100, 7), None, SimRng::new(1, 0)));
    assert_eq!(pages_of(&s[..2], r), vec![(0, true), (1, true)]);
    assert_eq!(s.len(), 2 + 3 * 4 + 1);
    for op in s[2..14].chunks(4) {
        assert_eq!((op[0], op[1], op[3]), (Step::Think(7), Step::TxnBegin, Step::TxnEnd));
        assert!(matches!(op[2], Step::Access(Access::Mem { write: true, .. })));
    }
    let gets = steps(&mut MemcacheTest::new(r, Items::Pages(4), 50, (0, 0), None, SimRng::new(1, 0)));
    assert!(pages_of(&gets[4..], r).iter().all(|(_, w)| !w));
    assert_eq!(pages_of(&gets[4..], r).len(), 50);
}

#[test]
fn an_operation_touches_every_page_of_its_item_and_the_client_leaks() {
    let (r, leak) = (RegionId(0), RegionId(1));
    let layout = SlabLayout::new(16384, 120).unwrap();
    let ops = 100;
    let bytes = 96;
    let mut m =
        MemcacheTest::new(r, Items::Slabs(layout), ops, (33, 0), Some(Leak { region: leak, bytes }), SimRng::new(3, 0));
    let s = steps(&mut m);
    // The fill writes every item's pages once, in order (no leak: populate records no latencies).
    let spans: Vec<(u32, u32)> = (0..120).map(|i| layout.span(i)).collect();
    let filled: usize = spans.iter().map(|(a, b)| (b - a + 1) as usize).sum();
    assert!(spans.iter().all(|(a, b)| (4..=5).contains(&(b - a))), "16457 bytes span 5 or 6 pages");
    let fill: Vec<u32> = pages_of(&s, r).iter().take(filled).map(|p| p.0).collect();
    assert_eq!(fill[..5], [0, 1, 2, 3, 4]);
    assert_eq!(fill.last(), Some(&spans[119].1));
    assert!(pages_of(&s[..s.iter().position(|s| *s == Step::TxnBegin).unwrap()], leak).is_empty());
    let txns: Vec<&[Step]> = s
        .split(|s| *s == Step::TxnBegin)
        .skip(1)
        .map(|t| &t[..t.iter().position(|s| *s == Step::TxnEnd).unwrap()])
        .collect();
    assert_eq!(txns.len() as u64, ops);
    for t in &txns {
        let pages = pages_of(t, r);
        assert!(spans.iter().any(|(a, b)| (*a, *b) == (pages[0].0, pages[pages.len() - 1].0)), "{t:?}");
        assert!(pages.windows(2).all(|w| w[1].0 == w[0].0 + 1 && w[1].1 == w[0].1));
    }
    let sets = txns.iter().filter(|t| pages_of(t, r)[0].1).count();
    assert!((20..=46).contains(&sets), "{sets} sets of 100 at 33%");
    // 96 bytes an operation: a new leak page after every 4096 bytes, written in order.
    let leaked = pages_of(&s, leak);
    assert_eq!(leaked.len() as u64, ops * bytes / 4096);
    assert!(leaked.iter().enumerate().all(|(i, p)| *p == (i as u32, true)));
    assert!(MemcacheTest::leak_pages(ops, bytes) as usize >= leaked.len());
}
