//! The slab state checked against the page caches (tests and `--paranoid`).

use super::{Dcache, CHUNK};
use crate::Mm;

impl Mm {
    /// Checks the slab counters against the page caches; O(pages), for tests.
    pub fn check_slab(&self) {
        let s = &self.slab;
        let (mut nodes, mut shadow_only, mut dentries, mut inodes) = (0, 0, 0, 0);
        let (mut d_unused, mut i_unused, mut i_busy) = (0, 0, 0);
        for (i, f) in s.files.iter().enumerate() {
            let cache = &self.files[i].cache;
            for (c, n) in f.nodes.iter().enumerate() {
                let slots = &cache[c * CHUNK as usize..((c + 1) * CHUNK as usize).min(cache.len())];
                let pages = slots.iter().filter(|e| e.pfn().is_some()).count();
                let shadows = slots.iter().filter(|e| e.as_shadow().is_some()).count();
                assert_eq!((n.pages as usize, n.shadows as usize), (pages, shadows), "file {i} node {c} counts");
                nodes += n.exists() as u64;
                shadow_only += n.shadow_only() as u64;
            }
            assert_eq!(f.nrpages, cache.iter().filter(|e| e.pfn().is_some()).count() as u64, "file {i} nrpages");
            match f.state {
                Dcache::None => {}
                Dcache::Dentry => {
                    (dentries, inodes) = (dentries + 1, inodes + 1);
                    d_unused += !f.pinned as u64;
                }
                Dcache::Inode => {
                    inodes += 1;
                    i_unused += 1;
                    i_busy += (f.nrpages > 0) as u64;
                }
            }
        }
        for (c, n) in s.swap_nodes.iter().enumerate() {
            let slots =
                (c as u32 * CHUNK..((c as u32 + 1) * CHUNK).min(self.swap.nr_slots())).map(|i| self.swap.slot(i));
            let (pages, shadows) = slots
                .fold((0, 0), |(p, h), e| (p + e.cache.pfn().is_some() as u8, h + e.cache.as_shadow().is_some() as u8));
            assert_eq!((n.pages, n.shadows), (pages, shadows), "swap node {c} counts");
            nodes += n.exists() as u64;
            shadow_only += n.shadow_only() as u64;
        }
        let swap_nodes = s.swap_nodes.iter().filter(|n| n.exists()).count() as u64;
        assert_eq!(s.swap_node_objects, swap_nodes, "swap-cache node objects");
        assert_eq!(s.node_lrus.iter().map(|l| l.1).sum::<u64>(), s.shadow_nodes, "per-group shadow nodes");
        assert_eq!((s.xa_node.objects, s.shadow_nodes), (nodes, shadow_only), "tree node counts");
        assert_eq!((s.dentry.objects, s.inode.objects), (dentries, inodes), "dentry/inode objects");
        assert_eq!((s.nr_dentry_unused, s.nr_inode_unused), (d_unused, i_unused), "unused counts");
        assert_eq!(s.nr_inode_unused_with_pages, i_busy, "unused inodes with pages");
    }
}
