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
