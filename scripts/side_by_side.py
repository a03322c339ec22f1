#!/usr/bin/env python3
"""Side by side (issue #22): `reclaimsim run --trace` against libCacheSim's LRU on one zipf trace.

Usage: python3 scripts/side_by_side.py [--requests 10000000] [--objects 1000000] [--alpha 1.0]
           [--pages 100000] [--reps 5] [--work DIR] [--reclaimsim PATH]

Steps, all under --work (default $TMPDIR/reclaimsim-side-by-side, reused between calls):
1. a venv with libCacheSim's Python package (PyPI `libcachesim`), made once;
2. the request sequence from libCacheSim's own zipf generator (SyntheticReader, seed 1), written as
   libCacheSim's oracleGeneral binary trace (every object 4096 bytes) and as one id per line, which
   `reclaimsim trace convert --from txt` turns into a reclaimsim trace (zstd, and uncompressed);
3. each command timed as a whole process, in turn (A B C A B C ...), --reps times after one warm-up:
   wall clock around the child, user/sys CPU and peak RSS from the kernel's accounting of the child.
   libCacheSim: LRU of --pages x 4096 bytes over the oracleGeneral file. reclaimsim: the full kernel
   model (profile v6.2, memory = --pages pages, no swap) replaying the trace, Belady's MIN off.
Prints the medians and the ratios libCacheSim / reclaimsim (above 1: reclaimsim is faster), with the
load average, so that a reading taken on a busy machine says so.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

LIBCACHESIM = "libcachesim==0.3.5"
PAGE = 4096


def lru(path: str, pages: int) -> None:
    """The libCacheSim side (run inside the venv): LRU over an oracleGeneral trace."""
    import libcachesim as lcs

    reader = lcs.TraceReader(trace=path, trace_type=lcs.TraceType.ORACLE_GENERAL_TRACE)
    miss_ratio, _ = lcs.LRU(cache_size=pages * PAGE).process_trace(reader)
    print(f"libCacheSim LRU, {pages} pages: miss ratio {miss_ratio:.6f}")


def generate(requests: int, objects: int, alpha: float, og: str, txt: str) -> None:
    """The trace (run inside the venv): libCacheSim's zipf generator, two encodings of one sequence."""
    import libcachesim as lcs
    import numpy as np

    reader = lcs.SyntheticReader(num_of_req=requests, obj_size=PAGE, seed=1, alpha=alpha, dist="zipf", num_objects=objects)
    ids = np.asarray(reader.obj_ids, dtype=np.uint64)
    rec = np.zeros(len(ids), dtype=[("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])
    rec["time"], rec["id"], rec["size"], rec["next"] = np.arange(len(ids)) // 1000, ids, PAGE, -1
    rec.tofile(og + ".tmp")
    os.replace(og + ".tmp", og)
    with open(txt + ".tmp", "w") as f:
        f.write("\n".join(map(str, ids.tolist())) + "\n")
    os.replace(txt + ".tmp", txt)
    print(f"{len(ids)} requests, {len(np.unique(ids))} distinct objects")


def timed(cmd: list[str]) -> tuple[float, float, float, int, str]:
    """Runs `cmd` as a child; returns wall s, user s, sys s, peak RSS KiB, and its stdout."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(cmd)}\n{out}")
    return wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--pages", type=int, default=100_000, help="memory (reclaimsim) and cache size (LRU), in 4 KiB pages")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "reclaimsim-side-by-side")
    ap.add_argument("--reclaimsim", type=Path, default=Path(__file__).resolve().parent.parent / "target/release/reclaimsim")
    a = ap.parse_args()
    if not a.reclaimsim.exists():
        sys.exit(f"{a.reclaimsim}: not found; build it with `cargo build --release` or pass --reclaimsim")
    a.work.mkdir(parents=True, exist_ok=True)
    py = a.work / "venv/bin/python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(a.work / "venv")], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", LIBCACHESIM], check=True)
    me = str(Path(__file__).resolve())
    stem = a.work / f"zipf-{a.requests}-{a.objects}-{a.alpha}"
    og, txt = f"{stem}.oracleGeneral", f"{stem}.txt"
    zst, raw = f"{stem}.rtrace", f"{stem}.raw.rtrace"
    if not Path(raw).exists():
        subprocess.run([str(py), me, "generate", str(a.requests), str(a.objects), str(a.alpha), og, txt], check=True)
        for out, extra in ((zst, []), (raw, ["--no-compress"])):
            subprocess.run([str(a.reclaimsim), "trace", "convert", "--from", "txt", *extra, txt, out], check=True)
        os.remove(txt)
    sim = [str(a.reclaimsim), "run", "-q", "--set", f"memory={a.pages * PAGE // 1024}K", "--set", "swap=none", "--trace"]
    cmds = {
        "libCacheSim LRU (oracleGeneral)": [str(py), me, "lru", og, str(a.pages)],
        "reclaimsim run --trace (zstd)": sim + [zst],
        "reclaimsim run --trace (uncompressed)": sim + [raw],
    }
    rows: dict[str, list] = {k: [] for k in cmds}
    for rep in range(a.reps + 1):
        for name, cmd in cmds.items():
            r = timed(cmd)
            if rep > 0:
                rows[name].append(r)
            elif name.startswith("libCacheSim"):
                print(r[4].strip())
            else:
                print(name + ": " + next(l for l in r[4].splitlines() if "faults" in l).lstrip("# "))
    print(f"\n{a.requests} requests, zipf({a.alpha}) over {a.objects} objects, {a.pages} pages of memory; "
          f"{a.reps} runs each, medians; load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    print(f"{'command':<40} {'wall s':>8} {'user s':>8} {'sys s':>7} {'peak MiB':>9}")
    med = {}
    for name, rs in rows.items():
        m = [statistics.median(r[i] for r in rs) for i in range(4)]
        med[name] = m[0]
        print(f"{name:<40} {m[0]:>8.3f} {m[1]:>8.3f} {m[2]:>7.3f} {m[3] / 1024:>9.1f}")
    base = med["libCacheSim LRU (oracleGeneral)"]
    for name in list(cmds)[1:]:
        pair = statistics.median(l[0] / r[0] for l, r in zip(rows["libCacheSim LRU (oracleGeneral)"], rows[name]))
        print(f"libCacheSim LRU / {name}: {base / med[name]:.2f}x (median of pairwise ratios {pair:.2f}x)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "lru":
        lru(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "generate":
        generate(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6])
    else:
        main()
