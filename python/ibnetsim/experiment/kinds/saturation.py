"""Point kind ``saturation``: the saturation throughput of one configuration, searched.

A ``simulate`` load sweep needs a grid fine enough near saturation to find the
peak of accepted traffic, and most of its points are far from it. This kind
searches instead: it runs the ``simulate`` point at growing loads, ``step``
apart from ``step`` up, until a load falls behind (accepted < (1 −
``tolerance``) × offered, both measured after warm-up, the criterion of
``ibnetsim run``), then halves the interval between the last load that kept
up and the first that fell behind ``refine`` times. The throughput is the
largest accepted traffic of all those runs (past saturation accepted traffic
may fall, so the peak is near the saturation load, not at the end).

``traffic.load`` of each ``[[traffic]]`` class is its share of the probed
load: every class runs at ``load × probe`` (one class with ``load = 1`` runs
at the probe itself). Everything else is the ``simulate`` kind's.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from ibnetsim.experiment.kinds import Figure, PointKind, register
from ibnetsim.experiment.kinds import simulate as _simulate
from ibnetsim.experiment.schema import Key, Section, register_section

__all__ = ["search"]


def _check_search(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    if s["step"] >= s["max_load"]:
        return ("step", f"the first probe ({s['step']}) must be below max_load ({s['max_load']})")
    return None


SEARCH = register_section(
    Section(
        "saturation",
        "How a `saturation` point searches for the saturation load: probes `step`, 2 × `step`, … up to `max_load` "
        "until one falls behind, then bisects between the last that kept up and the first that fell behind.",
        keys=(
            Key("step", "float", "Spacing of the upward probes, and the first probe, as a fraction of the link rate.", default=0.05, min=0.001, max=1.0),
            Key("max_load", "float", "Highest load probed; a configuration that keeps up there reports it as its saturation load.", default=1.0, min=0.01, max=4.0),
            Key("refine", "int", "Halvings of the interval around saturation (resolution `step / 2^refine`).", default=4, min=0, max=12),
            Key(
                "tolerance",
                "float",
                "A load keeps up while accepted ≥ (1 − tolerance) × offered, both after warm-up (as `ibnetsim run` reports saturation).",
                default=0.02,
                min=0.0,
                max=0.5,
            ),
        ),
        checks=(_check_search,),
    )
)


def _check(config: dict) -> Optional[tuple[str, str]]:
    if not config["traffic"]:
        return ("traffic", "a saturation search needs a [traffic] class whose load it scales")
    return _simulate.KIND.check({**config, "trace": []})


def _probe(config: dict, load: float) -> dict[str, Any]:
    c = copy.deepcopy(config)
    c["trace"] = []
    for t in c["traffic"]:
        t["load"] = float(t["load"]) * load
    _, res = _simulate.run_config(c)
    return dict(res.row())


def search(config: dict) -> dict[str, Any]:
    """Runs the probes of one point; returns its result columns."""
    s = config["saturation"]
    tol = s["tolerance"]
    probes: list[tuple[float, dict]] = []

    def run(load: float) -> bool:
        row = _probe(config, load)
        probes.append((load, row))
        offered, accepted = row.get("offered_load"), row.get("accepted_load")
        return offered is not None and accepted is not None and accepted >= (1.0 - tol) * offered

    kept, behind = None, None
    k = 1
    while True:
        load = round(k * s["step"], 12)
        if load > s["max_load"]:
            break
        if run(load):
            kept = load
            k += 1
        else:
            behind = load
            break
    if behind is not None:
        lo = kept if kept is not None else 0.0
        hi = behind
        for _ in range(s["refine"]):
            mid = (lo + hi) / 2
            if run(mid):
                lo, kept = mid, mid
            else:
                hi = mid
    best_load, best = max(probes, key=lambda p: p[1].get("accepted_load") or 0.0)
    at_sat = next((row for load, row in probes if load == kept), None)
    order = sorted(probes, key=lambda p: p[0])
    return {
        "saturation_load": kept,
        "saturated": behind is not None,
        "throughput": best["accepted_load"],
        "throughput_bytes_per_ns_per_switch": best["accepted_bytes_per_ns_per_switch"],
        "throughput_load": best_load,
        "latency_at_saturation_ns": None if at_sat is None else at_sat["latency_mean_ns"],
        "zero_load_latency_ns": order[0][1]["latency_mean_ns"],
        "probes": len(probes),
        "probe_loads": [float(p[0]) for p in order],
        "probe_accepted": [float(p[1]["accepted_load"] or 0.0) for p in order],
        "probe_latency_ns": [float(p[1]["latency_mean_ns"] or 0.0) for p in order],
        "wall_s": sum(float(p[1].get("wall_s") or 0.0) for p in probes),
    }


KIND = register(
    PointKind(
        name="saturation",
        summary="Search the saturation load and throughput of one `simulate` configuration: upward probes, then "
        "bisection; the throughput is the largest accepted traffic seen. `traffic.load` is each class's share of the probe.",
        run=search,
        sections=("fabric", "routing", "simulation", "switch", "hca", "traffic", "saturation"),
        required=("fabric",),
        check=_check,
        columns={
            "saturation_load": "Highest probed load (fraction of the link rate per source) whose accepted traffic kept up with offered; empty if the first probe fell behind.",
            "saturated": "True when some probe fell behind (false: the configuration keeps up at `max_load`).",
            "throughput": "Largest accepted traffic of all probes (fraction of the link rate per host): the saturation throughput.",
            "throughput_bytes_per_ns_per_switch": "The same in delivered bytes per ns per switch (papers 002/003).",
            "throughput_load": "The probe load where the throughput was measured.",
            "latency_at_saturation_ns": "Mean packet latency at the saturation load.",
            "zero_load_latency_ns": "Mean packet latency at the lowest probe.",
            "probes": "Simulations run by the search.",
            "probe_loads": "List: the probed loads, ascending.",
            "probe_accepted": "List: accepted traffic at each probed load.",
            "probe_latency_ns": "List: mean latency at each probed load.",
            "wall_s": "Wall-clock time of all the probes' simulations.",
        },
        table_columns=("saturation_load", "throughput", "latency_at_saturation_ns", "zero_load_latency_ns"),
        figures=(
            Figure("throughput", x="fabric.switches", y="throughput_bytes_per_ns_per_switch", title="Saturation throughput", ylabel="bytes/ns/switch"),
        ),
    )
)
