"""Runs and their results: the result document as dicts and DataFrames."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from . import _core
from ._core import BadInput

#: Virtual milliseconds between time-series samples when `run` is not told otherwise.
DEFAULT_TIMESERIES_MS = 10.0


def _setting_value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def settings_list(settings: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    """`{"memory": "64M"}` or `["memory=64M"]` as the `KEY=VALUE` strings `--set` takes."""
    if settings is None:
        return []
    if isinstance(settings, Mapping):
        return [f"{k}={_setting_value(v)}" for k, v in settings.items()]
    return [str(s) for s in settings]


def run(
    workload: str | Iterable[str] | None = None,
    profile: str = "v6.2",
    settings: Mapping[str, Any] | Iterable[str] | None = None,
    seed: int = 1,
    timeseries_ms: float | None = DEFAULT_TIMESERIES_MS,
    policy: Any = None,
    trace: str | os.PathLike | None = None,
) -> Result:
    """Runs a simulation, as `reclaimsim run` would.

    workload: one spec (`"ebizzy:threads=8,alpha=1.3"`) or a list run side by side.
    profile: kernel profile (`reclaimsim profiles`).
    settings: `{"memory": "64M", "vm.swappiness": 100}` (`reclaimsim settings`).
    seed: the workloads' random seed.
    timeseries_ms: sample the machine every this many virtual milliseconds
        (None: no samples; the document then has no `timeseries`).
    policy: a `reclaimsim.Policy` instance replacing the kernel's policy.
    trace: a reclaimsim trace (`reclaimsim trace convert` makes one) replayed
        as one more thread, as `reclaimsim run --trace` does; the document then
        has a `trace` section (file, refs, finished). Belady's optimum is the
        CLI's extra, not computed here.

    Raises `BadInput` for unknown names or values and `SimulationError` when
    the run cannot complete; a policy plug-in's own exception is re-raised.
    """
    workloads = [workload] if isinstance(workload, str) else list(workload or [])
    if not workloads and trace is None:
        raise BadInput("no workload and no trace: give at least one (reclaimsim workloads lists them)")
    if timeseries_ms is not None and not timeseries_ms > 0:
        raise BadInput(f"timeseries_ms {timeseries_ms}: expected a positive number of milliseconds")
    interval = None if timeseries_ms is None else max(1, round(timeseries_ms * 1e6))
    text = _core.run(workloads, profile, settings_list(settings), int(seed), interval, policy, None if trace is None else os.fspath(trace))
    return Result(json.loads(text))



def load(path: str | os.PathLike) -> Result:
    """Reads a result document written by `reclaimsim run --json` (or `Result.save`)."""
    with open(path, encoding="utf-8") as f:
        return Result(json.load(f))


class Result:
    """One run's result document with convenient views of its parts."""

    def __init__(self, doc: dict):
        #: The result document itself, exactly as the CLI's JSON.
        self.doc = doc

    @property
    def config(self) -> dict:
        """Profile, seed, every setting resolved, workloads with every parameter."""
        return self.doc["config"]

    @property
    def vmstat(self) -> dict[str, int]:
        """`/proc/vmstat` counters and gauges at the end of the run."""
        return self.doc["vmstat"]

    @property
    def reclaim(self) -> dict:
        """kswapd and direct-reclaim CPU time."""
        return self.doc["reclaim"]

    @property
    def cpu(self) -> dict:
        """User, system and elapsed time of the workload threads (ns), and each kswapd's system time."""
        return self.doc["cpu"]

    @property
    def sim(self) -> dict:
        """Virtual time, events, accesses and wall-clock seconds."""
        return self.doc["sim"]

    @property
    def threads(self) -> pd.DataFrame:
        """One row per workload thread: ops, ops/s, stall time, user and system time, latency percentiles (`p50_ns` ...)."""
        rows = []
        for t in self.doc["threads"]:
            row = {k: v for k, v in t.items() if k != "latency_ns"}
            row.update({f"{p}_ns": v for p, v in t["latency_ns"].items()})
            rows.append(row)
        return pd.DataFrame(rows).set_index("name") if rows else pd.DataFrame()

    @property
    def timeseries(self) -> pd.DataFrame:
        """Samples over virtual time, indexed by `time_s`: free pages, LRU list
        sizes (pages) and cumulative counters. Empty when the run was not sampled."""
        ts = self.doc.get("timeseries")
        if ts is None:
            return pd.DataFrame(columns=["time_ns"]).rename_axis("time_s")
        df = pd.DataFrame(ts["rows"], columns=ts["columns"])
        df.index = pd.Index(df["time_ns"] / 1e9, name="time_s")
        return df

    def save(self, path: str | os.PathLike) -> None:
        """Writes the document as JSON, atomically (a temporary file, then rename)."""
        tmp = f"{os.fspath(path)}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.doc, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)

    def plot(self, kind: str = "overview", ax=None, path: str | os.PathLike | None = None):
        """Draws a standard figure with matplotlib and returns it.

        kind: "overview" (memory, reclaim activity and latency, one figure),
        "memory" (LRU lists and free pages over time), "reclaim" (swap,
        refault and scan rates over time) or "latency" (per-thread percentiles).
        ax: draw into this Axes (not for "overview"). path: also save a PNG there.
        """
        from . import plot

        return plot.draw(self, kind, ax=ax, path=path)

    def __repr__(self) -> str:
        c = self.config
        return f"<reclaimsim.Result {' + '.join(c['workloads'])} profile={c['profile']} seed={c['seed']}>"
