"""Seed reproductions from Python: the tables `reclaimsim reproduce` prints,
as pandas DataFrames.

    import reclaimsim
    r = reclaimsim.reproduce("seed-003", quick=True)
    r.tables[0]            # one DataFrame per table: seed and ours per column, both verdicts
    r.claims               # every claim of the seed, one row each
    r.summary["overall"]   # claims, attempted, direction_agrees, within_2x, fitted_parameters

The runs go through the Rust core (the `experiment` crate's tables), so the
figures equal those of `reclaimsim reproduce SEED --json` with the same options.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from . import _core


@dataclass
class Reproduction:
    """A reproduction: its tables, its flat list of claims and the summaries."""

    tables: list[pd.DataFrame]
    claims: pd.DataFrame
    summary: dict
    document: dict


def _table(seed: str, t: dict) -> pd.DataFrame:
    """One table: a row per metric, `seed <column>` and `<column>` figures, the verdicts."""
    rows = []
    for m in t["metrics"]:
        row = {"metric": m["name"]}
        for i, col in enumerate(t["variants"]):
            row[f"seed {col}"] = m["seed"][i] if i < len(m["seed"]) else None
        for i, col in enumerate(t["variants"]):
            row[col] = m["ours"][i] if i < len(m["ours"]) else None
        row.update(direction=m["direction"], size=m["size"], source=m["source"])
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs.update(seed=seed, title=t["title"], notes=t["notes"], judged=t["judged"])
    return df


def reproduce(seed: str, quick: bool = False, rng_seed: int = 1, jobs: int | None = None) -> Reproduction:
    """Runs the reproduction `seed` (`seed-000` ... `seed-004`, or `all`).

    `quick` runs the smaller machines; `jobs` runs at a time (default: the
    cores), which does not change any figure. Raises `BadInput` for an unknown seed.
    """
    doc = json.loads(_core.reproduce(seed, quick=quick, rng_seed=rng_seed, jobs=jobs))
    tables = [_table(s["seed"], t) for s in doc["seeds"] for t in s["tables"]]
    return Reproduction(tables=tables, claims=pd.DataFrame(doc["claims"]), summary=doc["summary"], document=doc)
