//! Refault bookkeeping in shadow entries (`lru_gen_eviction`, `lru_gen_refault`).
//!
//! At eviction the shadow records a token, `(min_seq << LRU_REFS_WIDTH) | (refs - 1)`,
//! and the workingset bit, packed with the common shadow format of
//! `workingset.rs`. At refault a token from a recent generation counts a
//! refault in its tier for the PID controller and may restore `PG_workingset`.
//! v6.1 calls a token recent if its seq is the current `min_seq` of the type;
//! v6.14 if it lies within `MAX_NR_GENS` of `max_seq`.

use super::gens::{set_refs_counter, type_of, ANON, LRU_REFS_WIDTH, MAX_NR_GENS};
use super::Mglru;
use crate::workingset::{pack_shadow, unpack_shadow, ShadowInfo, EVICTION_MASK};
use mm::{Frame, Mm, PageFlags, Pfn, Shadow, VmEvent};

const REFS_BITS: u64 = (1 << LRU_REFS_WIDTH) - 1;

impl Mglru {
    /// `lru_gen_eviction()`: counts the eviction in its tier and returns the shadow.
    pub(super) fn eviction_token(&mut self, f: &Frame) -> Shadow {
        let ty = type_of(f);
        let refs = self.refs.refs(f);
        let ws = f.flags.has(PageFlags::WORKINGSET);
        let tier = self.refs.tier_from_refs(refs, ws);
        self.pid.evicted[ty][tier] += 1;
        let token = (self.lrugen.min_seq[ty] << LRU_REFS_WIDTH) | (refs.saturating_sub(1) as u64 & REFS_BITS);
        // v6.1 packs "refs != 0" as the workingset bit; v6.14 packs PG_workingset.
        let workingset = if self.refs.rework { ws } else { refs != 0 };
        pack_shadow(ShadowInfo { eviction: token & EVICTION_MASK, memcg: 0, workingset })
    }

    /// `lru_gen_refault()`: a page comes back with its shadow.
    pub(super) fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow, in_fault: bool) {
        let info = unpack_shadow(shadow);
        let ty = type_of(&mm.frames[pfn]);
        let anon = ty == ANON;
        let refault = if anon { VmEvent::WorkingsetRefaultAnon } else { VmEvent::WorkingsetRefaultFile };
        // v6.1 counts recent refaults only; v6.12 (and later) every one.
        let count_all = self.refs.rework || self.cfg.lru_gen.v6_12;
        if count_all {
            mm.stat.count(refault, 1);
        }
        let seq_mask = EVICTION_MASK >> LRU_REFS_WIDTH;
        let token_seq = info.eviction >> LRU_REFS_WIDTH;
        let recent = if self.refs.rework {
            let max_seq = self.lrugen.max_seq & seq_mask;
            max_seq.abs_diff(token_seq) < MAX_NR_GENS
        } else {
            token_seq == self.lrugen.min_seq[ty] & seq_mask
        };
        if !recent {
            return;
        }
        if !count_all {
            mm.stat.count(refault, 1);
        }
        let f = &mut mm.frames[pfn];
        let activate = if anon { VmEvent::WorkingsetActivateAnon } else { VmEvent::WorkingsetActivateFile };
        let restore = if anon { VmEvent::WorkingsetRestoreAnon } else { VmEvent::WorkingsetRestoreFile };
        if self.refs.rework {
            let refs = (info.eviction & REFS_BITS) as u32 + 1;
            let tier = self.refs.tier_from_refs(refs, info.workingset);
            self.pid.refaulted[ty][tier] += 1;
            if in_fault {
                mm.stat.count(activate, 1);
            }
            if info.workingset {
                f.flags.set(PageFlags::WORKINGSET);
                mm.stat.count(restore, 1);
            } else {
                f.flags.set(PageFlags::REFERENCED);
                set_refs_counter(f, (refs - 1) as u8);
            }
        } else {
            let refs = (info.eviction & REFS_BITS) as u32 + info.workingset as u32;
            let tier = self.refs.tier_from_refs(refs, false);
            self.pid.refaulted[ty][tier] += 1;
            // v6.12 counts every recent refault as an activation; v6.1 counts
            // activations in sort_folio() instead.
            if self.cfg.lru_gen.v6_12 {
                mm.stat.count(activate, 1);
            }
            if in_fault || refs == 1 << LRU_REFS_WIDTH {
                // Sets the refs counter too (v6.12 clears it again when the page
                // is added active, see lru_gen_add_folio).
                self.refs.set_refaulted(f);
                mm.stat.count(restore, 1);
            }
        }
    }
}
