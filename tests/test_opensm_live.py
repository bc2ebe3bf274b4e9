"""The live cross-check with OpenSM 3.3.23 (issue 12): generated fabrics are
served by ibsim, routed once by real OpenSM through the ``libumad2sim.so``
preload and once by ibnetsim on OpenSM's LIDs, and the forwarding tables must
agree entry for entry (``scripts/opensm_crosscheck.py``). Skipped where the
Debian packages ``opensm`` and ``ibsim-utils`` are missing.

Each case also checks that OpenSM routed with the engine asked for: OpenSM
falls back to minhop when an engine fails (ftree on a fabric that is not a
fat tree), and ibnetsim refuses such a fabric instead.
"""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ibnetsim as ib

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("opensm_crosscheck", ROOT / "scripts" / "opensm_crosscheck.py")
xc = importlib.util.module_from_spec(_spec)
# Its dataclass looks its module up while it is being defined.
sys.modules["opensm_crosscheck"] = xc
_spec.loader.exec_module(xc)

pytestmark = pytest.mark.skipif(xc.available() is not None, reason=f"OpenSM on ibsim: {xc.available()}")

FABRICS = {
    "irregular16": lambda: ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=3),
    "irregular40": lambda: ib.topology.irregular(switches=40, switch_ports=12, links_per_switch=5, hosts_per_switch=4, seed=5),
    "fattree4-3": lambda: ib.topology.fat_tree(k=4, n=3),
    "mesh4x4": lambda: ib.topology.mesh([4, 4], hosts_per_switch=1),
    "torus4x4": lambda: ib.topology.torus([4, 4], hosts_per_switch=1),
    "irregular200": lambda: ib.topology.irregular(switches=200, switch_ports=12, links_per_switch=5, hosts_per_switch=4, seed=7),
    "fattree8-2": lambda: ib.topology.fat_tree(k=8, n=2),
    "ring5": lambda: ib.topology.torus([5], hosts_per_switch=1),
    "torus4x4x4": lambda: ib.topology.torus([4, 4, 4], hosts_per_switch=1),
    "torus5x3": lambda: ib.topology.torus([5, 3], hosts_per_switch=1),
    "torus3x4": lambda: ib.topology.torus([3, 4], hosts_per_switch=1),
    "torus3x4x5": lambda: ib.topology.torus([3, 4, 5], hosts_per_switch=1),
    "torus5x5h2": lambda: ib.topology.torus([5, 5], hosts_per_switch=2),
    "torus6x5": lambda: ib.topology.torus([6, 5], hosts_per_switch=1),
}

#: Generated fabrics torus-2QoS routes: (dims, ring or open).
TORUS_DIMS = {"torus4x4": ([4, 4], True), "torus5x3": ([5, 3], True), "torus3x4x5": ([3, 4, 5], True), "torus5x5h2": ([5, 5], True), "torus6x5": ([6, 5], True), "mesh4x4": ([4, 4], False)}

#: Fabrics written by hand, in ibsim's format. `valley`: leaves a, b, l; the
#: short way from a to b dips into the leaf l between p and q, which dnup
#: refuses, and the chain r1-r4 is the legal way (crates/sm dnup tests).
NET_TEXTS = {
    "valley": "\n\n".join(
        [
            'Switch 8 "a"\n[1] "p"[1]\n[2] "r1"[1]\n[7] "h0"[1]',
            'Switch 8 "b"\n[1] "q"[2]\n[2] "r4"[2]\n[7] "h1"[1]',
            'Switch 8 "l"\n[1] "p"[2]\n[2] "q"[1]\n[7] "h2"[1]',
            'Switch 8 "p"\n[1] "a"[1]\n[2] "l"[1]',
            'Switch 8 "q"\n[1] "l"[2]\n[2] "b"[1]',
            'Switch 8 "r1"\n[1] "a"[2]\n[2] "r2"[1]',
            'Switch 8 "r2"\n[1] "r1"[2]\n[2] "r3"[1]',
            'Switch 8 "r3"\n[1] "r2"[2]\n[2] "r4"[1]',
            'Switch 8 "r4"\n[1] "r3"[2]\n[2] "b"[2]',
            'Hca 1 "h0"\n[1] "a"[7]',
            'Hca 1 "h1"\n[1] "b"[7]',
            'Hca 1 "h2"\n[1] "l"[7]',
        ]
    )
    + "\n",
}

#: (fabric, engine, LMC, up*/down* roots by switch name): each must match OpenSM exactly.
CASES = [
    ("irregular16", "minhop", 0, ()),
    ("irregular16", "minhop", 2, ()),
    ("irregular40", "minhop", 1, ()),
    ("irregular16", "updn", 0, ("sw0",)),
    ("mesh4x4", "updn", 0, ("sw0",)),
    ("fattree4-3", "updn", 0, ()),
    ("irregular16", "sssp", 0, ()),
    ("irregular40", "sssp", 0, ()),
    ("irregular16", "dfsssp", 0, ()),
    ("irregular40", "dfsssp", 0, ()),
    ("fattree4-3", "ftree", 0, ()),
    ("mesh4x4", "dor", 0, ()),
    ("torus4x4", "minhop", 0, ()),
    ("torus4x4", "dor", 0, ()),
    ("torus4x4", "dfsssp", 0, ()),
    ("fattree4-3", "dnup", 0, ()),
    ("irregular16", "dnup", 0, ()),
    ("valley", "dnup", 0, ()),
    ("irregular16", "lash", 0, ()),
    ("irregular16", "lash", 1, ()),
    ("irregular40", "lash", 0, ()),
    ("fattree4-3", "lash", 0, ()),
    ("mesh4x4", "lash", 0, ()),
    ("torus4x4", "lash", 0, ()),
    ("irregular16", "nue", 0, ()),
    ("irregular16", "nue", 2, ()),
    ("irregular40", "nue", 0, ()),
    ("irregular200", "nue", 0, ()),
    ("fattree8-2", "nue", 0, ()),
    ("fattree4-3", "nue", 0, ()),
    ("mesh4x4", "nue", 0, ()),
    ("torus4x4", "nue", 0, ()),
    ("ring5", "nue", 0, ()),
]


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nets")
    out = {}
    for name, build in FABRICS.items():
        out[name] = folder / f"{name}.net"
        build().write(out[name])
    for name, text in NET_TEXTS.items():
        out[name] = folder / f"{name}.net"
        out[name].write_text(text)
    return out


def _root_file(net: Path, names, folder: Path) -> Path:
    nodes = ib.topology.read(net).nodes.set_index("name")
    path = folder / "root_guids"
    path.write_text("".join(f"{nodes.loc[n, 'guid']}\n" for n in names))
    return path


@pytest.mark.parametrize("fabric,engine,lmc,roots", CASES, ids=lambda v: str(v) if not isinstance(v, tuple) else "+".join(v) or "auto")
def test_tables_match_opensm_entry_for_entry(nets, tmp_path, fabric, engine, lmc, roots):
    net = nets[fabric]
    osm_opts, our_opts = ["-l", str(lmc)], []
    if roots:
        r = _root_file(net, roots, tmp_path)
        osm_opts += ["-a", str(r)]
        our_opts += ["--root", str(r)]
    osm, ours = xc.crosscheck(net, engine, tmp_path, osm_opts, our_opts)
    assert osm.engine == engine, f"OpenSM fell back to {osm.engine}"
    hosts = sum(1 for n in ib.topology.read(net).nodes.itertuples() if n.kind != "Switch")
    switches = len({sw for sw, _ in osm.tables})
    # Every switch has an entry for every CA LID (2^LMC per host) at least.
    assert len(osm.tables) >= switches * hosts * 2**lmc > 0
    diff = xc.differences(osm.tables, ours)
    assert not diff, f"{len(diff)} of {len(osm.tables)} entries differ, e.g. {[(hex(s), hex(l), a, b) for s, l, a, b in diff[:5]]}"


@pytest.mark.parametrize("fabric", ["irregular16", "irregular40", "torus4x4"])
def test_lash_layers_match_opensm(nets, tmp_path, fabric):
    # OpenSM's lash logs the ordered switch pairs of each layer before and
    # after balancing (its draws are glibc's unseeded rand(), which ibnetsim
    # reproduces); ibnetsim's first note gives the same two lists.
    osm, _ = xc.crosscheck(nets[fabric], "lash", tmp_path)
    assert osm.engine == "lash"
    log = (tmp_path / "opensm.log").read_text(errors="replace")
    counts = [int(c) for c in re.findall(r"lash_core: Lanes in layer \d+: (\d+)", log)]
    layers = len(counts) // 2
    assert layers >= 1 and len(counts) == 2 * layers, counts
    sm = ib.SubnetManager(ib.topology.read(nets[fabric]), routing="lash")
    assert f"ordered switch pairs per layer {counts[:layers]}, after balancing {counts[layers:]}" in sm.notes[0], (sm.notes[0], counts)


def test_lash_path_sls_are_opensms_pathrecord_sls(nets, tmp_path):
    # The SL of a lash path is its switch pair's layer, which OpenSM's SA
    # gives in every PathRecord (saquery on the running OpenSM): all 132
    # ordered host pairs of the 3x4 torus. Balancing moves pairs between the
    # two layers, so the per-layer counts alone (above) would not see a pair
    # moved instead of another.
    net = nets["torus3x4"]
    with xc.opensm_running(net, "lash", tmp_path) as client:
        first = xc.path_record_sl(client, 1, 2)
        sm = ib.SubnetManager(ib.topology.read(net), routing="lash", guid2lid=tmp_path / "cache" / "guid2lid")
        lids = sm.lids.set_index("node")["base_lid"]
        hosts = [f"h{i}" for i in range(12)]
        pairs = [(int(lids[s]), int(lids[d])) for s in hosts for d in hosts if s != d]
        theirs = {p: xc.path_record_sl(client, *p) for p in pairs}
    ours = {p: sm.path_sl(*p) for p in pairs}
    assert first == sm.path_sl(1, 2)
    assert ours == theirs
    assert set(theirs.values()) == {0, 1}


def _check_nue(net: Path, layers: int) -> dict:
    """ibnetsim check of ibnetsim's own nue routing of ``net`` with ``layers``
    layers, SL i on VL i."""
    return _check_json(net, "--engine", "nue", "--max-vls", layers, "--vls", layers)


@pytest.mark.parametrize("fabric,layers", [("irregular16", 2), ("irregular40", 4), ("torus4x4", 2), ("irregular200", 8)])
def test_nue_layers_match_opensm(nets, tmp_path, fabric, layers):
    # OpenSM's nue on several virtual layers: nue_max_num_vls with QoS on (it
    # uses one layer without). Each layer gets its own escape tree (one
    # "central node" per layer in the log), and the tables agree entry for
    # entry; ibnetsim's per-path SLs (the layers) keep every layer free of
    # credit loops.
    net = nets[fabric]
    theirs, ours = xc.layer_options("nue", layers)
    osm, tables = xc.crosscheck(net, "nue", tmp_path, theirs, ours)
    assert osm.engine == "nue"
    assert (tmp_path / "opensm.log").read_text(errors="replace").count("mark_escape_paths: central node:") == layers
    assert xc.differences(osm.tables, tables) == []
    r = _check_nue(net, layers)
    assert r["credit_loops"]["cyclic_sccs"] == 0
    assert r["credit_loops"]["vls_used"] == list(range(layers))
    assert r["paths"]["unreachable_pairs"] == 0


def test_nue_layers_are_dealt_round_robin_as_in_opensms_log(nets, tmp_path):
    # Which partitioner Debian's OpenSM uses for nue: with debug logging
    # (-D 0x4B) it lists each layer's destination LIDs. They are the CA
    # ports in OpenSM's port-GUID table order (GUIDs byte-swapped) dealt out
    # round-robin, as distribute_lids_semi_randomly does when OpenSM is built
    # without METIS; a METIS partition would group neighbouring switches.
    layers = 3
    net = nets["irregular16"]
    osm = xc.run_opensm(net, "nue", tmp_path, ["-Q", "--nue_max_num_vls", str(layers), "-D", "0x4B"])
    assert osm.engine == "nue"
    log = (tmp_path / "opensm.log").read_text(errors="replace")
    listed = {}
    vl = None
    for line in log.splitlines():
        m = re.search(r"print_destination_distribution: destination lids \(base lid\) for vl (\d+):", line)
        if m:
            vl = int(m.group(1))
            listed[vl] = []
            continue
        m = re.search(r"print_destination_distribution:   (\d+) \(", line)
        if m and vl is not None:
            listed[vl].append(int(m.group(1)))
    nodes = ib.topology.read(net).nodes
    lids = xc.parse_guid2lid(osm.guid2lid)
    # ibsim gives a CA port the node GUID + port number; these CAs have port 1.
    ca_ports = sorted((int(g, 16) + 1 for g, k in zip(nodes["guid"], nodes["kind"]) if k != "Switch"), key=lambda g: int.from_bytes(g.to_bytes(8, "big"), "little"))
    dealt = {vl: [lids[g][0] for g in ca_ports[vl::layers]] for vl in range(layers)}
    assert len(ca_ports) == 64 and listed == dealt


@pytest.mark.parametrize("fabric,fallbacks", [("torus4x4x4", 12), ("irregular40", 0)])
def test_nue_at_one_vl_is_credit_loop_free_as_opensms(nets, tmp_path, fabric, fallbacks):
    # One layer (OpenSM's default): OpenSM's own tables, read back by
    # ibnetsim check, have no credit loop on any SL, and neither have
    # ibnetsim's, which are the same. On the 4x4x4 torus the search gets
    # stuck for 12 destinations, which fall back to the escape paths, in
    # OpenSM's log and in ibnetsim's note alike.
    net = nets[fabric]
    osm, ours = xc.crosscheck(net, "nue", tmp_path)
    assert osm.engine == "nue" and xc.differences(osm.tables, ours) == []
    assert (tmp_path / "opensm.log").read_text(errors="replace").count("unsolvable impass reached; fallback to escape paths") == fallbacks
    assert _credit_loops(net, tmp_path / "dumps" / "opensm-lfts.dump", osm.guid2lid) == 0
    sm = ib.SubnetManager(ib.topology.read(net), routing="nue", guid2lid=osm.guid2lid)
    assert f"escape-path fallbacks: {fallbacks}" in sm.notes[0]
    r = _check_nue(net, 1)
    assert r["credit_loops"]["cyclic_sccs"] == 0


def test_opensm_falls_back_where_ibnetsim_refuses(nets, tmp_path):
    # ftree on an irregular fabric: OpenSM's ftree fails and minhop routes it;
    # ibnetsim's ftree says why it cannot.
    osm = xc.run_opensm(nets["irregular16"], "ftree", tmp_path)
    assert osm.engine == "minhop"
    with pytest.raises(RuntimeError, match="routing engine 'ftree' cannot route this fabric"):
        xc.run_ibnetsim(nets["irregular16"], "ftree", osm.guid2lid, tmp_path / "ours.dump")


def _credit_loops(net: Path, dump: Path, guid2lid: Path) -> int:
    proc = subprocess.run(
        [sys.executable, "-m", "ibnetsim.cli", "check", str(net), "--lfts", str(dump), "--guid2lid", str(guid2lid), "--json"],
        capture_output=True,
        text=True,
    )
    return json.loads(proc.stdout)["credit_loops"]["cyclic_sccs"]


def test_updn_stays_legal_where_opensms_routes_go_down_then_up(nets, tmp_path):
    # With root sw0 on the 40-switch fabric OpenSM's search programs
    # down-then-up routes that close a credit loop; ibnetsim keeps its routes
    # legal, so the tables differ in those few entries only.
    net = nets["irregular40"]
    roots = _root_file(net, ["sw0"], tmp_path)
    osm, ours = xc.crosscheck(net, "updn", tmp_path, ["-a", str(roots)], ["--root", str(roots)])
    assert osm.engine == "updn"
    assert _credit_loops(net, tmp_path / "dumps" / "opensm-lfts.dump", osm.guid2lid) > 0
    assert _credit_loops(net, tmp_path / "ibnetsim-lfts.dump", osm.guid2lid) == 0
    assert 0 < len(xc.differences(osm.tables, ours)) < len(osm.tables) // 100


@pytest.mark.parametrize("fabric", ["irregular16", "torus4x4"])
def test_updn_without_roots_where_opensm_finds_none(nets, tmp_path, fabric):
    # OpenSM's updn looks for roots among switches and finds none on an
    # irregular fabric or a torus: it disables itself and minhop routes, with
    # credit loops. ibnetsim's picks a centre switch and stays deadlock-free.
    osm, ours = xc.crosscheck(nets[fabric], "updn", tmp_path)
    assert osm.engine == "minhop"
    assert "no root nodes were found" in (tmp_path / "opensm.log").read_text(errors="replace")
    assert _credit_loops(nets[fabric], tmp_path / "dumps" / "opensm-lfts.dump", osm.guid2lid) > 0
    assert _credit_loops(nets[fabric], tmp_path / "ibnetsim-lfts.dump", osm.guid2lid) == 0


QOS_CONF = """\
qos TRUE
qos_max_vls 8
qos_high_limit 0
qos_vlarb_low 0:5,1:10,2:20,3:40
qos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
qos_swe_sl2vl 7,6,5,4,3,2,1,0,9,9,9,9,2,2,2,2
qos_ca_sl2vl 1,1,1,1,0,0,0,0,3,3,3,3,12,12,12,12
qos_ca_max_vls 4
"""


def test_qos_sl2vl_tables_match_opensm(nets, tmp_path):
    # OpenSM's QoS on ibsim, whose ports run 8 data VLs, with per-class tables
    # and VLs past 7 that both mask to the port's 8 operational VLs (9 → 1,
    # 12 → 4; 15, "drop", kept), and a qos_ca_max_vls that changes nothing.
    conf = tmp_path / "opensm.conf"
    conf.write_text(QOS_CONF)
    net = nets["irregular16"]
    osm = xc.run_opensm(net, "minhop", tmp_path, ["-Q", "-F", str(conf)])
    theirs = xc.parse_sl2vl(tmp_path / "dumps" / "opensm-sl2vl.dump")
    ours = xc.ibnetsim_sl2vl(net, conf)
    # OpenSM also lists U-turns and uncabled ports; every table we program is there, equal.
    assert len(ours) > 0 and set(ours) <= set(theirs)
    assert {k: theirs[k] for k in ours} == ours
    # The per-class rules took effect, each on its own ports: a switch's
    # tables toward an external port follow qos_swe_ (SL 8 to VL 9, masked to
    # 1), whatever the input port; a CA maps SL 8 to 3 and SL 12 to VL 12,
    # masked to 4.
    nodes = ib.topology.read(net).nodes
    switches = {int(g, 16) for g, k in zip(nodes["guid"], nodes["kind"]) if k == "Switch"}
    external = {v[8] for (g, i, o), v in ours.items() if g in switches and o != 0}
    cas = {(v[8], v[12]) for (g, i, o), v in ours.items() if g not in switches}
    assert (external, cas) == ({1}, {(3, 4)})
    assert any(g in switches and i == 0 for (g, i, o) in ours), "tables from switch port 0 are among those compared"
    assert osm.engine == "minhop"


@pytest.mark.parametrize("fabric,lmc", [("irregular16", 0), ("irregular16", 2), ("fattree4-3", 1), ("valley", 3)])
def test_opensm_lid_order_gives_opensms_lids_and_tables_without_its_guid2lid(nets, tmp_path, fabric, lmc):
    # ibnetsim's own numbering (--lid-order opensm) gives every port the LIDs
    # OpenSM's LID manager gave it on a fresh subnet (the SM on the net
    # file's first node), alignment gaps included, so the tables compare as
    # they are.
    net = nets[fabric]
    osm = xc.run_opensm(net, "minhop", tmp_path, ["-l", str(lmc)])
    ours = xc.run_ibnetsim(net, "minhop", None, tmp_path / "ours.dump", ["--lmc", str(lmc)])
    owners = xc.dump_lid_owners(tmp_path / "ours.dump")
    first_lid = {}
    for lid, guid in owners.items():
        first_lid[guid] = min(first_lid.get(guid, lid), lid)
    theirs = {guid: lo for guid, (lo, _hi) in xc.parse_guid2lid(osm.guid2lid).items()}
    assert len(theirs) > 0 and first_lid == theirs
    assert xc.differences(osm.tables, ours) == []


def _check_json(*args) -> dict:
    proc = subprocess.run([sys.executable, "-m", "ibnetsim.cli", "check", *map(str, args), "--json"], capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_check_reads_every_file_of_an_opensm_run_without_edits(nets, tmp_path):
    # One OpenSM run (minhop, QoS on with QOS_CONF), then ibnetsim check on
    # its files as they are: the LFT dump and opensm.fdbs (with guid2lid),
    # the SL2VL dump and the LID matrix, against the ibsim net file and
    # against OpenSM's own opensm-subnet.lst. Every reading sees the same
    # tables, and the SL2VL dump's maps are the ones the credit-loop check uses.
    conf = tmp_path / "opensm.conf"
    conf.write_text(QOS_CONF)
    net = nets["irregular16"]
    xc.run_opensm(net, "minhop", tmp_path, ["-Q", "-F", str(conf)])
    d, g2l = tmp_path / "dumps", tmp_path / "cache" / "guid2lid"
    runs = {
        "net+lfts": _check_json(net, "--lfts", d / "opensm-lfts.dump", "--guid2lid", g2l, "--lid-matrix", d / "opensm-lid-matrix.dump"),
        "net+fdbs": _check_json(net, "--lfts", d / "opensm.fdbs", "--guid2lid", g2l),
        "lst+lfts": _check_json(d / "opensm-subnet.lst", "--lfts", d / "opensm-lfts.dump"),
        "lst+fdbs": _check_json(d / "opensm-subnet.lst", "--lfts", d / "opensm.fdbs", "--guid2lid", g2l),
    }
    for name, r in runs.items():
        assert (r["fabric"]["switches"], r["fabric"]["ca_ports"]) == (16, 64), name
        assert (r["paths"]["reachable_pairs"], r["paths"]["unreachable_pairs"]) == (64 * 63, 0), name
    for key in ("max_load", "mean_load"):
        # Summed in another node order, so equal to rounding.
        assert len({round(r["channel_load"][key], 9) for r in runs.values()}) == 1, key
    assert len({r["credit_loops"]["dependencies"] for r in runs.values()}) == 1
    # minhop's matrix holds the fabric's own hop counts: every row agrees.
    m = runs["net+lfts"]["lid_matrix"]
    # One row per switch and switch LID.
    assert m["rows_checked"] == 16 * 16 and (m["rows_differing"], m["routes_longer"]) == (0, 0)
    # With the SL2VL dump, SL 0 runs on VL 1 out of the CAs and VL 7 between
    # switches (QOS_CONF's qos_ca_ and qos_swe_ maps); SL 8 on VL 3 and 9 -> 1.
    for sl, vls in ((0, [1, 7]), (8, [1, 3])):
        r = _check_json(net, "--lfts", d / "opensm-lfts.dump", "--guid2lid", g2l, "--sl2vl", d / "opensm-sl2vl.dump", "--sl", sl)
        assert r["fabric"]["sl_config"] == f"SL2VL from tables, SL {sl} on every route"
        assert r["credit_loops"]["vls_used"] == vls


def test_a_differing_entry_is_reported(nets, tmp_path):
    # The comparison itself: one port changed in ibnetsim's dump is found.
    osm = xc.run_opensm(nets["mesh4x4"], "dor", tmp_path)
    ours = dict(xc.run_ibnetsim(nets["mesh4x4"], "dor", osm.guid2lid, tmp_path / "ours.dump"))
    key = next(iter(ours))
    ours[key] += 1
    assert xc.differences(osm.tables, ours) == [(key[0], key[1], osm.tables[key], ours[key])]


@pytest.mark.parametrize(
    "fabric,lmc,extra",
    [
        ("torus4x4", 0, ""),
        ("torus3x4x5", 0, ""),
        ("torus5x5h2", 1, ""),
        ("mesh4x4", 0, ""),
        ("torus5x3", 0, "x_dateline 1\ny_dateline -2\n"),
    ],
    ids=["4x4", "3x4x5", "5x5-lmc1", "mesh4x4", "5x3-datelines"],
)
def test_torus_2qos_tables_and_sl2vl_match_opensm(nets, tmp_path, fabric, lmc, extra):
    # Both read the same torus-2QoS.conf (OpenSM needs -Q for this engine);
    # OpenSM also writes the SL2VL tables the engine programs, which must be
    # ours on every (switch, input, output) and CA port we program.
    net = nets[fabric]
    dims, ring = TORUS_DIMS[fabric]
    conf = xc.write_torus_conf(net, dims, ring, tmp_path / "torus-2QoS.conf", extra)
    osm, ours = xc.crosscheck(net, "torus-2QoS", tmp_path, ["-l", str(lmc), "-Q", "--torus_config", str(conf)], ["--torus-config", str(conf)])
    assert osm.engine == "torus-2QoS", f"OpenSM fell back to {osm.engine}"
    hosts = sum(1 for n in ib.topology.read(net).nodes.itertuples() if n.kind != "Switch")
    switches = len({sw for sw, _ in osm.tables})
    assert len(osm.tables) >= switches * (hosts * 2**lmc + switches) > 0
    diff = xc.differences(osm.tables, ours)
    assert not diff, f"{len(diff)} of {len(osm.tables)} entries differ, e.g. {[(hex(s), hex(l), a, b) for s, l, a, b in diff[:5]]}"
    theirs = xc.parse_sl2vl(tmp_path / "dumps" / "opensm-sl2vl.dump")
    mine = xc.engine_sl2vl(net, "torus-2QoS", [f"torus_config={conf}"])
    assert len(mine) > 0 and set(mine) <= set(theirs)
    assert {k: theirs[k] for k in mine} == mine
    # The tables use the dateline VL and the QoS VLs: not all one map.
    assert len(set(mine.values())) >= 4
    # Our own routing passes the credit-loop check on the engine's SLs and SL2VL.
    assert ib.SubnetManager(ib.topology.read(net), routing="torus-2QoS", lmc=lmc, torus_config=conf).check().ok


def test_torus_2qos_path_sls_are_opensms_pathrecord_sls(nets, tmp_path):
    # OpenSM's SA answers PathRecords with torus-2QoS's path SL (saquery on
    # the running OpenSM): from the hosts of the first row of the 5x3 torus,
    # with both datelines moved, to every host; x and y wrap in some of them.
    net = nets["torus5x3"]
    conf = xc.write_torus_conf(net, [5, 3], True, tmp_path / "torus-2QoS.conf", "x_dateline 1\ny_dateline -2\n")
    with xc.opensm_running(net, "torus-2QoS", tmp_path, ["-Q", "--torus_config", str(conf)]) as client:
        g2l = tmp_path / "cache" / "guid2lid"
        first = xc.path_record_sl(client, 1, 2)
        sm = ib.SubnetManager(ib.topology.read(net), routing="torus-2QoS", guid2lid=g2l, torus_config=conf)
        lids = sm.lids.set_index("node")["base_lid"]
        hosts = [f"h{i}" for i in range(15)]
        pairs = [(int(lids[s]), int(lids[d])) for s in hosts[:5] for d in hosts]
        theirs = {p: xc.path_record_sl(client, *p) for p in pairs}
    ours = {p: sm.path_sl(*p) for p in pairs}
    assert first == sm.path_sl(1, 2)
    assert ours == theirs
    assert set(theirs.values()) == {0, 1, 2, 3}


def _torus_2qos_as_opensm(nets, tmp_path, fabric, net):
    """Routes ``net`` (``fabric`` with parts removed) with torus-2QoS in both,
    on the conf of the whole torus; asserts equal tables and SL2VL tables,
    and returns the conf."""
    dims, ring = TORUS_DIMS[fabric]
    conf = xc.write_torus_conf(nets[fabric], dims, ring, tmp_path / "torus-2QoS.conf")
    osm, ours = xc.crosscheck(net, "torus-2QoS", tmp_path, ["-Q", "--torus_config", str(conf)], ["--torus-config", str(conf)])
    assert osm.engine == "torus-2QoS", f"OpenSM fell back to {osm.engine}"
    assert len(osm.tables) > 0 and not xc.differences(osm.tables, ours)
    theirs = xc.parse_sl2vl(tmp_path / "dumps" / "opensm-sl2vl.dump")
    mine = xc.engine_sl2vl(net, "torus-2QoS", [f"torus_config={conf}"])
    assert len(mine) > 0 and {k: theirs[k] for k in mine} == mine
    return conf


@pytest.mark.parametrize(
    "fabric,cables",
    [("torus5x5h2", [("sw1", 1), ("sw7", 3)]), ("torus3x4x5", [("sw0", 5), ("sw1", 3), ("sw2", 1)])],
    ids=["5x5-x-and-y", "3x4x5-seed-z-y-x"],
)
def test_torus_2qos_routes_around_missing_cables_as_opensm(nets, tmp_path, fabric, cables):
    # Failed cables, each in its own ring (one of them at the seed switch):
    # both go the long way round the broken rings, entry for entry, with the
    # same SL2VL tables (the broken directions' ports are gone).
    net = xc.drop_cables(nets[fabric], tmp_path / "cut.net", cables)
    conf = _torus_2qos_as_opensm(nets, tmp_path, fabric, net)
    assert ib.SubnetManager(ib.topology.read(net), routing="torus-2QoS", torus_config=conf).check().ok


def test_torus_2qos_refuses_a_ring_broken_twice_as_opensm(nets, tmp_path):
    # Two failed cables of one ring split it: OpenSM's torus-2QoS refuses
    # ("disjoint failures") and minhop routes instead; ibnetsim says why.
    net = xc.drop_cables(nets["torus5x3"], tmp_path / "cut.net", [("sw1", 1), ("sw3", 1)])
    conf = xc.write_torus_conf(nets["torus5x3"], [5, 3], True, tmp_path / "torus-2QoS.conf")
    osm = xc.run_opensm(net, "torus-2QoS", tmp_path, ["-Q", "--torus_config", str(conf)])
    assert osm.engine == "minhop"
    assert "disjoint failures in x ring at y=0" in (tmp_path / "opensm.log").read_text(errors="replace")
    with pytest.raises(RuntimeError, match="the x ring at y=0 z=0 is broken in more than one place"):
        xc.run_ibnetsim(net, "torus-2QoS", osm.guid2lid, tmp_path / "ours.dump", ["--torus-config", str(conf)])


@pytest.mark.parametrize(
    "fabric,gone",
    [("torus6x5", ["sw9"]), ("torus3x4x5", ["sw29"]), ("torus3x4x5", ["sw16", "sw28"])],
    ids=["6x5-man-page", "3x4x5-one", "3x4x5-z-column"],
)
def test_torus_2qos_routes_around_missing_switches_as_opensm(nets, tmp_path, fabric, gone):
    # Failed switches OpenSM routes around (one; or two stacked in z): paths
    # turn early and the hop after the illegal turn takes the turn VL. The
    # 6x5 case is the man page's (T = (3,1) failed). Tables and SL2VL equal,
    # and our routing passes the credit-loop check, the turn VLs (2, 3) in use.
    net = xc.drop_switches(nets[fabric], tmp_path / "gone.net", gone)
    conf = _torus_2qos_as_opensm(nets, tmp_path, fabric, net)
    report = ib.SubnetManager(ib.topology.read(net), routing="torus-2QoS", torus_config=conf).check(include_switch_lids=True)
    vls = set(report["credit_loops"]["vls_used"])
    assert report.ok and vls <= {0, 1, 2, 3} and vls & {2, 3}


def test_torus_2qos_refuses_missing_switches_that_could_deadlock_as_opensm(nets, tmp_path):
    # Two failed switches not in one z column: OpenSM says "message deadlock"
    # and minhop routes instead; ibnetsim refuses with the reason.
    net = xc.drop_switches(nets["torus6x5"], tmp_path / "gone.net", ["sw9", "sw20"])
    conf = xc.write_torus_conf(nets["torus6x5"], [6, 5], True, tmp_path / "torus-2QoS.conf")
    osm = xc.run_opensm(net, "torus-2QoS", tmp_path, ["-Q", "--torus_config", str(conf)])
    assert osm.engine == "minhop"
    assert "missing switch topology ==> message deadlock" in (tmp_path / "opensm.log").read_text(errors="replace")
    with pytest.raises(RuntimeError, match=r"switches are missing at \(3,1,0\) and \(2,3,0\), which are not in one z column"):
        xc.run_ibnetsim(net, "torus-2QoS", osm.guid2lid, tmp_path / "ours.dump", ["--torus-config", str(conf)])
