#!/usr/bin/env python3
"""The reference scenarios of the data-plane differential test.

A restructuring of the data plane must change no result: the same seed gives
the same numbers before and after. This script runs the reference scenarios
(the three of ``ibnetsim bench``, the quick-start load sweep, a QoS CBR run, a
trace replay and an LFU run) and prints their full results as JSON.
``tests/test_differential.py`` compares them with
``tests/data/differential/reference.json``, which was written once by this
script from the commit before the restructuring (392a6d0):

    python3 scripts/differential.py > tests/data/differential/reference.json

Only counters that measure the simulator itself (events handled, wall clock,
peak arena size) are left out: cutting events per packet-hop is allowed, a
different packet history is not.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Result keys that describe the simulator's own work, not the simulated network.
ENGINE_KEYS = {"events", "wall_s", "packets_peak", "arena_peak", "event_queue"}


def _clean(x):
    """JSON-safe, engine counters dropped, floats kept exact (repr round-trips)."""
    if hasattr(x, "to_dict"):  # a pandas DataFrame
        return _clean(x.to_dict(orient="list"))
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items() if k not in ENGINE_KEYS}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def scenarios():
    """(name, thunk) of every reference scenario; a thunk returns a SimResult, or one with extra values."""
    import ibnetsim as ib
    from ibnetsim import qos, qos_sim, topology
    from ibnetsim.run_cli import BENCHES

    out = []
    # Ten times the benches' --quick runs: a few thousand packets each.
    for name, build, _full, quick_us, _warm, quick_warm in BENCHES:
        def bench(build=build, t_us=10 * quick_us, w_us=quick_warm):
            _, fab, sm, traffic, config = build()
            preset = config.pop("preset")
            return ib.simulate(fab, sm, traffic=traffic, time_us=t_us, seed=1, warmup_us=w_us, preset=preset, **config)
        out.append((f"bench-{name}", bench))

    def quickstart(load):
        fab = topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1, cable_length_m=20.0)
        sm = ib.SubnetManager(fab, routing="updn")
        return ib.simulate(fab, sm, traffic=ib.traffic.uniform(load, 256), time_us=200.0, warmup_us=50.0, seed=1,
                           preset="martinez2003")
    for load in (0.02, 0.06, 0.10, 0.14, 0.20):
        out.append((f"quickstart-{load:.2f}", lambda load=load: quickstart(load)))

    def cbr():
        fab = topology.irregular(switches=8, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=2)
        sm = ib.SubnetManager(fab, routing="updn")
        reqs = qos_sim.setup_connections(fab, sm, 300, retry_limit=100, seed=1, rate_basis="data")
        plan = qos.plan(fab, sm, reqs, rate_basis="data")
        r = qos_sim.simulate_plan(fab, sm, plan, packet_bytes=256, k_packets=3, transient_packets=500, max_time_us=2_000)
        return r.sim, {"steady_us": r.steady_us, "transient_us": r.transient_us,
                       "connections": r.connections.to_dict(orient="list")}
    out.append(("qos-cbr", cbr))

    def trace():
        fab = topology.irregular(switches=4, switch_ports=8, links_per_switch=2, hosts_per_switch=2, seed=3)
        sm = ib.SubnetManager(fab, routing="updn")
        t = ib.traffic.trace(ROOT / "examples" / "traces" / "three.trace")
        return ib.simulate(fab, sm, traffic=[t, ib.traffic.uniform(0.1, 200)], time_us=60, seed=5, mtu_bytes=256)
    out.append(("trace-replay", trace))

    def lfu():
        fab = topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
        sm = ib.SubnetManager(fab, routing="updn", lmc=2)
        return ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.15, 256), time_us=300.0, warmup_us=20.0, seed=3,
                           preset="martinez2003", selection="lfu")
    out.append(("lfu", lfu))

    def adaptive():
        fab = topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
        sm = ib.SubnetManager(fab, routing="updn", lmc=1)
        return ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.15, 256), time_us=300.0, warmup_us=20.0, seed=3,
                           preset="martinez2003", selection="adaptive-by-credits", switch={"output_buffer_bytes": 0})
    out.append(("adaptive-bufferless", adaptive))

    def mixed():
        # Several classes on two VLs with IBA tables, VL15 management, a hot
        # spot, Bernoulli arrivals, a size mix, path bits and a multiplexed
        # crossbar with speedup: the paths the other scenarios leave out.
        fab = topology.mesh([4, 4], hosts_per_switch=2)
        sm = ib.SubnetManager(fab, routing="updn", lmc=1)
        traffic = [
            {**ib.traffic.uniform(0.2, 256), "name": "be", "process": "bernoulli", "path_bits": "random"},
            {**ib.traffic.uniform(0.1, 128), "name": "rt", "sl": 1},
            {**ib.traffic.uniform(0.01, 64), "name": "mad", "vl15": True},
            {"name": "hot", "load": 0.05, "pattern": "hot-spot", "hot_hosts": ["h3"], "hot_fraction": 0.5,
             "payload_sizes": [32, 200], "payload_size_weights": [0.5, 0.5]},
        ]
        return ib.simulate(fab, sm, traffic=traffic, time_us=200.0, warmup_us=20.0, seed=11, mtu_bytes=256, data_vls=2,
                           switch={"crossbar": "multiplexed", "speedup": 1.5, "output_buffer_bytes": 2048},
                           vl_arbitration={"kind": "iba", "high": [[1, 4]], "low": [[0, 8], [1, 2]], "limit_of_high_priority": 2})
    out.append(("mixed", mixed))
    return out


def record(result) -> dict:
    """Everything a run reports: the raw results, both latency histograms per class, extras."""
    res, extra = result if isinstance(result, tuple) else (result, {})
    return _clean({"results": res.raw, "latency_hist": res.latency_hist, "network_latency_hist": res.network_latency_hist,
                   **extra})


def run_all() -> dict:
    return {name: record(thunk()) for name, thunk in scenarios()}


if __name__ == "__main__":
    json.dump(run_all(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
