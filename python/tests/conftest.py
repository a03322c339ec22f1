"""Shared fixtures: the command-line binary the Python results are checked against."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `reclaimsim` executable: $RECLAIMSIM_BIN, or target/release under $CARGO_TARGET_DIR or the repository."""
    candidates = [os.environ.get("RECLAIMSIM_BIN"), os.environ.get("CARGO_TARGET_DIR") and Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "reclaimsim", ROOT / "target" / "release" / "reclaimsim"]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    pytest.fail("reclaimsim binary not found: run `cargo build --release` or set RECLAIMSIM_BIN")


def run_cli(cli: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    """Runs the CLI, failing the test with its stderr on a non-zero exit."""
    p = subprocess.run([str(cli), *args], capture_output=True, text=True, **kw)
    assert p.returncode == 0, f"reclaimsim {' '.join(args)} exited {p.returncode}:\n{p.stderr}"
    return p
