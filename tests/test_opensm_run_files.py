"""Checking an OpenSM run with its own files: guid2lid, opensm.fdbs and
opensm-sl2vl.dump, given to ``ibnetsim check`` and to the Python API.

The files are examples/opensm-ring4, whose README works the example out by
hand: a ring A->B->C->D->A, one host per switch, routed clockwise for one and
two ring hops, so that with one VL the clockwise channels close a credit loop.
"""

import json
import subprocess
import sys
from pathlib import Path

import ibnetsim as ib

RING = Path(__file__).parent.parent / "examples" / "opensm-ring4"
NET, G2L, FDBS = RING / "ring4.net", RING / "guid2lid", RING / "opensm.fdbs"


def run(*args):
    return subprocess.run([sys.executable, "-m", "ibnetsim.cli", *map(str, args)], capture_output=True, text=True)


def check_json(*extra):
    proc = run("check", NET, "--lfts", FDBS, "--guid2lid", G2L, "--json", *extra)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.startswith("{") else proc.stderr


def test_fdbs_needs_the_lids_and_guid2lid_gives_them():
    proc = run("check", NET, "--lfts", FDBS)
    assert proc.returncode == 2
    assert "does not say which port owns a LID; give the LIDs: OpenSM's guid2lid file of the same run (--guid2lid)" in proc.stderr, proc.stderr
    code, r = check_json()
    assert code == 1, r
    assert r["fabric"]["ca_lids"] == 4 and r["fabric"]["lmc"] == 0
    assert r["paths"]["unreachable_pairs"] == 0 and r["paths"]["reachable_pairs"] == 12
    loops = r["credit_loops"]
    assert loops["cyclic_sccs"] == 1 and loops["vls_used"] == [0]
    steps = sorted((s["from"], s["to"], s["vl"]) for s in loops["cycle"])
    assert steps == [("A/1", "B/2", 0), ("B/1", "C/2", 0), ("C/1", "D/2", 0), ("D/1", "A/2", 0)]


def test_dumped_sl2vl_that_moves_passed_on_packets_to_vl1_breaks_the_loop():
    code, r = check_json("--sl2vl", RING / "sl2vl-through-vl1.dump")
    assert code == 0, r
    loops = r["credit_loops"]
    # Worked in the README: 20 channels, 24 dependencies, none closing a cycle.
    assert (loops["cyclic_sccs"], loops["channels"], loops["dependencies"], loops["vls_used"]) == (0, 20, 24, [0, 1])


def test_dumped_sl2vl_that_moves_the_whole_ring_keeps_the_loop():
    code, r = check_json("--sl2vl", RING / "sl2vl-clockwise-vl1.dump")
    assert code == 1, r
    assert {s["vl"] for s in r["credit_loops"]["cycle"]} == {1}


def test_sl2vl_excludes_the_other_sources_of_tables(tmp_path):
    for extra in (["--vls", "2"], ["--qos", Path(__file__).parent / "data" / "opensm-2vl.conf"]):
        proc = run("check", NET, "--lfts", FDBS, "--guid2lid", G2L, "--sl2vl", RING / "sl2vl-through-vl1.dump", *extra)
        assert proc.returncode == 2 and "--sl2vl gives the SL2VL tables" in proc.stderr, proc.stderr


def test_python_api_takes_both_files():
    fab = ib.topology.read(NET)
    sm = ib.SubnetManager(fab, routing="file", lfts_file=FDBS, guid2lid=G2L)
    lids = dict(zip(sm.lids["node"], sm.lids["base_lid"]))
    # OpenSM numbered the switches first: A..D are 1..4, ha..hd 5..8.
    assert lids == {"A": 1, "B": 2, "C": 3, "D": 4, "ha": 5, "hb": 6, "hc": 7, "hd": 8}
    assert not sm.check().ok
    assert sm.check(sl2vl_file=RING / "sl2vl-through-vl1.dump").ok


def test_route_with_guid2lid_uses_opensm_numbering():
    proc = run("route", NET, "--engine", "minhop", "--guid2lid", G2L)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Unicast lids [0-8] of switch Lid 1 guid 0x0000000000200000"), proc.stdout[:200]
    # minhop reaches hb (LID 6) from A over port 1, B's side of the ring.
    assert "\n0x0006 001 # Channel Adapter portguid 0x0000000000100003" in proc.stdout, proc.stdout


def test_bad_guid2lid_names_file_and_line(tmp_path):
    bad = tmp_path / "guid2lid"
    bad.write_text(G2L.read_text().replace("0x0000000000100003 0x0006 0x0006", "0x0000000000100003 0x0005 0x0005"))
    proc = run("check", NET, "--guid2lid", bad)
    assert proc.returncode == 2
    assert f"{bad}:11: LID 0x0005 of 'hb' port 1 is also given to port GUID 0x0000000000100001 at line 9" in proc.stderr, proc.stderr
    proc = run("check", NET, "--guid2lid", G2L, "--lmc", 1)
    assert proc.returncode == 2 and "invalid option 'lmc': 1 was asked for, but the given LIDs have LMC 0" in proc.stderr, proc.stderr


def test_lid_matrix_section():
    # Worked in the README: the matrix is the ring's and every route is minimal.
    code, r = check_json("--sl2vl", RING / "sl2vl-through-vl1.dump", "--lid-matrix", RING / "opensm-lid-matrix.dump")
    assert code == 0, r
    assert r["lid_matrix"] == {
        "rows_checked": 16, "rows_differing": 0, "row_examples": [],
        "routes_checked": 32, "routes_longer": 0, "route_examples": [],
    }
    assert r["has_warnings"] is False
    proc = run("check", NET, "--lfts", FDBS, "--guid2lid", G2L, "--sl2vl", RING / "sl2vl-through-vl1.dump", "--lid-matrix", RING / "opensm-lid-matrix.dump")
    assert "\nLID matrix: 0 of 16 rows differ from the fabric's hop counts\n  routes longer than the matrix's least: 0 of 32 table entries\nverdict: ok\n" in proc.stdout, proc.stdout


def test_lid_matrix_of_another_fabric_is_a_warning(tmp_path):
    m = tmp_path / "opensm-lid-matrix.dump"
    # Line 4: switch A towards C (LID 3) by port 2 said to be 3 hops; it is 2.
    m.write_text((RING / "opensm-lid-matrix.dump").read_text().replace("0x0003: 02 02 02 ff", "0x0003: 02 02 03 ff", 1))
    code, r = check_json("--sl2vl", RING / "sl2vl-through-vl1.dump", "--lid-matrix", m)
    assert code == 0, r  # a warning, not a defect
    assert r["has_warnings"] is True
    assert r["lid_matrix"]["rows_differing"] == 1
    assert r["lid_matrix"]["row_examples"] == ["A: LID 0x0003 (switch C), line 4: port 2 has 03 hops, the fabric 02"]
    proc = run("check", NET, "--lfts", FDBS, "--guid2lid", G2L, "--sl2vl", RING / "sl2vl-through-vl1.dump", "--lid-matrix", m)
    assert proc.stdout.endswith("\nverdict: ok for the tables, but the LID matrix is not this fabric's (see above)\n"), proc.stdout
    bad = tmp_path / "bad-matrix.dump"
    bad.write_text("Switch: guid 0x0000000000200000\n0x0001: 00 02 02\n")
    proc = run("check", NET, "--lid-matrix", bad)
    assert proc.returncode == 2 and f"{bad}:2: 3 hop counts, but switch 'A' has ports 0..=3" in proc.stderr, proc.stderr


def test_guid2lid_at_lmc_1_sets_the_lmc(tmp_path):
    # OpenSM at LMC 1: switches keep one LID (no lmc_esp0), hosts get aligned pairs.
    g = tmp_path / "guid2lid"
    lines = [f"0x{0x200000 + i:016x} 0x{i + 1:04x} 0x{i + 1:04x}\n\n" for i in range(4)]
    lines += [f"0x{0x100001 + 2 * i:016x} 0x{6 + 2 * i:04x} 0x{7 + 2 * i:04x}\n\n" for i in range(4)]
    g.write_text("".join(lines))
    proc = run("check", NET, "--engine", "minhop", "--guid2lid", g, "--json")
    r = json.loads(proc.stdout)
    assert (r["fabric"]["lmc"], r["fabric"]["ca_lids"]) == (1, 8)
    # 4 hosts to both LIDs of each of the 3 others, all delivered.
    assert r["paths"]["reachable_pairs"] == 4 * 3 * 2 and r["paths"]["unreachable_pairs"] == 0
    lids = ib.SubnetManager(ib.topology.read(NET), routing="minhop", guid2lid=g).lids
    assert dict(zip(lids["node"], zip(lids["base_lid"], lids["lmc"])))["hd"] == (12, 1)
