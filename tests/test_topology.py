import pandas as pd
import pytest

import ibnetsim as ib


def test_irregular_is_seeded_and_respects_parameters():
    a = ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
    b = ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
    c = ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=2)
    assert a.to_netfile() == b.to_netfile()
    assert a.to_netfile() != c.to_netfile()
    assert (a.num_switches, a.num_cas, a.num_links) == (16, 64, 16 * 4 // 2 + 64)
    info = a.info()
    assert info["switch_to_switch_links"] == 32
    assert info["independent_cycles"] == 32 - 16 + 1
    assert info["connected"]


def test_kim_15_switch_network_has_9_cycles():
    fab = ib.topology.irregular(switches=15, switch_ports=5, independent_cycles=9, hosts_per_switch=1, seed=3)
    assert fab.info()["independent_cycles"] == 9


def test_tables_are_dataframes():
    fab = ib.topology.torus([4, 4], hosts_per_switch=1)
    nodes, links = fab.nodes, fab.links
    assert isinstance(nodes, pd.DataFrame)
    assert (nodes["kind"] == "Switch").sum() == 16
    assert len(links) == 16 * 4 // 2 + 16
    assert set(links["width"]) == {"1x"} and set(links["speed"]) == {"SDR"}


def test_link_options_apply_to_every_link():
    fab = ib.topology.hypercube(3, hosts_per_switch=1, link_width="4x", link_speed="QDR", cable_length_m=20)
    links = fab.links
    assert set(links["width"]) == {"4x"} and set(links["speed"]) == {"QDR"}
    assert links["data_rate_gbps"].iloc[0] == pytest.approx(32.0)
    assert set(links["length_m"]) == {20.0}


def test_netfile_round_trip(tmp_path):
    fab = ib.topology.fat_tree(2, 3)
    path = tmp_path / "ft.net"
    fab.write(path)
    back = ib.topology.read(path)
    assert back.to_netfile() == fab.to_netfile()
    assert back.source_format == "ibnetdiscover"


def test_a_file_takes_link_defaults_and_per_cable_lengths(tmp_path):
    # A ring's net file gives widths and speeds of its own; strip them so the defaults apply.
    net = tmp_path / "ring.net"
    ib.topology.ring(3).write(net)
    net.write_text("\n".join(line.split("\t#")[0].replace("\tw=1", "") for line in net.read_text().splitlines()) + "\n")
    plain = ib.topology.read(net).links
    assert set(plain["width"]) == {"1x"} and set(plain["length_m"]) == {1.0}
    lengths = tmp_path / "lengths.txt"
    lengths.write_text("# node port metres\nsw0 1 30\n")
    fab = ib.topology.read(net, link_width="4x", link_speed="QDR", cable_length_m=5, cable_lengths=lengths)
    links = fab.links
    assert set(links["width"]) == {"4x"} and set(links["speed"]) == {"QDR"}
    assert sorted(links["length_m"]) == [5.0] * (len(links) - 1) + [30.0]
    with pytest.raises(ib.TopologyError, match="link_speed: unknown link speed 'XDR'"):
        ib.topology.read(net, link_speed="XDR")
    with pytest.raises(ib.TopologyError, match="cable_length_m"):
        ib.topology.read(net, cable_length_m=-1)
    lengths.write_text("sw0 9 30\n")
    with pytest.raises(ib.TopologyError, match=r"lengths.txt:1: sw0 port 9 has no cable"):
        ib.topology.read(net, cable_lengths=lengths)


def test_bad_generator_parameter_names_the_key():
    with pytest.raises(ib.TopologyError, match="links_per_switch|switch_ports"):
        ib.topology.irregular(switches=4, switch_ports=4, links_per_switch=4, hosts_per_switch=2, seed=1)
    with pytest.raises(ib.TopologyError, match="unknown field `colour`"):
        ib.topology.generate("ring", switches=4, colour="red")
    with pytest.raises(ib.TopologyError, match="unknown link speed 'XDR'"):
        ib.topology.ring(4, link_speed="XDR")


def test_malformed_file_names_file_and_line(tmp_path):
    path = tmp_path / "bad.net"
    path.write_text('Switch 4 "s1"\n[1] "h1"[1]\n[9] "h2"[1]\n\nCa 1 "h1"\n[1] "s1"[1]\n\nCa 1 "h2"\n[1] "s1"[9]\n')
    with pytest.raises(ib.TopologyError, match=r"bad\.net:3"):
        ib.topology.read(path)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        ib.topology.read(tmp_path / "nope.net")


def test_real_topologies_load(shared_data):
    big = ib.topology.read(shared_data / "topologies/is4_3l_1944n/is4_3l_1944n.topo")
    assert big.num_cas == 1944 and big.num_switches == 270
    lst = ib.topology.read(shared_data / "topologies/ibutils/subnet.lst")
    assert lst.num_switches == 62 and lst.num_links == 172


def test_generated_node_descriptions_follow_ofed_and_survive_a_net_file(tmp_path):
    fab = ib.topology.fat_tree(2, 2)
    path = tmp_path / "ft.net"
    fab.write(path)
    back = ib.topology.read(path)
    assert back.nodes.name.tolist() == ["sw0", "sw1", "sw2", "sw3", "h0", "h1", "h2", "h3"]
    assert back.nodes.description.tolist() == [
        "MF0;sw0:ibnetsim level 0/U1",
        "MF0;sw1:ibnetsim level 0/U1",
        "MF0;sw2:ibnetsim level 1/U1",
        "MF0;sw3:ibnetsim level 1/U1",
        "h0 HCA-1",
        "h1 HCA-1",
        "h2 HCA-1",
        "h3 HCA-1",
    ]
    ring = ib.topology.ring(3, hosts_per_switch=1)
    assert ring.nodes.description.tolist()[:4] == ["MF0;sw0:ibnetsim/U1", "MF0;sw1:ibnetsim/U1", "MF0;sw2:ibnetsim/U1", "h0 HCA-1"]
