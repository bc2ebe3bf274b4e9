import json
import subprocess
import sys

import pytest


def run(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "ibnetsim.cli", *map(str, args)], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:{proc.stdout}\nstderr:{proc.stderr}")
    return proc


def test_gen_route_check_pipeline(tmp_path):
    topo = tmp_path / "fab.net"
    run("topo", "gen", "irregular", "--switches", 16, "--ports", 8, "--links", 4, "--hosts", 4, "--seed", 1, "-o", topo)
    info = json.loads(run("topo", "info", topo, "--json").stdout)
    assert info["switches"] == 16 and info["channel_adapters"] == 64
    dump = tmp_path / "lfts.dump"
    run("route", topo, "--engine", "updn", "--lmc", 1, "-o", dump)
    assert dump.read_text().startswith("Unicast lids")
    proc = run("check", topo, "--lfts", dump)  # exit 0 is checked by run()
    assert proc.stdout.rstrip().endswith("verdict: ok")
    assert "credit loops: none" in proc.stdout
    r = json.loads(run("check", topo, "--lfts", dump, "--json").stdout)
    assert (r["has_defects"], r["has_warnings"]) == (False, False)
    assert r["fabric"]["lmc"] == 1 and r["fabric"]["ca_lids"] == 128
    reach = r["paths"]
    # 64 sources to the 2 LIDs of each of 63 other hosts, every one delivered.
    assert reach["pairs"] == reach["reachable_pairs"] == 64 * 63 * 2
    assert (reach["unreachable_pairs"], reach["loop_pairs"], reach["lids_with_loops"]) == (0, 0, 0)
    loops = r["credit_loops"]
    assert (loops["cyclic_sccs"], loops["cycle"], loops["vl15_turns"]) == (0, None, 0)
    assert loops["vls_used"] == [0] and loops["switch_lids"] is False


def test_check_exits_1_on_credit_loop(tmp_path):
    topo = tmp_path / "torus.net"
    run("topo", "gen", "mesh", "--dims", "4x4", "--torus", "-o", topo)
    proc = run("check", topo, "--engine", "dor", check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_bad_input_exits_2_with_location(tmp_path):
    bad = tmp_path / "bad.net"
    bad.write_text('Switch 4 "s1"\n[1] "ghost"[1]\n')
    proc = run("topo", "info", bad, check=False)
    assert proc.returncode == 2
    assert "bad.net:2" in proc.stderr and "ghost" in proc.stderr


def test_route_list():
    out = run("route", "--list").stdout
    for name in ("minhop", "updn", "dor", "file"):
        assert name in out


def test_disconnected_fabric_names_file_and_nodes(tmp_path):
    topo = tmp_path / "split.net"
    topo.write_text('Switch 4 "s1"\n[1] "h1"[1]\n\nSwitch 4 "s2"\n[1] "h2"[1]\n\nCa 1 "h1"\n[1] "s1"[1]\n\nCa 1 "h2"\n[1] "s2"[1]\n')
    proc = run("check", topo, check=False)
    assert proc.returncode == 2
    assert "split.net" in proc.stderr and "disconnected" in proc.stderr and "s2" in proc.stderr


def test_unknown_root_and_lmc_out_of_range(tmp_path):
    topo = tmp_path / "fab.net"
    run("topo", "gen", "ring", "--switches", 4, "-o", topo)
    proc = run("route", topo, "--engine", "updn", "--root", "nosuch", check=False)
    assert proc.returncode == 2 and "nosuch" in proc.stderr
    proc = run("route", topo, "--lmc", 9, check=False)
    assert proc.returncode == 2 and "lmc" in proc.stderr.lower()


def test_check_reads_opensm_qos_keys(tmp_path):
    topo = tmp_path / "ring.net"
    run("topo", "gen", "ring", "--switches", 4, "-o", topo)
    good = tmp_path / "qos.conf"
    good.write_text("qos TRUE\nqos_max_vls 2\nqos_sl2vl 1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0\n")
    proc = run("check", topo, "--engine", "updn", "--qos", good, "--json")
    assert json.loads(proc.stdout)["credit_loops"]["vls_used"] == [1]
    bad = tmp_path / "bad.conf"
    bad.write_text("qos TRUE\nqos_vlarb_hihg 0:4\n")
    proc = run("check", topo, "--qos", bad, check=False)
    assert proc.returncode == 2 and "bad.conf:2" in proc.stderr and "qos_vlarb_hihg" in proc.stderr
    # Keys that only look like OpenSM's, a file that is not an opensm.conf, bytes that are not text.
    bad.write_text("qos TRUE\nQOS_MAX_VLS 2\n")
    proc = run("check", topo, "--qos", bad, check=False)
    assert proc.returncode == 2 and "bad.conf:2: QOS_MAX_VLS: OpenSM's option names are lower case; write 'qos_max_vls'" in proc.stderr
    bad.write_text("root:x:0:0:root:/root:/bin/bash\n")
    proc = run("check", topo, "--qos", bad, check=False)
    assert proc.returncode == 2 and "bad.conf:1: no QoS option" in proc.stderr
    bad.write_bytes(b"qos TRUE\nqos_max_vls 4\xff\n")
    proc = run("check", topo, "--qos", bad, check=False)
    assert proc.returncode == 2 and "bad.conf:2: qos_max_vls: '4\ufffd' is not a number of VLs" in proc.stderr, proc.stderr


def test_check_says_which_switches_a_dump_leaves_out(tmp_path):
    topo = tmp_path / "ring.net"
    run("topo", "gen", "ring", "--switches", 4, "-o", topo)
    dump = tmp_path / "lfts.dump"
    run("route", topo, "--engine", "updn", "-o", dump)
    # Drop the last switch's block: from its header to the end.
    text = dump.read_text()
    dump.write_text(text[: text.rindex("Unicast lids")])
    proc = run("check", topo, "--lfts", dump, check=False)
    assert "note: 1 switch has no table in the dump and forwards nothing: sw3" in proc.stderr, proc.stderr


def test_is3_loop_credit_loop_needs_switch_routes(shared_data):
    """ibutils' credit-loop demo: the loop SW2 closes with the chassis shows
    only once the routes of the spine switches themselves are in the graph."""
    topo = shared_data / "topologies/ibutils/IS3-loop.topo"
    proc = run("check", topo, "--engine", "minhop")
    assert "credit loops: none" in proc.stdout and "CA-to-CA routes" in proc.stdout
    proc = run("check", topo, "--engine", "minhop", "--include-switch-lids", check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "credit loops: CYCLE: 1 cyclic component with 10 channels" in proc.stdout
    assert "routes from and to switches included" in proc.stdout
    cycle = [
        "SW4/leaf1/U1/13 -> SW4/spine2/U3/3 VL0 (routes to LID 0x0019)",
        "SW4/spine2/U3/2 -> SW4/leaf2/U1/13 VL0 (routes to LID 0x000d)",
        "SW4/leaf2/U1/7 -> SW2/U1/19 VL0 (routes to LID 0x0001)",
        "SW2/U1/13 -> SW4/leaf1/U1/7 VL0 (routes to LID 0x002c)",
    ]
    lines = proc.stdout.splitlines()
    at = lines.index("  cycle of 4 channels, each waiting on the next:")
    assert [l.strip() for l in lines[at + 1 : at + 5]] == cycle
    r = json.loads(run("check", topo, "--engine", "updn", "--include-switch-lids", "--json").stdout)
    assert r["credit_loops"]["cycle"] is None and r["credit_loops"]["switch_lids"] is True


def test_check_sl_picks_the_vl(tmp_path):
    topo = tmp_path / "ring.net"
    run("topo", "gen", "ring", "--switches", 4, "-o", topo)
    r = json.loads(run("check", topo, "--engine", "updn", "--vls", 2, "--sl", 3, "--json").stdout)
    assert r["credit_loops"]["vls_used"] == [1]  # SL 3 -> VL 3 mod 2
    assert r["fabric"]["sl_config"] == "SL i -> VL i mod 2, SL 3 on every route"
    proc = run("check", topo, "--sl", 16, check=False)
    assert proc.returncode == 2 and "--sl" in proc.stderr


def test_lmc_beyond_the_lid_space_exits_2_saying_which_lmc_fits(shared_data):
    topo = shared_data / "topologies/is4_3l_1944n/is4_3l_1944n.topo"
    proc = run("route", topo, "--lmc", 5, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "is4_3l_1944n.topo: LMC 5 needs 62509 unicast LIDs but only 49151 exist" in proc.stderr
    assert "use LMC 4 or lower" in proc.stderr


def test_check_escape_channels_of_fully_adaptive_tables(tmp_path):
    # Paper 002's switches are deadlock-free when the escape channels'
    # dependency graph has no cycle. On a 6-ring, fa's up*/down* escape passes
    # although its minimal adaptive entries close a loop; minhop's tables read
    # as fa tables (--escape-first) have no real escape and fail.
    topo = tmp_path / "ring6.net"
    run("topo", "gen", "ring", "--switches", 6, "-o", topo)
    ok = run("check", topo, "--engine", "fa", "--lmc", 1)
    assert "credit loops (every LID routed alone): CYCLE" in ok.stdout
    assert "escape channels (Duato's condition for fully adaptive switches): none" in ok.stdout
    assert ok.stdout.rstrip().endswith("verdict: ok")
    dump = tmp_path / "minhop.dump"
    run("route", topo, "--engine", "minhop", "--lmc", 1, "-o", dump)
    plain = run("check", topo, "--lfts", dump, check=False)
    assert "escape channels" not in plain.stdout and plain.returncode == 1
    bad = run("check", topo, "--lfts", dump, "--escape-first", "--json", check=False)
    assert bad.returncode == 1
    r = json.loads(bad.stdout)
    assert r["escape"]["cyclic_sccs"] >= 1 and len(r["escape"]["cycle"]) == 6
    assert r["escape"]["switch_lids"] is True and r["has_defects"] is True


def test_options_that_would_be_ignored_are_errors(tmp_path):
    topo = tmp_path / "ring.net"
    run("topo", "gen", "ring", "--switches", 3, "-o", topo)
    dump = tmp_path / "t.dump"
    run("route", topo, "-o", dump)
    both = run("check", topo, "--lfts", dump, "--engine", "updn", check=False)
    assert both.returncode == 2 and "--engine updn would compute others" in both.stderr
    key_only = run("check", topo, "--fdbs-key", dump, check=False)
    assert key_only.returncode == 2 and "invalid option 'fdbs_key'" in key_only.stderr, key_only.stderr
    file_for_minhop = run("route", topo, "--engine", "minhop", "--lfts-file", dump, check=False)
    assert file_for_minhop.returncode == 2 and "read by the 'file' engine only, not by 'minhop'" in file_for_minhop.stderr
    # --lfts with --engine file (or no --engine) is what it should be.
    assert run("check", topo, "--lfts", dump, "--engine", "file", check=False).returncode in (0, 1)


def test_generated_fabrics_are_not_written_under_names_read_as_other_formats(tmp_path):
    bad = run("topo", "gen", "ring", "--switches", 3, "-o", tmp_path / "r.topo", check=False)
    assert bad.returncode == 2 and "name it .net" in bad.stderr and not (tmp_path / "r.topo").exists()
    # Every generator `topo kinds` names as a command is one `topo gen` accepts.
    for line in run("topo", "kinds").stdout.splitlines():
        command = line.split()[0]
        if command != "-":
            assert run("topo", "gen", command, "--help").returncode == 0, line


def test_topo_convert_keeps_the_fabric(tmp_path):
    # An IBDM .topo of two built-in 24-port MTS2400 switches (one 4x DDR
    # cable between them) and three Cougar HCAs, converted to a net file:
    # the same nodes, ports, links and routing come back.
    topo = tmp_path / "small.topo"
    topo.write_text(
        "MTS2400 S1\n"
        "   P1 -> Cougar H1 P1\n"
        "   P2 -> Cougar H2 P1\n"
        "   P13 -4x-5G-> MTS2400 S2 P13\n"
        "\n"
        "MTS2400 S2\n"
        "   P1 -> Cougar H3 P1\n"
    )
    net = tmp_path / "small.net"
    proc = run("topo", "convert", topo, "-o", net)
    assert proc.stdout.strip() == f"wrote {net}: 2 switches, 3 CAs, 4 links (from ibdm-topo)"
    a = json.loads(run("topo", "info", topo, "--json").stdout)
    b = json.loads(run("topo", "info", net, "--json").stdout)
    assert (b["switches"], b["channel_adapters"]) == (2, 3)
    assert {k: v for k, v in a.items() if k != "format"} == {k: v for k, v in b.items() if k != "format"}
    import ibnetsim as ib

    fa, fb = ib.topology.read(topo), ib.topology.read(net)
    assert fa.links.to_dict("records") == fb.links.to_dict("records")
    la, lb = ib.SubnetManager(fa, routing="minhop").lft, ib.SubnetManager(fb, routing="minhop").lft
    assert (la == lb).all()
    # Writing another format under its name would be read back as that format.
    proc = run("topo", "convert", net, "-o", tmp_path / "x.topo", check=False)
    assert proc.returncode == 2 and "name it .net" in proc.stderr


def test_opensm_dumps_given_as_topology_are_named(tmp_path):
    # First lines as OpenSM's printf formats write them (osm_dump.c dump_lid_matrix, dump_sl2vl_tbl).
    matrix = tmp_path / "opensm-lid-matrix.dump"
    matrix.write_text("Switch: guid 0x0002c90300000100\n0x0001: 01 00 02 # portguid 0x0002c90300000201\n")
    proc = run("check", matrix, check=False)
    assert proc.returncode == 2
    assert f"{matrix}:1: this is an OpenSM hop-count dump (opensm-lid-matrix.dump), not a topology" in proc.stderr, proc.stderr
    sl2vl = tmp_path / "opensm-sl2vl.dump"
    sl2vl.write_text('Switch 0x0002c90300000100, base LID 3, "s"\n#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n')
    proc = run("topo", "info", sl2vl, check=False)
    assert proc.returncode == 2 and "opensm-sl2vl.dump:1: this is an OpenSM SL2VL table dump" in proc.stderr, proc.stderr
    assert "give it with --sl2vl (check)" in proc.stderr


def test_root_guid_file(tmp_path):
    from ibnetsim import topology

    topo = tmp_path / "ring.net"
    run("topo", "gen", "ring", "--switches", 4, "-o", topo)
    nodes = topology.read(topo).nodes
    sw = nodes[nodes.kind == "Switch"].iloc[2]
    # As OpenSM's updn writes opensm-updn-roots.dump: "0x%" PRIx64, one root a line.
    roots = tmp_path / "opensm-updn-roots.dump"
    roots.write_text(f"{int(sw.guid, 16):#x}\n")
    by_name = run("route", topo, "--engine", "updn", "--root", sw["name"]).stdout
    by_file = run("route", topo, "--engine", "updn", "--root", roots)
    assert by_file.stdout == by_name
    assert f"updn roots (given): {sw['name']}" in by_file.stderr
    proc = run("check", topo, "--engine", "updn", "--root", roots)
    assert proc.stdout.rstrip().endswith("verdict: ok")
    roots.write_text(f"{int(sw.guid, 16):#x}\n0xdeadbeef\n")
    proc = run("check", topo, "--engine", "updn", "--root", roots, check=False)
    assert proc.returncode == 2
    assert f"{roots}:2: GUID 0x00000000deadbeef is not a switch of this fabric" in proc.stderr, proc.stderr


def test_commands_that_build_no_table_do_not_import_the_heavy_libraries(tmp_path):
    # pandas, numpy, pyarrow, matplotlib and dask cost about 0.3 s to import
    # (issue 14: `ibnetsim --help` and a small `check` must start fast), so
    # they are imported on first use (ibnetsim._lazy). Checked by module, not
    # by clock.
    topo = tmp_path / "ring.net"
    run("topo", "gen", "ring", "--switches", 4, "-o", topo)
    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from ibnetsim.cli import main\n"
        f"for args in (['--help'], ['check', {str(topo)!r}], ['route', {str(topo)!r}, '--engine', 'updn'], ['topo', 'info', {str(topo)!r}]):\n"
        "    r = CliRunner().invoke(main, args)\n"
        "    assert r.exit_code == 0, (args, r.output)\n"
        "heavy = ('pandas', 'numpy', 'pyarrow', 'matplotlib', 'dask', 'distributed')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def test_route_and_check_with_dfsssp_and_chains(tmp_path):
    topo = tmp_path / "torus.net"
    run("topo", "gen", "mesh", "--dims", "4x4", "--torus", "--hosts", 2, "-o", topo)
    out = run("route", "--list").stdout
    assert "sssp " in out and "dfsssp " in out
    proc = run("check", topo, "--engine", "dfsssp", "--vls", 15)
    assert "credit loops: none" in proc.stdout and "SL chosen per route" in proc.stdout
    assert "note: dfsssp: 4 virtual layer(s) needed of 15 allowed" in proc.stderr
    # One data VL merges the layers: the check finds the torus's loop.
    assert run("check", topo, "--engine", "dfsssp", check=False).returncode == 1
    # Two layers are too few; the chain falls back to updn and says why.
    proc = run("route", topo, "--engine", "dfsssp,updn", "--max-vls", 2, "-o", tmp_path / "lfts.dump")
    assert "engine updn" in proc.stdout
    assert "note: routing chain 'dfsssp,updn': routed with 'updn' after 'dfsssp' failed" in proc.stderr
    proc = run("route", topo, "--engine", "dfsssp,spf", check=False)
    assert proc.returncode != 0 and "unknown routing engine 'spf' in the chain 'dfsssp,spf'" in proc.stderr


def test_route_and_check_with_nue(tmp_path):
    topo = tmp_path / "torus.net"
    run("topo", "gen", "mesh", "--dims", "4x4", "--torus", "--hosts", 2, "-o", topo)
    assert "nue " in run("route", "--list").stdout
    proc = run("check", topo, "--engine", "nue")
    assert "credit loops: none" in proc.stdout
    assert "note: nue: 1 virtual layer(s)" in proc.stderr
    proc = run("check", topo, "--engine", "nue", "--max-vls", 4, "--vls", 4)
    assert "credit loops: none" in proc.stdout and "SL chosen per route" in proc.stdout
    assert "`ibnetsim check --vls 4`" in proc.stderr


def test_route_and_check_with_lash(tmp_path):
    topo = tmp_path / "torus.net"
    run("topo", "gen", "mesh", "--dims", "4x4", "--torus", "--hosts", 2, "-o", topo)
    assert "lash " in run("route", "--list").stdout
    proc = run("check", topo, "--engine", "lash", "--vls", 2)
    assert "credit loops: none" in proc.stdout and "SL chosen per route" in proc.stdout
    assert "note: lash: 2 layer(s) needed of 15 available" in proc.stderr
    proc = run("route", topo, "--engine", "lash", "--max-vls", 4, "--lash-start-vl", 2, "-o", tmp_path / "lfts.dump")
    assert "engine lash" in proc.stdout and "on SLs 2-3" in proc.stderr
    # Too few VLs: the error names the topology file and the layers needed.
    proc = run("route", topo, "--engine", "lash", "--max-vls", 1, check=False)
    assert proc.returncode != 0
    assert f"{topo}: routing engine 'lash' cannot route this fabric" in proc.stderr
    assert "need 2 layers" in proc.stderr
    proc = run("route", topo, "--engine", "lash,minhop", "--max-vls", 1, "-o", tmp_path / "lfts2.dump")
    assert "engine minhop" in proc.stdout and "after 'lash' failed" in proc.stderr


def test_route_and_check_with_torus_2qos(tmp_path):
    net = tmp_path / "t.net"
    run("topo", "gen", "mesh", "--dims", "5x5", "--torus", "--hosts", 1, "-o", net)
    # The generator's GUIDs: sw_i is 0x0002c903000001 00 + i * 0x100.
    conf = tmp_path / "torus-2QoS.conf"
    conf.write_text("torus 5 5 1\nxp_link 0x0002c90300000100 0x0002c90300000200\nyp_link 0x0002c90300000100 0x0002c90300000600\n")
    proc = run("route", net, "--engine", "torus-2qos", "--torus-config", conf, "-o", tmp_path / "lfts.dump")
    assert "engine torus-2QoS" in proc.stdout
    assert "note: torus-2QoS: torus 5x5x1 from seed switch 'sw0' at (0,0,0)" in proc.stderr
    r = json.loads(run("check", net, "--engine", "torus-2QoS", "--torus-config", conf, "--json").stdout)
    assert r["credit_loops"]["cyclic_sccs"] == 0 and r["credit_loops"]["vls_used"] == [0, 1]
    # The same tables checked on SL 0 and one VL (the dump carries no SLs) close loops.
    assert run("check", net, "--lfts", tmp_path / "lfts.dump", check=False).returncode == 1
    conf.write_text("torus 5 5 1\nxp_link 0x0002c90300000100\n")
    proc = run("route", net, "--engine", "torus-2QoS", "--torus-config", conf, check=False)
    assert proc.returncode != 0 and "torus-2QoS.conf:2: 'xp_link' needs two switch GUIDs (from, to)" in proc.stderr
    proc = run("route", net, "--torus-config", conf, check=False)
    assert proc.returncode != 0 and "is the configuration of the 'torus-2QoS' engine only, not of 'minhop'" in proc.stderr
