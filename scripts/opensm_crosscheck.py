#!/usr/bin/env python3
"""Routes a fabric with real OpenSM 3.3.23 on ibsim and with ibnetsim, and
compares the forwarding tables entry for entry.

    python3 scripts/opensm_crosscheck.py FABRIC.net ENGINE [--lmc N] [--root-guid GUID ...] [--max-vls N]
    python3 scripts/opensm_crosscheck.py TORUS.net torus-2QoS --torus-dims 4x4 [--torus-config FILE]

needs Debian's ``opensm``, ``ibsim-utils`` (``ibsim`` and the
``libumad2sim.so`` preload) installed. ibsim serves FABRIC.net; OpenSM runs
once against it through the preload (``opensm -o -R ENGINE``), and writes its
``opensm-lfts.dump`` and ``guid2lid``. ibnetsim then routes the same file with
the same engine, taking OpenSM's LIDs from that ``guid2lid``
(``ibnetsim route --guid2lid``; or numbering them itself as OpenSM does,
``--lid-order opensm``), and the two dumps are compared per (switch GUID,
LID). ibnetsim reads an ibsim ``.net`` file with ibsim's GUID rule, so
the GUIDs agree without a translation. ``--max-vls N`` sets the virtual
layers of ``nue`` on both sides (OpenSM's ``--nue_max_num_vls N``, with QoS on,
``-Q``, since OpenSM's nue falls back to one layer without it) or of
``dfsssp``/``lash`` on ibnetsim's. Prints the differing entries; exits 1
if there are any, or if OpenSM fell back to another engine.

For ``torus-2QoS`` both get the same ``torus-2QoS.conf`` (OpenSM's
``--torus_config``, with ``-Q``: the engine refuses to run without QoS): the
one given, or with ``--torus-dims`` one written for a fabric of
``ibnetsim topo gen mesh`` (:func:`write_torus_conf`). OpenSM then also
writes ``opensm-sl2vl.dump``, compared with ibnetsim's tables
(:func:`engine_sl2vl`).

``tests/test_opensm_live.py`` runs it on generated fabrics; it is skipped where
the packages are missing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

UMAD2SIM = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")

#: (switch GUID, LID) → output port.
Tables = dict[tuple[int, int], int]

_HEADER = re.compile(r"Unicast lids \[.*\] of switch Lid \d+ guid (0x[0-9a-fA-F]+)")
_ENTRY = re.compile(r"(0x[0-9a-fA-F]+) (\d+)")
_CONFIGURED = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")


def available() -> Optional[str]:
    """None if OpenSM, ibsim and the preload are installed, else what is missing."""
    missing = [name for name in ("opensm", "ibsim") if shutil.which(name) is None]
    if not UMAD2SIM.exists():
        missing.append(str(UMAD2SIM))
    return None if not missing else "not installed: " + ", ".join(missing)


def parse_lfts(path: Path) -> Tables:
    """The entries of an ``opensm-lfts.dump`` (OpenSM's or ``ibnetsim route``'s)."""
    tables: Tables = {}
    switch = None
    for line in path.read_text().splitlines():
        m = _HEADER.match(line)
        if m:
            switch = int(m.group(1), 16)
            continue
        m = _ENTRY.match(line)
        if m and switch is not None:
            tables[(switch, int(m.group(1), 16))] = int(m.group(2))
    return tables


@dataclass
class OpenSmRun:
    """What one OpenSM run left: its folder, the engine that routed, its tables."""

    folder: Path
    engine: Optional[str]
    tables: Tables

    @property
    def guid2lid(self) -> Path:
        return self.folder / "cache" / "guid2lid"


def run_opensm(net: Path, engine: str, folder: Path, options: Sequence[str] = (), timeout: float = 120.0) -> OpenSmRun:
    """Serves ``net`` with ibsim and routes it once with OpenSM's ``engine``."""
    for sub in ("cache", "dumps"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    # A socket of its own, so that runs side by side (two CI clones) do not meet.
    env = dict(os.environ, IBSIM_SOCKNAME=f"ibnetsim-{os.getpid()}-{folder.name}", OSM_CACHE_DIR=str(folder / "cache"))
    sim = subprocess.Popen(["ibsim", "-s", "-n", str(net)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        log = folder / "opensm.log"
        cmd = ["opensm", "-o", "-R", engine, "-D", "0x43", "-f", str(log), "--dump_files_dir", str(folder / "dumps"), *options]
        # ibsim needs a moment to listen; OpenSM started too early cannot connect.
        for attempt in range(20):
            proc = subprocess.run(cmd, env=dict(env, LD_PRELOAD=str(UMAD2SIM)), capture_output=True, text=True, timeout=timeout)
            if proc.returncode == 0 and (folder / "dumps" / "opensm-lfts.dump").exists():
                break
            time.sleep(0.1 * (attempt + 1))
        else:
            raise RuntimeError(f"OpenSM did not route {net}: {proc.stdout[-500:]} {proc.stderr[-500:]}")
    finally:
        sim.terminate()
        sim.wait()
    used = _CONFIGURED.findall(log.read_text(errors="replace"))
    return OpenSmRun(folder, used[-1] if used else None, parse_lfts(folder / "dumps" / "opensm-lfts.dump"))


@contextmanager
def opensm_running(net: Path, engine: str, folder: Path, options: Sequence[str] = ()) -> Iterator[dict]:
    """ibsim serving ``net`` and OpenSM's ``engine`` running on it as a daemon
    (its SA answers queries); yields the environment a client such as
    ``saquery`` needs (the preload and ibsim's socket). Both stop on exit."""
    for sub in ("cache", "dumps"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, IBSIM_SOCKNAME=f"ibnetsim-sa-{os.getpid()}-{folder.name}", OSM_CACHE_DIR=str(folder / "cache"))
    sim = subprocess.Popen(["ibsim", "-s", "-n", str(net)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    client = dict(env, LD_PRELOAD=str(UMAD2SIM))
    osm = None
    try:
        time.sleep(0.5)
        cmd = ["opensm", "-R", engine, "-f", str(folder / "opensm.log"), "--dump_files_dir", str(folder / "dumps"), *options]
        osm = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=client)
        yield client
    finally:
        if osm is not None:
            osm.terminate()
            osm.wait()
        sim.terminate()
        sim.wait()


def path_record_sl(client: dict, slid: int, dlid: int, timeout: float = 60.0) -> int:
    """The SL of OpenSM's PathRecord from ``slid`` to ``dlid`` (``saquery
    --src-to-dst``), asking again until the SA answers or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        proc = subprocess.run(["saquery", "--src-to-dst", f"{slid}:{dlid}"], env=client, capture_output=True, text=True, timeout=30)
        m = re.search(r"\bsl\.+(0x[0-9a-fA-F]+)", proc.stdout)
        if m:
            return int(m.group(1), 16)
        if time.monotonic() > deadline:
            raise RuntimeError(f"no PathRecord {slid}:{dlid} from OpenSM's SA: {proc.stdout[-300:]} {proc.stderr[-300:]}")
        time.sleep(0.5)


def run_ibnetsim(net: Path, engine: str, guid2lid: Optional[Path], out: Path, options: Sequence[str] = ()) -> Tables:
    """Routes ``net`` with ibnetsim's ``engine`` on OpenSM's LIDs: those of its
    ``guid2lid`` file, or with none, ibnetsim's own OpenSM numbering
    (``--lid-order opensm``)."""
    lids = ["--guid2lid", str(guid2lid)] if guid2lid is not None else ["--lid-order", "opensm"]
    cmd = [sys.executable, "-m", "ibnetsim.cli", "route", str(net), "--engine", engine, *lids, "-o", str(out), *options]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ibnetsim route failed: {proc.stderr.strip()}")
    return parse_lfts(out)


_SL2VL_NODE = re.compile(r'(Switch|Channel Adapter) (0x[0-9a-fA-F]+), base LID \d+')
_SL2VL_ROW = re.compile(r"(\d+)\s+(\d+)\s+:((?:\s+\d+){16})")

#: (switch GUID, in port, out port) or (CA port GUID, 0, 0) → VL of each SL.
Sl2Vl = dict[tuple[int, int, int], tuple[int, ...]]


def parse_sl2vl(path: Path) -> Sl2Vl:
    """The tables of OpenSM's ``opensm-sl2vl.dump`` (written when QoS is on)."""
    tables: Sl2Vl = {}
    node = None
    for line in path.read_text().splitlines():
        m = _SL2VL_NODE.match(line)
        if m:
            node = int(m.group(2), 16)
            continue
        m = _SL2VL_ROW.match(line)
        if m and node is not None:
            tables[(node, int(m.group(1)), int(m.group(2)))] = tuple(int(v) for v in m.group(3).split())
    return tables


def ibnetsim_sl2vl(net: Path, qos_conf: Path) -> Sl2Vl:
    """The SL2VL tables ibnetsim programs on ``net`` from ``qos_conf``, keyed as OpenSM's dump keys them."""
    import ibnetsim as ib

    fab = ib.topology.read(net)
    return _keyed_as_opensm(fab, ib.SubnetManager(fab).sl2vl(qos_file=qos_conf))


def _keyed_as_opensm(fab, sl2vl) -> Sl2Vl:
    """``SubnetManager.sl2vl()``'s rows on ``fab``, keyed as OpenSM's dump keys them."""
    nodes = fab.nodes.set_index("name")
    tables: Sl2Vl = {}
    for r in sl2vl.itertuples():
        guid = int(nodes.loc[r.node, "guid"], 16)
        vls = tuple(int(getattr(r, f"sl{sl}")) for sl in range(16))
        if nodes.loc[r.node, "kind"] == "Switch":
            tables[(guid, r.in_port, r.out_port)] = vls
        else:
            # OpenSM names a CA port's one table by the port's GUID (node + port).
            tables[(guid + r.out_port, 0, 0)] = vls
    return tables


def write_torus_conf(net: Path, dims: Sequence[int], torus: bool, path: Path, extra: str = "") -> Path:
    """A ``torus-2QoS.conf`` for a fabric of ``ibnetsim topo gen mesh`` with
    ``dims``: seeded at ``sw0`` with its +d neighbour in every dimension (and
    its -d one too in rings of 4, which OpenSM needs); ``extra`` lines follow."""
    import ibnetsim as ib

    guid = ib.topology.read(net).nodes.set_index("name")["guid"]
    radix = list(dims) + [1] * (3 - len(dims))
    lines = [f"{'torus' if torus else 'mesh'} {radix[0]} {radix[1]} {radix[2]}"]
    stride = 1
    for d, n in enumerate(dims):
        lines.append(f"{'xyz'[d]}p_link {guid['sw0']} {guid[f'sw{stride}']}")
        if torus and n == 4:
            lines.append(f"{'xyz'[d]}m_link {guid['sw0']} {guid[f'sw{stride * (n - 1)}']}")
        stride *= n
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def drop_cables(net: Path, out: Path, cables: Sequence[tuple[str, int]]) -> Path:
    """Writes ``net`` to ``out`` without the cables at (switch name, port):
    both ends' lines go, as if the cable had failed."""
    blocks = net.read_text().split("\n\n")

    def edit(name: str, port: int, far: Optional[str] = None) -> Optional[tuple[str, int]]:
        for i, b in enumerate(blocks):
            if re.search(rf'^Switch\s+\d+\s+"{re.escape(name)}"', b, re.M):
                m = re.search(rf'^\[{port}\]\s+"([^"]+)"\[(\d+)\].*$', b, re.M)
                if m is None or (far is not None and m.group(1) != far):
                    raise ValueError(f"{net}: switch {name} has no cable on port {port}")
                blocks[i] = b.replace(m.group(0) + "\n", "", 1)
                return m.group(1), int(m.group(2))
        raise ValueError(f"{net}: no switch {name}")

    for name, port in cables:
        peer, peer_port = edit(name, port)
        edit(peer, peer_port, far=name)
    out.write_text("\n\n".join(blocks))
    return out


def drop_switches(net: Path, out: Path, names: Sequence[str]) -> Path:
    """Writes ``net`` to ``out`` without the switches ``names``, their cables
    and the CAs cabled only to them, as if those switches had failed."""
    gone = set(names)
    kept = []
    for b in net.read_text().split("\n\n"):
        m = re.search(r'^(Switch|Hca|Ca|Rt)\s+\d+\s+"([^"]+)"', b, re.M)
        if m and m.group(2) in gone:
            continue
        peers = re.findall(r'^\[\d+\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"', b, re.M)
        if m and m.group(1) != "Switch" and peers and set(peers) <= gone:
            continue
        lines = [line for line in b.split("\n") if not any(re.match(rf'^\[\d+\](?:\([0-9a-fA-F]+\))?\s+"{re.escape(g)}"\[', line) for g in gone)]
        kept.append("\n".join(lines))
    out.write_text("\n\n".join(kept))
    return out


def engine_sl2vl(net: Path, engine: str, options: Sequence[str] = ()) -> Sl2Vl:
    """The SL2VL tables ibnetsim's ``engine`` programs on ``net`` (torus-2QoS's
    own), keyed as OpenSM's dump keys them. ``options`` are ``SubnetManager`` keyword
    arguments as ``key=value`` strings."""
    import ibnetsim as ib

    fab = ib.topology.read(net)
    kwargs = dict(o.split("=", 1) for o in options)
    return _keyed_as_opensm(fab, ib.SubnetManager(fab, routing=engine, **kwargs).sl2vl())


def parse_guid2lid(path: Path) -> dict[int, tuple[int, int]]:
    """OpenSM's ``guid2lid`` file: port GUID → (first LID, last LID)."""
    out = {}
    for line in path.read_text().split("\n"):
        f = line.split()
        if len(f) >= 3:
            out[int(f[0], 16)] = (int(f[1], 16), int(f[2], 16))
    return out


def dump_lid_owners(path: Path) -> dict[int, int]:
    """LID → owner's port GUID, from the comments of ``ibnetsim route``'s dump."""
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"(0x[0-9a-fA-F]+) \d+ # .*portguid (0x[0-9a-fA-F]+)", line)
        if m:
            out[int(m.group(1), 16)] = int(m.group(2), 16)
    return out


def differences(opensm: Tables, ours: Tables) -> list[tuple[int, int, int, Optional[int]]]:
    """(switch GUID, LID, OpenSM's port, ours) for every entry of OpenSM's that ours does not repeat."""
    return [(sw, lid, port, ours.get((sw, lid))) for (sw, lid), port in sorted(opensm.items()) if ours.get((sw, lid)) != port]


def crosscheck(net: Path, engine: str, folder: Path, opensm_options: Sequence[str] = (), our_options: Sequence[str] = ()) -> tuple[OpenSmRun, Tables]:
    """Both routings of ``net`` with ``engine``; their files stay in ``folder``."""
    osm = run_opensm(net, engine, folder, opensm_options)
    ours = run_ibnetsim(net, engine, osm.guid2lid, folder / "ibnetsim-lfts.dump", our_options)
    return osm, ours


def layer_options(engine: str, layers: int) -> tuple[list[str], list[str]]:
    """(OpenSM's options, ibnetsim's) for ``layers`` virtual layers of ``engine``.
    OpenSM's nue takes them from ``nue_max_num_vls`` and uses one unless QoS is
    on; its dfsssp and lash take the ports' VLs and have no such option."""
    ours = ["--max-vls", str(layers)]
    if engine == "nue":
        return ["-Q", "--nue_max_num_vls", str(layers)], ours
    return [], ours


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("net", type=Path)
    ap.add_argument("engine")
    ap.add_argument("--lmc", type=int, default=0)
    ap.add_argument("--root-guid", action="append", default=[], help="up*/down* root port GUID (hex); repeat for several")
    ap.add_argument("--max-vls", type=int, default=None, help="virtual layers (nue: OpenSM's nue_max_num_vls, with QoS on)")
    ap.add_argument("--keep", type=Path, default=None, help="folder for both runs' files (default: a temporary one)")
    ap.add_argument("--torus-config", type=Path, default=None, help="torus-2QoS: its torus-2QoS.conf, given to both")
    ap.add_argument("--torus-dims", default=None, help="torus-2QoS: write the conf for a generated fabric of these dims (e.g. 4x4)")
    ap.add_argument("--mesh", action="store_true", help="with --torus-dims: the fabric is a mesh, not a torus")
    a = ap.parse_args()
    why = available()
    if why:
        print(why, file=sys.stderr)
        return 2
    folder = a.keep or Path(tempfile.mkdtemp(prefix="opensm-crosscheck-"))
    osm_opts, our_opts = ["-l", str(a.lmc)], []
    if a.root_guid:
        roots = folder / "root_guids"
        folder.mkdir(parents=True, exist_ok=True)
        roots.write_text("".join(f"{g}\n" for g in a.root_guid))
        osm_opts += ["-a", str(roots)]
        our_opts += ["--root", str(roots)]
    if a.max_vls is not None:
        theirs, mine = layer_options(a.engine, a.max_vls)
        osm_opts += theirs
        our_opts += mine
    conf = a.torus_config
    if a.torus_dims:
        folder.mkdir(parents=True, exist_ok=True)
        conf = write_torus_conf(a.net, [int(v) for v in a.torus_dims.split("x")], not a.mesh, folder / "torus-2QoS.conf")
    if conf is not None:
        osm_opts += ["-Q", "--torus_config", str(conf)]
        our_opts += ["--torus-config", str(conf)]
    osm, ours = crosscheck(a.net, a.engine, folder, osm_opts, our_opts)
    diff = differences(osm.tables, ours)
    print(f"OpenSM routed with {osm.engine}; {len(osm.tables)} entries, {len(diff)} differ; files in {folder}")
    for sw, lid, theirs, mine in diff[:50]:
        print(f"  switch 0x{sw:016x} LID 0x{lid:04x}: OpenSM port {theirs}, ibnetsim {mine}")
    sl2vl_diff = 0
    if conf is not None and (folder / "dumps" / "opensm-sl2vl.dump").exists():
        theirs = parse_sl2vl(folder / "dumps" / "opensm-sl2vl.dump")
        mine = engine_sl2vl(a.net, a.engine, [f"torus_config={conf}"])
        sl2vl_diff = sum(1 for k, v in mine.items() if theirs.get(k) != v)
        print(f"SL2VL: {len(mine)} of ibnetsim's tables, {sl2vl_diff} differ from opensm-sl2vl.dump")
    return 0 if not diff and not sl2vl_diff and osm.engine == a.engine else 1


if __name__ == "__main__":
    sys.exit(main())
