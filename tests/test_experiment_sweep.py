"""Sweeps: store round trip, resume, failing and crashing points, Ctrl-C, and identical rows on every executor."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from textwrap import dedent

import numpy as np
import pandas as pd
import pytest

from ibnetsim.experiment import load_results, loads_scenario, make_executor, run_sweep
from ibnetsim.experiment.store import RUNTIME_COLUMNS, Store, flatten_config

TESTS = Path(__file__).resolve().parent


def synthetic(tmp_path: Path, seeds=(1, 2, 3, 4), xs=(1.0, 2.0), **extra) -> "object":
    lines = [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    text = dedent(
        f"""\
        kind = "synthetic"
        name = "synthetic test"
        plugins = ["experiment_plugin"]
        seed = {json.dumps(list(seeds))}

        [synthetic]
        x = {json.dumps(list(xs))}
        """
    ) + "\n".join(lines) + "\n"
    path = tmp_path / "synthetic.toml"
    path.write_text(text)
    return loads_scenario(text, path=path)


def expected_mean(seed: int, x: float, n: int = 1000) -> float:
    return float((np.random.default_rng(seed).standard_normal(n) * x).mean())


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=[c for c in RUNTIME_COLUMNS if c in df]).sort_values("key").reset_index(drop=True)


# --------------------------------------------------------------------------- store
def test_flatten_config():
    assert flatten_config({"seed": 1, "fabric": {"kind": "mesh", "dims": [4, 4], "seed": None}}) == {
        "seed": 1,
        "fabric.kind": "mesh",
        "fabric.dims": "[4, 4]",
        "fabric.seed": None,
    }


def test_flatten_config_names_repeated_tables_like_the_scenario():
    # One [[traffic]] table is named like a plain [traffic]; several get an index.
    assert flatten_config({"traffic": [{"load": 0.1}]}) == {"traffic.load": 0.1}
    assert flatten_config({"traffic": [{"load": 0.1}, {"load": 0.2, "sl": 1}]}) == {
        "traffic[0].load": 0.1,
        "traffic[1].load": 0.2,
        "traffic[1].sl": 1,
    }
    # The store's column of a swept key is the axis name the scenario gives it.
    base = 'kind = "simulate"\n[fabric]\nkind = "single_switch"\nhosts = 2\n[routing]\nengine = "minhop"\n[simulation]\ntime_us = 10.0\n'
    one = loads_scenario(base + "[[traffic]]\nload = [0.1, 0.2]\n")
    two = loads_scenario(base + "[[traffic]]\nload = [0.1, 0.2]\n[[traffic]]\nload = 0.3\nsl = 1\n")
    for sc in (one, two):
        (axis,) = sc.axes
        assert axis.name in flatten_config(sc.points[0].config)
    assert [one.axes[0].name, two.axes[0].name] == ["traffic.load", "traffic[0].load"]


def test_store_round_trip(tmp_path):
    sc = synthetic(tmp_path, seeds=(1, 2), xs=(0.5,))
    store = Store(tmp_path / "out")
    run = store.open_run(sc, "serial", 1)
    p0, p1 = sc.points
    store.write_point(p0, {"status": "ok", "error": "", "a": 1.5, "b": 7, "flag": True, "name": "x", "prof": [1.0, 2.5], "elapsed_s": 0.1}, run)
    store.write_point(p1, {"status": "error", "error": "RuntimeError: boom", "elapsed_s": 0.2}, run)
    df = store.rows()
    assert list(df["key"]) == [p0.key, p1.key]
    assert list(df["index"]) == [0, 1]
    r0, r1 = df.iloc[0], df.iloc[1]
    assert (r0["a"], r0["b"], bool(r0["flag"]), r0["name"], list(r0["prof"])) == (1.5, 7, True, "x", [1.0, 2.5])
    assert r0["seed"] == 1 and r0["synthetic.x"] == 0.5 and r0["kind"] == "synthetic"
    assert r1["status"] == "error" and r1["error"] == "RuntimeError: boom" and pd.isna(r1["a"])
    assert store.finished_keys() == {p0.key}
    assert store.finished_keys(include_failed=True) == {p0.key, p1.key}
    # Compaction keeps every row, in one file, and removes the point files.
    store.compact()
    assert not list((tmp_path / "out" / "points").glob("*.parquet"))
    again = Store(tmp_path / "out").rows()
    pd.testing.assert_frame_equal(again, df)
    # A newer row of a key replaces the older one.
    store.write_point(p1, {"status": "ok", "error": "", "a": 3.0, "elapsed_s": 0.3}, run)
    df2 = store.rows()
    assert len(df2) == 2 and df2.iloc[1]["status"] == "ok" and df2.iloc[1]["a"] == 3.0
    # The manifest records the scenario and every point.
    m = store.manifest()
    assert m["scenario"]["text"] == sc.text and m["scenario"]["kind"] == "synthetic"
    assert [p["key"] for p in m["points"]] == [p0.key, p1.key]
    assert m["points"][1]["config"]["seed"] == 2
    assert m["axes"] == {"seed": [1, 2]}
    assert {"ibnetsim_version", "build_commit", "scenario_sha256", "host", "python", "runs"} <= set(m)
    import ibnetsim

    assert m["runs"][-1]["ibnetsim_version"] == ibnetsim.__version__ and "build_commit" in m["runs"][-1]


def test_load_results_ok_only_drops_failed_points(tmp_path):
    sc = synthetic(tmp_path, seeds=(1, 2, 3), xs=(1.0,))
    store = Store(tmp_path / "out")
    run = store.open_run(sc, "serial", 1)
    store.write_point(sc.points[0], {"status": "ok", "error": "", "v": 1.0}, run)
    store.write_point(sc.points[1], {"status": "error", "error": "boom", "v": None}, run)
    store.write_point(sc.points[2], {"status": "ok", "error": "", "v": 3.0}, run)
    assert list(load_results(tmp_path / "out")["seed"]) == [1, 2, 3]
    ok = load_results(tmp_path / "out", ok_only=True)
    assert list(ok["seed"]) == [1, 3] and list(ok["v"]) == [1.0, 3.0]
    assert list(ok.index) == [0, 1]


def test_manifest_keeps_the_points_of_earlier_runs(tmp_path):
    # A second run over other seeds adds its points; the manifest still
    # describes every row on disk, and the runs are numbered from 1.
    store = Store(tmp_path / "out")
    first = synthetic(tmp_path, seeds=(1, 2), xs=(1.0,))
    assert store.open_run(first, "serial", 1) == 1
    second = synthetic(tmp_path, seeds=(2, 3), xs=(1.0,))
    assert store.open_run(second, "serial", 1) == 2
    m = store.manifest()
    want = {p.key: p.config["seed"] for p in first.points + second.points}
    assert len(want) == 3
    assert {p["key"]: p["config"]["seed"] for p in m["points"]} == want
    assert [r["run"] for r in m["runs"]] == [1, 2]
    assert [r["points"] for r in m["runs"]] == [2, 2]


def test_truncated_point_file_is_named_and_its_point_runs_again(tmp_path, caplog):
    sc = synthetic(tmp_path, seeds=(1, 2), xs=(1.0,))
    store = Store(tmp_path / "out")
    store.open_run(sc, "serial", 1)
    store.write_point(sc.points[0], {"status": "ok", "error": "", "v": 1.0})
    cut = tmp_path / "out" / "points" / f"{sc.points[1].key}.parquet"
    cut.write_bytes(b"PAR1 cut short")
    assert store.finished_keys() == {sc.points[0].key}
    assert store.unreadable == [cut]
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warning.startswith(f"{cut}: not readable Parquet") and "runs them again" in warning


def test_load_results_rejects_non_results_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a results directory"):
        load_results(tmp_path)


# --------------------------------------------------------------------------- sweeps
def test_sweep_values_and_resume_skips_finished(tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    sc = synthetic(tmp_path, marker_dir=str(markers))
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert (s.total, s.skipped, s.done, s.failed, s.interrupted) == (8, 0, 8, 0, False)
    df = load_results(tmp_path / "out")
    for _, r in df.iterrows():
        assert r["mean"] == expected_mean(int(r["seed"]), float(r["synthetic.x"]))
    assert len(list(markers.iterdir())) == 8
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert (s.skipped, s.done) == (8, 0)
    assert len(list(markers.iterdir())) == 8  # nothing ran again
    # A bigger sweep over the same directory runs only the new points.
    bigger = synthetic(tmp_path, seeds=(1, 2, 3, 4, 5), marker_dir=str(markers))
    s = run_sweep(bigger, tmp_path / "out", make_executor("serial"), progress=False)
    assert (s.skipped, s.done) == (8, 2)
    assert len(load_results(tmp_path / "out")) == 10
    assert len(Store(tmp_path / "out").manifest()["runs"]) == 3


def test_failing_point_is_recorded_and_sweep_goes_on(tmp_path):
    sc = synthetic(tmp_path, fail_seed=3)
    s = run_sweep(sc, tmp_path / "out", make_executor("local", workers=2), progress=False)
    assert (s.done, s.failed) == (6, 2)
    df = load_results(tmp_path / "out")
    bad = df[df["status"] == "error"]
    assert sorted(bad["seed"]) == [3, 3]
    assert all(e == "RuntimeError: synthetic failure at seed 3" for e in bad["error"])
    assert all("Traceback" in t and "_synthetic" in t for t in bad["traceback"])
    assert df[df["status"] == "ok"]["mean"].notna().all()
    # Failed points are retried on the next run (unless --skip-failed).
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False, retry_failed=False)
    assert (s.skipped, s.done, s.failed) == (8, 0, 0)
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert (s.skipped, s.done, s.failed) == (6, 0, 2)


def test_interrupted_sweep_resumes_where_it_stopped(tmp_path, monkeypatch):
    markers = tmp_path / "markers"
    markers.mkdir()
    # Point order: seed 1 (x=1, x=2), seed 2 (...), ...; seed 3 raises KeyboardInterrupt, as Ctrl-C would.
    sc = synthetic(tmp_path, marker_dir=str(markers))
    monkeypatch.setenv("SYNTHETIC_INTERRUPT_SEED", "3")
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert s.interrupted and (s.done, s.failed, s.remaining) == (4, 0, 4)
    df = load_results(tmp_path / "out")
    assert sorted(df["seed"]) == [1, 1, 2, 2]
    assert Store(tmp_path / "out").manifest()["runs"][0]["interrupted"] is True
    for f in markers.iterdir():
        f.unlink()
    monkeypatch.delenv("SYNTHETIC_INTERRUPT_SEED")
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert (s.skipped, s.done, s.interrupted) == (4, 4, False)
    assert sorted(int(f.name.split("-")[0]) for f in markers.iterdir()) == [3, 3, 4, 4]
    assert len(load_results(tmp_path / "out")) == 8


def test_crashed_worker_loses_nothing_and_fails_only_its_point(tmp_path):
    sc = synthetic(tmp_path, seeds=(1, 2, 3, 4, 5), crash_seed=2)
    s = run_sweep(sc, tmp_path / "out", make_executor("local", workers=2), progress=False)
    assert (s.done, s.failed) == (8, 2)
    df = load_results(tmp_path / "out")
    bad = df[df["status"] == "error"]
    assert sorted(bad["seed"]) == [2, 2]
    assert all("worker process died" in e for e in bad["error"])
    ok = df[df["status"] == "ok"]
    assert sorted(set(ok["seed"])) == [1, 3, 4, 5]


def test_rows_identical_on_every_executor(tmp_path):
    sc = synthetic(tmp_path, seeds=(1, 2, 3), xs=(0.5, 1.0, 2.0), fail_seed=2)
    frames = {}
    for name, ex in (
        ("serial", make_executor("serial")),
        ("local1", make_executor("local", workers=1)),
        ("local2", make_executor("local", workers=2)),
        ("dask", make_executor("dask", workers=2)),
    ):
        run_sweep(sc, tmp_path / name, ex, progress=False)
        frames[name] = comparable(load_results(tmp_path / name))
    base = frames.pop("serial")
    assert len(base) == 9 and (base["status"] == "ok").sum() == 6
    for name, df in frames.items():
        pd.testing.assert_frame_equal(df, base, obj=name)
    # The dask rows really came from other processes.
    assert set(load_results(tmp_path / "dask")["pid"]) .isdisjoint({os.getpid()})


SIM_SWEEP = """
kind = "simulate"
seed = [1, 2]
[fabric]
kind = "irregular"
switches = 4
switch_ports = 6
links_per_switch = 2
hosts_per_switch = 2
[routing]
engine = ["updn", "minhop"]
[simulation]
preset = "martinez2003"
time_us = 150.0
warmup_us = 20.0
[traffic]
load = 0.2
"""


def test_simulation_rows_identical_on_serial_pool_and_dask(tmp_path):
    # The real data plane, not the synthetic kind: its ChaCha streams, routing tie-breaks
    # and float reductions must not depend on the process a point runs in.
    sc = loads_scenario(SIM_SWEEP)
    frames = {}
    for name, ex in (("serial", make_executor("serial")), ("local2", make_executor("local", workers=2)), ("dask", make_executor("dask", workers=2))):
        run_sweep(sc, tmp_path / name, ex, progress=False)
        frames[name] = comparable(load_results(tmp_path / name)).drop(columns=["wall_s"])
    base = frames.pop("serial")
    assert len(base) == 4 and (base["status"] == "ok").all() and (base["delivered_packets"] > 0).all()
    for name, df in frames.items():
        pd.testing.assert_frame_equal(df, base, obj=name)


def test_progress_bar_shows_done_failed_and_eta(tmp_path):
    import io

    from rich.console import Console

    buf = io.StringIO()
    sc = synthetic(tmp_path, seeds=(1, 2, 3), xs=(1.0,), fail_seed=2)
    run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=True, console=Console(file=buf, width=160, force_terminal=True, color_system=None))
    text = buf.getvalue()
    assert "3/3" in text and "1 failed" in text, text
    # Elapsed and remaining time are rendered as clocks after their labels.
    assert re.search(r"elapsed\s+\d+:\d\d:\d\d", text) and re.search(r"ETA\s+(\d+:\d\d:\d\d|-:--:--)", text), text
    assert "point 1 (seed=2" in text  # the failure is reported as it happens


def test_dask_records_a_killed_worker_as_failed(tmp_path):
    from dask import config

    sc = synthetic(tmp_path, seeds=(1, 2, 3), xs=(1.0,), crash_seed=2)
    with config.set({"distributed.scheduler.allowed-failures": 0}):
        s = run_sweep(sc, tmp_path / "out", make_executor("dask", workers=2), progress=False)
    assert (s.done, s.failed) == (2, 1)
    df = load_results(tmp_path / "out")
    assert list(df.loc[df["status"] == "error", "seed"]) == [2]
    assert "KilledWorker" in df.loc[df["status"] == "error", "error"].iloc[0]


def test_ctrl_c_stops_cleanly_and_keeps_finished_points(tmp_path):
    gate = tmp_path / "gate"
    markers = tmp_path / "markers"
    markers.mkdir()
    # Seeds 1 and 2 finish at once; seeds 3 and up block until the gate file exists,
    # so Ctrl-C arrives while seeds 3 and 4 are running.
    scen = tmp_path / "s.toml"
    scen.write_text(
        dedent(
            f"""\
            kind = "synthetic"
            plugins = ["experiment_plugin"]
            seed = [1, 2, 3, 4, 5, 6]
            [synthetic]
            marker_dir = "{markers}"
            wait_for = "{gate}"
            wait_from_seed = 3
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "ibnetsim.cli", "sweep", str(scen), "-o", str(tmp_path / "out"), "--workers", "2", "--no-progress"]
    # A shell starts background jobs with SIGINT ignored, and a child inherits
    # that (CI runs in the background): give the sweep Ctrl-C as a terminal would.
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    started = lambda: sorted(int(f.name.split("-")[0]) for f in markers.iterdir())  # noqa: E731
    # Interrupt once seeds 3 and 4 are running and the sweep has stored seeds
    # 1 and 2: a result still on its way from a worker when Ctrl-C lands is
    # not waited for (that point would run again on resume).
    stored = lambda: len(list((tmp_path / "out" / "points").glob("*.parquet"))) if (tmp_path / "out" / "points").is_dir() else 0  # noqa: E731
    deadline = time.monotonic() + 120
    while started() != [1, 2, 3, 4] or stored() < 2:
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, f"the sweep did not reach seeds 3 and 4 (started: {started()}, stored: {stored()})"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted with 4 left" in err and "resume" in err
    df = load_results(tmp_path / "out")
    assert sorted(df["seed"]) == [1, 2] and (df["status"] == "ok").all()
    assert Store(tmp_path / "out").manifest()["runs"][-1]["interrupted"] is True
    # Resume with the gate open: exactly the four unfinished points run.
    for f in markers.iterdir():
        f.unlink()
    gate.touch()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert started() == [3, 4, 5, 6]
    df = load_results(tmp_path / "out")
    assert sorted(df["seed"]) == [1, 2, 3, 4, 5, 6] and (df["status"] == "ok").all()


# --------------------------------------------------------------------------- damaged or shared results directories
def test_unreadable_results_file_is_set_aside_and_its_points_run_again(tmp_path, caplog):
    sc = synthetic(tmp_path, seeds=(1, 2), xs=(1.0,))
    out = tmp_path / "out"
    run_sweep(sc, out, make_executor("serial"), progress=False)
    results = out / "results.parquet"
    data = results.read_bytes()
    for n, aside in ((1, "results.parquet.corrupt"), (2, "results.parquet.corrupt.2")):
        cut = data[: len(data) // 2 - n]
        results.write_bytes(cut)
        caplog.clear()
        s = run_sweep(sc, out, make_executor("serial"), progress=False)
        assert (s.skipped, s.done) == (0, 2)
        # Kept aside, not deleted, under a name no later read picks up.
        assert (out / aside).read_bytes() == cut
        messages = [r.getMessage() for r in caplog.records]
        assert any(m.startswith(f"{results}: not readable Parquet") and f"a sweep into {out} runs them again" in m for m in messages), messages
        assert any(m.startswith(f"{results}: not readable Parquet") and m.endswith(f"; set aside as {aside}") for m in messages), messages
        assert sorted(load_results(out)["seed"]) == [1, 2]
    assert (out / "results.parquet.corrupt").read_bytes() == data[: len(data) // 2 - 1]


@pytest.mark.parametrize("body", [b'{"format": 1, "points": [', b"[1, 2]", b"\xff\xfe"], ids=["cut", "list", "not-utf8"])
def test_corrupt_manifest_is_an_error_naming_it(tmp_path, body):
    from ibnetsim import IbnetsimError, ResultsError

    sc = synthetic(tmp_path, seeds=(1, 2), xs=(1.0,))
    out = tmp_path / "out"
    run_sweep(sc, out, make_executor("serial"), progress=False)
    manifest = out / "manifest.json"
    manifest.write_bytes(body)
    with pytest.raises(ResultsError, match=f"^{re.escape(str(manifest))}: not a results manifest") as e:
        run_sweep(sc, out, make_executor("serial"), progress=False)
    assert isinstance(e.value, IbnetsimError)
    # The advice in the message works: without the manifest the finished points are kept.
    manifest.rename(out / "manifest.json.corrupt")
    s = run_sweep(sc, out, make_executor("serial"), progress=False)
    assert (s.skipped, s.done) == (2, 0)


def test_a_sweep_removes_the_temporary_files_a_killed_one_left(tmp_path):
    import uuid

    sc = synthetic(tmp_path, seeds=(1, 2), xs=(1.0,))
    out = tmp_path / "out"
    run_sweep(sc, out, make_executor("serial"), progress=False)
    # What kill -9 leaves between writing a file and renaming it into place.
    stale = [
        out / "points" / f".{sc.points[0].key}.parquet.{uuid.uuid4().hex}.tmp",
        out / f".manifest.json.{uuid.uuid4().hex}.tmp",
        out / f".results.parquet.{uuid.uuid4().hex}.tmp",
    ]
    others = [out / "notes.tmp", out / "points" / ".draft.tmp"]
    for f in stale + others:
        f.write_bytes(b"partial")
    s = run_sweep(sc, out, make_executor("serial"), progress=False)
    assert s.skipped == 2
    assert [f.name for f in stale if f.exists()] == []
    assert all(f.read_bytes() == b"partial" for f in others)


def test_a_second_sweep_into_a_directory_fails_at_once(tmp_path):
    import socket

    from ibnetsim import ResultsError

    markers = tmp_path / "markers"
    markers.mkdir()
    sc = synthetic(tmp_path, seeds=(1, 2), xs=(1.0,), marker_dir=str(markers))
    out = tmp_path / "out"
    with Store(out).writing():
        with pytest.raises(ResultsError, match=re.escape(f"{out}: another sweep (pid {os.getpid()} on {socket.gethostname()}) is writing")):
            run_sweep(sc, out, make_executor("serial"), progress=False)
    assert list(markers.iterdir()) == []
    # Released with the sweep that held it.
    s = run_sweep(sc, out, make_executor("serial"), progress=False)
    assert s.done == 2 and len(list(markers.iterdir())) == 2


# --------------------------------------------------------------------------- provenance
def test_manifest_records_version_build_commit_and_scenario_hash(tmp_path):
    import hashlib

    import ibnetsim
    from ibnetsim.experiment import load_scenario
    from ibnetsim.experiment.report import write_html_report

    path = tmp_path / "s.toml"
    # CRLF line ends and a non-ASCII comment: the hash is of the bytes, not of re-encoded text.
    path.write_bytes('kind = "synthetic"\r\nplugins = ["experiment_plugin"]\r\nseed = [1, 2] # µ\r\n'.encode())
    out = tmp_path / "out"
    run_sweep(load_scenario(path), out, make_executor("serial"), progress=False)
    m = Store(out).manifest()
    want = hashlib.sha256(path.read_bytes()).hexdigest()
    for record in (m, m["runs"][-1]):
        assert record["ibnetsim_version"] == ibnetsim.__version__
        assert record["build_commit"] == ibnetsim.__build_commit__
        assert record["scenario_sha256"] == want
        assert "git_commit" not in record
    assert re.fullmatch(r"[0-9a-f]{7,40}|unknown", ibnetsim.__build_commit__)
    page = write_html_report(out).read_text()
    assert f"build commit {ibnetsim.__build_commit__}, scenario SHA-256 {want}" in page


# --------------------------------------------------------------------------- progress in a log file
def test_progress_in_a_log_file_is_plain_lines(tmp_path):
    import io

    from rich.console import Console

    line = re.compile(r"\[\d\d:\d\d:\d\d\] (\d)/3 points finished, (\d) failed, elapsed \d+:\d\d:\d\d(, ETA \d+:\d\d:\d\d)?")

    def progress_lines(out: str, interval: float) -> tuple[list[tuple[str, str, bool]], list[str]]:
        buf = io.StringIO()
        sc = synthetic(tmp_path, seeds=(1, 2, 3), xs=(1.0,), fail_seed=2)
        run_sweep(sc, tmp_path / out, make_executor("serial"), progress=True, console=Console(file=buf, width=40), progress_interval=interval)
        text = buf.getvalue()
        assert "\x1b" not in text and "\r" not in text, text
        lines = text.splitlines()
        found = [line.fullmatch(x) for x in lines if x.startswith("[")]
        assert all(found), lines
        return [(m[1], m[2], bool(m[3])) for m in found], [x for x in lines if not x.startswith("[")]

    # Interval 0: a line per finished point, the last left to the final line (no ETA there).
    seen, others = progress_lines("every", 0)
    assert seen == [("1", "0", True), ("2", "1", True), ("3", "1", False)]
    # Not folded at the console's 40 columns.
    assert others == ["point 1 (seed=2) failed: RuntimeError: synthetic failure at seed 2"]
    # A long interval: the first point's line, then only the final one.
    seen, _ = progress_lines("hourly", 3600)
    assert seen == [("1", "0", True), ("3", "1", False)]
    with pytest.raises(ValueError, match="progress_interval must be a number of seconds >= 0"):
        run_sweep(synthetic(tmp_path), tmp_path / "never", make_executor("serial"), progress_interval=-1)


def test_a_long_point_reports_its_own_progress_in_a_log(tmp_path, capfd):
    # In a log (not a terminal), a simulate point prints plain lines of its
    # simulated time on stderr, labelled with its index; with a live bar it does not.
    import io

    from rich.console import Console

    sc = loads_scenario(
        'kind = "simulate"\nseed = 1\n[fabric]\nkind = "ring"\nswitches = 4\n[routing]\nengine = "updn"\n'
        "[simulation]\ntime_us = 20.0\n[traffic]\nload = 0.1\n"
    )
    run_sweep(sc, tmp_path / "log", make_executor("serial"), progress=True, console=Console(file=io.StringIO()), progress_interval=0)
    err = capfd.readouterr().err
    assert re.search(r"^point 0: simulated 20\.0/20\.0 µs \(100 %\), ", err, flags=re.M), err
    run_sweep(sc, tmp_path / "quiet", make_executor("serial"), progress=False, progress_interval=0)
    assert "simulated" not in capfd.readouterr().err
