"""The Python API: results equal the CLI's JSON, DataFrames, loading, plots, errors."""

import json

import pytest
from conftest import run_cli

import reclaimsim


def without_wall_clock(doc: dict) -> dict:
    """The document less what is not a function of the inputs: wall time, and the
    build's commit (the CLI and the extension may be built at different commits)."""
    doc = json.loads(json.dumps(doc))
    doc["sim"].pop("wall_seconds")
    doc.pop("commit")
    return doc


CASES = [
    # (workloads, profile, settings, seed, timeseries ms)
    (["hotcold:rounds=3"], "v5.9", {"memory": "32M", "swap": "ssd:128M"}, 1, 5.0),
    (["ebizzy:threads=2,size=1.3x,ops=50000", "fileloop:size=0.4x,pattern=zipf,ops=30000"], "v5.8", {"memory": "16M", "swap": "zram:64M", "vm.swappiness": 150, "anon_workingset": True}, 7, None),
]


@pytest.mark.parametrize("workloads,profile,settings,seed,ts_ms", CASES)
def test_python_result_equals_cli_json(cli, tmp_path, workloads, profile, settings, seed, ts_ms):
    out = tmp_path / "run.json"
    args = ["run", "--profile", profile, "--seed", str(seed), "--json", str(out), "--quiet"]
    for w in workloads:
        args += ["--workload", w]
    for s in reclaimsim.result.settings_list(settings):
        args += ["--set", s]
    if ts_ms:
        args += ["--timeseries", str(ts_ms)]
    run_cli(cli, *args)
    from_cli = reclaimsim.load(out)
    from_py = reclaimsim.run(workloads, profile=profile, settings=settings, seed=seed, timeseries_ms=ts_ms)
    assert without_wall_clock(from_py.doc) == without_wall_clock(from_cli.doc)
    assert ("timeseries" in from_py.doc) == bool(ts_ms)


def test_dataframes_follow_the_document():
    r = reclaimsim.run(["anon:size=1.5x,pattern=uniform,ops=40000,threads=2"], settings={"memory": "16M", "swap": "ssd:64M"}, timeseries_ms=2)
    ts = r.timeseries
    rows = r.doc["timeseries"]["rows"]
    assert len(ts) == len(rows) == r.sim["virtual_ns"] // 2_000_000
    assert list(ts.columns) == r.doc["timeseries"]["columns"]
    assert ts.index.name == "time_s" and ts.index[0] == pytest.approx(0.002)
    assert (ts["pswpout"].diff().dropna() >= 0).all()
    # Free pages on per-CPU lists are outside nr_free_pages; each list holds fewer than its `high`.
    pcp_high = sum(p["high"] for z in r.doc["zones"] for p in z["pagesets"])
    counted = ts[["nr_free_pages", "nr_inactive_anon", "nr_active_anon", "nr_inactive_file", "nr_active_file"]].sum(axis=1)
    assert pcp_high > 0 and counted.between(16 * 256 - pcp_high, 16 * 256).all()
    th = r.threads
    assert list(th.index) == [t["name"] for t in r.doc["threads"]]
    assert th["ops"].sum() == r.sim["accesses"]
    assert th.loc[th.index[0], "p99_ns"] == r.doc["threads"][0]["latency_ns"]["p99"]
    assert r.config["settings"]["memory"] == "16M" and r.vmstat["pswpout"] > 0
    # CPU time: the threads' user and system time sum to the totals, and fit in each thread's time.
    assert th["user_time_ns"].sum() == r.cpu["user_time_ns"] > 0
    assert th["system_time_ns"].sum() == r.cpu["system_time_ns"] > 0
    assert (th["user_time_ns"] + th["system_time_ns"] <= th["elapsed_time_ns"]).all()
    assert [k["name"] for k in r.cpu["kernel_threads"]] == ["kswapd0"] and r.cpu["kernel_threads"][0]["system_time_ns"] > 0


def test_no_timeseries_when_not_asked():
    r = reclaimsim.run("anon:size=0.2x,passes=1", settings={"memory": "16M"}, timeseries_ms=None)
    assert "timeseries" not in r.doc and r.timeseries.empty


def test_save_and_load_round_trip(tmp_path):
    r = reclaimsim.run("anon:size=0.2x,passes=1", settings={"memory": "16M"})
    r.save(tmp_path / "r.json")
    assert reclaimsim.load(tmp_path / "r.json").doc == r.doc
    assert not list(tmp_path.glob("*.tmp"))


def test_bad_input_names_the_problem():
    with pytest.raises(reclaimsim.BadInput, match="unknown workload `nosuch`"):
        reclaimsim.run("nosuch")
    with pytest.raises(reclaimsim.BadInput, match="--set memory=lots"):
        reclaimsim.run("anon", settings={"memory": "lots"})
    with pytest.raises(reclaimsim.BadInput, match="v1.0"):
        reclaimsim.run("anon", profile="v1.0")
    with pytest.raises(reclaimsim.BadInput, match="positive"):
        reclaimsim.run("anon", timeseries_ms=0)
    assert issubclass(reclaimsim.BadInput, ValueError)


def test_out_of_memory_kills_or_is_a_simulation_error():
    settings = {"memory": "16M", "swap": "ssd:4M"}
    r = reclaimsim.run("anon:size=2x,passes=1", settings=settings)
    assert r.vmstat["oom_kill"] == 1
    assert bool(r.threads["oom_killed"].iloc[0]) and r.threads["oom_killed_ns"].iloc[0] > 0
    with pytest.raises(reclaimsim.SimulationError, match="out of memory"):
        reclaimsim.run("anon:size=2x,passes=1", settings={**settings, "vm.panic_on_oom": 1})


@pytest.mark.parametrize("kind", ["overview", "memory", "reclaim", "latency"])
def test_plots_write_png(tmp_path, kind):
    r = reclaimsim.run("hotcold:rounds=2", settings={"memory": "16M", "swap": "ssd:64M"})
    fig = r.plot(kind, path=tmp_path / f"{kind}.png")
    assert (tmp_path / f"{kind}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(fig.axes) == (3 if kind == "overview" else 1)
    with pytest.raises(ValueError, match="expected overview"):
        r.plot("pie")
    # The title says what ran in words: workload, profile, memory and swap.
    assert fig._suptitle.get_text() == "hotcold under kernel profile v6.2: 16 MiB of memory, 64 MiB of swap on ssd, seed 1"


def test_overview_without_samples_draws_no_empty_panels():
    r = reclaimsim.run("anon:size=0.5x,ops=2000", settings={"memory": "16M", "swap": "none"}, timeseries_ms=None)
    fig = r.plot()
    assert [a.get_title() for a in fig.axes] == ["Operation latency"]
    assert "no swap" in fig._suptitle.get_text()


def test_compare_bars_have_units():
    from reclaimsim import plot

    runs = {p: reclaimsim.run("hotcold:rounds=2", profile=p, settings={"memory": "16M", "swap": "ssd:64M"}, timeseries_ms=None) for p in ["v5.7", "v5.9"]}
    fig = plot.compare(runs, ["ops_per_sec", "pswpin", "pgpgin"])
    assert [a.get_ylabel() for a in fig.axes] == ["operations per second", "pages", "KiB read"]


CLI_TRACE_KEYS = ("faults",)


def test_trace_run_equals_cli_json(cli, tmp_path):
    trace = tmp_path / "hot.rtrace"
    run_cli(cli, "trace", "synth", "--records", "20000", "--pages", "6000", "--hot-pages", "1000", str(trace))
    out = tmp_path / "run.json"
    settings = {"memory": "16M", "swap": "ssd:64M"}
    args = ["run", "--trace", str(trace), "--workload", "anon:size=0.3x,passes=1", "--profile", "v5.9", "--json", str(out), "--quiet"]
    for s in reclaimsim.result.settings_list(settings):
        args += ["--set", s]
    run_cli(cli, *args)
    from_cli = without_wall_clock(reclaimsim.load(out).doc)
    for k in CLI_TRACE_KEYS:  # the CLI's extra: pages brought in on demand (Belady's optimum only with --opt)
        from_cli.pop(k)
    assert "opt_faults" not in from_cli
    from_py = reclaimsim.run("anon:size=0.3x,passes=1", profile="v5.9", settings=settings, timeseries_ms=None, trace=trace)
    assert without_wall_clock(from_py.doc) == from_cli
    assert from_py.doc["trace"]["refs"] == 20000 and from_py.doc["trace"]["finished"]
    # The sweep's per-run entry point (Ray's task) replays the same trace alone.
    from reclaimsim.sweep import _run_one

    ok, text = _run_one({"workloads": [], "trace": str(trace), "profile": "v6.2", "settings": ["memory=16M"], "seed": 1})
    assert ok, text
    assert json.loads(text)["trace"]["file"] == str(trace)


def test_bad_trace_names_the_file(tmp_path):
    bad = tmp_path / "bad.rtrace"
    bad.write_bytes(b"not a trace at all")
    with pytest.raises(reclaimsim.BadInput, match="bad.rtrace"):
        reclaimsim.run(trace=bad, settings={"memory": "16M"})


def test_reclaimsim_command_runs_the_cli(tmp_path):
    """`python -m reclaimsim` and the installed `reclaimsim` script run the command line in-process."""
    import subprocess
    import sys
    from pathlib import Path

    p = subprocess.run([sys.executable, "-m", "reclaimsim", "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("reclaimsim 0.") and "(commit " in p.stdout, p
    p = subprocess.run([sys.executable, "-m", "reclaimsim", "run", "-w", "hotcld"], capture_output=True, text=True)
    assert p.returncode == 2 and "did you mean `hotcold`?" in p.stderr, p
    script = Path(sys.executable).parent / "reclaimsim"
    assert script.is_file(), "the package installs a `reclaimsim` command"
    out = tmp_path / "r.json"
    p = subprocess.run([str(script), "run", "-q", "-w", "anon:size=0.5x,ops=2000", "--set", "memory=1M", "--set", "swap=none", "--json", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert out.is_file() and p.stdout.startswith("# ran anon:size=0.5x")


def test_mrc_points_are_the_cli_curve(cli, tmp_path):
    trace = tmp_path / "hot.rtrace"
    run_cli(cli, "trace", "synth", "--records", "20000", "--pages", "6000", "--hot-pages", "1000", str(trace))
    csv = tmp_path / "m.csv"
    run_cli(cli, "mrc", "--trace", str(trace), "--sizes", "4M,8M,16M", "--set", "swap=ssd:64M", "--csv", str(csv), "--jobs", "2")
    lines = csv.read_text().splitlines()
    head = lines[0].split(",")
    want = [dict(zip(head, line.split(","))) for line in lines[1:]]
    points = reclaimsim.mrc(trace=trace, sizes=["4M", 8 << 20, "16M"], settings={"swap": "ssd:64M"}, jobs=1)
    assert [p["memory_bytes"] for p in points] == [4 << 20, 8 << 20, 16 << 20]
    for p, w in zip(points, want):
        assert (p["faults"], p["refaults"], p["swapins"], p["lru_misses"]) == tuple(int(w[k]) for k in ("faults", "refaults", "swapins", "lru_misses"))
        assert p["refs"] == 20000 and p["finished"] and p["sample_rate"] == 1.0
    assert points[0]["faults"] > points[2]["faults"]
    sampled = reclaimsim.mrc(trace=trace, sizes=["16M"], settings={"swap": "ssd:64M"}, sample=0.5)
    assert sampled[0]["run_memory_bytes"] == 8 << 20 and sampled[0]["run_refs"] < 20000
    with pytest.raises(reclaimsim.BadInput, match="sampled mode needs a trace"):
        reclaimsim.mrc("anon:size=1M", sizes=["4M"], sample=0.1)
    with pytest.raises(reclaimsim.BadInput, match="memory size"):
        reclaimsim.mrc(trace=trace, sizes=["lots"])
