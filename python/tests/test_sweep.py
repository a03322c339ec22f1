"""Sweeps: the Ray backend gives the same table as local processes."""

import os
import sys

import pytest
from conftest import run_cli

import reclaimsim

SPEC = """
workloads = ["anon:size=1.3x,pattern=uniform,ops=20000", "fileloop:size=1.2x,pattern=zipf,ops=20000"]
profiles = ["v5.8", "v6.2"]
seeds = [1, 2]
[settings]
memory = "16M"
swap = "ssd:64M"
"""


def test_ray_local_table_equals_local_processes(cli, tmp_path):
    pytest.importorskip("ray")
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    env = dict(os.environ, RECLAIMSIM_PYTHON=sys.executable)
    run_cli(cli, "sweep", str(spec), "--out", str(tmp_path / "local"), "--jobs", "2", env=env)
    ray = run_cli(cli, "sweep", str(spec), "--out", str(tmp_path / "ray"), "--ray", "local", "--jobs", "2", env=env)
    assert "8 to run on Ray (local)" in ray.stderr
    local_csv = (tmp_path / "local" / "table.csv").read_text()
    assert (tmp_path / "ray" / "table.csv").read_text() == local_csv
    assert len(local_csv.splitlines()) == 1 + 2 * 2 * 2
    table = reclaimsim.load_sweep(tmp_path / "ray")
    assert (tmp_path / "ray" / "table.parquet").exists()
    assert len(table) == 8 and set(table["status"]) == {"done"}
    assert table.loc[0, "pswpout"] == reclaimsim.load(tmp_path / "ray" / "runs" / f"{table.loc[0, 'run']}.json").vmstat["pswpout"]
    # Nothing is left to do the second time.
    again = run_cli(cli, "sweep", str(spec), "--out", str(tmp_path / "ray"), "--ray", "local", env=env)
    assert "8 already done, 0 to run" in again.stderr
