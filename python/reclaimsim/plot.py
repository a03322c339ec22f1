"""The standard figures of a run, and comparisons across runs, with matplotlib."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import matplotlib

if not os.environ.get("MPLBACKEND") and not os.environ.get("DISPLAY"):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MIB_PER_PAGE = 4096 / 2**20
LISTS = ["nr_active_anon", "nr_inactive_anon", "nr_active_file", "nr_inactive_file", "nr_free_pages"]
RATES = {
    "swap-in": ["pswpin"],
    "swap-out": ["pswpout"],
    "refaults": ["workingset_refault_anon", "workingset_refault_file"],
    "scanned": ["pgscan_kswapd", "pgscan_direct"],
}


def _no_samples(ax, what: str):
    ax.text(0.5, 0.5, f"no {what}: run with timeseries_ms (or --timeseries MS)", ha="center", va="center", transform=ax.transAxes)


def memory(result, ax):
    """LRU list sizes and free memory over time, stacked, in MiB."""
    ts = result.timeseries
    if ts.empty:
        _no_samples(ax, "samples")
        return ax
    ax.stackplot(ts.index, *[ts[c] * MIB_PER_PAGE for c in LISTS], labels=[c.removeprefix("nr_") for c in LISTS], alpha=0.85)
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("MiB")
    ax.set_title("LRU lists and free memory")
    ax.legend(loc="lower right", fontsize="small")
    return ax


def reclaim(result, ax):
    """Swap-in, swap-out, refault and scan rates (pages per virtual second)."""
    ts = result.timeseries
    if ts.empty:
        _no_samples(ax, "samples")
        return ax
    dt = ts["time_ns"].diff().fillna(ts["time_ns"]) / 1e9
    # Widest first, so that equal lines (swap-ins are anon refaults) show inside each other.
    for (label, cols), style, width in zip(RATES.items(), ["-", "--", ":", "-."], [4.0, 2.8, 2.0, 1.4]):
        total = ts[cols].sum(axis=1)
        ax.plot(ts.index, total.diff().fillna(total) / dt, style, label=label, linewidth=width)
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("pages/s")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_title("Reclaim activity")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def latency(result, ax):
    """Each thread's operation latency at every reported percentile (log scale)."""
    th = result.threads
    cols = sorted((c for c in th.columns if c.startswith("p") and c.endswith("_ns")), key=lambda c: float(c[1:-3]))
    names = [c.removesuffix("_ns").replace("p100", "max") for c in cols]
    for name, row in th.iterrows():
        ax.plot(names, [max(row[c], 1) for c in cols], marker="o", label=name)
    ax.set_yscale("log")
    ax.set_xlabel("percentile")
    ax.set_ylabel("latency (ns)")
    ax.set_title("Operation latency")
    if len(th) <= 8:
        ax.legend(fontsize="small")
    return ax


PANELS = {"memory": memory, "reclaim": reclaim, "latency": latency}


def draw(result, kind: str = "overview", ax=None, path=None):
    """`Result.plot`: one panel into `ax` (or a new figure), or the three-panel overview."""
    if kind == "overview":
        if ax is not None:
            raise ValueError("plot('overview') draws its own figure; give ax only for a single panel")
        # Without samples only the latency panel has something to show.
        panels = list(PANELS.values()) if not result.timeseries.empty else [latency]
        fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels), 4.5), squeeze=False)
        for panel, a in zip(panels, axes[0]):
            panel(result, a)
        fig.suptitle(run_title(result), fontsize="medium")
    elif kind in PANELS:
        if ax is None:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            fig.suptitle(run_title(result), fontsize="small")
        fig = ax.figure
        PANELS[kind](result, ax)
    else:
        raise ValueError(f"plot kind `{kind}`: expected overview, {', '.join(PANELS)}")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def machine(result) -> str:
    """The simulated machine in words: `64 MiB of memory, 256 MiB of swap on ssd`."""
    s = result.config["settings"]

    def size(v: str) -> str:
        units = {"K": "KiB", "M": "MiB", "G": "GiB", "T": "TiB"}
        return f"{v[:-1]} {units[v[-1]]}" if v and v[-1] in units else f"{v} bytes"

    swap = s.get("swap", "none")
    if swap == "none":
        swap_text = "no swap"
    else:
        kind, _, amount = swap.partition(":")
        swap_text = f"{size(amount)} of swap on {kind}"
    return f"{size(s['memory'])} of memory, {swap_text}"


def run_title(result) -> str:
    """A run in words: workloads by name, kernel profile, machine, seed."""
    c = result.config
    names = ", ".join(w.split(":")[0] for w in c["workloads"]) or "trace"
    return f"{names} under kernel profile {c['profile']}: {machine(result)}, seed {c['seed']}"


#: Units of the metrics `compare` and `metric_value` know (vmstat counters are pages or events).
UNITS = {"ops_per_sec": "operations per second", "pgpgin": "KiB read", "pgpgout": "KiB written"}


def compare(results: Mapping[str, object], metrics: Sequence[str], path=None, title: str | None = None):
    """Bar charts of `metrics` across labelled runs: vmstat names, or `ops_per_sec`
    (summed over threads) or `p99_ns` (worst thread). Returns the figure."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4), squeeze=False)
    labels = list(results)
    for ax, metric in zip(axes[0], metrics):
        values = [metric_value(results[k], metric) for k in labels]
        ax.bar(range(len(labels)), values, color=[f"C{i}" for i in range(len(labels))])
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize="small")
        ax.set_title(metric)
        unit = "ns" if metric.startswith("p") and metric.endswith("_ns") else UNITS.get(metric, "pages")
        ax.set_ylabel(unit)
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def metric_value(result, metric: str) -> float:
    """A number of a run by name: a vmstat counter, `ops_per_sec` or `p99_ns`."""
    if metric == "ops_per_sec":
        return float(sum(t["ops_per_sec"] for t in result.doc["threads"]))
    if metric.startswith("p") and metric.endswith("_ns"):
        key = metric.removesuffix("_ns")
        return float(max(t["latency_ns"][key] for t in result.doc["threads"]))
    return float(result.vmstat[metric])
