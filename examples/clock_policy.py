"""A CLOCK (second-chance) reclaim policy written in Python, compared with the
kernel's policies.

CLOCK keeps every page on one ring. The hand sweeps from the oldest page: a
page accessed since the hand last passed (an accessed bit in a page table, or
a `read()` hit) gets a second chance and goes to the back; the first page
without one is evicted. One ring for anon and file pages alike, no
active/inactive split, no refault detection: what the kernel's two-list LRU
adds on top of this idea is what the comparison shows.

    python/setup-venv.sh                       # once
    .venv/bin/python examples/clock_policy.py  # writes docs/img/plugin-*.png
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from pathlib import Path

import reclaimsim
from reclaimsim import plot

#: Pages handed to the pipeline at a time (the kernel's SWAP_CLUSTER_MAX).
BATCH = 32


class Clock(reclaimsim.Policy):
    """CLOCK: a ring of pages and a hand; referenced pages get a second chance."""

    name = "clock"

    def __init__(self):
        # pfn -> referenced by read(); iteration order is the ring, the hand at the front.
        self.ring: OrderedDict[int, bool] = OrderedDict()

    def add_page(self, mm, pfn, origin, shadow):
        self.ring[pfn] = False

    def mark_accessed(self, mm, pfn):
        if pfn in self.ring:
            self.ring[pfn] = True

    def rotate_reclaimable(self, mm, pfn):
        # Writeback done: the page is clean now, so the hand takes it next.
        self.ring.move_to_end(pfn, last=False)

    def shrink_node(self, mm, sc):
        # Look at about size >> priority pages, as the kernel does per list, and at least a batch.
        budget = max(BATCH, len(self.ring) >> sc.priority)
        while sc.nr_reclaimed < sc.nr_to_reclaim and budget > 0 and self.ring:
            batch = []
            while len(batch) < BATCH and budget > 0 and self.ring:
                pfn, read_ref = self.ring.popitem(last=False)
                budget -= 1
                mapped_ref = sc.referenced(pfn) > 0  # reads and clears the accessed bits
                if read_ref or mapped_ref or (not sc.may_swap and mm.is_anon(pfn)):
                    self.ring[pfn] = False  # second chance: to the back of the ring
                else:
                    batch.append(pfn)
            for pfn in sc.reclaim(batch):  # pages that could not go yet stay on the ring
                self.ring[pfn] = False


#: Workloads of the comparison: (label, workload specs), on a 64 MiB machine with SSD swap.
CASES = [
    ("hotcold (seed 004)", ["hotcold:rounds=6"]),
    ("ebizzy zipf 1.3", ["ebizzy:threads=2,alpha=1.3,size=1.5x,ops=400000"]),
    ("file zipf + anon", ["fileloop:size=1.5x,pattern=zipf,alpha=0.9,ops=300000", "anon:size=0.5x,pattern=uniform,ops=300000"]),
]
SETTINGS = {"memory": "64M", "swap": "ssd:256M"}
METRICS = ["ops_per_sec", "pswpin", "pgpgin", "pgscan_kswapd"]


def kernels() -> dict[str, dict]:
    """The kernel's policies to compare with: the classic LRU, and MGLRU where this build has it."""
    out = {"classic LRU": {"lru": "classic"}}
    try:
        reclaimsim.run("anon:size=0.1x,passes=1", settings={**SETTINGS, "lru": "mglru"}, timeseries_ms=None)
        out["MGLRU"] = {"lru": "mglru"}
    except reclaimsim.BadInput:
        pass
    return out


def run_cases() -> dict[str, dict[str, reclaimsim.Result]]:
    """Runs every case under each kernel policy and CLOCK: {case label: {policy: result}}."""
    results: dict[str, dict[str, reclaimsim.Result]] = {}
    for label, workloads in CASES:
        runs = {name: reclaimsim.run(workloads, settings={**SETTINGS, **extra}) for name, extra in kernels().items()}
        runs["CLOCK (Python)"] = reclaimsim.run(workloads, settings=SETTINGS, policy=Clock())
        results[label] = runs
    return results


def draw(results: dict[str, dict[str, reclaimsim.Result]], img: Path) -> None:
    """One bar-chart PNG per case, and the memory panels of the hot/cold runs."""
    for i, (label, workloads) in enumerate(CASES):
        plot.compare(results[label], METRICS, path=img / f"plugin-case{i + 1}.png", title=f"{label}: {' + '.join(workloads)} (64 MiB, SSD swap)")
    runs = results[CASES[0][0]]
    runs["CLOCK (Python)"].plot("memory", path=img / "plugin-clock-memory.png")
    runs["classic LRU"].plot("memory", path=img / "plugin-classic-memory.png")


def compare(img: Path) -> dict[str, dict[str, reclaimsim.Result]]:
    """Runs the comparison, prints it and writes its figures into `img`."""
    results = run_cases()
    for label, runs in results.items():
        for name, r in runs.items():
            row = "  ".join(f"{m}={plot.metric_value(r, m):,.0f}" for m in METRICS)
            print(f"{label:<20} {name:<16} {row}")
    draw(results, img)
    return results


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    compare(out)
