"""`reclaimsim.reproduce`: the seed tables as DataFrames, equal to the CLI's JSON."""

import json

import pytest
from conftest import run_cli

import reclaimsim


def test_reproduce_returns_the_cli_tables_as_dataframes(cli, tmp_path):
    r = reclaimsim.reproduce("seed-001", quick=True, jobs=1)
    out = tmp_path / "r.json"
    run_cli(cli, "reproduce", "seed-001", "--quick", "--jobs", "2", "--json", str(out))
    doc = json.loads(out.read_text())
    assert r.document == doc
    first = r.tables[0]
    assert first.attrs["title"] == doc["seeds"][0]["tables"][0]["title"]
    ra = first.set_index("metric").loc["ra_hit%"]
    assert ra["seed base"] == 52.69 and ra["seed optimized"] == 99.98
    assert ra["direction"] in ("agrees", "DISAGREES")
    assert len(r.claims) == r.summary["seed-001"]["claims"]
    assert set(r.claims.columns) >= {"seed", "table", "row", "seed_values", "ours_values", "direction", "size", "source"}


def test_unknown_seed_is_bad_input():
    with pytest.raises(reclaimsim.BadInput, match="unknown seed `seed-9`"):
        reclaimsim.reproduce("seed-9")
