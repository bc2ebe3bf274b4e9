#!/usr/bin/env python3
"""Events per second of k-ary 3-trees of growing size, beside the 8×8 mesh.

    python3 scripts/fat_tree_scaling.py [--runs 3] [--k 4 6 8 12]

Each fat tree is routed by ``ftree`` and carries ``ibnetsim bench``'s fat-tree
traffic (uniform, 256 B packets, load 0.3, IBA defaults) for as long as it
takes to handle about 10^7 events; the mesh is ``ibnetsim bench``'s. The
median of ``--runs`` runs of ``simulate`` (routing excluded) is printed per
fabric, with the fat tree's events per second as a fraction of the mesh's.
This shows how the cost per event grows with the fabric (see
``crates/sim/README.md``, "What this machine is short of").
"""

from __future__ import annotations

import argparse
import statistics
import time

import ibnetsim
from ibnetsim import run_cli, topology


def events_per_s(fab, sm, traffic, time_us: float, warmup_us: float, **config) -> float:
    t0 = time.perf_counter()
    res = ibnetsim.simulate(fab, sm, traffic=traffic, time_us=time_us, seed=1, warmup_us=warmup_us, **config)
    return res.raw["events"] / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--k", type=int, nargs="*", default=[4, 6, 8, 12])
    a = ap.parse_args()
    _, fab, sm, traffic, config = {n: b for n, b, *_ in run_cli.BENCHES}["mesh8x8"]()
    mesh = statistics.median(events_per_s(fab, sm, traffic, 20_000, 200, **config) for _ in range(a.runs))
    print(f"mesh 8x8: {mesh / 1e6:.2f} M events/s")
    for k in a.k:
        fab = topology.fat_tree(k, 3)
        sm = ibnetsim.SubnetManager(fab, routing="ftree")
        hosts = k**3
        # About 6,400 events per simulated µs at 1,728 hosts, in proportion to the hosts.
        time_us = max(2_000.0, 2_000.0 * 1_728 / hosts)
        eps = statistics.median(events_per_s(fab, sm, ibnetsim.traffic.uniform(0.3, 256), time_us, 50, preset=None) for _ in range(a.runs))
        print(f"{k}-ary 3-tree ({hosts} hosts): {eps / 1e6:.2f} M events/s, {eps / mesh:.2f} of the mesh's")


if __name__ == "__main__":
    main()
