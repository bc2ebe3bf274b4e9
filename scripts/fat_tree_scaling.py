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

A call of ``simulate`` also pays for work done once per run: building the
simulation from the fabric and its tables, and turning the results into
Python objects. On the 1,728-host tree that is 11–12 ms (about 19 ms
before the per-port results were built without JSON), 1–2 % of a run of
10^7 events; on the mesh about 1 ms. Each run is therefore paired with a
run of 1 µs of the same fabric, traffic and parameters (without a
warm-up), and the line "per event" gives the events per second of the
difference (the events a longer run adds, over the time it adds): the cost
of an event, without the run's fixed cost. The line "per call" divides by
the whole call, as before.
"""

from __future__ import annotations

import argparse
import statistics
import time

import ibnetsim
from ibnetsim import run_cli, topology


def timed(fab, sm, traffic, time_us: float, warmup_us: float, **config) -> tuple[int, float]:
    """Events handled and CPU seconds of one call of ``simulate``."""
    t0 = time.process_time()
    res = ibnetsim.simulate(fab, sm, traffic=traffic, time_us=time_us, seed=1, warmup_us=warmup_us, **config)
    return res.raw["events"], time.process_time() - t0


def events_per_s(fab, sm, traffic, time_us: float, warmup_us: float, **config) -> tuple[float, float]:
    """Events per second of a run: of the whole call, and per event (the
    difference from a run of 1 µs, which pays the same fixed cost)."""
    events, cpu = timed(fab, sm, traffic, time_us, warmup_us, **config)
    short_events, short_cpu = timed(fab, sm, traffic, 1.0, 0.0, **config)
    if events <= short_events or cpu <= short_cpu:
        raise SystemExit(
            f"a run of {time_us} µs took no longer than one of 1 µs ({cpu:.4f} s, {events} events, against "
            f"{short_cpu:.4f} s, {short_events}): too short to time"
        )
    return events / cpu, (events - short_events) / (cpu - short_cpu)


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
        for i, what in ((1, "per event"), (0, "per call")):
            ms, ts = [r[i] for r in mesh], [r[i] for r in tree]
            m, t = statistics.median(ms), statistics.median(ts)
            print(
                f"{k}-ary 3-tree ({hosts} hosts), {what}: {t / 1e6:.2f} M events/s against the mesh's {m / 1e6:.2f} M (8x8): "
                f"{t / m:.2f} of the mesh's (medians), {max(ts) / max(ms):.2f} (fastest runs)"
            )


if __name__ == "__main__":
    main()
