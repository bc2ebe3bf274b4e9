"""The ``simulate`` point kind and the ``ibnetsim run`` / ``bench`` commands, on tiny fabrics."""

import math
from pathlib import Path
import re
import subprocess
import sys

import pytest

from ibnetsim.experiment import kinds, load_results, loads_scenario, make_executor, run_sweep
from ibnetsim.experiment.scenario import ScenarioError
from ibnetsim.experiment.scenario import load as load_scenario
from ibnetsim.run_cli import saturation

TINY = """
kind = "simulate"
name = "tiny"
seed = 3

[fabric]
kind = "irregular"
switches = 4
switch_ports = 6
links_per_switch = 2
hosts_per_switch = 2

[routing]
engine = "updn"

[simulation]
preset = "martinez2003"
time_us = {time_us}
warmup_us = {warmup_us}

[traffic]
pattern = "uniform"
payload_bytes = 256
load = {load}
"""


def tiny(load="0.1", time_us=400.0, warmup_us=50.0):
    return TINY.format(load=load, time_us=time_us, warmup_us=warmup_us)


def test_simulate_kind_columns_are_sane():
    sc = loads_scenario(tiny())
    (point,) = sc.points
    assert point.config["simulation"]["seed"] == 3  # follows the top-level seed
    row = kinds.get("simulate").run(point.config)
    # 8 hosts at 10 % of 1x SDR (0.25 B/ns) send 0.025 B/ns each: over the 350 µs after
    # warm-up, 8750 B = 31 packets of 282 wire bytes per host, ~250 in all. Far from
    # saturation, accepted tracks offered within Poisson noise (1/sqrt(250) ≈ 6 %).
    assert 0.07 < row["offered_load"] < 0.13
    assert abs(row["accepted_load"] - row["offered_load"]) <= 0.15 * row["offered_load"]
    # Conservation over the whole run.
    assert row["generated_packets"] == row["delivered_packets"] + row["dropped_packets"] + row["in_flight_packets"]
    assert row["dropped_packets"] == 0
    assert row["generated_packets"] > 200
    # Latency: at least the wire time of a 282 B packet on a 2 Gb/s link (1128 ns) plus routing.
    assert row["latency_mean_ns"] > 1128
    assert row["latency_p99_ns"] >= row["latency_mean_ns"]
    # Per-port profile: one entry per cabled transmitter, 4 switches × (2 links + 2 hosts) + 8 hosts.
    util = row["port_utilization"]
    assert len(util) == 4 * 4 + 8
    assert all(0.0 <= u <= 1.0 for u in util)
    assert row["max_port_utilization"] == pytest.approx(max(util))
    assert 0.0 < row["mean_switch_link_utilization"] < 1.0
    edges, counts = row["latency_hist_edges_ns"], row["latency_hist_counts"]
    assert len(edges) == len(counts) + 1 and sum(counts) > 0
    assert all(b > a for a, b in zip(edges, edges[1:]))
    assert row["nominal_load"] == 0.1


def test_overload_falls_behind_and_saturation_finds_it():
    row = kinds.get("simulate").run(loads_scenario(tiny(load="1.5", time_us=200.0)).points[0].config)
    assert row["accepted_load"] < 0.9 * row["offered_load"]
    assert row["injection_queue_packets"] > 0
    assert row["generated_packets"] == row["delivered_packets"] + row["dropped_packets"] + row["in_flight_packets"]


def test_saturation_criterion():
    # Hand-worked: keeps up to 0.3, falls behind at 0.4; the noisy 0.5 that keeps up does not count.
    s = saturation([0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.199, 0.2941, 0.3, 0.5])
    assert (s.load, s.first_behind, s.beyond_sweep) == (0.3, 0.4, False)
    assert saturation([0.1, 0.2], [0.1, 0.2], [0.1, 0.2]).beyond_sweep
    s = saturation([0.2, 0.1], [0.2, 0.1], [0.2, 0.05])
    assert s.load is None and s.first_behind == 0.1
    # Exactly 2 % below offered still counts as keeping up.
    assert saturation([1.0], [1.0], [0.98]).load == 1.0
    # A load that keeps up over a measurement that kept growing does not count.
    s = saturation([0.1, 0.2, 0.3], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3], stationary=[True, False, True])
    assert (s.load, s.first_behind, s.behind_because) == (0.1, 0.2, "not stationary")
    s = saturation([0.1, 0.2], [0.1, 0.2], [0.1, 0.19], stationary=[None, True])
    assert (s.load, s.first_behind, s.behind_because) == (0.1, 0.2, "accepted")


def test_overload_is_flagged_not_stationary_below_saturation_not():
    below = kinds.get("simulate").run(loads_scenario(tiny(load="0.1", time_us=400.0)).points[0].config)
    over = kinds.get("simulate").run(loads_scenario(tiny(load="1.5", time_us=400.0)).points[0].config)
    assert (below["stationary"], over["stationary"]) == (True, False)


def test_load_list_is_a_sweep(tmp_path):
    sc = loads_scenario(tiny(load="[0.05, 0.1]", time_us=100.0, warmup_us=10.0))
    assert [a.name for a in sc.axes] == ["traffic.load"]
    summary = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert summary.done == 2 and summary.failed == 0
    df = load_results(tmp_path / "out")
    assert sorted(df["nominal_load"]) == [0.05, 0.1]
    assert (df["offered_load"] > 0).all()


def test_bad_traffic_key_names_file_line_and_key(tmp_path):
    text = tiny().replace('pattern = "uniform"', 'pattern = "uniform"\npayload_byts = 256')
    f = tmp_path / "bad.toml"
    f.write_text(text)
    line = text.splitlines().index("payload_byts = 256") + 1
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert e.value.file == str(f) and e.value.line == line and e.value.key == "traffic.payload_byts"
    assert "payload_bytes" in str(e.value)  # the suggestion
    proc = _cli("run", f, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2
    assert f"bad.toml:{line}: traffic.payload_byts" in proc.stderr


def test_packet_larger_than_mtu_is_rejected():
    text = tiny().replace("payload_bytes = 256", "payload_bytes = 512")  # martinez2003 has MTU 256
    with pytest.raises(ScenarioError, match=r"traffic.payload_bytes: must be 1..=256 \(the MTU\), got 512"):
        loads_scenario(text)


def test_deadlock_fails_the_point_and_the_sweep_goes_on(tmp_path):
    # Dimension-order routing on a torus with one VL has a credit loop around each ring;
    # overloaded, it locks, and the watchdog names the cycle. At 1 % load it does not.
    text = """
kind = "simulate"
seed = 1
[fabric]
kind = "mesh"
dims = [4, 4]
torus = true
hosts_per_switch = 2
[routing]
engine = "dor"
[simulation]
preset = "martinez2003"
time_us = 300.0
watchdog_ns = 20000.0
[traffic]
load = [0.01, 2.0]
"""
    summary = run_sweep(loads_scenario(text), tmp_path / "out", make_executor("serial"), progress=False)
    assert (summary.done, summary.failed) == (1, 1)
    df = load_results(tmp_path / "out")
    low = df[df["traffic.load"] == 0.01].iloc[0]
    high = df[df["traffic.load"] == 2.0].iloc[0]
    assert low["status"] == "ok" and low["accepted_load"] > 0
    assert high["status"] == "error"
    assert high["error"].startswith("DeadlockError: deadlock at t = ")
    assert "cycle of blocked (link, VL) channels" in high["error"]


def _cli(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "ibnetsim.cli", *map(str, args)], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:{proc.stdout}\nstderr:{proc.stderr}")
    return proc


def test_one_point_runs_in_this_process_and_draws_no_figure(tmp_path):
    # One point: no worker pool to start and no curve to draw (issue 14: the
    # command's own overhead for one point stays small); the hint says how
    # to get that point's figures, and they can be drawn.
    f = tmp_path / "one.toml"
    f.write_text(tiny(load="0.1", time_us=50.0, warmup_us=10.0))
    out = tmp_path / "out"
    proc = _cli("run", f, "-o", out, "--no-progress")
    assert "1 point on serial" in proc.stderr, proc.stderr
    assert f"figures: none for one point (`ibnetsim plot {out}` draws its per-port and latency figures)" in proc.stdout
    assert not (out / "figures").exists()
    assert "load 0.1: keeps up" in proc.stdout
    plotted = _cli("plot", out)
    assert (out / "figures" / "latency_histogram.png").exists(), plotted.stdout


def test_run_command_writes_results_and_plot(tmp_path):
    f = tmp_path / "tiny.toml"
    f.write_text(tiny(load="[0.05, 0.1, 2.0]", time_us=150.0, warmup_us=20.0))
    out = tmp_path / "out"
    proc = _cli("run", f, "-o", out, "--executor", "serial", "--no-progress")
    assert (out / "results.parquet").exists() and (out / "manifest.json").exists()
    png = out / "figures" / "latency_vs_accepted.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in proc.stdout
    # The table has one line per load; load 2.0 is far past saturation.
    for load in ("0.05", "0.1", "2"):
        assert re.search(rf"│\s*{re.escape(load)}\s*│", proc.stdout), proc.stdout
    m = re.search(r"saturation: load ([0-9.]+) \(accepted [0-9.]+\); load 2 fell behind: accepted below 0.98 × offered \(criterion: accepted ≥ 0.98 × offered, and a stationary measurement\)", proc.stdout)
    assert m, proc.stdout
    assert float(m.group(1)) == 0.1
    df = load_results(out)
    assert len(df) == 3 and (df["status"] == "ok").all()


def test_bench_compare_runs_both_builds_on_the_same_tables_and_checks_their_packets():
    # The same build on both sides: the irregular network is routed once, from
    # NEW's updn dump, so the two sides must deliver the very same packets.
    script = Path(__file__).resolve().parent.parent / "scripts" / "bench_compare.py"
    proc = subprocess.run(
        [sys.executable, str(script), sys.executable, sys.executable, "--runs", "1", "--only", "irregular64"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = re.fullmatch(
        r"irregular64: delivered packets per CPU-second, median of 1: old [0-9,]+, new [0-9,]+, new/old [0-9.]+ "
        r"\(wall: [0-9.]+; paired runs: median ([0-9.]+), range ([0-9.]+)–([0-9.]+); best runs: ([0-9.]+)\); "
        r"events old ([0-9,]+), new ([0-9,]+); same packets delivered",
        proc.stdout.strip(),
    )
    assert m and m.group(5) == m.group(6), proc.stdout
    # One pair: its ratio is the median, both ends of the range and the best runs' ratio.
    assert m.group(1) == m.group(2) == m.group(3) == m.group(4), proc.stdout


def test_bench_quick_prints_machine_build_configurations_and_every_line():
    import os

    import ibnetsim
    from ibnetsim import _core

    proc = _cli("bench", "--quick")
    out = [l for l in proc.stdout.splitlines() if l.strip()]
    # What was timed, and on what: the machine, the build, each scenario's configuration.
    assert out[0].startswith("machine: ") and f"{os.cpu_count()} cores" in out[0], out[0]
    assert out[1] == f"build: ibnetsim {ibnetsim.__version__}, commit {ibnetsim.__build_commit__}, {_core.BUILD_PROFILE} profile; Python {sys.version.split()[0]}"
    assert _core.BUILD_PROFILE in ("debug", "release")
    assert out[2] == "irregular64 configuration: preset martinez2003, 50 µs simulated after a 10 µs warm-up, seed 1"
    assert out[5] == "mesh8x8 configuration: preset martinez2003, 100 µs simulated after a 10 µs warm-up, seed 1, data_vls = 1"
    assert out[8] == "fattree1728 configuration: IBA defaults (no preset), 20 µs simulated after a 5 µs warm-up, seed 1"
    lines = [out[3], out[6], out[9]]
    assert [line.split(":")[0] for line in lines] == ["irregular64", "mesh8x8", "fattree1728"]
    assert "(432 switches, 1,728 hosts), ftree" in lines[2]
    # 30 % is far below the fat tree's saturation (ftree's bound is 1.0): what is offered gets through.
    accepted, offered = map(float, re.search(r"accepted ([0-9.]+) of offered ([0-9.]+)", lines[2]).groups())
    assert offered == pytest.approx(0.3, abs=0.02) and accepted == pytest.approx(offered, rel=0.06)
    # The engine's cost per switch hop, and by event kind (they add up to it).
    for line in (out[4], out[7], out[10]):
        m = re.fullmatch(r"\S+ events per switch hop: ([0-9.]+) \(([0-9.]+) hops per delivered packet; (.*)\)", line)
        assert m, line
        kinds = dict(k.rsplit(" ", 1) for k in m.group(3).split(", "))
        assert {"Routed", "LinkFree", "Generate", "Deliver"} <= set(kinds), kinds
        assert sum(map(float, kinds.values())) == pytest.approx(float(m.group(1)), abs=0.01 * len(kinds))
    # Dimension-order routes on an 8×8 mesh cross |dx| + |dy| + 1 switches: 5.33 + 1 on average
    # between distinct hosts (E|dx| = (k² − 1)/(3k) = 2.625 over all pairs, × 64/63 without self).
    mesh_hops = float(re.search(r"\(([0-9.]+) hops per delivered packet", out[7]).group(1))
    assert mesh_hops == pytest.approx(1 + 2 * 2.625 * 64 / 63, rel=0.03)
    # The command line's start-up, timed in fresh interpreters.
    m = re.fullmatch(r"cli start-up: `ibnetsim --help` ([0-9.]+) s, `ibnetsim check ring.net` \(4 switches\) ([0-9.]+) s \(median of 5 runs each, wall\)", out[11])
    assert m and float(m.group(1)) > 0 and float(m.group(2)) > 0, out[11]
    assert len(out) == 12
    for line in lines:
        m = re.search(r"([0-9,]+) events/s, ([0-9,]+) delivered packets/s", line)
        assert m, line
        assert int(m.group(1).replace(",", "")) > 0 and int(m.group(2).replace(",", "")) > 0
        assert not math.isnan(float(re.search(r"accepted ([0-9.]+)", line).group(1)))


def test_warmup_must_end_before_the_run():
    text = tiny(time_us=100.0, warmup_us=100.0)
    line = text.splitlines().index("warmup_us = 100.0") + 1
    with pytest.raises(ScenarioError) as e:
        loads_scenario(text, path="w.toml")
    assert (e.value.line, e.value.key) == (line, "simulation.warmup_us")


def test_run_refuses_other_kinds(tmp_path):
    f = tmp_path / "stats.toml"
    f.write_text('# routing only\nkind = "routing_stats"\n[fabric]\nkind = "ring"\nswitches = 3\n')
    proc = _cli("run", f, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2
    assert "stats.toml:2: kind:" in proc.stderr and "ibnetsim sweep" in proc.stderr


def test_histogram_columns_fill_gaps_and_sum_classes():
    import pandas as pd

    from ibnetsim.experiment.kinds.simulate import histogram_columns

    hist = pd.DataFrame(
        [
            {"class": "a", "low_ns": 1.0, "high_ns": 2.0, "count": 3},
            {"class": "b", "low_ns": 1.0, "high_ns": 2.0, "count": 1},
            {"class": "a", "low_ns": 4.0, "high_ns": 6.0, "count": 2},
        ]
    )
    cols = histogram_columns(hist)
    assert cols["latency_hist_edges_ns"] == [1.0, 2.0, 4.0, 6.0]
    assert cols["latency_hist_counts"] == [4.0, 0.0, 2.0]


def test_hot_spot_keys_are_checked_and_reach_the_core():
    text = tiny().replace('pattern = "uniform"', 'pattern = "hot-spot"')
    with pytest.raises(ScenarioError, match=r"traffic.hot_hosts: pattern \"hot-spot\" needs hot_hosts"):
        loads_scenario(text)
    with pytest.raises(ScenarioError, match=r"traffic.tornado_dims: is read only with pattern = \"tornado\", not \"uniform\""):
        loads_scenario(tiny().replace('pattern = "uniform"', 'pattern = "uniform"\ntornado_dims = [2, 4]'))
    with pytest.raises(ScenarioError, match=r"traffic.pattern: needs a multicast group on the subnet manager"):
        loads_scenario(tiny().replace('pattern = "uniform"', 'pattern = "multicast"\nmlid = 0xC001'))
    good = text.replace('pattern = "hot-spot"', 'pattern = "hot-spot"\nhot_hosts = ["h0"]\nhot_fraction = 0.2')
    (point,) = loads_scenario(good).points
    row = kinds.get("simulate").run(point.config)
    assert row["delivered_packets"] > 0 and row["dropped_packets"] == 0


# --------------------------------------------------------------------------- several classes, switch/hca/QoS keys
TWO_CLASSES = """
kind = "simulate"
seed = 1

[fabric]
kind = "single_switch"
hosts = 3

[routing]
engine = "minhop"

[simulation]
time_us = 2000.0
warmup_us = 200.0
qos_file = "opensm.conf"

[switch]
speedup = 2.0

[[traffic]]
name = "gold"
pattern = "fixed-pairs"
pairs = ["h1>h2"]
sl = 1
load = 1.0

[[traffic]]
name = "bronze"
pattern = "fixed-pairs"
pairs = ["h0>h2"]
sl = 0
load = {bronze}
"""

QOS = (Path(__file__).resolve().parent / "data" / "opensm-2vl.conf").read_text()


def test_two_classes_with_qos_file_share_the_link_by_weight(tmp_path):
    # As tests/test_sim.py::test_opensm_qos_options_program_the_simulated_arbiters, from a
    # scenario: gold (SL1 → VL1, weight 10) gets two packets for each of bronze's (weight 5).
    (tmp_path / "opensm.conf").write_text(QOS)
    f = tmp_path / "two.toml"
    f.write_text(TWO_CLASSES.replace("{bronze}", "[0.5, 1.0]"))
    sc = load_scenario(f)
    assert [a.name for a in sc.axes] == ["traffic[1].load"]
    assert [len(p.config["traffic"]) for p in sc.points] == [2, 2]
    summary = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert summary.failed == 0
    df = load_results(tmp_path / "out").set_index("traffic[1].load")
    full = df.loc[1.0]
    assert full["nominal_load"] == 2.0
    gold, bronze = full["class_gold_delivered_packets"], full["class_bronze_delivered_packets"]
    assert abs(gold - 2 * bronze) <= 2, (gold, bronze)
    assert full["traffic[0].name"] == "gold" and full["switch.speedup"] == 2.0


def test_class_and_switch_errors_name_the_table_and_line(tmp_path):
    (tmp_path / "opensm.conf").write_text(QOS)
    text = TWO_CLASSES.replace("{bronze}", "0.5")
    bad = text.replace('name = "bronze"', 'name = "gold"')
    with pytest.raises(ScenarioError, match=r"traffic\[1\]\.name: two traffic classes are named 'gold'"):
        loads_scenario(bad, base_dir=tmp_path)
    bad = text.replace("sl = 0\n", "sl = 0\npayload_size = 3\n")
    line = bad.splitlines().index("payload_size = 3") + 1
    with pytest.raises(ScenarioError) as e:
        loads_scenario(bad, base_dir=tmp_path)
    assert e.value.key == "traffic[1].payload_size" and e.value.line == line
    # The core's own buffer check (the one building the simulation makes) runs at load time.
    bad = text.replace("speedup = 2.0", "input_buffer_bytes = 128")
    with pytest.raises(ScenarioError) as e:
        loads_scenario(bad, base_dir=tmp_path)
    assert (e.value.key, e.value.line) == ("switch.input_buffer_bytes", bad.splitlines().index("input_buffer_bytes = 128") + 1)
    assert e.value.message == (
        "128 bytes hold 2 credits of 64 B, but virtual cut-through needs room for a whole MTU packet "
        "(2074 B on the wire = 33 credits = 2112 B)"
    )
    with pytest.raises(ScenarioError, match=r"simulation\.data_vls: give data_vls or qos_file, not both"):
        loads_scenario(text.replace("warmup_us = 200.0", "warmup_us = 200.0\ndata_vls = 2"), base_dir=tmp_path)


def test_metrics_section_drops_the_profile_columns():
    text = tiny() + "\n[metrics]\nport_utilization = false\nlatency_histogram = false\n"
    (point,) = loads_scenario(text).points
    row = kinds.get("simulate").run(point.config)
    assert "port_utilization" not in row and "latency_hist_counts" not in row
    assert row["delivered_packets"] > 0


def test_hca_keys_reach_the_core():
    # SL priority: h0's two classes share VL0 (one data VL) and both overload its link;
    # at twice the link rate the send queue of the prioritized SL1 always has a packet
    # once the run is under way, so SL0 packets generated after warm-up never get a turn.
    text = """
kind = "simulate"
[fabric]
kind = "single_switch"
hosts = 2
[routing]
engine = "minhop"
[simulation]
time_us = 300.0
warmup_us = 50.0
data_vls = 1
[hca]
sl_priority = [1]
[[traffic]]
name = "low"
pattern = "fixed-pairs"
pairs = ["h0>h1"]
load = 1.0
[[traffic]]
name = "high"
pattern = "fixed-pairs"
pairs = ["h0>h1"]
sl = 1
load = 2.0
"""
    (point,) = loads_scenario(text).points
    row = kinds.get("simulate").run(point.config)
    assert row["class_low_delivered_packets"] == 0
    assert row["class_high_delivered_packets"] > 100


TRACE_ONLY = """
kind = "simulate"
[fabric]
kind = "single_switch"
hosts = 2
[routing]
engine = "minhop"
[simulation]
preset = "martinez2003"
time_us = 20.0
[[trace]]
file = "{trace}"
"""


def test_trace_only_scenario_replays_the_example_trace():
    # examples/traces/three.trace: 1 + 1 + 3 packets (600 B at MTU 256 splits in three).
    trace = Path(__file__).resolve().parent.parent / "examples" / "traces" / "three.trace"
    (point,) = loads_scenario(TRACE_ONLY.format(trace=trace)).points
    assert point.config["traffic"] == [] and point.config["trace"][0]["time_scale"] == 1.0
    row = kinds.get("simulate").run(point.config)
    assert row["generated_packets"] == 5 and row["delivered_packets"] == 5
    assert row["nominal_load"] == 0.0


def test_a_scenario_without_workload_or_with_two_size_keys_is_refused(tmp_path):
    no_work = TRACE_ONLY.split("[[trace]]")[0]
    with pytest.raises(ScenarioError, match=r"traffic: no workload"):
        loads_scenario(no_work)
    with pytest.raises(ScenarioError, match=r"traffic\.payload_sizes: give one of payload_bytes, payload_sizes or payload_size_range"):
        loads_scenario(tiny().replace("payload_bytes = 256", "payload_bytes = 256\npayload_sizes = [32, 256]"))
    with pytest.raises(ScenarioError, match=r"traffic\.payload_size_weights: 1 weights for 2 payload_sizes"):
        loads_scenario(tiny().replace("payload_bytes = 256", "payload_sizes = [32, 256]\npayload_size_weights = [1.0]"))
    with pytest.raises(ScenarioError, match=r"traffic\.payload_size_range: payload must be 1..=256 bytes \(the MTU\), got 300"):
        loads_scenario(tiny().replace("payload_bytes = 256", "payload_size_range = [32, 300]"))


def test_packet_size_mix_reaches_the_core():
    # Paper 002's two sizes, 3:1 in packets. The wire bytes are 58 and 282; at a
    # fixed load the mix sends more, smaller packets than 256 B alone would.
    mixed = tiny(load="0.2").replace("payload_bytes = 256", "payload_sizes = [32, 256]\npayload_size_weights = [3.0, 1.0]")
    (point,) = loads_scenario(mixed).points
    row = kinds.get("simulate").run(point.config)
    (point,) = loads_scenario(tiny(load="0.2")).points
    fixed = kinds.get("simulate").run(point.config)
    # mean wire size 0.75·58 + 0.25·282 = 114 B, so ≈ 282/114 = 2.5× the packets.
    ratio = row["generated_packets"] / fixed["generated_packets"]
    assert 2.2 < ratio < 2.8, ratio
    assert row["offered_load"] == pytest.approx(fixed["offered_load"], rel=0.15)


def test_auto_warmup_from_a_scenario():
    text = tiny(load="0.1", time_us=600.0, warmup_us=0.0).replace("warmup_us = 0.0", "auto_warmup = true")
    (point,) = loads_scenario(text).points
    row = kinds.get("simulate").run(point.config)
    assert row["warmup_status"] == "detected" and row["warmup_detected"] is True
    assert 0 < row["warmup_us"] <= 300.0  # at the latest half the run
    with pytest.raises(ScenarioError, match=r"simulation\.auto_warmup: give warmup_us = 50 or auto_warmup = true, not both"):
        loads_scenario(tiny().replace("warmup_us = 50.0", "warmup_us = 50.0\nauto_warmup = true"))


def test_a_trace_named_like_a_class_is_refused_at_its_line():
    trace = Path(__file__).resolve().parent.parent / "examples" / "traces" / "three.trace"
    text = TRACE_ONLY.format(trace=trace).replace("[simulation]", '[traffic]\nname = "three"\nload = 0.1\n[simulation]') + 'name = "three"\n'
    line = text.splitlines().index('name = "three"', text.splitlines().index("[[trace]]")) + 1
    with pytest.raises(ScenarioError) as e:
        loads_scenario(text)
    assert (e.value.key, e.value.line) == ("trace.name", line), e.value


def test_scenario_points_bound_source_queues_and_fare_as_unbounded():
    from ibnetsim.experiment.kinds.simulate import SWEEP_SOURCE_QUEUE_PACKETS, sim_overrides

    # Far more than the 4-switch fabric carries: the sources' queues grow all run.
    over = loads_scenario(tiny(load="0.9", time_us=2000.0))
    (point,) = over.points
    assert sim_overrides(point.config)["hca"] == {"source_queue_packets": SWEEP_SOURCE_QUEUE_PACKETS}
    bounded = kinds.get("simulate").run(point.config)
    unbounded = loads_scenario(tiny(load="0.9", time_us=2000.0) + "\n[hca]\nsource_queue_packets = 0\n")
    (free_point,) = unbounded.points
    assert sim_overrides(free_point.config)["hca"] == {"source_queue_packets": 0}
    free = kinds.get("simulate").run(free_point.config)
    # One class per host: the same packets, the same numbers, only fewer of them kept.
    assert free["injection_queue_packets"] > 8 * SWEEP_SOURCE_QUEUE_PACKETS
    for col in ("generated_packets", "delivered_packets", "in_flight_packets", "injection_queue_packets", "latency_mean_ns", "accepted_load"):
        assert bounded[col] == free[col], col


# --------------------------------------------------------------------------- closed-loop, CBR and transport sections
PAIR = """
kind = "simulate"
seed = 1
[fabric]
kind = "single_switch"
hosts = 2
[simulation]
time_us = {time_us}
"""

ONE_PACKET_MESSAGES = """
[[closed_loop]]
pattern = "fixed-pairs"
pairs = ["h0>h1"]
message_bytes = 256
"""


def _row(text):
    (point,) = loads_scenario(text).points
    return kinds.get("simulate").run(point.config)


def test_closed_loop_messages_follow_each_other_at_the_zero_load_latency():
    # One switch, 1x SDR, 1 m cables: a 256 B message is one 282 B packet, in
    # 1 318 ns (1 128 ns on the wire, worked by hand in crates/sim/tests/it/zero_load.rs).
    # With a window of 1 and no gap, message k leaves at 1 318·k ns: in 100 µs,
    # 76 leave (the last at 98 850 ns) and 75 arrive.
    row = _row(PAIR.format(time_us=100.0) + ONE_PACKET_MESSAGES)
    assert (row["generated_packets"], row["delivered_packets"], row["latency_mean_ns"]) == (76, 75, 1318.0)
    # With message acknowledgements a message completes when its 30 B ACK is
    # back: 120 ns on the wire + the same 190 ns of header, routing and
    # cables, so every 1 318 + 310 = 1 628 ns. 62 messages leave, 61 arrive
    # and 61 ACKs are back (the 61st at 99 308 ns).
    row = _row(PAIR.format(time_us=100.0) + ONE_PACKET_MESSAGES + '[transport]\nack = "message"\n')
    assert (row["generated_packets"], row["delivered_packets"]) == (62 + 61, 61 + 61)
    assert (row["class_closed_loop_delivered_packets"], row["class_transport_delivered_packets"]) == (61, 61)


def test_a_cbr_connection_sends_at_its_bandwidth():
    # 282 B at 100 Mb/s: one packet every 22.56 µs from a random phase, so
    # 44 or 45 in 1 ms, all delivered (the link is 2 Gb/s).
    row = _row(PAIR.format(time_us=1000.0) + '[[connection]]\nsource = "h0"\ndestination = "h1"\nbandwidth_bps = 100000000\npacket_bytes = 282\n')
    assert row["generated_packets"] in (44, 45) and row["delivered_packets"] == row["generated_packets"]
    assert row["latency_mean_ns"] == 1318.0


@pytest.mark.parametrize(
    "extra, key, message",
    [
        ('[[connection]]\nsource = "h0"\ndestination = "h1"\nbandwidth_bps = 0\n', "connection.bandwidth_bps", "0 is below the minimum 1"),
        ('[[connection]]\nsource = "h0"\nbandwidth_bps = 1\n', "connection", "missing key `destination`"),
        ('[[connection]]\nsource = "h0"\ndestination = "h1"\nbandwidth_bps = 1\npacket_bytes = 26\n', "connection.packet_bytes", "headers (26 B) included"),
        ("[[closed_loop]]\nwindow = 0\n", "closed_loop.window", "below the minimum 1"),
        # Found by the property test: 54 million messages per source filled the memory.
        ("[[closed_loop]]\nwindow = 54199248\n", "closed_loop.window", "above the maximum 65536"),
        ("[[closed_loop]]\n[[closed_loop]]\n", "closed_loop[1].name", "class name 'closed-loop' is used twice"),
        ('[[closed_loop]]\npattern = "uniform"\nhot_fraction = 0.5\n', "closed_loop.hot_fraction", "is read only with pattern = \"hot-spot\", not \"uniform\""),
        ('[[closed_loop]]\n[transport]\nack = "message"\nreply_sl = 16\n', "transport.reply_sl", "above the maximum 15"),
        ('[[closed_loop]]\n[transport]\nack = "all"\n', "transport.ack", "none"),
    ],
)
def test_closed_loop_connection_and_transport_errors_name_the_key(extra, key, message):
    text = PAIR.format(time_us=10.0) + extra
    with pytest.raises(ScenarioError) as e:
        loads_scenario(text)
    assert e.value.key == key and message in str(e.value), str(e.value)


def test_run_gives_no_load_verdict_without_open_loop_classes(tmp_path):
    # Closed-loop messages alone have no load to sweep: the table, no saturation line.
    f = tmp_path / "rpc.toml"
    f.write_text(PAIR.format(time_us=20.0) + ONE_PACKET_MESSAGES)
    out = _cli("run", f, "-o", tmp_path / "o").stdout
    (row,) = load_results(tmp_path / "o").to_dict(orient="records")
    assert (row["status"], row["delivered_packets"]) == ("ok", 15)  # 20 µs / 1 318 ns, as above
    assert "saturation" not in out and "sweep traffic.load" not in out, out
