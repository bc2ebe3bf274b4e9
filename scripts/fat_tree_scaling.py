#!/usr/bin/env python3
"""Events per second of k-ary 3-trees of growing size, beside the 8×8 mesh.

    python3 scripts/fat_tree_scaling.py [--runs 3] [--k 4 6 8 12]

Each fat tree is routed by ``ftree`` and carries ``ibnetsim bench``'s fat-tree
traffic (uniform, 256 B packets, load 0.3, IBA defaults) for as long as it
takes to handle about 10^7 events; the mesh is ``ibnetsim bench``'s. Each
fat tree's ``--runs`` runs of ``simulate`` (routing excluded, CPU time of
this process) alternate with as many runs of the mesh, so that a drift in
the machine's speed hits both alike. Printed per fabric: the median events
per second, and the fat tree's as a fraction of the mesh's, of the medians
and of each one's fastest run (other load only ever slows a run down). This
shows how the cost per event grows with the fabric (see
``crates/sim/README.md``, "What this machine is short of").
"""

from __future__ import annotations

import argparse
import statistics
import time

import ibnetsim
from ibnetsim import run_cli, topology


def events_per_s(fab, sm, traffic, time_us: float, warmup_us: float, **config) -> float:
    t0 = time.process_time()
    res = ibnetsim.simulate(fab, sm, traffic=traffic, time_us=time_us, seed=1, warmup_us=warmup_us, **config)
    return res.raw["events"] / (time.process_time() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--k", type=int, nargs="*", default=[4, 6, 8, 12])
    a = ap.parse_args()
    _, mesh_fab, mesh_sm, mesh_traffic, mesh_config = {n: b for n, b, *_ in run_cli.BENCHES}["mesh8x8"]()
    for k in a.k:
        fab = topology.fat_tree(k, 3)
        sm = ibnetsim.SubnetManager(fab, routing="ftree")
        hosts = k**3
        # About 6,400 events per simulated µs at 1,728 hosts, in proportion to the hosts.
        time_us = max(2_000.0, 2_000.0 * 1_728 / hosts)
        mesh, tree = [], []
        for _ in range(a.runs):
            mesh.append(events_per_s(mesh_fab, mesh_sm, mesh_traffic, 20_000, 200, **mesh_config))
            tree.append(events_per_s(fab, sm, ibnetsim.traffic.uniform(0.3, 256), time_us, 50, preset=None))
        m, t = statistics.median(mesh), statistics.median(tree)
        print(
            f"{k}-ary 3-tree ({hosts} hosts): {t / 1e6:.2f} M events/s against the mesh's {m / 1e6:.2f} M (8x8): "
            f"{t / m:.2f} of the mesh's (medians), {max(tree) / max(mesh):.2f} (fastest runs)"
        )


if __name__ == "__main__":
    main()
