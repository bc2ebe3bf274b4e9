"""The built-in point kinds: routing options worked by hand, the check report's columns, and real runs."""

from types import SimpleNamespace
from textwrap import dedent

import numpy as np
import pandas as pd
import pytest

from ibnetsim.experiment import kinds, load_results, load_table, loads_scenario, make_executor, plot_results, run_sweep
from ibnetsim.experiment.kinds.routing_stats import build_fabric, flatten_check, routing_options


def ring_of_four(table_port: dict) -> tuple:
    """s0-s1-s2-s3-s0, ports 1 (clockwise) and 2 (counter-clockwise), host hN on port 3 of sN.

    ``table_port[(s, d)]`` is the forwarding-table port at switch s towards the host of switch d.
    """
    names = ["s0", "s1", "s2", "s3"]
    nodes = pd.DataFrame({"name": names + ["h0", "h1", "h2", "h3"], "kind": ["Switch"] * 4 + ["Hca"] * 4})
    links = pd.DataFrame(
        {
            "node_a": names + names,
            "port_a": [1, 1, 1, 1, 3, 3, 3, 3],
            "node_b": ["s1", "s2", "s3", "s0", "h0", "h1", "h2", "h3"],
            "port_b": [2, 2, 2, 2, 1, 1, 1, 1],
        }
    )
    lids = pd.DataFrame({"node": ["h0", "h1", "h2", "h3"], "port": [1] * 4, "kind": ["Hca"] * 4, "base_lid": [1, 2, 3, 4], "lmc": [0] * 4})
    lft = np.full((4, 5), 255, dtype=np.uint8)
    for s in range(4):
        for d in range(4):
            lft[s, d + 1] = 3 if s == d else table_port[(s, d)]
    fabric = SimpleNamespace(nodes=nodes, links=links)
    sm = SimpleNamespace(switches=names, lids=lids, lft=lft)
    return fabric, sm


def test_routing_options_on_a_ring_by_hand():
    # Neighbours (distance 1) have one minimal port; the opposite switch has two.
    # Tables: clockwise everywhere (port 1). Pairs: 4 switches × 3 remote hosts = 12.
    clockwise = {(s, d): 1 for s in range(4) for d in range(4) if s != d}
    r = routing_options(*ring_of_four(clockwise))
    # Opposite (4 pairs): {1, 2} -> 2 options. Next clockwise (4 pairs): minimal {1}, table 1 -> 1.
    # Next counter-clockwise (4 pairs): minimal {2}, table 1 (the long way) -> {1, 2} = 2 options.
    assert r["option_pairs"] == 12
    assert r["options_pct_1"] == pytest.approx(100 * 4 / 12)
    assert r["options_pct_2"] == pytest.approx(100 * 8 / 12)
    assert r["options_pct_3"] == 0 and r["options_pct_4plus"] == 0
    assert r["minimal_ports_mean"] == pytest.approx((4 * 2 + 8 * 1) / 12)
    assert r["escape_minimal_pct"] == pytest.approx(100 * 8 / 12)
    # Shortest-path tables: the table port is always minimal, so options = minimal ports.
    shortest = {(s, d): (1 if (d - s) % 4 in (1, 2) else 2) for s in range(4) for d in range(4) if s != d}
    r = routing_options(*ring_of_four(shortest))
    assert r["options_pct_1"] == pytest.approx(100 * 8 / 12) and r["options_pct_2"] == pytest.approx(100 * 4 / 12)
    assert r["escape_minimal_pct"] == 100


REPORT = {
    "has_defects": True,
    "has_warnings": False,
    "fabric": {"switches": 16},
    "paths": {
        "destination_lids": 16,
        "pairs": 240,
        "reachable_pairs": 240,
        "unreachable_pairs": 0,
        "no_path_pairs": 0,
        "uncabled_pairs": 0,
        "wrong_node_pairs": 0,
        "loop_pairs": 0,
        "lids_with_loops": 0,
        "examples": [],
        "min_hops": 1,
        "mean_hops": 2.5,
        "max_hops": 4,
        "hop_histogram": [0, 48, 96, 64, 32],
        "non_minimal_pairs": 0,
        "non_minimal_fraction": 0.0,
        "mean_stretch": 1.0,
        "max_stretch": 1.0,
        "worst_stretch": None,
    },
    "channel_load": {"lids": "base", "max_load": 2.0, "max_link": "s0/1 -> s1/2", "mean_load": 0.7, "mean_switch_link_load": 0.9, "loaded_links": 96, "throughput_bound": 0.5, "unrouted_fraction": 0.0},
    "credit_loops": {"channels": 64, "dependencies": 100, "vls_used": [0], "cyclic_sccs": 1, "channels_in_cycles": 16, "largest_cyclic_scc": 16, "cycle": [], "vl15_turns": 0, "vl15_example": None},
}


def test_flatten_check_report():
    out = flatten_check(REPORT)
    assert out["pairs"] == 240 and out["mean_hops"] == 2.5 and out["max_hops"] == 4
    assert out["hop_histogram"] == [0.0, 48.0, 96.0, 64.0, 32.0]
    assert (out["max_channel_load"], out["throughput_bound"], out["mean_switch_link_load"]) == (2.0, 0.5, 0.9)
    assert out["credit_loop"] is True and out["cyclic_sccs"] == 1 and out["ok"] is False
    # Every column it returns is documented in the kind (and so in docs/scenario.md).
    documented = kinds.get("routing_stats").columns
    assert set(out) <= set(documented)


def test_routing_stats_sweep_on_real_fabrics(tmp_path):
    sc = loads_scenario(
        dedent(
            """\
            kind = "routing_stats"
            seed = [1, 2]
            [fabric]
            kind = "irregular"
            switches = 16
            switch_ports = 8
            links_per_switch = 4
            hosts_per_switch = 4
            [routing]
            engine = ["updn", "minhop"]
            """
        ),
        path=tmp_path / "s.toml",
    )
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    df = load_results(tmp_path / "out")
    assert s.failed == 0, df["error"].tolist()
    assert set(kinds.get("routing_stats").columns) <= set(df.columns)
    assert (df["switches"] == 16).all() and (df["cas"] == 64).all()
    assert (df["pairs"] > 0).all() and (df["unreachable_pairs"] == 0).all()
    updn, minhop = df[df["routing.engine"] == "updn"], df[df["routing.engine"] == "minhop"]
    # minhop routes are minimal by construction; up*/down* is deadlock-free by construction.
    assert (minhop["non_minimal_pairs"] == 0).all() and (minhop["mean_stretch"] == 1.0).all()
    assert (minhop["escape_minimal_pct"] == 100).all()
    assert (~updn["credit_loop"].astype(bool)).all()
    assert (updn["mean_hops"].values >= minhop["mean_hops"].values).all()
    assert np.allclose(df["throughput_bound"], np.minimum(1.0, 1.0 / df["max_channel_load"]))
    for _, r in df.iterrows():
        total = r["options_pct_1"] + r["options_pct_2"] + r["options_pct_3"] + r["options_pct_4plus"]
        assert total == pytest.approx(100.0)
        assert r["option_pairs"] == 16 * 15 * 4


def test_table_options_read_the_fa_engines_tables():
    # 8 switches with 4 links each: every switch has 4 neighbours (one
    # option: the port to it) and 3 switches two hops away, which on this
    # topology each have two minimal ports. 32 hosts on the 7 other switches:
    # 4/7 of the pairs have one option and 3/7 two, whatever MR allows.
    from ibnetsim import SubnetManager, topology
    from ibnetsim.experiment.kinds.routing_stats import table_options

    f = topology.irregular(switches=8, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
    t = table_options(f, SubnetManager(f, routing="fa", lmc=2))
    for mr in (2, 3, 4):
        assert t[f"table_mr{mr}_pct_1"] == pytest.approx(400 / 7)
        assert t[f"table_mr{mr}_pct_2"] == pytest.approx(300 / 7)
        assert sum(t[f"table_mr{mr}_pct_{k}"] for k in range(1, mr + 1)) == pytest.approx(100)
    # LMC 1 has two LIDs per port: MR 3 and 4 cannot be read.
    t1 = table_options(f, SubnetManager(f, routing="fa", lmc=1))
    assert t1["table_mr2_pct_1"] == pytest.approx(400 / 7) and t1["table_mr3_pct_1"] is None


def test_table_columns_must_be_result_columns():
    bad = kinds.PointKind("bad_table", "Test-only.", lambda cfg: {}, sections=(), columns={"a": "A."}, table_columns=("a", "nope"))
    with pytest.raises(ValueError, match="^point kind 'bad_table': table_columns nope are not among its result columns$"):
        kinds.register(bad)
    assert "bad_table" not in kinds.names()
    assert kinds.get("simulate").table_columns == ("offered_load", "accepted_load", "latency_mean_ns", "latency_p99_ns")


def test_simulate_sweep_stores_each_points_time_series(tmp_path):
    # A hot spot on h0: in every point the busiest link over time is the one
    # into h0, and the table of each point has one row per interval, cabled
    # transmitter and VL.
    sc = loads_scenario(
        dedent(
            """\
            kind = "simulate"
            [fabric]
            kind = "irregular"
            switches = 4
            switch_ports = 8
            links_per_switch = 2
            hosts_per_switch = 4
            [routing]
            engine = "updn"
            [simulation]
            time_us = 200
            warmup_us = 20
            [traffic]
            load = [0.05, 0.1]
            pattern = "hot-spot"
            hot_hosts = ["h0"]
            hot_fraction = 0.3
            [metrics]
            series_interval_ns = 10000
            """
        ),
        path=tmp_path / "s.toml",
    )
    s = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    df = load_results(tmp_path / "out")
    assert s.failed == 0, df["error"].tolist()
    table = load_table(tmp_path / "out", "series")
    assert sorted(set(table["key"])) == sorted(df["key"])
    assert len(table) == df["series_rows"].sum()
    links = build_fabric(sc.points[0].config["fabric"]).links
    cabled = 2 * len(links)
    # 200 µs in 10 µs intervals, each cabled transmitter's data VL and VL15.
    assert sorted(set(table["vl"])) == [0, 15]
    assert (df["series_rows"] == 20 * cabled * 2).all()
    h0 = links[(links["node_a"] == "h0") | (links["node_b"] == "h0")].iloc[0]
    into_h0 = (h0["node_b"], h0["port_b"]) if h0["node_a"] == "h0" else (h0["node_a"], h0["port_a"])
    for key, g in table.groupby("key"):
        busiest = g.groupby(["node", "port"])["utilization"].mean().idxmax()
        assert busiest == into_h0, key
    # The point's row keeps its scalar columns; the table is not among them.
    assert "_tables" not in df.columns
    paths = plot_results(tmp_path / "out", formats=("png",))
    assert any(p.name == "link_utilization_over_time.png" for p in paths)
