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
    proc = run("check", topo, "--lfts", dump)
    assert "credit loop" in proc.stdout.lower() or "deadlock" in proc.stdout.lower()


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
