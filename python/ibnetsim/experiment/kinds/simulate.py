"""Point kind ``simulate``: one packet-level run of the data plane, for load sweeps.

One point builds the fabric and subnet manager of ``[fabric]`` and
``[routing]`` (as ``routing_stats`` does), runs :func:`ibnetsim.simulate` with
the switch/HCA parameters of ``[simulation]`` (a paper preset plus overrides)
and the workload of ``[traffic]``, and returns :meth:`ibnetsim.SimResult.row`
plus the per-port utilization profile and the latency histogram that
:mod:`ibnetsim.experiment.plots` draws (its column contract). ``traffic.load``
given as a list is the load sweep behind the latency-vs-accepted-traffic curves
of papers 000–003.

Seeds follow the scenario convention: the top-level ``seed`` drives the
topology, the routing tie-breaks and the traffic streams unless a section gives
its own. A deadlock (the watchdog of the Rust core fires) raises
:class:`ibnetsim.DeadlockError`; the sweep records it as the point's error and
goes on with the other points.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any, Optional

from ibnetsim.experiment import kinds
from ibnetsim.experiment.kinds import Figure, PointKind, register
from ibnetsim.experiment.kinds.routing_stats import build_fabric, build_subnet
from ibnetsim import _core
from ibnetsim.errors import ConfigWarning
from ibnetsim.experiment.core_keys import keys_from_core
from ibnetsim.experiment.schema import FROM_SEED, Key, Section, register_section
from ibnetsim.sim import max_time_us, overload_warning, warmup_warning

__all__ = ["class_names", "traffic_class", "sim_overrides", "class_columns", "utilization_summary", "histogram_columns", "run_config"]

# The choices come from the core's registries, so a preset, policy or process
# added there is accepted here (and listed in docs/scenario.md) without an edit.
_REGISTRIES = _core.sim_registries()
_PRESETS = tuple(_REGISTRIES["presets"])
_SELECTIONS = tuple(_REGISTRIES["selections"])
#: Longest time any key may give, in µs (the core's picosecond clock).
_MAX_US = max_time_us()
#: The core's scalar keys, each unset by default (the preset's value applies),
#: except those a scenario gives another way: the seed by its top-level
#: convention, the warm-up in µs as `ibnetsim.simulate` takes it, the series
#: interval in [metrics].
_CORE_SIMULATION = tuple(k for k in keys_from_core("simulation") if k.name not in ("seed", "warmup_ns", "series_interval_ns"))


def _check_simulation(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    if not s["time_us"] > 0:
        return ("time_us", f"the run must last some time (got {s['time_us']} µs)")
    if s["qos_file"] is not None and s["data_vls"] is not None:
        return ("data_vls", "give data_vls or qos_file, not both: with a QoS file the ports run the VLs its qos_max_vls sets")
    if s["auto_warmup"] and s["warmup_us"] > 0:
        return ("auto_warmup", f"give warmup_us = {s['warmup_us']:g} or auto_warmup = true, not both")
    if s["max_options"] is not None and s["selection"] != "fully-adaptive":
        return ("max_options", f"max_options is a parameter of selection = \"fully-adaptive\", not of '{s['selection'] or 'deterministic'}'")
    if s["warmup_us"] >= s["time_us"]:
        return ("warmup_us", f"warm-up ({s['warmup_us']} µs) must end before the run does (time_us = {s['time_us']} µs)")
    return None


def _warn_simulation(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    why = None if s["auto_warmup"] else warmup_warning(s["warmup_us"], s["time_us"])
    return ("warmup_us", why) if why else None


SIMULATION = register_section(
    Section(
        "simulation",
        "The packet-level data plane (`ibnetsim.simulate`): a paper's switch and HCA parameters and the "
        "length of the run. Keys left unset take the preset's value (or the core's default without a preset). "
        "`data_vls` … `event_queue` are the scalar fields of the core's `SimConfig` (crates/sim/src/config.rs).",
        keys=(
            Key(
                "preset",
                "str",
                "Switch/HCA parameters of a paper's simulator (`ibnetsim.sim.presets()` lists where each value comes from); "
                "unset = the core's defaults (100 ns routing, 8 KB buffers, MTU 2048, 1 VL).",
                default=None,
                choices=_PRESETS,
            ),
            Key("time_us", "float", "Simulated time of the run, warm-up included, in µs.", min=0.0, max=_MAX_US),
            Key("warmup_us", "float", "Packets generated before this time are left out of the statistics, in µs.", default=0.0, min=0.0, max=_MAX_US),
            Key(
                "auto_warmup",
                "bool",
                "Detect the end of warm-up instead: measurement starts once accepted traffic matches offered and latency "
                "shows no trend over the last 10 windows of 10 µs (SuperSim's idea); excludes `warmup_us`.",
                default=False,
            ),
            Key(
                "warmup_max_fraction",
                "float",
                "With `auto_warmup`: the latest the warm-up may end, as a fraction of `time_us`; a run not stationary "
                "by then is measured from there and reported with `warmup_detected` = false.",
                default=0.5,
                min=0.01,
                max=0.99,
            ),
            Key(
                "qos_file",
                "path",
                "opensm.conf (or a TOML file with a `[qos]` table) whose `qos_*` options (`qos_max_vls`, `qos_sl2vl`, "
                "`qos_vlarb_high`/`low`, `qos_high_limit` and their `qos_ca_`/`qos_sw0_`/`qos_swe_` forms) program every port's "
                "SL2VL and VLArbitration tables as OpenSM would; the ports then run `qos_max_vls` data VLs. Excludes `data_vls`.",
                default=None,
            ),
            Key(
                "selection",
                "str",
                "How a switch picks among the routing options of a lookup: `deterministic` and `adaptive-by-credits` "
                "decide at crossbar arbitration time, `lfu` (least used output among the destination's LMC paths) "
                "once per packet and switch at routing time, `fully-adaptive` (paper 002: adaptive options while the "
                "next adaptive buffer part has room, else the escape path; needs the `fa` engine and "
                "`switch.input_partition_bytes`); unset = the preset's (`deterministic`).",
                default=None,
                choices=_SELECTIONS,
            ),
            Key(
                "max_options",
                "int",
                "With `selection = \"fully-adaptive\"`: most routing options per destination, the escape one included "
                "(paper 002's MR); the adaptive ones come from the lowest LID offsets. Unset = every LID of the port.",
                default=None,
            ),
            *_CORE_SIMULATION,
            Key("seed", "int", "Seed of the traffic sources (each source has its own ChaCha stream).", default=FROM_SEED, min=0, max=2**63 - 1),
        ),
        checks=(_check_simulation,),
        warns=(_warn_simulation,),
    )
)


SWITCH = register_section(
    Section(
        "switch",
        "Switch parameters of a `simulate` point, over the preset's (`ibnetsim.sim.default_config(preset)[\"switch\"]`). "
        "Unset keys keep the preset's value. The keys are the fields of the core's `SwitchConfig` (crates/sim/src/config.rs), "
        "documented there.",
        keys=keys_from_core("switch"),
    )
)

#: `hca.source_queue_packets` of scenario points unless the scenario sets it (the API's default is 0, unbounded).
SWEEP_SOURCE_QUEUE_PACKETS = 256


HCA = register_section(
    Section(
        "hca",
        "Channel-adapter parameters of a `simulate` point, over the preset's. Unset keys keep the preset's value, "
        f"except `source_queue_packets`: {SWEEP_SOURCE_QUEUE_PACKETS} in scenario files (0, unbounded, in the Python API), "
        "so that points past saturation keep flat memory (docs/traffic.md). The keys are the fields of the core's `HcaConfig`.",
        keys=keys_from_core("hca"),
    )
)

METRICS = register_section(
    Section(
        "metrics",
        "Which measurements a `simulate` point stores besides the summary columns (latency, offered and accepted traffic, counts).",
        keys=(
            Key(
                "per_class",
                "bool",
                "With several traffic classes, also store per class `class_NAME_offered_load`, `_accepted_load`, "
                "`_latency_mean_ns`, `_latency_p99_ns`, `_network_latency_mean_ns` and `_delivered_packets`.",
                default=True,
            ),
            Key("port_utilization", "bool", "Store the utilization of every transmitter (`port_utilization`, for the per-port figures).", default=True),
            Key("latency_histogram", "bool", "Store the packet-latency histogram (`latency_hist_*`, for the histogram and CDF figures).", default=True),
            Key(
                "series_interval_ns",
                "float",
                "Also record a time series per link and VL at this interval, in ns (the core's `series_interval_ns`): "
                "utilization and input/output buffer occupancy (`SimResult.series`). Each point's table is stored as "
                "`DIR/tables/series/KEY.parquet` (`ibnetsim.experiment.load_table(DIR, \"series\")`), its row count as "
                "`series_rows`, and `ibnetsim plot` draws the busiest links over time. Unset = off, at no cost to the run.",
                default=None,
                min=0.001,
                max=_MAX_US * 1000.0,
            ),
        ),
    )
)




def _check_traffic(s: dict, cfg: dict) -> Optional[tuple[str, str]]:
    # The class's own rules are the core's (`_core_problem`); these need the rest of the scenario.
    if s["pattern"] == "multicast":
        return ("pattern", "needs a multicast group on the subnet manager, which a scenario cannot declare; "
                "use the Python API: ibnetsim.traffic.multicast with SubnetManager(..., multicast_groups={mlid: [hosts]})")
    routing = cfg.get("routing")
    if s["adaptive_fraction"] > 0 and routing is not None and routing["lmc"] < 1:
        return ("adaptive_fraction", "needs two LIDs per port: routing.lmc = 1 or more (e.g. engine 'fa' with lmc = 1)")
    return None


def _warn_traffic(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    why = overload_warning(s["load"])
    return ("load", why) if why else None


TRAFFIC = register_section(
    Section(
        "traffic",
        "The workload of a `simulate` point: an open-loop traffic class sent by every host the pattern lets send. "
        "A list of loads is the load sweep of a latency-vs-accepted-traffic curve. Several `[[traffic]]` tables "
        "run several classes at once (e.g. real-time and best-effort traffic on different SLs). The keys are the "
        "fields of the core's `ClassDoc` (crates/sim/src/traffic/mod.rs), as `ibnetsim.traffic` and the core's "
        "`[[traffic.classes]]` write them; unset `name` = the pattern's name, or `classN` with several classes.",
        repeated=True,
        keys=keys_from_core("traffic", core_defaults=True),
        checks=(_check_traffic,),
        warns=(_warn_traffic,),
    )
)


TRACE = register_section(
    Section(
        "trace",
        "Replays a trace file in a `simulate` point: one message per line, `time_ns source destination bytes sl` "
        "(docs/formats.md, \"Traffic traces\"); messages larger than the MTU are split into MTU packets. "
        "Runs beside the `[[traffic]]` classes, or alone.",
        repeated=True,
        keys=(
            Key("file", "path", "The trace file (relative to the scenario file)."),
            Key("name", "str", "Name of the trace in results; unset = the file name without extension.", default=None),
            Key("time_scale", "float", "Multiplies every time in the file: 0.5 replays twice as fast (paper 003's time compression).", default=1.0, min=1e-9),
        ),
    )
)


CLOSED_LOOP = register_section(
    Section(
        "closed_loop",
        "Closed-loop classes of a `simulate` point, beside the `[[traffic]]` classes: every host the pattern lets send "
        "keeps at most `window` messages outstanding and sends the next a gap after one completes (ib_flit_sim's "
        "generator is `window = 1`; docs/traffic.md). The keys are the fields of the core's `ClosedLoopDoc` "
        "(crates/sim/src/traffic/closed_loop.rs), as `ibnetsim.traffic.closed_loop` writes them.",
        repeated=True,
        keys=keys_from_core("closed_loop", core_defaults=True),
    )
)

CONNECTION = register_section(
    Section(
        "connection",
        "Constant-bit-rate connections of a `simulate` point (paper 001's CBR sources, docs/traffic.md): together one "
        "more class, `connections`. Every key is required. The keys are the fields of the core's `ConnectionConfig`, "
        "as `ibnetsim.traffic.connection` writes them.",
        repeated=True,
        keys=keys_from_core("connection", core_defaults=True),
    )
)

TRANSPORT = register_section(
    Section(
        "transport",
        "The transport layer at the HCAs of a `simulate` point: acknowledgements and their replies (docs/traffic.md, "
        "\"The transport layer\"). Unset keys keep the core's defaults. The keys are the fields of the core's `TransportConfig`.",
        keys=keys_from_core("transport"),
    )
)


# --------------------------------------------------------------------------- running
def class_names(specs: list[dict]) -> list[str]:
    """The result names of the ``[[traffic]]`` classes: ``name``, else the pattern
    (one class) or ``classN`` (several)."""
    if len(specs) == 1:
        return [specs[0]["name"] or specs[0]["pattern"]]
    return [s["name"] or f"class{i}" for i, s in enumerate(specs)]


def traffic_class(spec: dict, name: Optional[str] = None) -> dict[str, Any]:
    """The traffic class (a ``traffic.classes`` entry of the core's config) of
    one resolved ``[traffic]`` table: the same keys, with its result name."""
    return {**spec, "name": name or spec["name"]}


def sim_overrides(config: dict) -> dict[str, Any]:
    """Keyword arguments of :func:`ibnetsim.simulate` from a resolved point's
    ``[simulation]``, ``[switch]``, ``[hca]`` and ``[metrics]`` (unset keys
    keep the preset's)."""
    spec = config["simulation"]
    out: dict[str, Any] = {}
    for key in [k.name for k in _CORE_SIMULATION] + ["selection"]:
        if spec.get(key) is not None:
            out[key] = spec[key]
    if spec.get("qos_file") is not None:
        out["qos_file"] = spec["qos_file"]
    if config.get("metrics", {}).get("series_interval_ns") is not None:
        out["series_interval_ns"] = config["metrics"]["series_interval_ns"]
    if spec.get("max_options") is not None:
        out["selection"] = {"kind": spec.get("selection") or "deterministic", "max_options": spec["max_options"]}
    switch = {k: v for k, v in config.get("switch", {}).items() if v not in (None, [])}
    if switch:
        out["switch"] = switch
    transport = {k: v for k, v in config.get("transport", {}).items() if v is not None}
    if transport:
        out["transport"] = transport
    hca = {k: v for k, v in config.get("hca", {}).items() if v not in (None, [])}
    # Load sweeps run points past saturation, where unbounded source queues grow
    # with the run: bounded, memory stays flat and (one class per host) the
    # packets fare exactly as unbounded (docs/traffic.md).
    hca.setdefault("source_queue_packets", SWEEP_SOURCE_QUEUE_PACKETS)
    out["hca"] = hca
    return out


def utilization_summary(per_port, switches: set[str]) -> dict[str, Any]:
    """Scalars and the profile of per-port transmitter utilization (``SimResult.per_port``).

    ``switches`` names the switches, to single out switch-to-switch links: they
    carry the routed traffic, where a host link carries only its own.
    """
    if per_port is None or len(per_port) == 0:
        return {"port_utilization": [], "max_port_utilization": None, "mean_port_utilization": None, "mean_switch_link_utilization": None}
    util = per_port["utilization"].astype(float)
    mask = per_port["node"].isin(switches) & per_port["peer_node"].isin(switches)
    return {
        "port_utilization": [float(x) for x in util],
        "max_port_utilization": float(util.max()),
        "mean_port_utilization": float(util.mean()),
        "mean_switch_link_utilization": float(util[mask].mean()) if mask.any() else None,
    }


def histogram_columns(hist) -> dict[str, Any]:
    """``latency_hist_edges_ns`` / ``latency_hist_counts`` from ``SimResult.latency_hist``,
    summed over classes (they share the bucket layout)."""
    if hist is None or len(hist) == 0:
        return {"latency_hist_edges_ns": [], "latency_hist_counts": []}
    h = hist.groupby(["low_ns", "high_ns"], sort=True)["count"].sum().reset_index()
    h = h[h["count"] > 0] if (h["count"] > 0).any() else h
    # Keep the buckets contiguous so the edges describe them exactly.
    lows, highs, counts = h["low_ns"].tolist(), h["high_ns"].tolist(), h["count"].tolist()
    edges = [float(lows[0])]
    out_counts: list[float] = []
    for lo, hi, n in zip(lows, highs, counts):
        if lo > edges[-1]:
            edges.append(float(lo))
            out_counts.append(0.0)
        edges.append(float(hi))
        out_counts.append(float(n))
    return {"latency_hist_edges_ns": edges, "latency_hist_counts": out_counts}


def run_config(config: dict, progress: bool | float = False):
    """Builds and runs one point's simulation; returns ``(fabric, SimResult)``.
    Inside a sweep whose output is a log, the point prints plain progress lines
    (``kinds.point_progress``)."""
    import ibnetsim

    interval, label = kinds.point_progress
    if interval is not None and progress is False:
        progress = interval

    fabric = build_fabric(config["fabric"])
    sm = build_subnet(fabric, config["routing"])
    sim = config["simulation"]
    specs = config["traffic"]
    traces = [ibnetsim.traffic.trace(t["file"], time_scale=t["time_scale"], name=t["name"]) for t in config["trace"]]
    # The sections' keys are the core's, so their tables are the class dicts.
    # Kinds built on this one (saturation) may have none of these sections.
    others = [dict(t) for t in config.get("closed_loop", [])] + [dict(t) for t in config.get("connection", [])]
    # The scenario warned once, when it was loaded, of what simulate would warn
    # of at every point again.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        res = ibnetsim.simulate(
            fabric,
            sm,
            traffic=[traffic_class(t, n) for t, n in zip(specs, class_names(specs))] + traces + others,
            time_us=sim["time_us"],
            seed=sim["seed"],
            warmup_us="auto" if sim["auto_warmup"] else sim["warmup_us"],
            warmup_max_fraction=sim["warmup_max_fraction"],
            preset=sim["preset"],
            progress=progress,
            progress_label=label or "simulating",
            **sim_overrides(config),
        )
    return fabric, res


#: Per-class columns, stored as ``class_NAME_COLUMN`` with several classes.
_CLASS_COLUMNS = {
    "offered_fraction": "offered_load",
    "accepted_fraction": "accepted_load",
    "latency_mean_ns": "latency_mean_ns",
    "latency_p99_ns": "latency_p99_ns",
    "network_latency_mean_ns": "network_latency_mean_ns",
    "delivered_packets": "delivered_packets",
}


def class_columns(summary) -> dict[str, Any]:
    """``class_NAME_*`` columns from ``SimResult.summary`` (one row per class);
    characters of NAME that cannot be in a column name become ``_``."""
    out: dict[str, Any] = {}
    for _, row in summary.iterrows():
        safe = re.sub(r"\W", "_", str(row["name"]))
        for src, dst in _CLASS_COLUMNS.items():
            v = row[src]
            out[f"class_{safe}_{dst}"] = None if v is None or v != v else float(v)
    return out


def _run(config: dict) -> dict:
    fabric, res = run_config(config)
    out = dict(res.row())
    out["nominal_load"] = float(sum(t["load"] for t in config["traffic"]))
    metrics = config["metrics"]
    if metrics["per_class"] and len(res.summary) > 1:
        out.update(class_columns(res.summary))
    if metrics["port_utilization"]:
        nodes = fabric.nodes
        switches = set(nodes.loc[nodes["kind"].str.lower().str.contains("switch"), "name"])
        out.update(utilization_summary(res.per_port, switches))
    if metrics["latency_histogram"]:
        out.update(histogram_columns(res.latency_hist))
    if metrics["series_interval_ns"] is not None:
        out[kinds.TABLES] = {"series": res.series.to_dict(orient="list")}
    return out


#: Core keys the ``[simulation]`` section names otherwise.
_SIMULATION_KEYS = {"selection.max_options": "max_options"}


def _class_key(config: dict, i: int, key: str, section: str = "traffic") -> str:
    """The scenario's name of key ``key`` of entry ``i`` of a repeated section:
    ``SECTION.KEY`` for a single table, ``SECTION[i].KEY`` with several."""
    return f"{section}.{key}" if len(config[section]) == 1 else f"{section}[{i}].{key}"


#: Lists of the core's ``traffic`` table, by the scenario section each entry comes from.
_TRAFFIC_LISTS = {"classes": "traffic", "closed_loop": "closed_loop", "connections": "connection"}


def _core_problem(config: dict) -> Optional[tuple[str, str]]:
    """The core's own check of the point's data-plane parameters (values,
    delays, buffers against the MTU, partitions, each traffic class), the one
    building the simulation makes, with the key named as the scenario writes it."""
    specs = config["traffic"]
    classes = [traffic_class(t, n) for t, n in zip(specs, class_names(specs))] if specs else []
    for section, docs in (("traffic", classes), ("closed_loop", config.get("closed_loop", []))):
        for i, cls in enumerate(docs):
            problem = _core.sim_check_class(section, json.dumps(cls))
            if problem is not None:
                return (_class_key(config, i, problem[0], section), problem[1])
    overrides = sim_overrides(config)
    # The QoS file is read when the simulation is built; its VLs replace data_vls.
    overrides.pop("qos_file", None)
    doc = {**overrides, "traffic": {"classes": classes, "closed_loop": config.get("closed_loop", []), "connections": config.get("connection", [])}}
    problem = _core.sim_check_config(json.dumps(doc), config["simulation"]["preset"])
    if problem is None:
        return None
    key, msg = problem
    # The line is the list's (a scenario gives it on one line); the message names the element.
    key = re.sub(r"\[\d+\]$", "", key)
    m = re.fullmatch(r"traffic\.(classes|closed_loop|connections)\[(\d+)\]\.(.+)", key)
    if m:
        return (_class_key(config, int(m.group(2)), m.group(3), _TRAFFIC_LISTS[m.group(1)]), msg)
    if key.split(".", 1)[0] in ("switch", "hca", "transport"):
        return (key, msg)
    return ("simulation." + _SIMULATION_KEYS.get(key, key.split(".", 1)[0]), msg)


def _check(config: dict) -> Optional[tuple[str, str]]:
    r = config["routing"]
    f = config["fabric"]
    traces = config["trace"]
    if not (config["traffic"] or traces or config.get("closed_loop", []) or config.get("connection", [])):
        return ("traffic", "no workload: give a [traffic] table (or several [[traffic]]) with a load, a [[trace]], "
                "a [[closed_loop]] or a [[connection]]")
    names = class_names(config["traffic"]) if config["traffic"] else []
    for i, n in enumerate(names):
        if n in names[:i]:
            return (f"traffic[{i}].name", f"two traffic classes are named '{n}'; give each [[traffic]] its own name")
    trace_names: list[str] = []
    for i, t in enumerate(traces):
        n = t["name"] or Path(t["file"]).stem
        if n in names or n in trace_names:
            return (_class_key(config, i, "name", "trace"), f"the name '{n}' is already used by another class or trace; give this trace another `name`")
        trace_names.append(n)
    for i, k in enumerate(config.get("closed_loop", [])):
        # The core compares closed-loop names with the classes'; the traces' come from their files.
        if k["name"] in trace_names:
            return (_class_key(config, i, "name", "closed_loop"), f"the name '{k['name']}' is already used by a trace; give this class another `name`")
    if r["engine"] == "dor" and f["kind"] not in ("mesh", "hypercube", "file"):
        return ("routing.engine", f"engine 'dor' routes meshes, tori and hypercubes, not a fabric of kind '{f['kind']}'")
    return _core_problem(config)


KIND = register(
    PointKind(
        name="simulate",
        summary="Build a fabric, route it and run the packet-level data plane under one traffic class; "
        "`traffic.load` as a list is a load sweep (latency vs accepted traffic). A deadlock fails the point "
        "with the watchdog's message.",
        run=_run,
        sections=("fabric", "routing", "simulation", "switch", "hca", "traffic", "trace", "closed_loop", "connection", "transport", "metrics"),
        required=("fabric",),
        check=_check,
        columns={
            "offered_load": "Offered load measured after warm-up: wire bytes generated by all hosts ÷ their total data rate.",
            "accepted_load": "Accepted traffic after warm-up: wire bytes delivered ÷ the hosts' total data rate.",
            "nominal_load": "`traffic.load` as configured (the sum over the classes with several `[[traffic]]`).",
            "offered_bytes_per_ns_per_switch": "Generated wire bytes per ns per switch, after warm-up.",
            "accepted_bytes_per_ns_per_switch": "Delivered bytes per ns per switch (the unit of papers 002/003).",
            "offered_bits_per_us": "Generated bits per µs, whole fabric, after warm-up.",
            "accepted_bits_per_us": "Delivered bits per µs, whole fabric (the unit of paper 004).",
            "measured_packets": "Packets behind the latency columns: generated after warm-up and delivered.",
            "latency_mean_ns": "Mean packet latency over all classes, generation to delivery (queueing at the source included).",
            "latency_p50_ns": "Median packet latency.",
            "latency_p99_ns": "99th-percentile packet latency.",
            "latency_max_ns": "Largest packet latency.",
            "network_latency_mean_ns": "Mean latency from injection into the fabric to delivery.",
            "network_latency_p50_ns": "Median network latency.",
            "network_latency_p99_ns": "99th-percentile network latency.",
            "network_latency_max_ns": "Largest network latency.",
            "warmup_us": "Warm-up used: `simulation.warmup_us`, or where the automatic detector ended it.",
            "warmup_detected": "With `simulation.auto_warmup`: whether the run became stationary (False: measured from the latest allowed point; a saturation sign).",
            "warmup_status": "`fixed`, `detected`, `not-stabilised` or `pending`.",
            "stationary": "Whether the measurement itself was stationary (no backlog growth, no latency trend over its 10 µs windows, or the auto warm-up's); False: queues or latency grew while measured, so the figures depend on the run length. Empty with under 3 windows.",
            "delivered_packets": "Packets delivered (whole run).",
            "generated_packets": "Packets generated (whole run).",
            "dropped_packets": "Packets dropped (no route, U-turn, VL15 overflow, misrouted), whole run.",
            "drops_no_route": "Packets dropped because the forwarding table had no entry for the DLID.",
            "drops_input_port_is_output": "Packets dropped because the route sent them back out of the port they came in on.",
            "drops_vl15_overflow": "VL15 packets dropped for lack of buffer (VL15 is not flow controlled).",
            "drops_misrouted": "Packets dropped because they reached a CA that is not their destination.",
            "in_flight_packets": "Packets generated but neither delivered nor dropped at the end.",
            "injection_queue_packets": "Packets still waiting in the hosts' send queues at the end (grows past saturation).",
            "events": "Simulation events processed.",
            "wall_s": "Wall-clock time of the simulation itself.",
            "port_utilization": "List: utilization of every cabled transmitter, in fabric port order.",
            "max_port_utilization": "Highest transmitter utilization.",
            "mean_port_utilization": "Mean transmitter utilization.",
            "mean_switch_link_utilization": "Mean utilization of switch-to-switch transmitters.",
            "latency_hist_edges_ns": "List: latency histogram bucket edges (ns).",
            "latency_hist_counts": "List: packets per latency bucket.",
            "series_rows": "With `metrics.series_interval_ns`: rows of the point's time series, stored in `DIR/tables/series/KEY.parquet`.",
        },
        table_columns=("offered_load", "accepted_load", "latency_mean_ns", "latency_p99_ns"),
        figures=(
            Figure("accepted_vs_load", x="traffic.load", y="accepted_load", title="Accepted traffic", ylabel="accepted (fraction of link rate)"),
            Figure("latency_vs_load", x="traffic.load", y="latency_mean_ns", title="Mean packet latency", ylabel="latency (ns)"),
        ),
    )
)
