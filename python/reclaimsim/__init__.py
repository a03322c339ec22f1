"""reclaimsim: a deterministic simulator of Linux page reclaim, from Python.

    import reclaimsim
    r = reclaimsim.run("hotcold", profile="v5.9", settings={"memory": "64M", "swap": "ssd:256M"})
    r.vmstat["pswpin"], r.timeseries, r.threads
    r.plot(path="hotcold.png")

`run` calls the Rust core directly (no subprocess); its result document is
the one `reclaimsim run --json` writes for the same inputs. `load` reads such a
file. `reproduce` runs a seed reproduction and returns its tables as
DataFrames. `Policy` is the base class of reclaim policies written in Python,
`load_sweep` reads the table of a `reclaimsim sweep`, and `mrc` computes a
miss-ratio curve (`reclaimsim mrc`).
"""

from ._core import BadInput, SimulationError, __version__
from .mrc import mrc
from .policy import Policy
from .reproduce import Reproduction, reproduce
from .result import Result, load, run
from .sweep import load_sweep

__all__ = [
    "run",
    "mrc",
    "load",
    "Result",
    "Policy",
    "load_sweep",
    "reproduce",
    "Reproduction",
    "BadInput",
    "SimulationError",
    "__version__",
]
