# %% [markdown]
# # reclaimsim from Python: a notebook-style tour
#
# Run it as a script (`.venv/bin/python examples/notebook.py`) or cell by cell
# in Jupyter/VS Code (`# %%` marks cells). It writes the figures of
# docs/python.md to docs/img/ (or to the directory given as argument).
#
# Seed 004's hot/cold scenario under three kernels: v5.7 (rotation-based
# balance), v5.8 (refault cost) and v5.9 (anon workingset detection), then a
# small sweep over memory sizes read back as a DataFrame.

# %%
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

import reclaimsim

ROOT = Path(__file__).resolve().parent.parent
IMG = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img"
IMG.mkdir(parents=True, exist_ok=True)
MACHINE = {"memory": "64M", "swap": "ssd:256M"}

# %% [markdown]
# ## One run: counters, threads, time series

# %%
r = reclaimsim.run("hotcold", profile="v5.9", settings=MACHINE, timeseries_ms=10)
print(r)
print({k: r.vmstat[k] for k in ["pswpin", "pswpout", "workingset_refault_anon", "workingset_activate_anon"]})
print(r.threads[["ops", "ops_per_sec", "p50_ns", "p99_ns"]])
print(r.timeseries[["nr_free_pages", "nr_active_anon", "nr_inactive_anon", "pswpin"]].tail())
r.plot(path=IMG / "notebook-overview.png")

# %% [markdown]
# ## Three kernels side by side: the active anon list and swap-ins over time

# %%
profiles = ["v5.7", "v5.8", "v5.9"]
runs = {p: reclaimsim.run("hotcold", profile=p, settings=MACHINE, timeseries_ms=10) for p in profiles}
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
for p, res in runs.items():
    ts = res.timeseries
    left.plot(ts.index, ts["nr_active_anon"] * 4096 / 2**20, label=p)
    right.plot(ts.index, ts["pswpin"], label=p)
left.set(title="active anon list", xlabel="virtual time (s)", ylabel="MiB")
right.set(title="pages swapped in (cumulative)", xlabel="virtual time (s)", ylabel="pages")
left.legend()
right.legend()
fig.tight_layout()
fig.savefig(IMG / "notebook-profiles.png", dpi=110)
for p, res in runs.items():
    print(f"{p}: pswpin {res.vmstat['pswpin']:>7}  ops/s {res.doc['threads'][0]['ops_per_sec']:>10.0f}")

# %% [markdown]
# ## A sweep: memory size x kernel, read back as a DataFrame
#
# `reclaimsim sweep` runs the cartesian product on local processes (or Ray with
# `--ray ADDRESS`) and writes one row per run to table.csv / table.parquet.

# %%
spec = """
workloads = ["hotcold"]
profiles = ["v5.7", "v5.8", "v5.9"]
seeds = [1]
[settings]
memory = ["48M", "64M", "80M", "96M"]
swap = "ssd:256M"
"""
cli = ROOT / "target" / "release" / "reclaimsim"
with tempfile.TemporaryDirectory() as d:
    (Path(d) / "mem.toml").write_text(spec)
    subprocess.run([str(cli), "sweep", str(Path(d) / "mem.toml")], check=True)
    table = reclaimsim.load_sweep(Path(d) / "mem.out")
table["memory_mib"] = table["memory"].str.rstrip("M").astype(int)
pivot = table.pivot(index="memory_mib", columns="profile", values="pswpin")
print(pivot)
ax = pivot.plot(marker="o", figsize=(6, 4), title="hotcold (sized relative to memory): pages swapped in")
ax.set(xlabel="memory (MiB)", ylabel="pswpin")
ax.figure.tight_layout()
ax.figure.savefig(IMG / "notebook-sweep.png", dpi=110)
