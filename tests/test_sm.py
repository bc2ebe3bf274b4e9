import numpy as np
import pytest

import ibnetsim as ib


@pytest.fixture
def irregular():
    return ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)


def test_engines_are_registered():
    names = [n for n, _ in ib.routing_engines()]
    assert {"minhop", "updn", "dor", "file"} <= set(names)


def test_lids_with_lmc_are_aligned(irregular):
    sm = ib.SubnetManager(irregular, routing="minhop", lmc=2)
    cas = sm.lids[sm.lids["kind"] == "Hca"]
    assert len(cas) == 64
    assert (cas["base_lid"] % 4 == 0).all()
    assert (cas["lmc"] == 2).all()
    assert sm.lft.shape == (16, sm.lids["base_lid"].max() + 1)


def test_updn_is_deadlock_free_and_minhop_on_torus_is_not():
    fab = ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
    report = ib.SubnetManager(fab, routing="updn").check()
    assert report.ok, str(report)
    torus = ib.topology.torus([4, 4], hosts_per_switch=1)
    report = ib.SubnetManager(torus, routing="dor").check(data_vls=1)
    assert not report.ok
    assert "cycle" in str(report).lower()


def test_minhop_routes_are_minimal(irregular):
    report = ib.SubnetManager(irregular, routing="minhop").check()
    d = report.to_dict()
    assert d["paths"]["non_minimal_pairs"] == 0


def test_route_trace_on_mesh_goes_x_first():
    fab = ib.topology.mesh([3, 3], hosts_per_switch=1)
    sm = ib.SubnetManager(fab, routing="dor")
    hops = sm.route("h0", "h8")
    # sw0 -> +x (port 1) -> +x -> +y (port 3) -> +y -> host port.
    assert [p for _, p in hops[1:-1]] == [1, 1, 3, 3]


def test_lfts_dump_round_trips_through_file_engine(irregular, tmp_path):
    sm = ib.SubnetManager(irregular, routing="updn", lmc=1)
    path = tmp_path / "opensm-lfts.dump"
    sm.write_lfts(path)
    again = ib.SubnetManager(irregular, routing="file", lfts_file=path)
    assert np.array_equal(again.lft, sm.lft)


def test_unknown_engine_and_root_are_errors(irregular):
    with pytest.raises(ib.ConfigError, match="unknown routing engine 'spf'.*minhop"):
        ib.SubnetManager(irregular, routing="spf")
    with pytest.raises(ib.IbnetsimError, match="nosuchswitch"):
        ib.SubnetManager(irregular, routing="updn", root="nosuchswitch")


def test_real_routing_dumps_check(shared_data):
    topo = shared_data / "topologies/ib_flit_sim_small/is1_3l_32n"
    fab = ib.topology.read(topo / "is1_3l_32n.topo")
    sm = ib.SubnetManager(fab, routing="file", lfts_file=topo / "is1_3l_32n.fdbs", fdbs_key=topo / "is1_3l_32n.fdbs.ini")
    report = sm.check()
    assert report.to_dict()["paths"]["unreachable_pairs"] == 0


from hypothesis import given, settings, strategies as st


@settings(max_examples=25, deadline=None)
@given(
    switches=st.integers(6, 24),
    links=st.sampled_from([2, 3, 4]),
    seed=st.integers(0, 10_000),
    lmc=st.integers(0, 2),
)
def test_updn_is_always_deadlock_free_and_complete(switches, links, seed, lmc):
    if switches * links % 2:
        switches += 1
    fab = ib.topology.irregular(
        switches=switches, switch_ports=8, links_per_switch=links, hosts_per_switch=2, seed=seed
    )
    d = ib.SubnetManager(fab, routing="updn", lmc=lmc).check().to_dict()
    assert d["paths"]["unreachable_pairs"] == 0
    assert d["paths"]["loop_pairs"] == 0
    assert d["credit_loops"]["cycle"] is None
    assert not d["has_defects"]


def test_link_loads_on_a_ring_by_hand():
    # 4 switches in a ring, one host each, minhop, uniform all-to-all: each
    # host sends 1/3 to each other host, so its own link carries 1.0 both
    # ways, and the ring carries 4 sources x (2 neighbours x 1 hop + 1
    # opposite x 2 hops) x 1/3 = 16/3 link-loads in all.
    sm = ib.SubnetManager(ib.topology.ring(4, hosts_per_switch=1), routing="minhop")
    df = sm.link_loads()
    assert list(df.columns) == ["from_node", "from_port", "to_node", "to_port", "data_rate_gbps", "load"]
    assert len(df) == 16
    ring = df[df.from_node.str.startswith("sw") & df.to_node.str.startswith("sw")]
    hosts = df.drop(ring.index)
    assert np.allclose(hosts.load, 1.0)
    assert ring.load.sum() == pytest.approx(16 / 3)
    assert (df.data_rate_gbps == 2.0).all()  # 1x SDR
    assert df.load.max() == pytest.approx(sm.check()["channel_load"]["max_load"])


def test_sl2vl_tables_as_a_dataframe(tmp_path):
    sm = ib.SubnetManager(ib.topology.ring(4, hosts_per_switch=1), routing="updn")
    df = sm.sl2vl(data_vls=2)
    # Per switch: port 0 to each of 3 cabled ports, each cabled port to the
    # other 2: 9 rows; per host: 1 row.
    assert len(df) == 4 * 9 + 4
    assert list(df.columns[:3]) == ["node", "in_port", "out_port"]
    vls = df.filter(like="sl").to_numpy()
    assert vls.shape == (40, 16)
    assert (vls == np.arange(16) % 2).all()
    qos = tmp_path / "qos.conf"
    qos.write_text("qos TRUE\nqos_max_vls 2\nqos_sl2vl 1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0\n")
    vls = sm.sl2vl(qos_file=qos).filter(like="sl").to_numpy()
    assert (vls[:, 0] == 1).all() and (vls[:, 1] == 0).all()


def test_fa_switches_without_adaptive_support_hold_the_escape_port_everywhere():
    import numpy as np

    f = ib.topology.irregular(switches=8, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
    plain = ib.SubnetManager(f, routing="fa", lmc=1, non_adaptive_switches=["sw0"])
    full = ib.SubnetManager(f, routing="fa", lmc=1)
    lids = plain.lids
    bases = lids.loc[lids["kind"].str.lower().str.contains("hca|ca"), "base_lid"].astype(int).to_numpy()
    row = plain.switches.index("sw0")
    # sw0: the adaptive LID (base + 1) is routed like the escape LID (base).
    assert np.array_equal(plain.lft[row, bases + 1], plain.lft[row, bases])
    # Elsewhere nothing changes, and on sw0 the escape entries are fa's own.
    others = [i for i in range(len(plain.switches)) if i != row]
    assert np.array_equal(plain.lft[others], full.lft[others])
    assert np.array_equal(plain.lft[row, bases], full.lft[row, bases])
    with pytest.raises(ib.ConfigError, match="non_adaptive_switches"):
        ib.SubnetManager(f, routing="fa", lmc=1, non_adaptive_switches=["nope"])


def test_dfsssp_gives_per_path_sls_that_check_uses():
    torus = ib.topology.torus([4, 4], hosts_per_switch=2)
    sm = ib.SubnetManager(torus, routing="dfsssp")
    assert sm.routing == "dfsssp"
    assert sm.notes[0].startswith("dfsssp: 4 virtual layer(s) needed of 15 allowed")
    # SL i on VL i: the layers keep every VL's dependency graph acyclic.
    r = sm.check(data_vls=15)
    assert r.ok and r["credit_loops"]["cyclic_sccs"] == 0
    assert r["credit_loops"]["vls_used"] == list(range(15))
    # Folded onto one VL the same routes close a credit loop.
    assert sm.check(data_vls=1)["credit_loops"]["cyclic_sccs"] > 0
    # Four VLs allowed: no spare one, one SL per layer.
    sm4 = ib.SubnetManager(torus, routing="dfsssp", max_vls=4)
    assert sm4.check(data_vls=4)["credit_loops"]["vls_used"] == [0, 1, 2, 3]
    assert np.array_equal(sm4.lft, ib.SubnetManager(torus, routing="sssp").lft)
    with pytest.raises(ib.ConfigError, match="max_vls"):
        ib.SubnetManager(torus, routing="updn", max_vls=4)


def test_lash_gives_per_path_sls_that_check_uses():
    # 4x4 torus: lash needs two layers (docs/routing.md), on SLs 0 and 1.
    torus = ib.topology.torus([4, 4], hosts_per_switch=2)
    sm = ib.SubnetManager(torus, routing="lash")
    assert sm.routing == "lash"
    assert sm.notes[0] == (
        "lash: 2 layer(s) needed of 15 available (max_vls 15, lash_start_vl 0), on SLs 0-1; "
        "ordered switch pairs per layer [192, 48], after balancing [122, 118]"
    )
    r = sm.check(data_vls=2)
    assert r.ok and r["credit_loops"]["cyclic_sccs"] == 0
    assert r["credit_loops"]["vls_used"] == [0, 1]
    # Management traffic is layered too.
    assert sm.check(data_vls=2, include_switch_lids=True)["credit_loops"]["cyclic_sccs"] == 0
    # On one VL lash's routes close a credit loop, as minhop's do.
    assert sm.check(data_vls=1)["credit_loops"]["cyclic_sccs"] > 0
    assert ib.SubnetManager(torus, routing="minhop").check(data_vls=1)["credit_loops"]["cyclic_sccs"] > 0
    # lash_start_vl moves the layers up; the tables stay.
    sm3 = ib.SubnetManager(torus, routing="lash", max_vls=8, lash_start_vl=3)
    assert np.array_equal(sm3.lft, sm.lft)
    assert sm3.check(data_vls=8)["credit_loops"]["vls_used"] == [3, 4]
    with pytest.raises(ib.ConfigError, match="lash_start_vl"):
        ib.SubnetManager(torus, routing="lash", max_vls=4, lash_start_vl=4)
    with pytest.raises(ib.ConfigError, match="lash_start_vl"):
        ib.SubnetManager(torus, routing="dfsssp", lash_start_vl=1)
    # One layer is too few: an error naming the layers needed, or a chain's fallback.
    with pytest.raises(ib.RoutingError, match="need 2 layers .* only 1 are available"):
        ib.SubnetManager(torus, routing="lash", max_vls=1)
    chain = ib.SubnetManager(torus, routing="lash,minhop", max_vls=1)
    assert chain.routing == "minhop"
    assert chain.notes[0].startswith("routing chain 'lash,minhop': routed with 'minhop' after 'lash' failed: ")


def test_nue_is_deadlock_free_on_one_vl_and_layers_its_sls():
    # 4x4 torus, two hosts a switch. nue's default is one layer: no per-path
    # SLs, and its routes need no second VL (minhop's close a loop there).
    torus = ib.topology.torus([4, 4], hosts_per_switch=2)
    sm = ib.SubnetManager(torus, routing="nue")
    assert sm.routing == "nue"
    assert sm.notes[0].startswith("nue: 1 virtual layer(s) (max_vls); CA LIDs per layer: [32]")
    r = sm.check(data_vls=1)
    assert r.ok and r["credit_loops"]["cyclic_sccs"] == 0
    assert ib.SubnetManager(torus, routing="minhop").check(data_vls=1)["credit_loops"]["cyclic_sccs"] > 0
    # Two layers: the hosts alternate between them; SL i on VL i is loop-free.
    sm2 = ib.SubnetManager(torus, routing="nue", max_vls=2)
    assert sm2.notes[0].startswith("nue: 2 virtual layer(s) (max_vls); CA LIDs per layer: [16, 16]")
    r = sm2.check(data_vls=2)
    assert r.ok and r["credit_loops"]["vls_used"] == [0, 1]
    with pytest.raises(ib.ConfigError, match="max_vls"):
        ib.SubnetManager(torus, routing="nue", max_vls=0)


def test_engine_chains_fall_back():
    torus = ib.topology.torus([4, 4], hosts_per_switch=2)
    sm = ib.SubnetManager(torus, routing="dfsssp,updn", max_vls=2)
    assert sm.routing == "updn"
    assert sm.notes[0].startswith("routing chain 'dfsssp,updn': routed with 'updn' after 'dfsssp' failed: ")
    assert "more than 2 virtual layers" in sm.notes[0]
    assert sm.check().ok
    with pytest.raises(ib.ConfigError, match="unknown routing engine 'nosuch' in the chain 'updn,nosuch'"):
        ib.SubnetManager(torus, routing="updn,nosuch")


def test_lid_order_opensm_numbers_the_first_node_first_then_by_port_guid():
    # A 2-ary 2-tree written and read back as an ibsim fabric would be: the
    # first node (a switch) is the SM and takes LID 1, the other switches
    # follow (their GUIDs end in 00, before the CA ports' 01), then the CAs.
    # With LMC 1 the CA blocks are aligned to 2 and LID 5 is skipped.
    fab = ib.topology.fat_tree(k=2, n=2)
    sm = ib.SubnetManager(fab, lid_order="opensm", lmc=1)
    lids = sm.lids.set_index("node")
    switches = [n for n, k in zip(fab.nodes["name"], fab.nodes["kind"]) if k == "Switch"]
    first = fab.nodes["name"][0]
    assert lids.loc[first, "base_lid"] == 1
    assert sorted(lids.loc[switches, "base_lid"]) == [1, 2, 3, 4]
    hosts = sorted(lids.drop(index=switches)["base_lid"])
    assert hosts == [6, 8, 10, 12]
    default = ib.SubnetManager(fab, lmc=1).lids.set_index("node")
    assert sorted(default.drop(index=switches)["base_lid"]) == [2, 4, 6, 8]
    with pytest.raises(ib.ConfigError, match="lid_order: unknown value 'openSM' .*did you mean 'opensm'"):
        ib.SubnetManager(fab, lid_order="openSM")


def _torus_conf(fab, path, radix, extra=""):
    # Seeded at sw0 with its +x (sw1) and +y (sw<x radix>) neighbours.
    g = fab.nodes.set_index("name")["guid"]
    path.write_text(f"torus {radix[0]} {radix[1]} 1\nxp_link {g['sw0']} {g['sw1']}\nyp_link {g['sw0']} {g[f'sw{radix[0]}']}\n{extra}")
    return path


def test_torus_2qos_path_sls_and_sl2vl_by_hand(tmp_path):
    # 5x5 torus, one host per switch: h_i (LID i + 1) on sw_i at (i % 5, i // 5).
    fab = ib.topology.torus([5, 5], hosts_per_switch=1)
    conf = _torus_conf(fab, tmp_path / "torus-2QoS.conf", (5, 5))
    sm = ib.SubnetManager(fab, routing="torus-2qos", torus_config=conf)
    assert sm.routing == "torus-2QoS"
    # From (0,0): to (2,0) no dateline, (3,0) over the x dateline, (0,3) over
    # the y one, (3,3) over both; SL bit d = dimension d's dateline.
    assert [sm.path_sl(1, d) for d in (3, 4, 16, 19)] == [0, 1, 2, 3]
    assert sm.route("h0", "h3") == [("h0", 1), ("sw0", 2), ("sw4", 2), ("sw3", 5)]
    # The engine's SL2VL, whatever data_vls says: on sw0 from +y (port 3) to
    # +x (port 1), VL = SL bit 0 | turn (y before x: 2) | QoS (SL bit 3 -> 4).
    t = sm.sl2vl(data_vls=1).set_index(["node", "in_port", "out_port"])
    assert [int(t.loc[("sw0", 3, 1), f"sl{s}"]) for s in (0, 1, 8, 9)] == [2, 3, 6, 7]
    assert [int(t.loc[("h0", 0, 1), f"sl{s}"]) for s in (0, 7, 8, 15)] == [0, 0, 1, 1]
    # check uses them with the path SLs: no credit loop; dor on one VL has them.
    assert sm.check().ok
    assert not ib.SubnetManager(fab, routing="dor").check().ok
    # Moving the x dateline by one puts sw0 at x = 4: (0,0) to (3,0) no longer crosses it.
    moved = ib.SubnetManager(fab, routing="torus-2QoS", torus_config=_torus_conf(fab, tmp_path / "m.conf", (5, 5), "x_dateline 1\n"))
    assert [moved.path_sl(1, d) for d in (3, 4, 2)] == [1, 0, 1]


def test_torus_2qos_errors_name_the_option_file_and_line(tmp_path):
    fab = ib.topology.torus([5, 5], hosts_per_switch=1)
    with pytest.raises(ib.IbnetsimError, match="torus_config.*needs its torus-2QoS.conf"):
        ib.SubnetManager(fab, routing="torus-2QoS")
    bad = tmp_path / "bad.conf"
    bad.write_text("torus 5 5 1\nxp_lnk 0x1 0x2\n")
    with pytest.raises(ib.IbnetsimError, match=r"bad.conf:2: unknown keyword 'xp_lnk'"):
        ib.SubnetManager(fab, routing="torus-2QoS", torus_config=bad)
    # A torus of another size than the file says.
    wrong = _torus_conf(fab, tmp_path / "wrong.conf", (5, 5)).read_text().replace("torus 5 5 1", "torus 5 4 1")
    (tmp_path / "wrong.conf").write_text(wrong)
    with pytest.raises(ib.IbnetsimError, match="describes 5x4x1 = 20 switches but the fabric has 25"):
        ib.SubnetManager(fab, routing="torus-2QoS", torus_config=tmp_path / "wrong.conf")
