"""ibnetsim.qos_sim: a qos plan simulated as CBR connections with the tables it programs
(end to end: every accepted connection gets its mean bandwidth), the per-connection
delay and jitter measurements by hand, the setup's connection list, the qos_run kind
and the alfaro2001 Fig. 4 / Figs. 5–12 entries."""

import pytest

import ibnetsim as ib
from ibnetsim import qos, qos_sim
from ibnetsim.errors import ConfigError
from ibnetsim.experiment import registry
from ibnetsim.experiment.executors import make_executor


@pytest.fixture(scope="module")
def small():
    fab = ib.topology.irregular(switches=8, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=2)
    return fab, ib.SubnetManager(fab, routing="updn")


@pytest.mark.parametrize("entry_limit", ["table", "none", "vl"])
def test_setup_connections_match_setup(small, entry_limit):
    fab, sm = small
    paper_accounting = entry_limit != "table"
    opts = {"entry_limit": entry_limit}
    bands = qos.PAPER_TEXT_BANDS_BPS if paper_accounting else qos.PAPER_BANDS_BPS
    conns = qos_sim.setup_connections(fab, sm, 1500, retry_limit=300, seed=4, rate_basis="data",
                                      sl2_range="text" if paper_accounting else "class", **opts)
    r = qos.setup(fab, sm, 1500, retry_limit=300, seed=4, rate_basis="data", bands=bands,
                  loose_bands=paper_accounting, **opts)
    # Same draws, same decisions: the same number per SL, the same bandwidth,
    # each in its SL's range.
    per_sl = [0] * 4
    bw = [0] * 4
    for c in conns:
        lo, hi = bands[c.sl]
        assert lo <= c.bandwidth_bps <= hi and c.klass == "DB"
        per_sl[c.sl] += 1
        bw[c.sl] += c.bandwidth_bps
    assert per_sl == list(r.per_sl["established"])
    for b in range(4):
        if per_sl[b]:
            assert bw[b] / per_sl[b] == pytest.approx(r.per_sl["mean_bandwidth_bps"][b], rel=1e-12)
    assert r.established < 1500 and r.exhausted_sl is not None, "the test must cover the stop rule"
    if paper_accounting:
        # §5.2's SL 2 range: some SL 2 connections lie below SL 2's class and stay on SL 2.
        assert any(c.sl == 2 and c.bandwidth_bps <= 1_550_000 for c in conns)
    # Planned in acceptance order on their SLs, every one is accepted again,
    # into the very tables the setup left.
    plan = qos.plan(fab, sm, conns, rate_basis="data", **opts)
    assert plan.accepted == len(conns)
    assert list(plan.connections["sl"]) == [c.sl for c in conns]
    for col in ("reserved_slots", "low_entries", "overflow_slots", "vlarb_low"):
        assert list(plan.ports[col]) == list(r.ports[col]), col


def test_plan_simulated_meets_every_mean(small):
    """The issue's end-to-end check: every accepted connection receives its mean bandwidth.

    In a steady-state window of length W a CBR source generates ⌊W/IAT⌋ or ⌈W/IAT⌉
    packets; the deliveries in the window are those generations shifted by each
    packet's delay, so as long as delays vary by less than an IAT from one window
    edge to the other the count differs from W/IAT by less than 2 — any larger
    gap means a connection was starved or queued without bound.
    """
    fab, sm = small
    reqs = qos_sim.setup_connections(fab, sm, 1000, retry_limit=300, seed=1, rate_basis="data")
    plan = qos.plan(fab, sm, reqs, rate_basis="data")
    assert plan.accepted == len(reqs) > 300
    r = qos_sim.simulate_plan(fab, sm, plan, packet_bytes=256, k_packets=5, transient_packets=2000, max_time_us=20_000)
    c = r.connections
    assert len(c) == plan.accepted
    w_us = r.steady_us
    expect = w_us / c["iat_us"]
    gap = (c["delivered_packets"] - expect).abs()
    assert gap.max() < 2.0, c.loc[gap.idxmax()]
    # The busy connections measure their bandwidth to within 2 packets of the window.
    busy = c[expect >= 200]
    assert len(busy) > 50
    assert ((busy["bandwidth_ratio"] - 1).abs() <= 2 / expect[busy.index]).all()
    # Delivered wire bytes per host per cycle is the reserved load.
    reserved = float(c["bandwidth_bps"].sum()) / (32 * 2e9)
    assert r.delivered_bytes_per_cycle_per_host == pytest.approx(reserved, rel=0.01)
    assert r.sim.raw["in_flight"] < 500 and r.sim.drops == {k: 0 for k in r.sim.drops}


def test_lone_connection_zero_jitter_and_constant_delay():
    """One connection on an idle path (h0 → sw0 → sw1 → h1, 1x SDR, 1 m cables): every
    packet takes the same zero-load latency and arrives exactly one IAT after the previous one."""
    fab = ib.topology.hypercube(1, hosts_per_switch=1)
    sm = ib.SubnetManager(fab, routing="minhop")
    hosts = [n for n, k in zip(fab.nodes["name"], fab.nodes["kind"].astype(str)) if "switch" not in k.lower()]
    # 256 B at 204.8 Mb/s: IAT = 2048 bits / 204.8e6 b/s = 10 µs exactly.
    plan = qos.plan(fab, sm, [(hosts[0], hosts[1], "DB", 204_800_000)], rate_basis="data")
    r = qos_sim.simulate_plan(fab, sm, plan, packet_bytes=256, k_packets=50, transient_packets=10, max_time_us=10_000)
    assert r.k_reached and r.lowest_delivered == 50
    k = r.connections.iloc[0]
    assert (k["sl"], k["iat_us"]) == (3, 10.0)
    # Zero-load latency, cut-through: 3 cables × 5 ns, at each of the two switches
    # the LRH+BTH (20 B × 4 ns) and 20 ns of arbitration (preset alfaro2001, no
    # routing delay), then the 256 B once at 4 ns/B: 15 + 2 × 100 + 1024 ns.
    assert k["delay_mean_us"] == k["delay_max_us"] == pytest.approx(1.239, abs=1e-9)
    d, j = k["delay_bins"], k["jitter_bins"]
    assert j == [0, 0, 0, 50, 0, 0, 0, 0]
    assert d == [0, 0, 50, 0, 0, 0, 0, 0]  # (IAT/16, IAT/8] = (0.625, 1.25] µs
    row = r.per_sl.iloc[0]
    assert row["delay_le_iat/16"] == 0.0 and row["delay_le_iat/8"] == 1.0
    assert row["jitter_+-iat/8"] == 1.0
    assert row["best_within_iat2"] == row["worst_within_iat2"] == 1.0


def test_simulate_plan_errors(small):
    fab, sm = small
    with pytest.raises(ConfigError, match="qos.plan"):
        qos_sim.simulate_plan(fab, sm, [("h0", "h1", "DB", 1000)])
    refused = qos.plan(fab, sm, [("h0", "h1", "BE", 0)])
    with pytest.raises(ConfigError, match="no DB/DBTS"):
        qos_sim.simulate_plan(fab, sm, refused)
    ok = qos.plan(fab, sm, [("h0", "h1", "DB", 1_000_000)])
    with pytest.raises(ConfigError, match="packet_bytes"):
        qos_sim.simulate_plan(fab, sm, ok, packet_bytes=20)
    with pytest.raises(ConfigError, match="k_packets"):
        qos_sim.simulate_plan(fab, sm, ok, k_packets=-1)
    with pytest.raises(ConfigError, match="unknown simulation key 'swich'"):
        qos_sim.simulate_plan(fab, sm, ok, swich={})
    assert qos_sim.buffer_bytes(256) == 1056 and qos_sim.buffer_bytes(4096) == 16416


def test_fig4_quick_reproduces(tmp_path):
    rep = registry.reproduce("alfaro2001-fig4", quick=True, executor=make_executor("serial"), out_dir=tmp_path / "r", progress=False)
    verdicts = {c.value.quantity: c.verdict for c in rep.comparisons}
    assert all(v == "within" for v in verdicts.values()), verdicts
    ratio = [c.ours for c in rep.comparisons if c.value.quantity.startswith("Delivered ÷ reserved")]
    assert len(ratio) == 2 and all(abs(x - 1) < 0.01 for x in ratio)


def test_qos_run_columns(tmp_path):
    rep = registry.reproduce("alfaro2001-figs5-12", quick=True, executor=make_executor("serial"), out_dir=tmp_path / "r", progress=False)
    by = {c.value.quantity: c for c in rep.comparisons}
    # Low-bandwidth SLs arrive within IAT/32 (the paper's Fig. 8 statement holds here).
    for pb in (256, 4096):
        c = by[f"Irregular, {pb} B, SL 1: share of packets with delay ≤ IAT/32"]
        assert c.verdict == "within" and c.ours == 1.0
        u = by[f"Irregular, {pb} B: mean utilization of host interfaces"].ours
        assert 0.6 < u < 0.8
    # Values of other networks are not in the quick run.
    assert by["Mesh, 256 B: mean utilization of host interfaces"].verdict == "not in quick run"
    # SL 3 is measured on both points; its delay share is a share.
    for pb in (256, 4096):
        c = by[f"Irregular, {pb} B, SL 3: share of packets with delay ≤ 3·IAT/4"]
        assert c.n == 1 and 0.9 < c.ours <= 1.0
    # A quick entry passes on a correct build: what is outside (the SL 3
    # statements) is a known deviation the entry explains, and nothing else.
    outside = {q: c.verdict for q, c in by.items() if c.verdict not in ("within", "not in quick run")}
    assert set(outside.values()) <= {"known deviation"} and all("SL 3" in q for q in outside), outside
    assert rep.ok


def test_dbts_connections_use_the_high_table_and_runs_repeat(small):
    """DBTS connections (SLs 4–7) are arbitrated in the high-priority table; with DB
    traffic on the same links both keep their means, and a run repeats exactly."""
    fab, sm = small
    reqs = [("h0", "h9", "DBTS", 300_000_000), ("h1", "h9", "DB", 600_000_000), ("h2", "h9", "DBTS", 40_000),
            ("h3", "h9", "DB", 500_000_000), ("h0", "h12", "DBTS", 2_000_000)]
    plan = qos.plan(fab, sm, reqs, rate_basis="data")
    assert plan.accepted == 5 and list(plan.connections["sl"]) == [7, 3, 4, 3, 6]
    run = lambda: qos_sim.simulate_plan(fab, sm, plan, k_packets=3, transient_packets=500, max_time_us=30_000, seed=9)
    a, b = run(), run()
    assert a.connections.equals(b.connections)
    c = a.connections
    expect = a.steady_us / c["iat_us"]
    assert ((c["delivered_packets"] - expect).abs() < 2).all(), c
    # h9's link carries 1.4 Gb/s of the 1.6 Gb/s CBR budget; the DBTS SL 7 connection
    # is served first and so never waits more than one packet behind DB traffic per hop.
    hi = c[c["sl"] == 7].iloc[0]
    assert hi["within_iat2"] == 1.0
