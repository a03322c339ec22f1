"""Miss-ratio curves of the simulated kernel, as `reclaimsim mrc` computes them.

    import reclaimsim
    points = reclaimsim.mrc(trace="multi1.rtrace", sizes=["256K", "1M", "2M"], settings={"swap": "none"})
    [(p["memory_bytes"], p["faults"], p["lru_misses"]) for p in points]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from . import _core
from ._core import BadInput
from .result import settings_list

_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _bytes(size: int | str) -> int:
    """`"64M"` or a number of bytes."""
    if isinstance(size, int):
        return size
    s = str(size).strip()
    try:
        return int(float(s[:-1]) * _UNITS[s[-1].upper()]) if s and s[-1].upper() in _UNITS else int(s)
    except ValueError:
        raise BadInput(f"memory size {size!r}: expected bytes or a size such as 64M") from None


def mrc(
    workload: str | Iterable[str] | None = None,
    *,
    sizes: Iterable[int | str],
    trace: str | os.PathLike | None = None,
    profile: str = "v6.2",
    settings: Mapping[str, Any] | Iterable[str] | None = None,
    seed: int = 1,
    sample: float | None = None,
    jobs: int | None = None,
    lru: bool = True,
) -> list[dict[str, Any]]:
    """Faults, refaults and swap-ins against memory size: one run per size, on `jobs` threads
    (default: the number of cores), each as `reclaimsim.run` would run it with `memory` set.

    sizes: memory sizes (`"64M"` or bytes).
    sample: sampled mode at this rate (a trace only): a spatially hashed sample of the trace's
        pages on memory scaled by the rate; counts are divided by it (`reclaimsim mrc --sample`).
    lru: with a trace, also each size's LRU misses (`lru_misses`) from one stack-distance pass.

    Returns one dict per size: memory_bytes, refs, faults, refaults, swapins, fault_ratio,
    finished, sample_rate, run_memory_bytes, run_refs (and lru_misses); a run that failed has
    `error` instead. Raises `BadInput` for unknown names or values.
    """
    workloads = [workload] if isinstance(workload, str) else list(workload or [])
    if not workloads and trace is None:
        raise BadInput("no workload and no trace: give at least one (reclaimsim workloads lists them)")
    jobs = (os.cpu_count() or 1) if jobs is None else int(jobs)
    text = _core.mrc(
        workloads,
        profile,
        settings_list(settings),
        int(seed),
        [_bytes(s) for s in sizes],
        None if trace is None else os.fspath(trace),
        sample,
        jobs,
        lru,
    )
    return json.loads(text)["points"]
