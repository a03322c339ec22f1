"""Sweeps from Python: reading a sweep's table, and the Ray backend of
`reclaimsim sweep --ray ADDRESS`.

The command line expands the sweep, skips finished runs and builds the
table; for `--ray` it writes the pending runs to `OUT/plan.json` and runs

    python -m reclaimsim.sweep --plan OUT/plan.json --ray ADDRESS

which runs each as a Ray task through the Rust core (the same code path as
`reclaimsim.run`) and writes `OUT/runs/ID.json` (or `ID.error`) atomically
from the driver, so a cluster needs no shared file system. `--ray local`
starts a Ray instance on this machine.

    python -m reclaimsim.sweep --parquet OUT/table.csv OUT/table.parquet

converts the table (the command line calls it when pyarrow is there).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd


def load_sweep(out_dir: str | os.PathLike) -> pd.DataFrame:
    """A sweep's table: one row per run (Parquet if written, else the CSV)."""
    out = Path(out_dir)
    if (out / "table.parquet").exists():
        return pd.read_parquet(out / "table.parquet")
    return pd.read_csv(out / "table.csv")


def write_atomic(path: Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def to_parquet(csv: Path, parquet: Path) -> None:
    """Converts a sweep's CSV table to Parquet (needs pyarrow)."""
    df = pd.read_csv(csv)
    tmp = parquet.with_name(parquet.name + ".tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, parquet)


class Progress:
    """The progress line on stderr: runs done, running, failed (as the CLI prints it)."""

    def __init__(self, total: int, done: int):
        self.total, self.done, self.failed, self.running = total, done, 0, 0
        self.tty = sys.stderr.isatty()

    def show(self, final: bool = False) -> None:
        line = f"sweep: {self.done}/{self.total} done, {self.running} running, {self.failed} failed"
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if final else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _run_one(run: dict) -> tuple[bool, str]:
    """One run through the Rust core: (True, result JSON) or (False, error text)."""
    from . import _core

    try:
        return True, _core.run(run["workloads"], run["profile"], run["settings"], run["seed"], run.get("timeseries_ns"), None, run.get("trace"))
    except Exception as e:  # noqa: BLE001 - every failure of a run is recorded, not raised
        return False, f"{type(e).__name__}: {e}"


def run_plan_on_ray(plan_path: Path, address: str) -> int:
    """Runs a plan's pending runs as Ray tasks; returns the number that failed."""
    import logging

    import ray

    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    runs_dir = Path(plan["runs_dir"])
    progress = Progress(plan["total"], plan["total"] - len(plan["runs"]))
    if address == "local":
        ray.init(num_cpus=plan.get("jobs"), include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    else:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    try:
        task = ray.remote(num_cpus=1)(_run_one)
        pending = {task.remote(r): r for r in plan["runs"]}
        slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        while pending:
            progress.running = min(len(pending), slots)
            progress.show()
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                run = pending.pop(ref)
                ok, text = ray.get(ref)
                if ok:
                    write_atomic(runs_dir / f"{run['id']}.json", text + "\n")
                    (runs_dir / f"{run['id']}.error").unlink(missing_ok=True)
                    progress.done += 1
                else:
                    write_atomic(runs_dir / f"{run['id']}.error", text + "\n")
                    progress.failed += 1
        progress.running = 0
        progress.show(final=True)
    finally:
        ray.shutdown()
    return progress.failed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m reclaimsim.sweep", description=__doc__.split("\n\n")[0])
    p.add_argument("--plan", type=Path, help="plan.json written by `reclaimsim sweep --ray`")
    p.add_argument("--ray", metavar="ADDRESS", help="Ray cluster address, or `local`")
    p.add_argument("--parquet", nargs=2, type=Path, metavar=("CSV", "PARQUET"), help="convert a sweep table")
    a = p.parse_args(argv)
    if a.parquet:
        to_parquet(*a.parquet)
        return 0
    if not (a.plan and a.ray):
        p.error("give --plan PLAN --ray ADDRESS, or --parquet CSV PARQUET")
    started = time.monotonic()
    failed = run_plan_on_ray(a.plan, a.ray)
    print(f"sweep: ray finished in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
