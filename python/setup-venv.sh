#!/usr/bin/env bash
# Creates .venv at the repository root with the Python package's dependencies
# and builds the `reclaimsim` Python package (Rust core + python/reclaimsim)
# into it. Idempotent: run it again to rebuild after changing the Rust code.
# Usage: python/setup-venv.sh [--no-ray]      (PYTHON=python3.12 to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || { echo "setup-venv: Python >= 3.11 needed ($PY is $("$PY" --version 2>&1))" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" maturin numpy pandas matplotlib pyarrow pytest
# Ray is optional (sweep --ray and its test); where it has no wheel for this Python, go on without it.
if [ "${1:-}" != "--no-ray" ] && ! .venv/bin/python -c 'import ray' 2>/dev/null; then
    "${pip[@]}" ray || echo "setup-venv: Ray could not be installed; sweep --ray and its test are unavailable" >&2
fi
# maturin develop installs into the virtual environment named by VIRTUAL_ENV.
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin develop --release --quiet
