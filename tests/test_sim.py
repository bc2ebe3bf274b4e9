import json
import re
from pathlib import Path

import pytest

import ibnetsim as ib


@pytest.fixture(scope="module")
def small():
    fab = ib.topology.irregular(switches=8, switch_ports=8, links_per_switch=3, hosts_per_switch=2, seed=4)
    return fab, ib.SubnetManager(fab, routing="updn")


def test_same_seed_same_results_and_conservation(small):
    fab, sm = small
    kw = dict(traffic=ib.traffic.uniform(0.05), time_us=200, warmup_us=20, seed=3)
    a, b = ib.simulate(fab, sm, **kw), ib.simulate(fab, sm, **kw)
    assert a.raw == {**b.raw}
    c = ib.simulate(fab, sm, **{**kw, "seed": 4})
    assert c.raw["generated"] != a.raw["generated"]
    r = a.raw
    assert r["generated"] == r["delivered"] + r["dropped"] + r["in_flight"]


def test_below_saturation_accepted_matches_offered(small):
    fab, sm = small
    r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=2000, warmup_us=100, seed=1)
    assert r.offered == pytest.approx(0.05, rel=0.1)
    assert r.accepted == pytest.approx(r.offered, rel=0.02)


def test_one_packet_zero_load_latency_is_analytic():
    # One switch, two hosts, 1x SDR, 1 m cables: a 256 B payload is 282 wire bytes = 1128 ns per link.
    fab = ib.topology.single_switch(2)
    sm = ib.SubnetManager(fab, routing="minhop")
    r = ib.simulate(fab, sm, traffic=ib.traffic.fixed_pairs([("h0", "h1")], load=1e-4), time_us=20000, seed=1)
    s = r.summary.iloc[0]
    assert s["delivered_packets"] > 0
    # With packets far apart every packet sees the same (zero-load) latency.
    assert s["latency_min_ns"] == s["latency_max_ns"]
    cfg = ib.sim.default_config()
    routing_ns = cfg["switch"]["routing_delay_ns"] + cfg["switch"]["arbitration_delay_ns"]
    header_ns = 20 * 4  # LRH + BTH must arrive before routing starts (cut-through)
    # k switches: k * (prop + ser(H) + R + A) + prop + ser(W), serialization overlapped.
    expected = (5 + header_ns + routing_ns) + 5 + 1128
    assert s["latency_min_ns"] == pytest.approx(expected, abs=0.001)


@pytest.mark.parametrize("engine", ["dor", "minhop"])
def test_torus_one_vl_deadlocks_with_cycle(engine):
    torus = ib.topology.torus([4, 4], hosts_per_switch=2)
    sm = ib.SubnetManager(torus, routing=engine)
    with pytest.raises(ib.DeadlockError) as err:
        ib.simulate(torus, sm, traffic=ib.traffic.uniform(1.0), time_us=2000, seed=1, data_vls=1)
    cycle = err.value.cycle
    assert len(cycle) >= 2
    # Found by the periodic scan while other traffic still moved (partial),
    # or by the total stall: nothing moved for the whole 100 µs watchdog.
    e = err.value
    stalled_ps = e.time_ps - e.last_progress_ps
    if e.partial:
        assert stalled_ps <= 100_000_000
    else:
        assert stalled_ps > 100_000_000
    assert e.blocked_since_ps < e.time_ps
    # Each blocked channel waits on the next: the receiver of one is the sender of the next.
    for (_, _, to_node, _, _), (from_node, _, _, _, _) in zip(cycle, cycle[1:] + cycle[:1]):
        assert to_node == from_node


def test_bad_config_names_the_key(small):
    fab, sm = small
    with pytest.raises(ib.ConfigError, match="colour"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=10, colour="red")
    with pytest.raises(ib.ConfigError, match="load"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(-1), time_us=10)
    with pytest.raises(ib.ConfigError, match="unknown preset"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=10, preset="nope")
    # A misspelt key is named with the one it resembles, at its own depth.
    with pytest.raises(ib.ConfigError, match=r"unknown simulation key 'header_byte' \(did you mean 'header_bytes'\?"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=10, header_byte=0)
    with pytest.raises(ib.ConfigError, match=r"unknown simulation key 'switch.credit_update' \(did you mean 'switch.credit_update_ns'\?"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=10, switch={"credit_update": 256})


def test_per_port_and_histogram_tables(small):
    fab, sm = small
    r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=300, seed=2)
    ports = r.per_port
    assert len(ports) == 2 * fab.num_links
    assert ((ports["utilization"] >= 0) & (ports["utilization"] <= 1)).all()
    h = r.latency_hist
    assert h["count"].sum() == r.summary["delivered_packets"].sum()


def test_port_records_read_as_their_json_would(small):
    # The core builds these records as Python objects, not through JSON
    # (crates/py/src/port_results.rs): the same keys in the same order, the
    # same types, and the idle VLs' zeros as floats.
    fab, sm = small
    r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=300, seed=2, data_vls=2)
    records = r.raw["ports"]
    assert len(records) == 2 * fab.num_links
    keys = list(r.raw)
    assert keys[keys.index("sls") + 1 : keys.index("sls") + 3] == ["ports", "vl_of_slot"]  # where SimResults declares it
    for p in records:
        assert list(p) == ["node", "port", "peer_node", "peer_port", "utilization", "vl_utilization"]
        assert [type(p[k]) for k in ("node", "port", "peer_node", "peer_port", "utilization")] == [str, int, str, int, float]
        assert len(p["vl_utilization"]) == len(r.raw["vl_of_slot"])
        assert all(type(u) is float for u in p["vl_utilization"])
    # Traffic on SL 0 uses VL 0 only: every other slot is idle, VL 0 is not everywhere.
    assert all(p["vl_utilization"][1:] == [0.0] * (len(p["vl_utilization"]) - 1) for p in records)
    assert sum(p["vl_utilization"][0] > 0 for p in records) > len(records) // 2


@pytest.mark.parametrize("seed", [1, 2])
def test_accepted_never_exceeds_the_channel_load_bound(seed):
    fab = ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=seed)
    sm = ib.SubnetManager(fab, routing="updn")
    bound = sm.check().to_dict()["channel_load"]["throughput_bound"]
    assert 0 < bound < 1
    accepted = []
    for load in (0.5 * bound, bound, 1.5 * bound, 0.8):
        r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(load), time_us=600, warmup_us=100, seed=seed, preset="martinez2003")
        assert r.accepted <= bound * 1.01, (load, r.accepted, bound)
        accepted.append(r.accepted)
    # Below the bound the network keeps up, so the check is not vacuous.
    assert accepted[0] == pytest.approx(0.5 * bound, rel=0.1)


# --------------------------------------------------------------------------- destination patterns
@pytest.fixture(scope="module")
def sixteen():
    # 16 switches × 4 hosts = 64 hosts: a power of two and a square (4^3).
    fab = ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
    return fab, ib.SubnetManager(fab, routing="updn")


@pytest.mark.parametrize(
    "cls",
    [
        ib.traffic.bit_reversal(0.05),
        ib.traffic.bit_complement(0.05),
        ib.traffic.transpose(0.05),
        ib.traffic.perfect_shuffle(0.05),
        ib.traffic.tornado(0.05, tornado_dims=[8, 8]),
        ib.traffic.random_permutation(0.05),
        ib.traffic.hot_spot(["h0"], 0.1, 0.05),
    ],
    ids=lambda c: c["pattern"],
)
def test_every_pattern_runs_and_conserves_packets(sixteen, cls):
    fab, sm = sixteen
    r = ib.simulate(fab, sm, traffic=cls, time_us=300, seed=2).raw
    assert r["generated"] > 0
    assert r["generated"] == r["delivered"] + r["dropped"] + r["in_flight"]
    assert r["dropped"] == 0
    # The hosts that receive are exactly the pattern's images, worked out
    # here from the definitions (64 hosts, 6 address bits, host i = "hi").
    got = r["delivered_per_host"]
    assert len(got) == 64 and sum(got) == r["delivered"]
    kind = cls["pattern"]
    rev = lambda s: int(format(s, "06b")[::-1], 2)  # noqa: E731
    maps = {
        "bit-reversal": rev,
        "bit-complement": lambda s: s ^ 63,
        "transpose": lambda s: ((s & 7) << 3) | (s >> 3),
        "perfect-shuffle": lambda s: ((s << 1) | (s >> 5)) & 63,
        "tornado": lambda s: ((s % 8 + 3) % 8) + 8 * ((s // 8 + 3) % 8),
    }
    if kind in maps:
        receivers = {maps[kind](s) for s in range(64) if maps[kind](s) != s}
        assert {h for h in range(64) if got[h] > 0} == receivers
    elif kind == "random-permutation":
        # A derangement: every host sends to one other, every host receives.
        assert all(n > 0 for n in got)
    else:
        # Hot spot: h0 takes 10 % of all packets plus its uniform share,
        # about seven times what any other host gets.
        others = sum(got[1:]) / 63
        assert got[0] > 4 * others and all(n > 0 for n in got[1:])


def test_bit_complement_has_no_silent_host_but_bit_reversal_has_palindromes(sixteen):
    # 64 hosts = 6 address bits: complement moves every index; reversal fixes the
    # 2^3 = 8 palindromic indices, which then do not send.
    fab, sm = sixteen
    per_host = {}
    for cls in (ib.traffic.bit_complement(0.05), ib.traffic.bit_reversal(0.05)):
        r = ib.simulate(fab, sm, traffic=cls, time_us=2000, seed=2)
        per_host[cls["pattern"]] = r.offered
    # Offered load is averaged over all 64 hosts, so the silent ones lower it by 8/64.
    assert per_host["bit-complement"] == pytest.approx(0.05, rel=0.1)
    assert per_host["bit-reversal"] == pytest.approx(0.05 * 56 / 64, rel=0.1)


def test_pattern_errors_name_the_key(sixteen):
    fab, sm = sixteen
    with pytest.raises(ib.ConfigError, match=r"traffic.classes\[0\].hot_hosts\[0\].*unknown node 'nope'"):
        ib.simulate(fab, sm, traffic=ib.traffic.hot_spot(["nope"], 0.1, 0.05), time_us=10, seed=1)
    small = ib.topology.irregular(switches=8, switch_ports=8, links_per_switch=4, hosts_per_switch=3, seed=1)
    with pytest.raises(ib.ConfigError, match=r"power-of-two number of hosts; the fabric has 24"):
        ib.simulate(small, ib.SubnetManager(small, routing="updn"), traffic=ib.traffic.bit_reversal(0.05), time_us=10, seed=1)


# --------------------------------------------------------------------------- QoS tables from the subnet manager
_QOS_CONF = (Path(__file__).resolve().parent / "data" / "opensm-2vl.conf").read_text()


def test_opensm_qos_options_program_the_simulated_arbiters(tmp_path):
    # h0 (SL0 → VL0) and h1 (SL1 → VL1) both saturate the link to h2. A 256 B
    # payload is 282 wire bytes = 5 credits, so the low table 0:5,1:10 lets VL1 send
    # two packets for each of VL0's. With speedup 2 the output link, not the
    # crossbar, is the bottleneck, so its arbiter sets the shares: 2:1 exactly.
    conf = tmp_path / "opensm.conf"
    conf.write_text(_QOS_CONF)
    fab = ib.topology.single_switch(3)
    sm = ib.SubnetManager(fab, routing="minhop")
    tr = [
        ib.traffic.fixed_pairs([("h0", "h2")], load=1.0, sl=0, name="vl0"),
        ib.traffic.fixed_pairs([("h1", "h2")], load=1.0, sl=1, name="vl1"),
    ]
    r = ib.simulate(fab, sm, traffic=tr, time_us=2000, warmup_us=200, seed=1, qos_file=conf, switch={"speedup": 2.0})
    got = dict(zip(r.summary["name"], r.summary["delivered_packets"]))
    assert abs(got["vl1"] - 2 * got["vl0"]) <= 2, got
    out = r.per_port.set_index("peer_node").loc["h2"]
    assert out["utilization"] == pytest.approx(1.0, abs=0.01)
    # Weight 0 for VL1 would starve it: the table really is the one the file
    # gave. It is every port's, h1's own included, so h1's SL1 packets could
    # never leave it, and the simulation is refused before it runs.
    conf.write_text(_QOS_CONF.replace("0:5,1:10", "0:5,1:0"))
    with pytest.raises(ib.ConfigError, match=r"vl_arbitration.*h1/1 sends SL 1 on VL 1, which the port's VL arbitration table never sends"):
        ib.simulate(fab, sm, traffic=tr, time_us=500, seed=1, qos_file=conf, switch={"speedup": 2.0})
    # With the weight 0 on the switch's ports only (qos_swe_*), h1 sends, the
    # switch's port to h2 never sends VL1, and the stalled run reports that as
    # starvation of VL1 at sw0/3, not as a deadlock without a cycle; VL0 alone
    # runs.
    conf.write_text(_QOS_CONF + "qos_swe_vlarb_high 0:0\nqos_swe_vlarb_low 0:5,1:0\n")
    r = ib.simulate(fab, sm, traffic=tr[:1], time_us=500, seed=1, qos_file=conf, switch={"speedup": 2.0})
    assert r.summary["delivered_packets"].iloc[0] > 0
    with pytest.raises(ib.StarvationError) as err:
        ib.simulate(fab, sm, traffic=tr[1:], time_us=500, seed=1, qos_file=conf, switch={"speedup": 2.0})
    assert isinstance(err.value, ib.DeadlockError) and err.value.cycle == []
    [(node, port, vl, packets)] = err.value.starved
    assert (node, port, vl) == ("sw0", 3, 1)
    assert packets > 0 and f"VL1 at sw0/3 ({packets} packets wait) is never sent" in str(err.value)


def test_qos_file_errors_name_file_and_line(tmp_path):
    fab = ib.topology.single_switch(3)
    sm = ib.SubnetManager(fab, routing="minhop")
    conf = tmp_path / "opensm.conf"
    bad = _QOS_CONF.replace("qos_vlarb_low 0:5,1:10", "qos_vlarb_low 0:5,1:x")
    conf.write_text(bad)
    line = bad.splitlines().index("qos_vlarb_low 0:5,1:x") + 1
    with pytest.raises(ib.IbnetsimError, match=rf"opensm\.conf:{line}"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=10, qos_file=conf)
    with pytest.raises(ib.ConfigError, match="data_vls or qos_file, not both"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1), time_us=10, qos_file=conf, data_vls=2)


def test_a_run_releases_the_gil(small):
    # While the worker is inside the Rust run, the simulation is mutably borrowed:
    # touching it from another thread raises "Already mutably borrowed". The main
    # thread can only try while the run is in progress if the run released the
    # GIL; if it held it, the main thread would run only after the borrow ended.
    import json
    import threading

    fab, sm = small
    cfg = ib.sim.default_config()
    cfg["traffic"] = {"classes": [ib.traffic.uniform(0.5)]}
    sim = ib._core.Simulation(sm._inner, json.dumps(cfg))

    def worker():
        sim.run(20_000_000_000)  # 20 ms of simulated time: about 10^6 events

    t = threading.Thread(target=worker)
    t.start()
    seen_borrowed = False
    while t.is_alive() and not seen_borrowed:
        try:
            sim.now_ps
        except RuntimeError as e:
            assert "borrowed" in str(e)
            seen_borrowed = True
    t.join()
    assert seen_borrowed, "the main thread never ran during the simulation: the GIL was held"
    assert sim.events > 100_000


# --------------------------------------------------------------------------- warm-up, row columns
def test_auto_warmup_detects_below_saturation_and_flags_overload(small):
    fab, sm = small
    low = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=1000, seed=1, warmup_us="auto")
    # The earliest decision: 10 windows of 10 µs, long after a ~2 µs latency settles.
    assert (low.warmup_detected, low.warmup_status, low.warmup_us) == (True, "detected", 100.0)
    assert len(low.warmup_series) == 10 and (low.warmup_series["delivered_packets"] > 0).all()
    # Measured from there: exactly a fixed warm-up of the same length.
    fixed = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=1000, seed=1, warmup_us=100)
    assert fixed.warmup_detected is None and fixed.warmup_status == "fixed"
    assert fixed.raw["latency"] == low.raw["latency"] and fixed.raw["classes"] == low.raw["classes"]
    # Uniform load 1.0 is far beyond what up*/down* on this fabric carries.
    over = ib.simulate(fab, sm, traffic=ib.traffic.uniform(1.0), time_us=1000, seed=1, warmup_us="auto")
    row = over.row()
    assert (row["warmup_detected"], row["warmup_status"], row["warmup_us"]) == (False, "not-stabilised", 500.0)
    assert row["accepted_load"] < 0.8 * row["offered_load"]


def test_auto_warmup_errors(small):
    fab, sm = small
    with pytest.raises(ib.ConfigError, match="too short for automatic warm-up"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=150, warmup_us="auto")
    with pytest.raises(ib.ConfigError, match="'auto'"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=150, warmup_us="automatic")
    with pytest.raises(ib.ConfigError, match="window"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=300, warmup_us="auto", auto_warmup={"window": 5})
    # Shorter windows fit a short run.
    r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=150, warmup_us="auto", auto_warmup={"window_ns": 5000})
    # Far below saturation the run is stationary: detected, no earlier than
    # the 10 windows of 5 µs the test looks at, no later than half the run.
    assert r.warmup_status == "detected" and r.warmup_detected is True
    assert 50 <= r.warmup_us <= 75


def test_row_and_summary_columns_are_consistent(small):
    fab, sm = small
    classes = [ib.traffic.uniform(0.04, name="a"), ib.traffic.uniform(0.02, payload_bytes=64, name="b", sl=1)]
    r = ib.simulate(fab, sm, traffic=classes, time_us=1500, warmup_us=100, seed=5)
    row, s = r.row(), r.summary.set_index("name")
    # 16 hosts × 0.25 B/ns over 8 switches: bytes/ns/switch = fraction × 0.5.
    hosts, switches = 16, 8
    k = hosts * 0.25 / switches
    assert row["offered_bytes_per_ns_per_switch"] == pytest.approx(row["offered_load"] * k)
    assert row["accepted_bytes_per_ns_per_switch"] == pytest.approx(row["accepted_load"] * k)
    for name in ("a", "b"):  # every host sends in both classes
        assert s.loc[name, "offered_bytes_per_ns_per_switch"] == pytest.approx(s.loc[name, "offered_fraction"] * k)
        assert s.loc[name, "accepted_bytes_per_ns_per_switch"] == pytest.approx(s.loc[name, "accepted_fraction"] * k)
    assert row["offered_bytes_per_ns_per_switch"] == pytest.approx(s["offered_bytes_per_ns_per_switch"].sum())
    assert set(r.per_sl["sl"]) == {0, 1} and "accepted_bytes_per_ns_per_switch" in r.per_sl
    # The all-class latency aggregates the classes.
    counts = [c["latency"]["count"] for c in r.raw["classes"]]
    assert row["measured_packets"] == sum(counts) > 0
    assert row["latency_max_ns"] == max(s["latency_max_ns"])
    assert row["network_latency_max_ns"] == max(s["network_latency_max_ns"])
    weighted = sum(n * m for n, m in zip(counts, s["latency_mean_ns"])) / sum(counts)
    assert row["latency_mean_ns"] == pytest.approx(weighted)
    assert min(s["latency_p50_ns"]) * 0.97 <= row["latency_p50_ns"] <= max(s["latency_p50_ns"]) * 1.03
    assert row["network_latency_p50_ns"] <= row["network_latency_p99_ns"] <= row["network_latency_max_ns"]
    assert row["network_latency_max_ns"] <= row["latency_max_ns"]
    # One column per drop reason.
    assert {k for k in row if k.startswith("drops_")} == {f"drops_{n}" for n in r.drops}
    assert sum(row[f"drops_{n}"] for n in r.drops) == row["dropped_packets"] == 0
    # Network-latency histogram: per class, as many packets as measured, and
    # never above the packet latency.
    nh = r.network_latency_hist
    assert nh.groupby("class")["count"].sum().to_dict() == dict(zip(s.index, counts))
    assert nh["low_ns"].max() <= row["latency_max_ns"]


def test_lfu_selection_alternates_over_the_lmc_paths():
    # Ring of 4 switches, LMC 1: minhop routes h0's two LIDs towards h2 one
    # each way round. LFU (chosen once per packet at routing time, least used
    # output first) alternates, so sw0's two ring links carry the flow's
    # packets half each, within one; deterministic routing uses one of them.
    fab = ib.topology.ring(4, hosts_per_switch=1)
    sm = ib.SubnetManager(fab, routing="minhop", lmc=1)
    kw = dict(traffic=ib.traffic.fixed_pairs([("h0", "h2")], load=0.3), time_us=500, seed=1)
    per_packet_ns = 282 * 4  # 256 B payload + 26 B headers at 4 ns/B (1x SDR)

    def packets_on_ring_links(selection):
        r = ib.simulate(fab, sm, selection=selection, **kw)
        assert r.raw["generated"] == r.raw["delivered"] > 100
        window_ns = (r.raw["time_ps"] - r.raw["warmup_ps"]) / 1000
        p = r.per_port.set_index(["node", "port"])["utilization"]
        counts = [p[("sw0", k)] * window_ns / per_packet_ns for k in (1, 2)]
        assert all(c == pytest.approx(round(c), abs=1e-6) for c in counts)
        return [round(c) for c in counts], r.raw["delivered"]

    (a, b), n = packets_on_ring_links("lfu")
    assert a + b == n and abs(a - b) <= 1 and min(a, b) > 0
    (a, b), n = packets_on_ring_links("deterministic")
    assert sorted([a, b]) == [0, n]


def test_progress_draws_a_bar_on_a_terminal_and_nothing_in_a_file(small, capsys, monkeypatch):
    fab, sm = small
    kw = dict(traffic=ib.traffic.uniform(0.05), time_us=20, seed=1, progress=True)
    # Captured output is not a terminal: a log file, a pipe.
    ib.simulate(fab, sm, **kw)
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich then draws as on a terminal
    ib.simulate(fab, sm, **kw)
    assert "simulating" in capsys.readouterr().out


def test_progress_every_few_seconds_prints_plain_lines_for_logs(small, capsys):
    # progress = 0 s: a line after each of the 4 slices, simulated time
    # against the end, on stderr; nothing on stdout.
    fab, sm = small
    ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=20, seed=1, progress=0, slices=4, progress_label="point 7")
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    pattern = re.compile(r"point 7: simulated (\d+\.\d)/20\.0 µs \((\d+) %\), \d+\.\d\d M events/s, elapsed 0:00:\d\d")
    found = [pattern.fullmatch(x) for x in lines]
    assert all(found), lines
    assert [(m[1], m[2]) for m in found] == [("5.0", "25"), ("10.0", "50"), ("15.0", "75"), ("20.0", "100")]
    with pytest.raises(ib.ConfigError, match="progress must be True, False or a number of seconds >= 0"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.05), time_us=20, progress=-1)


def test_time_series_per_link_and_vl(small, tmp_path):
    fab, sm = small
    r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.3, 256), time_us=50, seed=3, series_interval_ns=10_000)
    df = r.series
    ports = len(r.per_port)
    # A row per cabled transmitter and slot (data VL 0 and VL15) at 10, 20, ..., 50 µs.
    assert sorted(set(df["time_us"])) == [10.0, 20.0, 30.0, 40.0, 50.0]
    assert len(df) == 5 * ports * 2
    assert set(df["vl"]) == {0, 15}
    assert ((df["utilization"] >= 0) & (df["utilization"] <= 1)).all()
    # The intervals add up to the run: the mean over them is the port's utilization since time 0.
    mean = df[df["vl"] == 0].groupby(["node", "port"])["utilization"].mean()
    whole = r.per_port.set_index(["node", "port"])["utilization"]
    assert (mean - whole.loc[mean.index]).abs().max() < 1e-9
    df.to_parquet(tmp_path / "series.parquet")
    ax = r.plot_series(top=2)
    assert len(ax.get_lines()) == 2
    without = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.3, 256), time_us=50, seed=3)
    assert without.series.empty and without.raw["delivered"] == r.raw["delivered"]
    with pytest.raises(ib.ConfigError, match="series_interval_ns"):
        without.plot_series()


def test_torus_2qos_runs_the_load_under_which_dor_deadlocks(tmp_path):
    # 5x5 torus at full uniform load: dor, all on SL 0, deadlocks even with 8
    # VLs; torus-2QoS sends each packet on its path's SL (0-3), which its
    # SL2VL maps to the dateline VL 0 or 1 per output direction, and delivers.
    torus = ib.topology.torus([5, 5], hosts_per_switch=2)
    g = torus.nodes.set_index("name")["guid"]
    conf = tmp_path / "torus-2QoS.conf"
    conf.write_text(f"torus 5 5 1\nxp_link {g['sw0']} {g['sw1']}\nyp_link {g['sw0']} {g['sw5']}\n")
    kw = dict(traffic=ib.traffic.uniform(1.0), time_us=2000, seed=1)
    with pytest.raises(ib.DeadlockError):
        ib.simulate(torus, ib.SubnetManager(torus, routing="dor"), data_vls=8, **kw)
    r = ib.simulate(torus, ib.SubnetManager(torus, routing="torus-2QoS", torus_config=conf), **kw)
    raw = r.raw
    assert raw["generated"] == raw["delivered"] + raw["dropped"] + raw["in_flight"] and raw["delivered"] > 0
    assert [s["sl"] for s in raw["sls"] if s["generated_packets"] > 0] == [0, 1, 2, 3]
    # sw0's -x cable (port 2, to x = 4) crosses the x dateline: every packet on it wraps, so VL 1 only.
    # Its +x cable (port 1) carries both: paths from x = 0 that do not wrap, and from x = 4 that do.
    ports = {(p["node"], p["port"]): p["vl_utilization"] for p in raw["ports"]}
    assert ports[("sw0", 2)][0] == 0 and ports[("sw0", 2)][1] > 0
    assert ports[("sw0", 1)][0] > 0 and ports[("sw0", 1)][1] > 0
