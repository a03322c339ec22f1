"""Reclaim policies written in Python.

Subclass `Policy` and pass an instance to `reclaimsim.run(..., policy=...)`:
the simulator then calls its methods where it would call the kernel's LRU
code (the Rust trait `ReclaimPolicy`, crates/reclaim/src/policy/mod.rs).
Pages are page-frame numbers (ints). The policy keeps its own lists; the
core keeps the page accounting and runs the per-page reclaim pipeline
(unmap, swap-out or drop, writeback) on the pages the policy chooses.

Arguments the methods receive:
- `mm` (memory, valid during the call): `mm.is_anon(pfn)`, `mm.is_dirty(pfn)`,
  `mm.nr_free()`, `mm.swap_free()`, `mm.watermark("high")`, `mm.nr_frames`,
  `mm.count("pgrefill", n)` to add to a /proc/vmstat counter.
- `sc` (one reclaim invocation, valid during the call): `sc.nr_to_reclaim`,
  `sc.nr_reclaimed`, `sc.nr_scanned`, `sc.priority` (12..0: look at about
  `size >> priority` pages), `sc.reclaimer` ("kswapd"/"direct"),
  `sc.may_swap`, `sc.throttled` (stop: dirty or writeback pages made reclaim
  wait, as the kernel does), `sc.referenced(pfn)` (how many mappings accessed the page
  since the last look; clears their accessed bits) and, in `shrink_node`
  only, `sc.reclaim(pfns)`: evicts those pages and returns the ones that
  could not go yet (under writeback, or no swap slot), which stay yours.

Accesses to mapped pages (anon memory, file mappings) are not reported one
by one, as in the kernel: they set accessed bits that `sc.referenced` reads.
Only `read()`-style accesses to cached file pages call `mark_accessed`.
"""

from __future__ import annotations


class Policy:
    """Base class: every method is a no-op. A useful policy overrides at least
    `add_page` and `shrink_node`."""

    #: Name in the result document's `config.plugin`.
    name = "python"

    def add_page(self, mm, pfn: int, origin: str, shadow: int | None) -> None:
        """A page was instantiated: origin is "anon_fault", "swap_in",
        "file_read" (a `read()`) or "file_fault" (a file mapping); shadow is what `eviction_shadow` returned when this
        page was last evicted (a refault), else None."""

    def on_swap_cache_hit(self, mm, pfn: int) -> None:
        """A swap fault found the page still in the swap cache (a minor fault)."""

    def mark_accessed(self, mm, pfn: int) -> None:
        """A `read()` hit the cached file page."""

    def shrink_node(self, mm, sc) -> None:
        """Free about `sc.nr_to_reclaim` pages with `sc.reclaim(pfns)`."""

    def rotate_reclaimable(self, mm, pfn: int) -> None:
        """Writeback of a page reclaim wanted to free has ended: it can go now."""

    def age_node(self, mm, sc) -> None:
        """kswapd's per-pass aging hook (no reclaim here)."""

    def snapshot_refaults(self) -> None:
        """End of a reclaim cycle."""

    # Optional, not defined here (the core detects them):
    # def lru_sizes(self) -> dict: {"inactive_anon": n, "active_anon": n, "inactive_file": n, "active_file": n}
    #     Must count exactly the pages held; default: all held pages count as inactive.
    # def eviction_shadow(self, pfn: int, anon: bool) -> int | None:
    #     A value (< 2**62) left in the evicted page's slot and handed back to add_page on a refault.
