"""The `reclaimsim` command installed with the Python package (`pip install .`):
the same command line as the Rust binary, run in-process by the Rust core.

    reclaimsim run --workload hotcold --profile v5.9 --set memory=64M
    python -m reclaimsim --version
"""

import os
import shutil
import signal
import sys
from pathlib import Path

from . import _core


def main() -> None:
    """Runs the command line on `sys.argv` and exits with its code."""
    # A local sweep starts `reclaimsim run` children and `sweep --ray` this
    # interpreter: here the process is Python, so name both unless set.
    script = Path(sys.argv[0])
    command = script if script.name == "reclaimsim" and os.access(script, os.X_OK) else shutil.which("reclaimsim")
    if command is not None:
        os.environ.setdefault("RECLAIMSIM_BIN", str(command))
    os.environ.setdefault("RECLAIMSIM_PYTHON", sys.executable)
    # Ctrl-C and a closed pipe end the command as they end the Rust binary
    # (Python would otherwise hold SIGINT until the run returned).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_core.cli(["reclaimsim", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
