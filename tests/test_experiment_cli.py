"""The sweep and results commands on damaged or shared results directories, in
log files and narrow terminals, and their counted nouns."""

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from textwrap import dedent

from click.testing import CliRunner

from ibnetsim.cli import main
from ibnetsim.experiment import kinds, loads_scenario
from ibnetsim.experiment.executors import DaskExecutor, LocalExecutor
from ibnetsim.experiment.store import Store

TESTS = Path(__file__).resolve().parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def scenario_file(tmp_path: Path, seeds=(1, 2, 3), **synthetic) -> Path:
    s = tmp_path / "s.toml"
    s.write_text(
        f'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = {list(seeds)}\n[synthetic]\n'
        + "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in synthetic.items())
    )
    return s


def sweep(tmp_path: Path, *args: str, seeds=(1, 2, 3), **synthetic):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["sweep", str(scenario_file(tmp_path, seeds, **synthetic)), "-o", str(out), "--executor", "serial", *args])
    return r, out


# --------------------------------------------------------------------------- damaged directories
def test_results_names_an_unreadable_results_file_and_exits_1(tmp_path):
    r, out = sweep(tmp_path, "--no-progress")
    assert r.exit_code == 0, r.output
    results = out / "results.parquet"
    results.write_bytes(results.read_bytes()[:100])
    r = CliRunner().invoke(main, ["results", str(out)])
    assert r.exit_code == 1
    assert f"{out}: 1 results file not readable ({results}): the table lacks their points, which the next sweep into {out} runs again" in r.stderr
    assert "synthetic — 0 points" in " ".join(r.stdout.split())


def test_corrupt_manifest_is_named_by_every_command(tmp_path):
    r, out = sweep(tmp_path, "--no-progress")
    (out / "manifest.json").write_text('{"format": 1,')
    for args in (["results", str(out)], ["sweep", str(tmp_path / "s.toml"), "-o", str(out), "--executor", "serial"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert f"\nerror: {out / 'manifest.json'}: not a results manifest (" in "\n" + r.stderr
        assert "rename it (e.g. to manifest.json.corrupt) and run the sweep again" in r.stderr


def test_a_second_sweep_into_the_same_directory_fails_at_once(tmp_path):
    gate, markers = tmp_path / "gate", tmp_path / "markers"
    markers.mkdir()
    scen = scenario_file(tmp_path, (1, 2), marker_dir=str(markers), wait_for=str(gate))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "ibnetsim.cli", "sweep", str(scen), "-o", str(tmp_path / "out"), "--executor", "serial", "--no-progress"]
    first = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        # The first point has started (and waits for the gate), so the first sweep holds the directory.
        deadline = time.monotonic() + 120
        while not list(markers.iterdir()):
            assert first.poll() is None, first.stderr.read()
            assert time.monotonic() < deadline, "the first sweep did not start its first point"
            time.sleep(0.05)
        second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"error: {tmp_path / 'out'}: another sweep (pid {first.pid} on {socket.gethostname()}) is writing to this results directory" in second.stderr
        assert len(list(markers.iterdir())) == 1  # the second sweep ran nothing
    finally:
        gate.touch()
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert len(Store(tmp_path / "out").rows()) == 2


# --------------------------------------------------------------------------- progress in a log file
def test_sweep_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    r, _ = sweep(tmp_path, "--progress-interval", "0")
    assert r.exit_code == 0, r.output
    lines = [x for x in r.stderr.splitlines() if x.startswith("[")]
    assert [re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", re.sub(r", ETA \d+:\d\d:\d\d$", ", ETA", x)) for x in lines] == [
        "1/3 points finished, 0 failed, elapsed 0:00:00, ETA",
        "2/3 points finished, 0 failed, elapsed 0:00:00, ETA",
        "3/3 points finished, 0 failed, elapsed 0:00:00",
    ]
    r = CliRunner().invoke(main, ["sweep", str(tmp_path / "s.toml"), "--progress-interval", "-1"])
    assert r.exit_code == 2 and "--progress-interval" in r.stderr


# --------------------------------------------------------------------------- the results table
SIM = """
kind = "simulate"
[fabric]
kind = "single_switch"
hosts = 2
[routing]
engine = ["updn", "minhop"]
[simulation]
time_us = 10.0
[traffic]
load = [0.1, 0.2, 0.3]
"""


def _table(text: str, box: str) -> list[list[str]]:
    """The cells of the table's rows drawn with ``box`` (┃ header, │ body), one list per line."""
    return [[c.strip() for c in line.split(box)[1:-1]] for line in ANSI.sub("", text).splitlines() if line.startswith(box)]


def test_results_table_fits_a_terminal_and_wide_shows_every_column(tmp_path):
    sc = loads_scenario(SIM)
    out = tmp_path / "out"
    store = Store(out)
    run = store.open_run(sc, "serial", 1)
    columns = kinds.get("simulate").columns
    for p in sc.points:
        # A made-up row holding every result column of the kind, so the table is as wide as a real one.
        store.write_point(p, {"status": "ok", "error": "", **{c: [1.0, 2.0] if d.startswith("List:") else 1000.0 * p.index + 0.123456 for c, d in columns.items()}}, run)
    df = store.rows()
    terminal = {"COLUMNS": "100", "FORCE_COLOR": "1", "NO_COLOR": "1"}

    r = CliRunner().invoke(main, ["results", str(out)], env=terminal)
    assert r.exit_code == 0, r.output
    lines = ANSI.sub("", r.stdout).splitlines()
    assert max(len(x) for x in lines) <= 100, r.stdout
    chosen = ["index", "routing.engine", "traffic.load", "status", "offered_load", "accepted_load", "latency_mean_ns", "latency_p99_ns"]
    # Headers too long for the terminal break after a dot or an underscore, values never.
    header = _table(r.stdout, "┃")
    assert len(header) > 1 and ["".join(parts) for parts in zip(*header)] == chosen
    assert all(re.fullmatch(r"[a-z0-9]*[._]?", part) for line in header[:-1] for part in line), header
    want = [[str(row["index"]), row["routing.engine"], f"{row['traffic.load']:g}", "ok", *[f"{row[c]:.6g}" for c in chosen[4:]]] for _, row in df.iterrows()]
    assert _table(r.stdout, "│") == want

    r = CliRunner().invoke(main, ["results", str(out), "--wide"], env=terminal)
    assert r.exit_code == 0, r.output
    (header,) = _table(r.stdout, "┃")
    assert header == [c for c in df.columns if c != "traceback"]
    assert len(header) > 40 and {"latency_max_ns", "events", "fabric.hosts", "key"} <= set(header)
    rows = _table(r.stdout, "│")
    assert [row[header.index("port_utilization")] for row in rows] == ["[2 values]"] * 6

    r = CliRunner().invoke(main, ["results", str(out), "--wide", "--columns", "index"])
    assert r.exit_code == 2 and "give --columns or --wide, not both" in r.stderr


# --------------------------------------------------------------------------- counted nouns
def test_one_of_a_thing_is_singular(tmp_path):
    r = CliRunner().invoke(main, ["sweep", str(scenario_file(tmp_path, (1,))), "--dry-run"])
    assert r.exit_code == 0 and f"{tmp_path / 's.toml'}: kind synthetic, 1 point\n" in r.stdout
    r, out = sweep(tmp_path, "--no-progress", seeds=(1,))
    assert r.exit_code == 0, r.output
    assert f"s.toml: 1 point on serial → {out}" in r.stderr and "1 point, 0 already done, 1 ran, 0 failed" in r.stderr
    r = CliRunner().invoke(main, ["results", str(out)])
    assert "— 1 point" in r.stdout and "[1 value]" not in r.stdout
    r, out = sweep(tmp_path, "--no-progress", seeds=(1, 2), fail_seed=2)
    assert r.exit_code == 1
    r = CliRunner().invoke(main, ["results", str(out)])
    assert "1 point failed: ibnetsim results" in r.stderr
    assert LocalExecutor(1).describe() == "local process pool, 1 worker"
    assert LocalExecutor(2).describe() == "local process pool, 2 workers"
    assert DaskExecutor(workers=1).describe() == "dask LocalCluster, 1 worker process"


def test_qos_plan_counts_one_request(tmp_path):
    runner = CliRunner()
    net = tmp_path / "hc.net"
    assert runner.invoke(main, ["topo", "gen", "hypercube", "--dim", "2", "--hosts", "2", "-o", str(net)]).exit_code == 0
    req = tmp_path / "req.csv"
    req.write_text(dedent("""\
        source, destination, class, bandwidth
        h0, h7, DB, 100M
        """))
    r = runner.invoke(main, ["qos", "plan", str(net), str(req)])
    assert r.exit_code == 0, r.output
    assert "1 request: 1 accepted, 0 refused" in r.stderr
    assert "# 1 request: 1 accepted, 0 refused;" in r.stdout


def test_the_default_results_directory_is_the_one_the_help_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grid.toml").write_text('kind = "tframe"\n[tframe]\nlink_width = "1x"\n')
    runner = CliRunner()
    for command in ("sweep", "run"):
        assert "default: results/<scenario file stem>, e.g. results/grid for grid.toml" in " ".join(runner.invoke(main, [command, "--help"]).output.split())
    r = runner.invoke(main, ["sweep", "grid.toml", "--no-progress"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "results" / "grid" / "manifest.json").is_file()
