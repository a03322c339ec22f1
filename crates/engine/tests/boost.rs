//! The watermark boost end to end: an 8M machine (four pageblocks) with ten
//! unmovable pages reserved at boot, so block 0 is unmovable with 502 free
//! frames. One thread writes 1.5x memory: once the movable frames run out,
//! the next user page falls back, claims block 0 (502 free >= 256) and, from
//! v5.0, boosts the zone and wakes kswapd, whose boosted run wakes kcompactd.

use engine::{Access, RunReport};
use testkit::Script;

fn run(profile: &str, extra: &[(&str, &str)]) -> RunReport {
    let mut settings = vec![("memory", "8M"), ("memory.reserved", "40K"), ("swap", "ssd:16M")];
    settings.extend_from_slice(extra);
    let mut b = testkit::builder(profile, &settings);
    let span = 2048 * 3 / 2;
    let region = b.add_anon_region(span);
    let accesses: Vec<Access> = (0..span).map(|page| Access::Mem { region, page, write: true }).collect();
    b.add_thread("t".to_string(), Box::new(Script::new(accesses)));
    b.build().paranoid().run(&mut |_| {}).unwrap_or_else(|e| panic!("{profile} {extra:?}: {e}"))
}

fn vm(r: &RunReport) -> u64 {
    r.get("compact_daemon_wake").expect("counted")
}

#[test]
fn a_fallback_boosts_and_wakes_kswapd_from_v5_0() {
    let boosted = run("v6.12-classic", &[]);
    assert!(vm(&boosted) >= 1, "a boosted kswapd run");
    let off = run("v6.12-classic", &[("watermark_boost", "none")]);
    assert_eq!(vm(&off), 0);
    let factor0 = run("v6.12-classic", &[("vm.watermark_boost_factor", "0")]);
    assert_eq!(vm(&factor0), 0);
    assert_eq!((off.vmstat.clone(), off.virtual_ns), (factor0.vmstat.clone(), factor0.virtual_ns));
    assert_ne!(boosted.vmstat, off.vmstat, "the boost changes the run");
}
