//! Replay on the simulated machine: the trace's declarations become regions
//! and files, its references become accesses, counted exactly.

use engine::{Config, SimBuilder};
use experiment::replay::{install, Replay};
use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use trace::{Decl, Event, Header, Record, TraceReader, TraceWriter};

/// A `Write` whose bytes stay readable after it is moved into the replay.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn trace_bytes(truncate: usize) -> Vec<u8> {
    let h = Header::new(vec![Decl { name: "p".into(), pages: 10 }], vec![Decl { name: "f".into(), pages: 5 }]);
    let mut w = TraceWriter::new(Vec::new(), h, 3, "mem").unwrap();
    for p in 0..10 {
        w.write(&Record::at0(Event::Access { space: 0, page: p, write: p % 2 == 0 })).unwrap();
    }
    for e in [
        Event::Mmap { file: 0, page: 0, pages: 5 },
        Event::FileRead { file: 0, page: 1, pages: 4 },
        Event::FileWrite { file: 0, page: 0, pages: 2 },
        Event::Access { space: 0, page: 0, write: false },
        Event::Exit,
    ] {
        w.write(&Record::at0(e)).unwrap();
    }
    let mut b = w.finish().unwrap();
    b.truncate(b.len() - truncate);
    b
}

#[test]
fn replay_issues_every_reference_once_and_taps_the_page_ids() {
    let bytes = trace_bytes(0);
    let reader = TraceReader::open(std::io::Cursor::new(bytes), "mem").unwrap();
    let mut cfg = Config::default();
    cfg.set("memory", "1M").unwrap();
    let mut b = SimBuilder::new(cfg).unwrap();
    let inst = install(&mut b, reader.header()).unwrap();
    let tap = Shared::default();
    let (program, status) = Replay::new(reader, inst, Some(Box::new(tap.clone())));
    b.add_thread("trace", Box::new(program));
    let report = b.build().run(&mut |_| {}).unwrap();
    let st = status.borrow();
    assert!(st.error.is_none() && st.finished);
    // 10 anon first touches + 4 file pages read (1..5) + page 0 written (a whole-page
    // write allocates without reading), page 1 rewritten (cached), anon page 0 again
    // (mapped): 17 references, 15 allocations, 4 pages read from the device.
    assert_eq!(st.refs, 17);
    assert_eq!(report.accesses, 17);
    assert_eq!(report.get("pgalloc_normal"), Some(15));
    assert_eq!(report.get("pgfault"), Some(10));
    assert_eq!(report.get("pgpgin"), Some(4 * 4));
    let ids: Vec<u32> = tap.0.borrow().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let expected: Vec<u32> = (0..10).chain([11, 12, 13, 14, 10, 11, 0]).collect();
    assert_eq!(ids, expected);
}

#[test]
fn a_bad_record_mid_run_stops_the_replay_with_a_located_error() {
    let bytes = trace_bytes(5);
    let reader = TraceReader::open(std::io::Cursor::new(bytes), "cut.rtrace").unwrap();
    let mut b = SimBuilder::new(Config::default()).unwrap();
    let inst = install(&mut b, reader.header()).unwrap();
    let (program, status) = Replay::new(reader, inst, None);
    b.add_thread("trace", Box::new(program));
    b.build().run(&mut |_| {}).unwrap();
    let st = status.borrow();
    assert!(!st.finished);
    // Header: 24 bytes + two declarations of 7; 15 whole records of 12 bytes.
    assert_eq!(
        st.error.as_ref().unwrap().to_string(),
        "cut.rtrace: byte offset 218: truncated record 15: 7 of 12 bytes"
    );
}

#[test]
fn page_size_must_match_the_simulator() {
    let mut h = Header::new(vec![Decl { name: "p".into(), pages: 1 }], Vec::new());
    h.page_size = 8192;
    let mut b = SimBuilder::new(Config::default()).unwrap();
    assert_eq!(
        install(&mut b, &h).unwrap_err(),
        "trace pages are 8192 bytes but the simulator's are 4096; convert with --page-size 4096"
    );
}

#[test]
fn upcoming_names_the_accesses_next_returns_later() {
    use engine::{Access, Program, Step};
    let bytes = trace_bytes(0);
    let reader = TraceReader::open(std::io::Cursor::new(bytes), "mem").unwrap();
    let mut b = SimBuilder::new(Config::default()).unwrap();
    let inst = install(&mut b, reader.header()).unwrap();
    let (mut program, _) = Replay::new(reader, inst, None);
    assert!(program.has_upcoming());
    let first = program.next();
    let Step::Access(Access::Mem { region, page: 0, write: true }) = first else { panic!("{first:?}") };
    // The ten one-page accesses: each is named ahead of time, then returned.
    for p in 1..10 {
        for ahead in 0..10 - p as usize {
            let want = Access::Mem { region, page: p + ahead as u32, write: (p as usize + ahead).is_multiple_of(2) };
            assert_eq!(program.upcoming(ahead), Some(want), "page {p}, {ahead} ahead");
        }
        assert_eq!(program.next(), Step::Access(Access::Mem { region, page: p, write: p.is_multiple_of(2) }));
    }
    // Then the mmap record (no access), and the file read's first page.
    assert_eq!(program.upcoming(0), None);
    assert!(matches!(program.upcoming(1), Some(Access::FileRead { page: 1, .. })));
    // Without a tap the rest comes as with one: ranges page by page, then the end.
    let mut rest = Vec::new();
    loop {
        match program.next() {
            Step::Access(Access::FileRead { page, .. }) => rest.push(('r', page)),
            Step::Access(Access::FileWrite { page, .. }) => rest.push(('w', page)),
            Step::Access(Access::Mem { page, .. }) => rest.push(('m', page)),
            Step::Done => break,
            s => panic!("{s:?}"),
        }
    }
    assert_eq!(rest, [('r', 1), ('r', 2), ('r', 3), ('r', 4), ('w', 0), ('w', 1), ('m', 0)]);
}
