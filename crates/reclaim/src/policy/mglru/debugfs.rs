//! `/sys/kernel/debug/lru_gen`: the listing and the `+`/`-` commands.
//!
//! Listing (`lru_gen_seq_show`, non-full form): `memcg ID PATH`, ` node NID`,
//! then per generation from the oldest `min_seq` to `max_seq`: seq, age in ms,
//! and anon and file page counts. Commands (`lru_gen_seq_write`): pieces split on
//! `,` `;` or newline, each `+ MEMCG NODE MAX_GEN [SWAPPINESS [FORCE_SCAN]]`
//! (aging) or `- MEMCG NODE MIN_GEN [SWAPPINESS [NR_TO_RECLAIM]]` (eviction).
//! The memcg must be 0 (the lruvecs of a cgroup tree have no control); the
//! node names the lruvec of that node (0 on a machine of one node). On a
//! machine of several nodes the listing shows each node's lruvec in turn, and
//! a write runs on each lruvec the commands that name its node, node by node.

use super::gens::{gen_from_seq, ANON, FILE, MAX_LRU_BATCH, MAX_NR_GENS, MIN_NR_GENS};
use super::pid::MAX_SWAPPINESS;
use super::Mglru;
use crate::control::ScanControl;
use crate::pageout::PageoutEnv;
use crate::policy::ControlSpec;
use mm::Mm;
use std::fmt::Write;

/// The control's name: `/sys/kernel/debug/lru_gen`.
pub const LRU_GEN: &str = "lru_gen";

/// MGLRU's controls, for its registry entry.
pub const CONTROLS: &[ControlSpec] = &[ControlSpec {
    name: LRU_GEN,
    summary:
        "/sys/kernel/debug/lru_gen: reads list the generations; writes run `+` (aging) and `-` (eviction) commands",
    check: |text| parse(text).map(drop),
}];

/// One parsed command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// `+` (aging) or `-` (eviction).
    pub op: char,
    /// memcg id.
    pub memcg: u32,
    /// node id.
    pub node: u8,
    /// `max_gen` for `+`, `min_gen` for `-`.
    pub seq: u64,
    /// Swappiness, or the default (`get_swappiness`).
    pub swappiness: Option<u32>,
    /// `force_scan` for `+` (default 1), `nr_to_reclaim` for `-` (default unlimited).
    pub opt: Option<u64>,
}

/// Parses a write to `lru_gen`. Errors name the piece and the kernel's errno.
pub fn parse(text: &str) -> Result<Vec<Command>, String> {
    let mut out = Vec::new();
    for piece in text.split([',', ';', '\n']).map(str::trim).filter(|p| !p.is_empty()) {
        let bad = |why: &str| format!("lru_gen command `{piece}`: {why} (EINVAL)");
        let mut it = piece.split_whitespace();
        let op = it.next().unwrap_or_default();
        let op = match op {
            "+" => '+',
            "-" => '-',
            _ => return Err(bad("expected `+` (aging) or `-` (eviction)")),
        };
        let nums: Vec<&str> = it.collect();
        if nums.len() < 3 || nums.len() > 5 {
            return Err(bad("expected `+|- MEMCG NODE SEQ [SWAPPINESS [OPT]]`"));
        }
        let num = |s: &str| s.parse::<u64>().map_err(|_| bad(&format!("`{s}` is not an unsigned integer")));
        let memcg = num(nums[0])?;
        let node = num(nums[1])?;
        let seq = num(nums[2])?;
        let swappiness = nums.get(3).map(|s| num(s)).transpose()?;
        let opt = nums.get(4).map(|s| num(s)).transpose()?;
        if memcg != 0 {
            return Err(bad("memcg must be 0 (one memory group with lru_gen)"));
        }
        let Ok(node) = u8::try_from(node) else {
            return Err(bad(&format!("node {node} above 255")));
        };
        if swappiness.is_some_and(|s| s > MAX_SWAPPINESS as u64 + 1) {
            return Err(bad("swappiness above 201"));
        }
        out.push(Command { op, memcg: 0, node, seq, swappiness: swappiness.map(|s| s as u32), opt });
    }
    Ok(out)
}

impl Mglru {
    /// The listing at `now_ns`.
    pub(super) fn dump(&self, now_ns: u64) -> String {
        let g = &self.lrugen;
        let mut s = String::new();
        let node = self.node.unwrap_or(0);
        if node == 0 {
            let _ = writeln!(s, "memcg {:5} ", 0);
        }
        let _ = writeln!(s, " node {node:5}");
        for seq in g.min_seq[ANON].min(g.min_seq[FILE])..=g.max_seq {
            let gen = gen_from_seq(seq);
            let age_ms = now_ns.saturating_sub(g.timestamps[gen]) / 1_000_000;
            let _ = write!(s, " {seq:10} {age_ms:10}");
            for ty in [ANON, FILE] {
                let _ = write!(s, " {:10} ", g.nr_pages(gen, ty));
            }
            s.push('\n');
        }
        let st = &self.mm_stats;
        let _ = writeln!(
            s,
            "# walk of seq {}: leaf {} young {}, non-leaf {} found {} added {}; min_ttl OOM invocations {}",
            g.max_seq.saturating_sub(1),
            st.leaf_total,
            st.leaf_young,
            st.nonleaf_total,
            st.nonleaf_found,
            st.nonleaf_added,
            self.min_ttl_ooms
        );
        s
    }

    /// Runs the commands of one write (`run_cmd`); stops at the first error.
    pub(super) fn write(
        &mut self,
        mm: &mut Mm,
        text: &str,
        sc: &mut ScanControl,
        env: PageoutEnv,
    ) -> Result<(), &'static str> {
        let cmds = parse(text).map_err(|_| "EINVAL")?;
        let node = self.node.unwrap_or(0);
        for c in cmds {
            // A node the machine lacks; another node's command is its own lruvec's.
            if c.node as usize >= mm.nodes.len() {
                return Err("EINVAL");
            }
            if c.node != node {
                continue;
            }
            let swappiness = c.swappiness.unwrap_or_else(|| self.get_swappiness(mm, sc));
            if c.op == '+' {
                self.run_aging(mm, c.seq, swappiness != 0, c.opt.unwrap_or(u64::MAX) != 0, sc)?;
            } else {
                self.run_eviction(mm, c.seq, swappiness, c.opt.unwrap_or(u64::MAX), sc, env)?;
            }
        }
        Ok(())
    }

    /// `run_aging()`.
    fn run_aging(
        &mut self,
        mm: &mut Mm,
        seq: u64,
        can_swap: bool,
        force_scan: bool,
        sc: &mut ScanControl,
    ) -> Result<(), &'static str> {
        let max_seq = self.lrugen.max_seq;
        let first = if can_swap { ANON } else { FILE };
        if seq < max_seq {
            return Ok(());
        }
        if seq > max_seq {
            return Err("EINVAL");
        }
        if !force_scan && self.lrugen.min_seq[first] + MAX_NR_GENS - 1 <= max_seq {
            return Err("ERANGE");
        }
        self.try_to_inc_max_seq(mm, max_seq, can_swap, force_scan, sc.now_ns, &mut sc.work);
        Ok(())
    }

    /// `run_eviction()`.
    fn run_eviction(
        &mut self,
        mm: &mut Mm,
        seq: u64,
        swappiness: u32,
        nr_to_reclaim: u64,
        sc: &mut ScanControl,
        env: PageoutEnv,
    ) -> Result<(), &'static str> {
        if seq + MIN_NR_GENS > self.lrugen.max_seq {
            return Err("EINVAL");
        }
        sc.nr_reclaimed = 0;
        let first = if swappiness != 0 { ANON } else { FILE };
        // Bounded: each round either advances min_seq or returns.
        loop {
            if seq < self.lrugen.min_seq[first] || sc.nr_reclaimed >= nr_to_reclaim {
                return Ok(());
            }
            // v6.17 limits each batch to what is left of nr_to_reclaim.
            let budget =
                if self.cfg.lru_gen.proportional_protection { nr_to_reclaim - sc.nr_reclaimed } else { MAX_LRU_BATCH };
            if self.evict_folios(mm, sc, env, swappiness.min(MAX_SWAPPINESS), budget) == 0 {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pieces_and_rejects_bad_ones() {
        let c = parse("+ 0 0 7, - 0 0 5 0 100;\n").unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0], Command { op: '+', memcg: 0, node: 0, seq: 7, swappiness: None, opt: None });
        assert_eq!(c[1], Command { op: '-', memcg: 0, node: 0, seq: 5, swappiness: Some(0), opt: Some(100) });
        assert!(parse("* 0 0 1").unwrap_err().contains("expected `+`"));
        assert!(parse("+ 0 0").unwrap_err().contains("EINVAL"));
        assert!(parse("+ 1 0 3").unwrap_err().contains("memcg must be 0"));
        assert!(parse("+ 0 256 3").unwrap_err().contains("node 256 above 255"));
        assert_eq!(parse("- 0 1 3").unwrap()[0].node, 1);
        assert!(parse("- 0 0 3 202").unwrap_err().contains("above 201"));
        assert!(parse("+ 0 0 x").unwrap_err().contains("`x` is not"));
    }
}
