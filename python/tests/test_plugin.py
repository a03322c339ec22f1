"""Policy plug-ins written in Python: the core calls them, runs the pipeline on
the pages they choose, keeps page accounting, and reports their errors."""

import importlib.util
from collections import deque
from pathlib import Path

import pytest

import reclaimsim

MACHINE = {"memory": "16M", "swap": "ssd:64M"}
FRAMES = 16 * 256


class Fifo(reclaimsim.Policy):
    """Evicts in arrival order, ignoring references."""

    name = "fifo"

    def __init__(self):
        self.queue = deque()
        self.adds = {}

    def add_page(self, mm, pfn, origin, shadow):
        self.queue.append(pfn)
        self.adds[origin] = self.adds.get(origin, 0) + 1

    def shrink_node(self, mm, sc):
        while sc.nr_reclaimed < sc.nr_to_reclaim and self.queue:
            batch = [self.queue.popleft() for _ in range(min(32, len(self.queue)))]
            self.queue.extend(sc.reclaim(batch))
            if sc.nr_scanned > 4 * FRAMES:
                break


def load_example():
    path = Path(__file__).resolve().parents[2] / "examples" / "clock_policy.py"
    spec = importlib.util.spec_from_file_location("clock_policy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fifo_misses_every_read_of_a_loop_larger_than_memory():
    # A cyclic scan over 1.5x memory under FIFO: each page is evicted before it comes round again.
    fifo = Fifo()
    r = reclaimsim.run("fileloop:size=1.5x,passes=3", settings=MACHINE, policy=fifo)
    ops = r.doc["threads"][0]["ops"]
    assert ops == 3 * int(1.5 * FRAMES)
    assert r.vmstat["pgpgin"] == 4 * ops  # every read went to the disk (KiB)
    assert fifo.adds == {"file_read": ops}
    assert r.config["plugin"] == "fifo"
    held = r.vmstat["nr_inactive_anon"] + r.vmstat["nr_inactive_file"] + r.vmstat["nr_active_anon"] + r.vmstat["nr_active_file"]
    # The file's dentry, inode and page-cache tree nodes are slab pages beside the lists;
    # free pages on per-CPU lists are outside nr_free_pages.
    pcp = sum(p["count"] for z in r.doc["zones"] for p in z["pagesets"])
    assert held + r.vmstat["nr_free_pages"] + pcp + r.vmstat["nr_slab_reclaimable"] == FRAMES
    assert len(fifo.queue) == held
    assert r.vmstat["pgsteal_kswapd"] + r.vmstat["pgsteal_direct"] == ops - len(fifo.queue)


def test_plugin_runs_are_deterministic_and_swap():
    a = reclaimsim.run("ebizzy:size=1.5x,ops=60000", settings=MACHINE, policy=Fifo(), timeseries_ms=5)
    b = reclaimsim.run("ebizzy:size=1.5x,ops=60000", settings=MACHINE, policy=Fifo(), timeseries_ms=5)
    a.doc["sim"].pop("wall_seconds"), b.doc["sim"].pop("wall_seconds")
    assert a.doc == b.doc
    assert a.vmstat["pswpout"] > 0 and a.vmstat["pswpin"] > 0


def test_shadows_come_back_on_refault():
    class Shadowing(Fifo):
        def __init__(self):
            super().__init__()
            self.given, self.back = set(), []

        def eviction_shadow(self, pfn, anon):
            self.given.add(len(self.given) + 1)
            return len(self.given)

        def add_page(self, mm, pfn, origin, shadow):
            super().add_page(mm, pfn, origin, shadow)
            if origin == "swap_in":
                self.back.append(shadow)

    p = Shadowing()
    r = reclaimsim.run("ebizzy:size=1.5x,ops=60000", settings=MACHINE, policy=p)
    assert len(p.back) == r.vmstat["pswpin"] > 0  # every page read from swap (readahead included)
    assert all(s in p.given for s in p.back)


def test_clock_example_keeps_a_hot_set_better_than_fifo():
    clock = load_example().Clock
    work = "ebizzy:size=1.5x,alpha=1.3,ops=200000"
    with_clock = reclaimsim.run(work, settings=MACHINE, policy=clock())
    with_fifo = reclaimsim.run(work, settings=MACHINE, policy=Fifo())
    assert with_clock.config["plugin"] == "clock"
    assert with_clock.vmstat["pswpin"] < 0.8 * with_fifo.vmstat["pswpin"]


def test_plugin_exceptions_reach_the_caller():
    class Broken(Fifo):
        def shrink_node(self, mm, sc):
            raise ZeroDivisionError("policy bug")

    with pytest.raises(ZeroDivisionError, match="policy bug"):
        reclaimsim.run("anon:size=1.5x,passes=1", settings=MACHINE, policy=Broken())


def test_reclaim_rejects_pages_the_plugin_does_not_hold():
    class Twice(Fifo):
        def shrink_node(self, mm, sc):
            pfn = self.queue[0]
            sc.reclaim([pfn, pfn])

    with pytest.raises(ValueError, match=r"reclaim\(\): pfn \d+ not held by the plug-in"):
        reclaimsim.run("anon:size=1.5x,passes=1", settings=MACHINE, policy=Twice())


def test_views_are_valid_only_during_the_call():
    class Keeper(Fifo):
        kept = None

        def add_page(self, mm, pfn, origin, shadow):
            if self.kept is not None:
                self.kept.nr_to_reclaim  # the scan control of an earlier shrink_node
            super().add_page(mm, pfn, origin, shadow)

        def shrink_node(self, mm, sc):
            self.kept = sc
            super().shrink_node(mm, sc)

    with pytest.raises(RuntimeError, match="only valid during the plug-in call"):
        reclaimsim.run("anon:size=1.5x,passes=1", settings=MACHINE, policy=Keeper())


def test_lru_sizes_must_count_the_pages_held():
    class Miscount(Fifo):
        def lru_sizes(self):
            return {"inactive_anon": 1}

    with pytest.raises(ValueError, match=r"lru_sizes\(\) counts 1 anon"):
        reclaimsim.run("anon:size=0.2x,passes=1", settings=MACHINE, policy=Miscount())
