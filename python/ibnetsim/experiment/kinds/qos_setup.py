"""Point kind ``qos_setup``: how many of N requested CBR connections a network accepts.

Paper 001 (Alfaro, Sánchez, Duato 2001, §5.2–5.3, Table 2; Tables 3 and 4 in
its appendix) reserves slots of the VL arbitration frame for every connection
on every output port of its path and refuses a connection when a port lacks
slots or table entries. One point builds the network, routes it, and runs
:func:`ibnetsim.qos.setup`: connections spread evenly over the four bandwidth
SLs until ``connections`` are established or an SL exhausts its retries. No
packets are simulated; the result is the control plane's accepted count
(Table 2's "established" for each "tried").

The network is ``[fabric]``, or one of the paper's three 16-switch networks
(§5.1: 8-port switches with 4 hosts each) named by ``qos_setup.network``:
``irregular`` (random, 4 links per switch, topology seed = the point's seed),
``hypercube`` (4-D) or ``mesh`` (4 × 4), with links of ``qos_setup.link_width``.
A scenario cannot sweep ``[fabric].kind``, which is why the paper's networks
are a key here: one scenario covers the three columns of the table.
"""

from __future__ import annotations

from typing import Optional

from ibnetsim.experiment.kinds import Figure, PointKind, register
from ibnetsim.experiment.kinds.routing_stats import build_fabric, build_subnet
from ibnetsim.experiment.schema import FROM_SEED, Key, Section, register_section

__all__ = ["paper_network", "PAPER_NETWORKS"]

#: The networks of paper 001 §5.1 (16 switches of 8 ports, 4 hosts each).
PAPER_NETWORKS = ("irregular", "hypercube", "mesh")


def paper_network(name: str, link_width: str, seed: int):
    """One of paper 001's 16-switch networks with ``link_width`` SDR links."""
    from ibnetsim import topology

    link = {"link_width": link_width, "link_speed": "SDR"}
    if name == "irregular":
        return topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=seed, **link)
    if name == "hypercube":
        return topology.hypercube(4, hosts_per_switch=4, **link)
    if name == "mesh":
        return topology.mesh([4, 4], hosts_per_switch=4, **link)
    raise ValueError(f"unknown paper network '{name}' (one of {', '.join(PAPER_NETWORKS)})")


def _check_qos_setup(s: dict, cfg: dict) -> Optional[tuple[str, str]]:
    if s["network"] == "fabric" and "fabric" not in cfg:
        return ("network", "network = \"fabric\" builds the [fabric] section, which is missing; add it or name a paper network")
    if s["network"] != "fabric" and "fabric" in cfg:
        return ("network", f"network = \"{s['network']}\" is one of the paper's networks; drop the [fabric] section or set network = \"fabric\"")
    return None


QOS_SETUP = register_section(
    Section(
        "qos_setup",
        "Paper 001's connection setup (`ibnetsim.qos.setup`): random CBR connections, spread evenly over the "
        "four bandwidth SLs, admitted against the VL arbitration frame of every port on their path.",
        keys=(
            Key("connections", "int", "N: connections to establish (the paper's \"tried\").", min=0),
            Key(
                "network",
                "str",
                "`fabric` uses [fabric]; `irregular`, `hypercube` or `mesh` builds paper 001's 16-switch network (8-port switches, 4 hosts each).",
                default="fabric",
                choices=("fabric",) + PAPER_NETWORKS,
            ),
            Key("link_width", "str", "Link width of the paper networks (ignored with network = \"fabric\").", default="1x", choices=("1x", "4x", "12x")),
            Key("retry_limit", "int", "Refusals in a row after which an SL is exhausted (the paper does not give its value).", default=10_000, min=1),
            Key("stop", "str", "`all`: an exhausted SL ends the setup (the paper); `level`: only that SL stops.", default="all", choices=("all", "level")),
            Key(
                "sl_order",
                "str",
                "Which SL each try is for: `balanced` (the SL with the fewest established; a refused try is retried for the same SL), "
                "`cyclic` (SLs in turn, one try each) or `random` (uniform per try).",
                default="balanced",
                choices=("balanced", "cyclic", "random"),
            ),
            Key(
                "entry_limit",
                "str",
                "`table`: a port whose 64 arbitration-table entries cannot hold a connection's slots refuses it (IBA); "
                "`none`: only the slot budget refuses (paper 001 §4.2: entries are \"not a limitation\"); "
                "`vl`: as `none`, but a port where the connection's VL would have no entry (never served) refuses it.",
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
            Key(
                "source_port",
                "str",
                "`checked`: the source CA's output port is admitted like the switch ports; `unchecked`: switch output ports only.",
                default="checked",
                choices=("checked", "unchecked"),
            ),
            Key("traffic_class", "str", "`DB` (SLs 0–3, low-priority table) or `DBTS` (SLs 4–7, high-priority table).", default="DB", choices=("DB", "DBTS")),
            Key("be_share", "float", "Share of every port's frame kept for best effort (paper: 0.2).", default=0.2, min=0.0, max=0.98),
            Key(
                "rate_basis",
                "str",
                "B_link: `signalling` (2.5 Gb/s per SDR lane, as the paper) or `data` (after encoding).",
                default="signalling",
                choices=("signalling", "data"),
            ),
            Key("seed", "int", "Seed of the draws (and of the irregular paper network).", default=FROM_SEED, min=0, max=2**63 - 1),
        ),
        checks=(_check_qos_setup,),
    )
)


def network_of(config: dict, c: dict):
    """The fabric and subnet manager of a point: ``[fabric]``, or the paper
    network ``c["network"]`` with ``c["link_width"]`` links, routed by ``[routing]``."""
    fabric = build_fabric(config["fabric"]) if c["network"] == "fabric" else paper_network(c["network"], c["link_width"], c["seed"])
    return fabric, build_subnet(fabric, config["routing"])


def _run(config: dict) -> dict:
    from ibnetsim import qos

    c = config["qos_setup"]
    fabric, sm = network_of(config, c)
    r = qos.setup(
        fabric,
        sm,
        c["connections"],
        retry_limit=c["retry_limit"],
        seed=c["seed"],
        be_share=c["be_share"],
        rate_basis=c["rate_basis"],
        klass=c["traffic_class"],
        stop=c["stop"],
        order=c["sl_order"],
        entry_limit=c["entry_limit"],
        source_port=c["source_port"],
        **qos.sl2_bands(c["sl2_range"]),
    )
    ps = r.ports
    hosts = ps[~ps["is_switch"]]
    switches = ps[ps["is_switch"]]
    accepted_bps = float((r.per_sl["mean_bandwidth_bps"].fillna(0) * r.per_sl["established"]).sum())
    host_rate = float(hosts["link_bps"].mean()) if len(hosts) else float("nan")
    out = {
        "established": r.established,
        "tried": r.tried,
        "all_established": r.established == r.target,
        "exhausted_sl": -1 if r.exhausted_sl is None else r.exhausted_sl,
        "refused_bandwidth": int(r.per_sl["refused_bandwidth"].sum()),
        "refused_entries": int(r.per_sl["refused_entries"].sum()),
        "hosts": len(hosts),
        "accepted_gbps": accepted_bps / 1e9,
        "accepted_per_host_link": accepted_bps / (len(hosts) * host_rate) if len(hosts) else float("nan"),
        "host_reserved_fraction": float((hosts["reserved_slots"] / hosts["budget_slots"]).mean()),
        "switch_reserved_fraction": float((switches["reserved_slots"] / switches["budget_slots"]).mean()),
        "host_low_entries_mean": float(hosts["low_entries"].mean()),
        "overflow_slots_max": int(ps["overflow_slots"].max()) if len(ps) else 0,
    }
    for row in r.per_sl.itertuples(index=False):
        b = row.sl % 4
        out[f"established_b{b}"] = int(row.established)
        out[f"tried_b{b}"] = int(row.tried)
        out[f"mean_mbps_b{b}"] = float(row.mean_bandwidth_bps) / 1e6
    return out


_COLUMNS = {
    "established": "Connections established.",
    "tried": "Connections tried (established + refused), over all SLs.",
    "all_established": "True when all N were established.",
    "exhausted_sl": "The SL that ran out of retries first, or -1.",
    "refused_bandwidth": "Tries refused because a port lacked slots.",
    "refused_entries": "Tries refused because a port had the slots but not the free table entries.",
    "hosts": "Channel adapters of the network.",
    "accepted_gbps": "Sum of the accepted mean bandwidths, Gb/s.",
    "accepted_per_host_link": "Accepted bandwidth per host as a fraction of the host link rate (B_link): the CBR load the paper's Figure 4 delivers.",
    "host_reserved_fraction": "Mean over CA ports of reserved / reservable slots.",
    "switch_reserved_fraction": "Mean over switch ports of reserved / reservable slots.",
    "host_low_entries_mean": "Mean low-table entries in use at CA ports (BE and CH included; 64 is full).",
    "overflow_slots_max": "Largest number of reserved slots on one port that its 64 table entries do not hold (only with entry_limit = \"none\").",
}
for _b in range(4):
    _COLUMNS[f"established_b{_b}"] = f"Connections established in bandwidth band {_b} (SL {_b} for DB, {_b + 4} for DBTS)."
    _COLUMNS[f"tried_b{_b}"] = f"Tries in band {_b}."
    _COLUMNS[f"mean_mbps_b{_b}"] = f"Mean bandwidth of the accepted band-{_b} connections, Mb/s."

KIND = register(
    PointKind(
        name="qos_setup",
        summary="Paper 001's connection setup: random CBR connections admitted against the VL arbitration "
        "frame of every port on their path; tried vs established per SL (Table 2). Control plane only.",
        run=_run,
        sections=("fabric", "routing", "qos_setup"),
        columns=_COLUMNS,
        table_columns=("tried", "established", "accepted_per_host_link", "refused_bandwidth", "refused_entries"),
        figures=(
            Figure("established", x="qos_setup.connections", y="established", title="Established vs tried connections", ylabel="established", xlabel="tried"),
            Figure("load", x="qos_setup.connections", y="accepted_per_host_link", title="Reserved CBR load per host", ylabel="fraction of the link", xlabel="tried"),
        ),
    )
)
