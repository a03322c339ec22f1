#!/usr/bin/env python3
"""The example of docs/zswap.md: one anonymous thrash on zswap + SSD, zram and
the SSD alone (and zswap with its shrinker); prints the Markdown table and
draws docs/img/zswap-example.png (matplotlib, as python/gen-docs.py does).

Usage: .venv/bin/python scripts/zswap-example.py [RECLAIMSIM] [PNG]
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/release/reclaimsim")
PNG = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "docs/img/zswap-example.png"
PROFILE = "v6.12-classic"
MACHINE = ["memory=256M"]
WORKLOAD = "anon:size=1.5x,pattern=zipf,alpha=0.8,ops=3000000,threads=2,write=1"
CASES = [
    ("zswap + SSD", ["swap=ssd:2G", "zswap.enabled=1"]),
    ("zram", ["swap=zram:2G"]),
    ("SSD alone", ["swap=ssd:2G"]),
    ("zswap + SSD, shrinker", ["swap=ssd:2G", "zswap.enabled=1", "zswap.shrinker_enabled=1"]),
]


def run(settings):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [BIN, "run", "-q", "--profile", PROFILE, "-w", WORKLOAD, "--timeseries", "250", "--json", out.name]
        for s in MACHINE + settings:
            cmd += ["-s", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.load(open(out.name))


def main():
    docs = [(name, settings, run(settings)) for name, settings in CASES]
    print(f"`reclaimsim run --profile {PROFILE} -s {' -s '.join(MACHINE)} -w {WORKLOAD}` with:\n")
    print("| swap | settings | runtime s | major faults | pswpin | pswpout | zswpin | zswpout | zswpwb | pool MiB at end |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, settings, d in docs:
        v = d["vmstat"]
        pool = (d["zswap"] or {}).get("pool_total_size") or (d["zram"] or {}).get("mem_used_total", 0)
        print(
            f"| {name} | `{' '.join(settings)}` | {d['sim']['virtual_ns'] / 1e9:.1f} | {v['pgmajfault']} "
            f"| {v['pswpin']} | {v['pswpout']} | {v['zswpin']} | {v['zswpout']} | {v['zswpwb']} | {pool / 2**20:.1f} |"
        )
    fig, (faults, io) = plt.subplots(1, 2, figsize=(11, 4))
    for name, _, d in docs:
        t = d["timeseries"]
        col = {c: i for i, c in enumerate(t["columns"])}
        secs = [r[col["time_ns"]] / 1e9 for r in t["rows"]]
        faults.plot(secs, [r[col["pgmajfault"]] / 1e6 for r in t["rows"]], label=name)
        io.plot(secs, [(r[col["pswpin"]] + r[col["pswpout"]]) / 1e6 for r in t["rows"]], label=name)
    faults.set(title="major faults (cumulative)", xlabel="virtual time, s", ylabel="millions")
    io.set(title="pswpin + pswpout (zram: in RAM, others: the SSD)", xlabel="virtual time, s", ylabel="millions")
    for ax in (faults, io):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"{WORKLOAD} on 256M, {PROFILE}")
    fig.tight_layout()
    fig.savefig(PNG, dpi=90)


if __name__ == "__main__":
    main()
