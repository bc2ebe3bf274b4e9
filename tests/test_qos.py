"""ibnetsim.qos: request files, plan (tables per port), setup, the `ibnetsim qos` commands,
the qos_setup point kind and the alfaro2001 Table 2–4 reproduce entries."""

import os
from pathlib import Path
from textwrap import dedent

import pytest
from click.testing import CliRunner

import ibnetsim as ib
from ibnetsim import qos
from ibnetsim.cli import main
from ibnetsim.errors import ConfigError
from ibnetsim.experiment import loads_scenario, registry, scenario
from ibnetsim.experiment.executors import make_executor
from ibnetsim.experiment.kinds import run_point
from ibnetsim.experiment.scenario import ScenarioError

IDLE_LOW = ",".join(["8:255"] * 12 + ["8:204", "9:1"])


@pytest.fixture(scope="module")
def hypercube():
    fab = ib.topology.hypercube(4, hosts_per_switch=4)
    return fab, ib.SubnetManager(fab, routing="updn")


def test_parse_bandwidth():
    assert qos.parse_bandwidth("64000") == 64_000
    assert qos.parse_bandwidth("64k") == 64_000
    assert qos.parse_bandwidth("1.55M") == 1_550_000
    assert qos.parse_bandwidth("300 Mb/s") == 300_000_000
    assert qos.parse_bandwidth("2.5Gbps") == 2_500_000_000
    assert qos.parse_bandwidth("8 kbit/s") == 8_000
    assert qos.parse_bandwidth("1e6") == 1_000_000
    for bad in ("", "fast", "3x", "-5", "1.5 MB"):
        with pytest.raises(ValueError):
            qos.parse_bandwidth(bad)


def test_request_file_format_and_errors(tmp_path):
    text = dedent(
        """\
        # connections for the planner
        source, destination, class, bandwidth
        h0, h63, DB, 300M   # HDTV
        h1 h62 dbts 64k

        h2, h61, BE, 0
        """
    )
    reqs = qos.parse_requests(text, "c.csv")
    assert [(r.source, r.destination, r.klass, r.bandwidth_bps, r.where) for r in reqs] == [
        ("h0", "h63", "DB", 300_000_000, "c.csv:3"),
        ("h1", "h62", "DBTS", 64_000, "c.csv:4"),
        ("h2", "h61", "BE", 0, "c.csv:6"),
    ]
    p = tmp_path / "r.txt"
    p.write_text(text)
    read = qos.read_requests(p)
    assert [(r.source, r.bandwidth_bps) for r in read] == [(r.source, r.bandwidth_bps) for r in reqs]
    assert read[1].where == f"{p}:4"
    cases = {
        "h0, h1, DB\n": "c.csv:1: expected 4 fields",
        "\nh0, h1, XX, 5\n": "c.csv:2: class 'XX' is not one of DBTS, DB, BE, CH",
        "h0, h1, DB, 5 parsecs\n": "c.csv:1: bandwidth '5 parsecs' is not a number",
        "h0, h1, DB, 0\n": "c.csv:1: a DB connection needs a mean bandwidth above 0",
        "h0, , DB, 5\n": "c.csv:1: expected 4 fields",
    }
    for bad, msg in cases.items():
        with pytest.raises(ConfigError, match=msg):
            qos.parse_requests(bad, "c.csv")


def test_plan_reserves_slots_on_every_port_of_the_path(hypercube):
    fab, sm = hypercube
    p = qos.plan(fab, sm, [("h0", "h63", "DB", 300_000_000), ("h1", "h63", "DBTS", 64_000), ("h3", "h63", "DB", 1_550_000)])
    c = p.connections
    assert c["accepted"].tolist() == [True, True, True]
    assert c["sl"].tolist() == [3, 4, 1]
    # ⌈300e6 / 2.5e9 × 16320⌉ = 1959 = 7 × 255 + 174; ⌈64e3 …⌉ = 1; ⌈1.55e6 …⌉ = 11.
    assert c["source_slots"].tolist() == [1959, 1, 11]
    assert p.sl2vl == "0,1,2,3,4,5,6,7,8,9,8,8,8,8,8,8"
    assert (p.idle_vlarb_high, p.idle_vlarb_low) == ("", IDLE_LOW)
    ports = p.ports.set_index(["node", "port"])
    h0 = ports.loc[("h0", 1)]
    assert h0["reserved_slots"] == 1959 and h0["budget_slots"] == 16320 - 3264
    assert h0["vlarb_low"] == IDLE_LOW + "," + ",".join(["3:255"] * 7 + ["3:174"])
    assert h0["vlarb_high"] == ""
    # The last switch's port to h63 carries all three, each in its SL's entries.
    path = sm.route("h0", "h63")
    last = ports.loc[path[-1]]
    assert last["reserved_slots"] == 1959 + 1 + 11
    assert last["vlarb_high"] == "4:1"
    assert last["vlarb_low"].endswith(",3:174,1:11")
    assert (last["high_entries"], last["low_entries"]) == (1, 14 + 8 + 1)
    # Every port on the path holds the 300 Mb/s connection; a port off every path holds nothing.
    for hop in path:
        assert ports.loc[hop]["reserved_slots"] >= 1959
    assert int(ports["reserved_slots"].sum()) == 1959 * len(path) + 1 * len(sm.route("h1", "h63")) + 11 * len(sm.route("h3", "h63"))
    # Long-form entries: weights add up to reserved + BE + CH on every port.
    e = p.entries.groupby(["node", "port"])["weight"].sum()
    want = ports["reserved_slots"] + 3264 + 1
    assert e.reindex(want.index).tolist() == want.tolist()


def test_plan_refuses_when_a_port_runs_out_of_entries(hypercube):
    fab, sm = hypercube
    # 39.0625 Mb/s is exactly 255 slots: 50 fill the 50 free low entries of h0's port.
    reqs = [("h0", "h63", "DB", 39_062_500)] * 51
    p = qos.plan(fab, sm, reqs)
    assert p.accepted == 50 and p.refused == 1
    last = p.connections.iloc[-1]
    assert last["refused_at"] == "h0/1"
    assert last["reason"] == "table entries: needs 1 new low entries, 0 free"
    h0 = p.ports.set_index(["node", "port"]).loc[("h0", 1)]
    assert (h0["reserved_slots"], h0["low_entries"]) == (12750, 64)
    # A bandwidth refusal downstream leaves nothing reserved upstream.
    q = qos.plan(fab, sm, [("h1", "h63", "DB", 1_900_000_000), ("h0", "h63", "DB", 600_000_000)], be_share=0.0)
    refused = q.connections.iloc[1]
    assert not refused["accepted"] and refused["reason"].startswith("bandwidth")
    # h0 and h1 share a switch, so the paths share every port after the CA's. 1.9 Gb/s holds
    # 12404 slots there; 600 Mb/s needs 3917, one more than is left: refused at hop 1.
    assert refused["reason"] == "bandwidth: needs 3917 slots, 3916 free"
    assert sm.route("h0", "h63")[1:] == sm.route("h1", "h63")[1:]
    assert refused["refused_at"] == "{}/{}".format(*sm.route("h0", "h63")[1])
    assert q.ports.set_index(["node", "port"]).loc[("h0", 1)]["reserved_slots"] == 0


def test_plan_text_is_an_opensm_conf_with_per_port_lines(hypercube, tmp_path):
    fab, sm = hypercube
    p = qos.plan(fab, sm, [("h0", "h63", "DB", 300_000_000)])
    text = p.to_text()
    assert "qos_sl2vl 0,1,2,3,4,5,6,7,8,9,8,8,8,8,8,8\n" in text
    assert f"qos_vlarb_low {IDLE_LOW}\n" in text
    changed = [f"{n}/{pt}" for n, pt in sm.route("h0", "h63")]
    listed = sorted({line.split()[1] for line in text.splitlines() if line.startswith("port ")})
    assert listed == sorted(changed)
    assert f"port h0/1 qos_vlarb_low {IDLE_LOW},3:255," in text
    assert len(p.to_text(all_ports=True).splitlines()) > len(text.splitlines())
    # OpenSM's parser skips the 'port' lines: the text loads as a QoS file.
    conf = tmp_path / "opensm.conf"
    conf.write_text(text)
    assert sm.check(qos_file=conf).ok


def test_plan_input_errors(hypercube):
    fab, sm = hypercube
    with pytest.raises(ConfigError, match="request 2: unknown node 'nobody'"):
        qos.plan(fab, sm, [("h0", "h1", "DB", 5), ("h0", "nobody", "DB", 5)])
    with pytest.raises(ConfigError, match="x.csv:7: destination 'sw3' is a switch"):
        qos.plan(fab, sm, [qos.Request("h0", "sw3", "DB", 5, "x.csv:7")])
    with pytest.raises(ConfigError, match="both 'h0'"):
        qos.plan(fab, sm, [("h0", "h0", "DB", 5)])
    with pytest.raises(ConfigError, match="be_share"):
        qos.plan(fab, sm, [], be_share=1.0)
    for bw in (float("nan"), float("inf"), 1e30, -1, 10**20):
        with pytest.raises(ConfigError, match="request 1: bandwidth .* out of range"):
            qos.plan(fab, sm, [("h0", "h1", "DB", bw)])
    with pytest.raises(ConfigError, match="request 1: bandwidth 'much' is not a number"):
        qos.plan(fab, sm, [("h0", "h1", "DB", "much")])
    assert qos.plan(fab, sm, [("h0", "h1", "DB", "2M")]).connections["bandwidth_bps"].tolist() == [2_000_000]
    with pytest.raises(ConfigError, match="bandwidth must be a whole number of b/s, not 2.5"):
        qos.Request("h0", "h1", "DB", 2.5)
    other = ib.topology.hypercube(2, hosts_per_switch=1)
    with pytest.raises(ConfigError, match="another fabric"):
        qos.plan(other, sm, [])


def test_setup_counts(hypercube):
    fab, sm = hypercube
    small = qos.setup(fab, sm, 400, seed=3)
    assert small.established == 400 and small.tried == 400 and small.exhausted_sl is None
    assert small.per_sl["established"].tolist() == [100] * 4
    m = small.per_sl["mean_bandwidth_bps"].tolist()
    for (lo, hi), v in zip(qos.PAPER_BANDS_BPS, m):
        assert lo <= v <= hi
    full = qos.setup(fab, sm, 5000, retry_limit=200, seed=3)
    per = full.per_sl
    assert full.exhausted_sl == 3
    assert (per["tried"] == per["established"] + per["refused_bandwidth"] + per["refused_entries"]).all()
    assert per["established"].max() - per["established"].min() <= 1
    assert (full.ports["reserved_slots"] <= full.ports["budget_slots"]).all()
    assert (full.ports["low_entries"] <= 64).all()
    assert qos.setup(fab, sm, 5000, retry_limit=200, seed=3).per_sl.equals(per)
    level = qos.setup(fab, sm, 5000, retry_limit=200, seed=3, stop="level")
    assert level.established > full.established
    dbts = qos.setup(fab, sm, 40, seed=1, klass="DBTS")
    assert dbts.per_sl["sl"].tolist() == [4, 5, 6, 7]
    assert (dbts.ports["high_entries"] > 0).any()
    with pytest.raises(ConfigError, match="stop"):
        qos.setup(fab, sm, 10, stop="never")
    with pytest.raises(ConfigError, match="band 0"):
        qos.setup(fab, sm, 10, bands=[(1, 100_000)] + list(qos.PAPER_BANDS_BPS[1:]))


def test_setup_entry_limit_order_and_sl2_range(hypercube):
    fab, sm = hypercube
    limited = qos.setup(fab, sm, 5000, retry_limit=200, seed=3)
    free = qos.setup(fab, sm, 5000, retry_limit=200, seed=3, entry_limit="none")
    # Only the slot budget refuses; what the 64 entries cannot hold is overflow.
    assert free.per_sl["refused_entries"].sum() == 0 and limited.per_sl["refused_entries"].sum() > 0
    assert free.established > limited.established
    assert (free.ports["reserved_slots"] <= free.ports["budget_slots"]).all()
    assert (limited.ports["overflow_slots"] == 0).all() and (free.ports["overflow_slots"] > 0).any()
    over = free.ports[free.ports["overflow_slots"] > 0]
    assert (over["low_entries"] == 64).all()
    # Cyclic order: one try per SL in turn, so the tries stay within one of each other.
    cyc = qos.setup(fab, sm, 400, retry_limit=50, seed=3, order="cyclic")
    assert cyc.per_sl["tried"].max() - cyc.per_sl["tried"].min() <= 1
    # §5.2's SL 2 range starts below SL 2's class: allowed only when asked for.
    with pytest.raises(ConfigError, match="band 2"):
        qos.setup(fab, sm, 40, bands=qos.PAPER_TEXT_BANDS_BPS)
    text = qos.setup(fab, sm, 40, seed=3, bands=qos.PAPER_TEXT_BANDS_BPS, loose_bands=True)
    assert text.per_sl["established"].tolist() == [10] * 4 and text.per_sl["sl"].tolist() == [0, 1, 2, 3]
    for kw, what in [({"order": "fifo"}, "order"), ({"entry_limit": "few"}, "entry_limit"), ({"source_port": "x"}, "source_port")]:
        with pytest.raises(ConfigError, match=what):
            qos.setup(fab, sm, 10, **kw)


def test_qos_setup_kind_paper_accounting():
    # The Table 2 configuration on the mesh, one seed: no entry refusals, and the
    # reserved load per host at saturation is the paper's Figure 4 value (0.769) within 2 %.
    text = """
kind = "qos_setup"
[routing]
engine = "updn"
[qos_setup]
connections = 3072
network = "mesh"
link_width = "1x"
rate_basis = "signalling"
entry_limit = "none"
sl2_range = "text"
"""
    (point,) = loads_scenario(text).points
    row = run_point("qos_setup", [], point.config)
    assert row["status"] == "ok", row["error"]
    assert row["refused_entries"] == 0 and row["overflow_slots_max"] > 0
    assert abs(row["accepted_per_host_link"] - 0.769) < 0.02 * 0.769
    cfg = point.config
    limited = run_point("qos_setup", [], {**cfg, "qos_setup": {**cfg["qos_setup"], "entry_limit": "table"}})
    assert limited["overflow_slots_max"] == 0 and limited["established"] < row["established"]


def test_cli_plan_and_setup(tmp_path):
    runner = CliRunner()
    net = tmp_path / "hc.net"
    assert runner.invoke(main, ["topo", "gen", "hypercube", "--dim", "2", "--hosts", "2", "-o", str(net)]).exit_code == 0
    req = tmp_path / "req.csv"
    req.write_text("source, destination, class, bandwidth\nh0, h7, DB, 100M\nh1, h7, DBTS, 1M\n")
    r = runner.invoke(main, ["qos", "plan", str(net), str(req)])
    assert r.exit_code == 0, r.output
    assert "qos_vlarb_high" in r.output and "port h0/1 qos_vlarb_low" in r.output
    assert "2 requests: 2 accepted, 0 refused" in r.output
    out = tmp_path / "plan.csv"
    r = runner.invoke(main, ["qos", "plan", str(net), str(req), "--format", "csv", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text().splitlines()[0] == "node,port,priority,entry,vl,weight"
    req.write_text("h0, h7, DB, 100M\nh0, h7, DB, lots\n")
    r = runner.invoke(main, ["qos", "plan", str(net), str(req)])
    assert r.exit_code == 2 and f"{req}:2: bandwidth 'lots'" in r.output
    # Numbers no link carries, bytes that are not text, and files that are not files: exit 2, naming the line.
    for body, msg in (
        (b"h0, h7, DB, 1e400\n", ":1: bandwidth '1e400' is above 1e+15 b/s"),
        (b"h0, h7, DB, 100M\nh0, h7, DB, 18446744073709551616\n", ":2: bandwidth '18446744073709551616' is above"),
        (b"h0, h7, DB, 100M\nh0, h7, DB, 1\xff\n", ":2: not UTF-8 text: byte 0xff at column 14"),
    ):
        req.write_bytes(body)
        r = runner.invoke(main, ["qos", "plan", str(net), str(req)])
        assert r.exit_code == 2 and f"{req}{msg}" in r.output, r.output
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    r = runner.invoke(main, ["qos", "plan", str(net), str(fifo)])
    assert r.exit_code == 2 and f"{fifo}: not a regular file" in r.output, r.output
    r = runner.invoke(main, ["qos", "setup", str(net), "-n", "40", "--retry-limit", "50"])
    assert r.exit_code == 0, r.output
    assert "N = 40: 40 established in 40 tries" in r.output


def test_qos_setup_point_kind():
    text = """
kind = "qos_setup"
[routing]
engine = "updn"
[qos_setup]
connections = 1024
network = "mesh"
link_width = "1x"
rate_basis = "signalling"
"""
    (point,) = loads_scenario(text).points
    cfg = point.config
    row = run_point("qos_setup", [], cfg)
    assert row["status"] == "ok", row["error"]
    assert row["established"] == 1024 and row["all_established"]
    # Even below saturation a try can meet a full port; every try is counted.
    assert row["tried"] == sum(row[f"tried_b{b}"] for b in range(4)) >= 1024
    assert row["tried"] - 1024 == row["refused_bandwidth"] + row["refused_entries"]
    assert [row[f"established_b{b}"] for b in range(4)] == [256] * 4
    assert row["hosts"] == 64 and row["exhausted_sl"] == -1
    assert 0 < row["accepted_per_host_link"] < 0.8


def test_qos_setup_scenario_checks(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('kind = "qos_setup"\n[qos_setup]\nconnections = 10\n')
    with pytest.raises(ScenarioError, match="network"):
        scenario.load(f)
    f.write_text('kind = "qos_setup"\n[fabric]\nkind = "ring"\nswitches = 4\n[qos_setup]\nconnections = 10\nnetwork = "mesh"\n')
    with pytest.raises(ScenarioError, match="drop the \\[fabric\\] section"):
        scenario.load(f)


@pytest.mark.parametrize("table", ["alfaro2001-table2", "alfaro2001-table3", "alfaro2001-table4"])
def test_alfaro_connection_tables_quick(table, tmp_path):
    rep = registry.reproduce(table, quick=True, executor=make_executor("serial"), out_dir=tmp_path / "r", progress=False)
    verdicts = {c.value.quantity: c.verdict for c in rep.comparisons}
    judged = {q: v for q, v in verdicts.items() if v not in ("not in quick run", "context")}
    assert judged and all(v == "within" for v in judged.values()), judged
    # Below saturation every connection is established, exactly as in the paper.
    exact = [c for c in rep.comparisons if c.value.tolerance_abs == 0 and c.ours is not None]
    assert exact and all(c.ours == c.value.paper for c in exact)


from hypothesis import given, settings, strategies as st  # noqa: E402

_SMALL = ib.topology.hypercube(2, hosts_per_switch=2)
_SMALL_SM = ib.SubnetManager(_SMALL, routing="updn")
_HOSTS = [f"h{i}" for i in range(8)]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_HOSTS), st.sampled_from(_HOSTS), st.sampled_from(["DB", "DBTS", "BE", "CH"]), st.integers(1, 900_000_000)),
        max_size=60,
    ),
    st.sampled_from([0.0, 0.1, 0.2, 0.5]),
)
def test_plan_invariants_hold_for_any_request_list(reqs, be_share):
    reqs = [r for r in reqs if r[0] != r[1]]
    p = qos.plan(_SMALL, _SMALL_SM, reqs, be_share=be_share)
    be = round(be_share * qos.FRAME_SLOTS)
    ports = p.ports
    assert (ports["budget_slots"] == qos.FRAME_SLOTS - be).all()
    assert (ports["reserved_slots"] <= ports["budget_slots"]).all()
    assert (ports["high_entries"] <= 64).all() and (ports["low_entries"] <= 64).all()
    assert p.entries["weight"].between(0, 255).all()
    weights = p.entries.groupby(["node", "port"])["weight"].sum()
    want = ports.set_index(["node", "port"])["reserved_slots"] + be + 1
    assert weights.reindex(want.index).tolist() == want.tolist()
    # Reserved slots are exactly those of the accepted DB/DBTS connections, hop by hop.
    acc = p.connections[p.connections["accepted"] & p.connections["klass"].isin(["DB", "DBTS"])]
    total = sum(qos_slots * len(_SMALL_SM.route(s, d)) for s, d, qos_slots in zip(acc["source"], acc["destination"], acc["source_slots"]))
    assert int(ports["reserved_slots"].sum()) == total
    # BE and CH are never refused.
    assert p.connections[p.connections["klass"].isin(["BE", "CH"])]["accepted"].all()
