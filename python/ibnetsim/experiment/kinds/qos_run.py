"""Point kind ``qos_run``: paper 001's CBR connections simulated with the tables admission computed.

One point builds a network (``[fabric]`` or one of paper 001's 16-switch
networks, as :mod:`qos_setup`), routes it, establishes up to
``qos_run.connections`` random DB connections with the paper's setup
(:func:`ibnetsim.qos_sim.setup_connections`, with ``entry_limit`` and
``sl2_range`` as in :mod:`qos_setup`), plans them
(:func:`ibnetsim.qos.plan`: the per-port VL arbitration tables), programs those
tables into the data plane and simulates every accepted connection as a CBR
source (:func:`ibnetsim.qos_sim.simulate_plan`): a transient until
``transient_packets`` deliveries, then the steady state until the
lowest-bandwidth connection has ``k_packets`` packets or it has lasted
``max_time_us``.

Columns: delivered traffic per host in bytes per link cycle (Fig. 4; a cycle is
one byte time of the host link), host-interface and switch-port utilizations
(Figs. 5–7, as profiles in identifier order and sorted), and per SL 0–3 the
cumulative share of packets within each IAT-relative delay threshold (Fig. 8),
the share in each jitter interval (Fig. 9) and the best and worst connection by
share within the deadline IAT/2 (Figs. 10–12).
"""

from __future__ import annotations

import math
import time

from ibnetsim.experiment.kinds import Categories, Figure, PointKind, register
from ibnetsim.experiment.kinds.qos_setup import PAPER_NETWORKS, _check_qos_setup, network_of
from ibnetsim.experiment.schema import FROM_SEED, Key, Section, register_section
from ibnetsim.sim import max_time_us

#: Column suffixes of the delay thresholds (cumulative share ≤ threshold).
DELAY_COLS = ("le_1_32", "le_1_16", "le_1_8", "le_1_4", "le_1_2", "le_3_4", "le_1")
DELAY_DOCS = ("IAT/32", "IAT/16", "IAT/8", "IAT/4", "IAT/2", "3·IAT/4", "IAT")
#: Column suffixes of the jitter intervals (inter-arrival time − IAT).
JITTER_COLS = ("lt_m1_2", "m1_2", "m1_4", "pm1_8", "p1_4", "p1_2", "p1", "gt_p1")
JITTER_DOCS = ("< −IAT/2", "[−IAT/2, −IAT/4)", "[−IAT/4, −IAT/8)", "[−IAT/8, IAT/8]", "(IAT/8, IAT/4]", "(IAT/4, IAT/2]", "(IAT/2, IAT]", "> IAT")
SLS = (0, 1, 2, 3)

QOS_RUN = register_section(
    Section(
        "qos_run",
        "Paper 001's CBR connections, set up and planned by `ibnetsim.qos`, simulated with the per-port VL "
        "arbitration tables the plan computed (`ibnetsim.qos_sim.simulate_plan`).",
        keys=(
            Key("connections", "int", "N: connections to try to establish (the paper's \"tried\").", min=1),
            Key(
                "network",
                "str",
                "`fabric` uses [fabric]; `irregular`, `hypercube` or `mesh` builds paper 001's 16-switch network (8-port switches, 4 hosts each).",
                default="fabric",
                choices=("fabric",) + PAPER_NETWORKS,
            ),
            Key("link_width", "str", "Link width of the paper networks (ignored with network = \"fabric\").", default="1x", choices=("1x", "4x", "12x")),
            Key("packet_bytes", "int", "Packet size on the wire, headers included (paper: 256 or 4096).", default=256, min=27, max=4122),
            Key("retry_limit", "int", "Refusals in a row after which the setup ends.", default=10_000, min=1),
            Key(
                "entry_limit",
                "str",
                "`table`: a port whose 64 arbitration-table entries cannot hold a connection's slots refuses it (IBA); "
                "`none`: only the slot budget refuses (paper 001 §4.2); what a port's entries cannot hold is left out of its table; "
                "`vl`: as `none`, but a port where the connection's VL would have no entry (never served: it would starve) refuses it.",
                default="table",
                choices=("table", "none", "vl"),
            ),
            Key(
                "sl2_range",
                "str",
                "SL 2's bandwidth range: `class` 1.55–64 Mb/s (§4.1's class limits) or `text` 64 kb/s–64 Mb/s (§5.2 as printed).",
                default="class",
                choices=("class", "text"),
            ),
            Key("be_share", "float", "Share of every port's frame kept for best effort (paper: 0.2).", default=0.2, min=0.0, max=0.98),
            Key(
                "rate_basis",
                "str",
                "B_link of admission: `data` (after 8b/10b: the rate packets really get, the paper's 2.5 Gb/s with no encoding) or `signalling`.",
                default="data",
                choices=("signalling", "data"),
            ),
            Key("transient_packets", "int", "Deliveries that end the transient (paper: 10000).", default=10_000, min=0),
            Key("k_packets", "int", "Steady state ends when the lowest-bandwidth connection has received this many packets (paper: 100).", default=100, min=1),
            Key("max_time_us", "float", "Longest steady state, in µs of simulated time (ends it before K when reached); also bounds the transient.", default=100_000.0, min=1.0, max=max_time_us() / 2),
            Key("seed", "int", "Seed of the setup draws, of the connections' phases and of the irregular paper network.", default=FROM_SEED, min=0, max=2**63 - 1),
        ),
        checks=(_check_qos_setup,),
    )
)


def _nan(v) -> float:
    return float("nan") if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _run(config: dict) -> dict:
    from ibnetsim import qos, qos_sim

    c = config["qos_run"]
    fabric, sm = network_of(config, c)
    t0 = time.perf_counter()
    reqs = qos_sim.setup_connections(fabric, sm, c["connections"], retry_limit=c["retry_limit"], seed=c["seed"],
                                     be_share=c["be_share"], rate_basis=c["rate_basis"],
                                     entry_limit=c["entry_limit"], sl2_range=c["sl2_range"])
    plan = qos.plan(fabric, sm, reqs, be_share=c["be_share"], rate_basis=c["rate_basis"],
                    entry_limit=c["entry_limit"])
    r = qos_sim.simulate_plan(
        fabric, sm, plan, packet_bytes=c["packet_bytes"], k_packets=c["k_packets"],
        transient_packets=c["transient_packets"], max_time_us=c["max_time_us"], seed=c["seed"],
    )
    kinds = dict(zip(fabric.nodes["name"], fabric.nodes["kind"].astype(str).str.lower()))
    ports = r.sim.per_port
    is_host = ports["node"].map(lambda n: "switch" not in kinds.get(n, "switch"))
    hosts, sws = ports[is_host], ports[~is_host]
    profile = [float(u) for u in hosts["utilization"]] + [float(u) for u in sws["utilization"]]
    conns = r.connections
    hosts_n = int(is_host.sum())
    ca_ports = plan.ports[~plan.ports["is_switch"]]
    out = {
        "established": int(plan.accepted),
        "hosts": hosts_n,
        "delivered_bytes_per_cycle_per_host": r.delivered_bytes_per_cycle_per_host,
        "reserved_per_host_link": float(conns["bandwidth_bps"].sum()) / float(ca_ports["link_bps"].sum()) if len(ca_ports) else float("nan"),
        "overflow_ports": int((plan.ports["overflow_slots"] > 0).sum()),
        "overflow_slots_max": int(plan.ports["overflow_slots"].max()),
        "host_util_mean": float(hosts["utilization"].mean()),
        "host_util_max": float(hosts["utilization"].max()),
        "switch_util_mean": float(sws["utilization"].mean()),
        "switch_util_max": float(sws["utilization"].max()),
        "util_profile": profile,
        "util_sorted": sorted(profile),
        "bandwidth_ratio_min": float(conns.loc[conns["measured_packets"] >= 10, "bandwidth_ratio"].min()),
        # A CBR source's deliveries in a window of W differ from W/IAT by less than 2
        # unless it is starved or queued without bound (tests/test_qos_sim.py).
        "connections_short": int((conns["delivered_packets"] < r.steady_us / conns["iat_us"] - 2).sum()),
        "transient_us": r.transient_us,
        "steady_us": r.steady_us,
        "k_reached": r.k_reached,
        "lowest_delivered": r.lowest_delivered,
        "events": int(r.sim.raw["events"]),
        "sim_wall_s": time.perf_counter() - t0,
    }
    per_sl = r.per_sl.set_index("sl") if len(r.per_sl) else None
    for sl in SLS:
        row = per_sl.loc[sl] if per_sl is not None and sl in per_sl.index else None
        get = (lambda k: _nan(row.get(k))) if row is not None else (lambda k: float("nan"))
        out[f"packets_sl{sl}"] = int(get("measured_packets")) if row is not None else 0
        for col, name in zip(DELAY_COLS, qos_sim.DELAY_BINS):
            out[f"delay_{col}_sl{sl}"] = get(f"delay_le_{name}")
        for col, name in zip(JITTER_COLS, qos_sim.JITTER_BINS):
            out[f"jitter_{col}_sl{sl}"] = get(f"jitter_{name}")
        out[f"jitter_within_iat_sl{sl}"] = 1.0 - get("jitter_>iat")
        out[f"best_within_iat2_sl{sl}"] = get("best_within_iat2")
        out[f"worst_within_iat2_sl{sl}"] = get("worst_within_iat2")
        out[f"worst_within_iat_sl{sl}"] = get("worst_within_iat")
    return out


_COLUMNS = {
    "established": "Connections established (and simulated).",
    "hosts": "Host interfaces (CA ports).",
    "delivered_bytes_per_cycle_per_host": "Fig. 4: delivered wire bytes per host per link cycle (one byte time of the host link's data rate).",
    "reserved_per_host_link": "Sum of the connections' mean bandwidths per host, fraction of the host link's B_link (rate_basis).",
    "overflow_ports": "Output ports whose reserved slots their 64 table entries cannot all hold (only with entry_limit = \"none\").",
    "overflow_slots_max": "Largest number of reserved slots on one port left out of its table.",
    "host_util_mean": "Figs. 5–7: mean busy fraction of the host interfaces (CA transmitters).",
    "host_util_max": "Largest host-interface utilization.",
    "switch_util_mean": "Figs. 5–7: mean busy fraction of the cabled switch ports (transmitters).",
    "switch_util_max": "Largest switch-port utilization.",
    "util_profile": "Utilizations, host interfaces then switch ports, in node and port order (Figs. 5–7 a, c).",
    "util_sorted": "The same, in increasing order (Figs. 5–7 b, d).",
    "bandwidth_ratio_min": "Smallest delivered ÷ asked bandwidth over the connections with at least 10 measured packets.",
    "connections_short": "Connections that delivered 2 or more packets fewer than steady_us / IAT: starved or queued without bound (detectable only for IAT < steady_us / 2).",
    "transient_us": "End of the transient (first slice boundary after transient_packets deliveries), µs.",
    "steady_us": "Length of the steady state, µs.",
    "k_reached": "True when the lowest-bandwidth connection received k_packets in the steady state (else max_time_us ended it).",
    "lowest_delivered": "Packets the lowest-bandwidth connection received in the steady state.",
    "events": "Events simulated.",
    "sim_wall_s": "Wall time of setup, plan and simulation, s.",
}
for _sl in SLS:
    _COLUMNS[f"packets_sl{_sl}"] = f"SL {_sl}: packets in the delay sample."
    for _c, _d in zip(DELAY_COLS, DELAY_DOCS):
        _COLUMNS[f"delay_{_c}_sl{_sl}"] = f"Fig. 8, SL {_sl}: share of packets with delay ≤ {_d}."
    for _c, _d in zip(JITTER_COLS, JITTER_DOCS):
        _COLUMNS[f"jitter_{_c}_sl{_sl}"] = f"Fig. 9, SL {_sl}: share of inter-arrival times whose jitter is in {_d}."
    _COLUMNS[f"jitter_within_iat_sl{_sl}"] = f"SL {_sl}: share of jitter samples in [−IAT, IAT] (§6)."
    _COLUMNS[f"best_within_iat2_sl{_sl}"] = f"Figs. 10–12, SL {_sl}: the best connection's share of packets within IAT/2."
    _COLUMNS[f"worst_within_iat2_sl{_sl}"] = f"Figs. 10–12, SL {_sl}: the worst connection's share of packets within IAT/2."
    _COLUMNS[f"worst_within_iat_sl{_sl}"] = f"SL {_sl}: that worst connection's share of packets within IAT."

KIND = register(
    PointKind(
        name="qos_run",
        summary="Paper 001's CBR connections: set up, planned (per-port VL arbitration tables) and simulated "
        "with those tables; delivered traffic, utilizations, delay and jitter per SL (Figs. 4–12).",
        run=_run,
        sections=("fabric", "routing", "qos_run"),
        columns=_COLUMNS,
        table_columns=("established", "delivered_bytes_per_cycle_per_host", "host_util_mean", "bandwidth_ratio_min", "k_reached"),
        figures=(
            Figure("delivered", x="qos_run.connections", y="delivered_bytes_per_cycle_per_host", title="Delivered traffic", ylabel="bytes/cycle/host", xlabel="tried connections"),
            Figure("host_util", x="qos_run.connections", y="host_util_mean", title="Mean host-interface utilization", ylabel="utilization", xlabel="tried connections"),
        ),
        # The paper's Figs. 5-12 are per-point distributions; its prose states values on them.
        categories=(
            Categories(
                "utilization",
                title="Utilization (Figs. 5–7)",
                ylabel="busy fraction of the transmitter",
                xlabel="",
                categories=("host interfaces", "switch ports"),
                series=(("mean", ("host_util_mean", "switch_util_mean")), ("largest", ("host_util_max", "switch_util_max"))),
            ),
            Categories(
                "delay_distribution",
                title="Packet delay (Fig. 8)",
                ylabel="share of packets with delay ≤ threshold",
                xlabel="delay threshold",
                categories=DELAY_DOCS,
                series=tuple((f"SL {sl}", tuple(f"delay_{c}_sl{sl}" for c in DELAY_COLS)) for sl in SLS),
            ),
            Categories(
                "jitter_distribution",
                title="Jitter (Fig. 9)",
                ylabel="share of inter-arrival times",
                xlabel="jitter: inter-arrival time − IAT",
                categories=JITTER_DOCS,
                series=tuple((f"SL {sl}", tuple(f"jitter_{c}_sl{sl}" for c in JITTER_COLS)) for sl in SLS),
            ),
            Categories(
                "connections",
                title="Jitter within one IAT, best and worst connections (§6, Figs. 10–12)",
                ylabel="share of packets or samples",
                xlabel="",
                categories=tuple(f"SL {sl}" for sl in SLS),
                series=(
                    ("jitter in [−IAT, IAT]", tuple(f"jitter_within_iat_sl{sl}" for sl in SLS)),
                    ("best connection, within IAT/2", tuple(f"best_within_iat2_sl{sl}" for sl in SLS)),
                    ("worst connection, within IAT/2", tuple(f"worst_within_iat2_sl{sl}" for sl in SLS)),
                    ("worst connection, within IAT", tuple(f"worst_within_iat_sl{sl}" for sl in SLS)),
                ),
            ),
        ),
    )
)
