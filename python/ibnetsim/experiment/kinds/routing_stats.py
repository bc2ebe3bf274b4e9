"""Point kind ``routing_stats``: path-length, channel-load and routing-option statistics of a routing.

One point builds a fabric (a generator or a file), runs the subnet manager
(engine, LMC, root) and ``check`` on it, and returns what the check measured:
hop counts and stretch against the shortest path, the non-minimal fraction,
the channel load of uniform traffic and its throughput bound, and whether the
channel dependency graph has a cycle (a possible credit loop).

It adds one measurement of its own: the *routing options* of paper 002
(Martínez et al., IPDPS 2003, §5.2.2 and Table 2). For each switch and each
destination host on another switch, the options of the fully adaptive (FA)
routing are the output ports on minimal paths plus the port of the escape
path, which is the port in the forwarding table (up*/down* in the paper). The
paper tabulates the share of (switch, destination) pairs with 1, 2, 3 or 4
options, capped at the table's maximum MR; we return the uncapped shares so
any cap can be derived (``options_pct_3 + options_pct_4plus`` is MR = 3's
"3"). Two switches share at most one link in these fabrics, so a neighbour is
an output port.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Optional

from ibnetsim._lazy import numpy as np

from ibnetsim.experiment.kinds import Figure, PointKind, register

__all__ = ["build_fabric", "build_subnet", "routing_options", "flatten_check"]

_GENERATORS = ("irregular", "mesh", "hypercube", "fat_tree", "ring", "single_switch")


def build_fabric(spec: dict):
    """The fabric of a resolved ``[fabric]`` section."""
    from ibnetsim import topology

    kind = spec["kind"]
    if kind == "file":
        links = {k: spec.get(k) for k in ("link_width", "link_speed", "cable_length_m", "cable_lengths") if spec.get(k) is not None}
        return topology.read(spec["path"], spec.get("ibnl_dirs") or [], **links)
    params = {k: v for k, v in spec.items() if k != "kind" and v is not None}
    link = {k: params.pop(k) for k in ("link_width", "link_speed", "cable_length_m") if k in params}
    if kind == "irregular":
        return topology.irregular(**params, **link)
    if kind == "mesh":
        maker = topology.torus if params.pop("torus", False) else topology.mesh
        return maker(params.pop("dims"), **params, **link)
    return topology.generate(kind, **params, **link)


def build_subnet(fabric, spec: dict):
    """The subnet manager of a resolved ``[routing]`` section, configured on ``fabric``."""
    from ibnetsim import SubnetManager

    return SubnetManager(
        fabric,
        routing=spec["engine"],
        lmc=spec["lmc"],
        root=list(spec["root"]) or None,
        lfts_file=spec.get("lfts_file"),
        fdbs_key=spec.get("fdbs_key"),
        seed=spec["seed"],
        max_vls=spec.get("max_vls"),
        lash_start_vl=spec.get("lash_start_vl"),
        lid_order=spec.get("lid_order", "ibnetsim"),
        torus_config=spec.get("torus_config"),
    )


def routing_options(fabric, sm) -> dict[str, float]:
    """Shares (percent) of (switch, remote destination host) pairs by number of FA routing options.

    Options = ports on minimal switch paths ∪ {the forwarding table's port}.
    """
    nodes = fabric.nodes
    links = fabric.links
    is_switch = dict(zip(nodes["name"], nodes["kind"].str.lower().str.contains("switch")))
    switches = sm.switches
    sidx = {s: i for i, s in enumerate(switches)}
    n = len(switches)
    nbr: list[dict[int, int]] = [dict() for _ in range(n)]  # switch -> {neighbour switch: port}
    host_at: dict[str, tuple[int, int]] = {}  # host -> (switch, switch port)
    for a, pa, b, pb in zip(links["node_a"], links["port_a"], links["node_b"], links["port_b"]):
        sa, sb = is_switch.get(a, False), is_switch.get(b, False)
        if sa and sb:
            if a == b:
                continue
            nbr[sidx[a]].setdefault(sidx[b], int(pa))
            nbr[sidx[b]].setdefault(sidx[a], int(pb))
        elif sa:
            host_at[b] = (sidx[a], int(pa))
        elif sb:
            host_at[a] = (sidx[b], int(pb))
    dist = np.full((n, n), -1, dtype=np.int64)
    for src in range(n):
        dist[src, src] = 0
        q = deque([src])
        while q:
            u = q.popleft()
            for v in nbr[u]:
                if dist[src, v] < 0:
                    dist[src, v] = dist[src, u] + 1
                    q.append(v)
    lids = sm.lids
    base = {}
    for node, lid in zip(lids["node"], lids["base_lid"]):
        base.setdefault(node, int(lid))
    lft = sm.lft
    counts = np.zeros(8, dtype=np.int64)
    min_ports_total = 0
    escape_minimal = 0
    pairs = 0
    for host, (d, _) in host_at.items():
        lid = base.get(host)
        if lid is None:
            continue
        for s in range(n):
            if s == d or dist[s, d] < 0:
                continue
            minimal = {p for t, p in nbr[s].items() if dist[t, d] == dist[s, d] - 1}
            esc = int(lft[s, lid]) if lid < lft.shape[1] else 255
            opts = set(minimal)
            if esc != 255:
                opts.add(esc)
                escape_minimal += esc in minimal
            counts[min(len(opts), 7)] += 1
            min_ports_total += len(minimal)
            pairs += 1
    if pairs == 0:
        return {}
    pct = counts * 100.0 / pairs
    return {
        "options_pct_1": float(pct[1]),
        "options_pct_2": float(pct[2]),
        "options_pct_3": float(pct[3]),
        "options_pct_4plus": float(pct[4:].sum()),
        "minimal_ports_mean": min_ports_total / pairs,
        "escape_minimal_pct": escape_minimal * 100.0 / pairs,
        "option_pairs": pairs,
    }


#: Most routing options (MR) whose shares :func:`table_options` reports.
MAX_TABLE_OPTIONS = 4


def table_options(fabric, sm) -> dict[str, Optional[float]]:
    """Shares (percent) of (switch, remote destination host) pairs by the
    number of distinct output ports among the forwarding-table entries of the
    host's first MR LIDs, for MR = 2 .. min(4, 2^LMC): ``table_mr{MR}_pct_{k}``.

    With the ``fa`` engine these are paper 002's routing options read from the
    tables a switch would use (offset 0 the escape port, offsets 1.. the
    adaptive ones): its Table 2 row for MR. Pairs at the host's own switch are
    left out, as in the paper. None where 2^LMC < MR.
    """
    lids = sm.lids
    lft = sm.lft
    nodes = fabric.nodes
    is_ca = dict(zip(nodes["name"], ~nodes["kind"].str.lower().str.contains("switch")))
    sidx = {name: i for i, name in enumerate(sm.switches)}
    links = fabric.links
    home: dict[str, int] = {}
    for a, b in zip(links["node_a"], links["node_b"]):
        if is_ca.get(a) and b in sidx:
            home[a] = sidx[b]
        elif is_ca.get(b) and a in sidx:
            home[b] = sidx[a]
    out: dict[str, Optional[float]] = {f"table_mr{mr}_pct_{k}": None for mr in range(2, MAX_TABLE_OPTIONS + 1) for k in range(1, mr + 1)}
    ports = [(int(lid), int(lmc), home[node]) for node, lid, lmc in zip(lids["node"], lids["base_lid"], lids["lmc"]) if node in home]
    if not ports or ports[0][1] == 0:
        return out
    for mr in range(2, min(MAX_TABLE_OPTIONS, 1 << ports[0][1]) + 1):
        counts = np.zeros(mr + 1, dtype=np.int64)
        for base, _, at in ports:
            block = lft[:, base : base + mr]
            for s in range(lft.shape[0]):
                if s == at:
                    continue
                distinct = {int(p) for p in block[s] if p != 255}
                counts[len(distinct)] += 1
        pairs = counts.sum()
        for k in range(1, mr + 1):
            out[f"table_mr{mr}_pct_{k}"] = float(counts[k] * 100.0 / pairs) if pairs else 0.0
    return out


def flatten_check(report: dict) -> dict[str, Any]:
    """The statistics of a :meth:`ibnetsim.SubnetManager.check` report as result columns."""
    paths = report["paths"]
    load = report["channel_load"]
    loops = report["credit_loops"]
    out: dict[str, Any] = {
        key: paths[key]
        for key in (
            "pairs",
            "unreachable_pairs",
            "loop_pairs",
            "min_hops",
            "mean_hops",
            "max_hops",
            "non_minimal_pairs",
            "non_minimal_fraction",
            "mean_stretch",
            "max_stretch",
        )
    }
    out["hop_histogram"] = [float(x) for x in paths["hop_histogram"]]
    out["max_channel_load"] = load["max_load"]
    out["mean_channel_load"] = load["mean_load"]
    out["mean_switch_link_load"] = load["mean_switch_link_load"]
    out["throughput_bound"] = load["throughput_bound"]
    out["cyclic_sccs"] = loops["cyclic_sccs"]
    out["credit_loop"] = loops["cyclic_sccs"] > 0
    out["ok"] = not report["has_defects"]
    return out


def _run(config: dict) -> dict:
    fabric = build_fabric(config["fabric"])
    sm = build_subnet(fabric, config["routing"])
    chk = config["check"]
    report = sm.check(data_vls=chk["data_vls"], qos_file=chk.get("qos_file"), spread_lmc=chk["spread_lmc"]).to_dict()
    out = {
        "switches": fabric.num_switches,
        "cas": fabric.num_cas,
        "links": fabric.num_links,
    }
    out.update(flatten_check(report))
    out.update(routing_options(fabric, sm))
    out.update(table_options(fabric, sm))
    return out


def _check(config: dict) -> Optional[tuple[str, str]]:
    r = config["routing"]
    f = config["fabric"]
    if r["engine"] == "dor" and f["kind"] not in ("mesh", "hypercube", "file"):
        return ("routing.engine", f"engine 'dor' routes meshes, tori and hypercubes, not a fabric of kind '{f['kind']}'")
    return None


KIND = register(
    PointKind(
        name="routing_stats",
        summary="Build a fabric, route it with the subnet manager and return `check`'s path-length, "
        "channel-load and credit-loop statistics, plus the FA routing options of paper 002 (Table 2).",
        run=_run,
        sections=("fabric", "routing", "check"),
        required=("fabric",),
        check=_check,
        columns={
            "switches": "Switches in the fabric.",
            "cas": "Channel adapters.",
            "links": "Links (switch-switch and switch-CA).",
            "pairs": "CA-to-CA (source port, destination LID) pairs traced.",
            "unreachable_pairs": "Pairs the tables do not deliver.",
            "loop_pairs": "Pairs caught in a forwarding loop.",
            "min_hops": "Shortest delivered route, in switch hops.",
            "mean_hops": "Mean switch hops over delivered pairs, as routed.",
            "max_hops": "Longest delivered route, in switch hops.",
            "hop_histogram": "List: delivered pairs by number of switch hops.",
            "non_minimal_pairs": "Delivered pairs routed longer than the shortest path.",
            "non_minimal_fraction": "non_minimal_pairs ÷ delivered pairs.",
            "mean_stretch": "Mean of routed hops ÷ shortest hops.",
            "max_stretch": "Largest routed ÷ shortest ratio.",
            "max_channel_load": "Highest load on a directed link under uniform all-to-all traffic (1.0 = the link's data rate, every source injecting at full rate).",
            "mean_channel_load": "Mean load over every directed link.",
            "mean_switch_link_load": "Mean load over directed switch-to-switch links.",
            "throughput_bound": "1 ÷ max_channel_load, capped at 1: the uniform injection rate every source can sustain; no simulation may accept more.",
            "cyclic_sccs": "Strongly connected components with a cycle in the channel dependency graph.",
            "credit_loop": "True when the channel dependency graph over (link, VL) has a cycle (the routing can deadlock).",
            "ok": "True when `check` found no defect.",
            "options_pct_1": "Percent of (switch, remote host) pairs with 1 FA routing option (paper 002 Table 2).",
            "options_pct_2": "… with 2 options.",
            "options_pct_3": "… with 3 options.",
            "options_pct_4plus": "… with 4 or more options.",
            "minimal_ports_mean": "Mean number of output ports on minimal paths per (switch, remote host).",
            "escape_minimal_pct": "Percent of pairs whose table port is on a minimal path.",
            "option_pairs": "(switch, remote host) pairs counted for the options.",
            **{
                f"table_mr{mr}_pct_{k}": f"With LMC ≥ 1 (MR ≤ 2^LMC): percent of (switch, remote host) pairs whose first {mr} LIDs' table entries hold {k} distinct ports (the `fa` engine's routing options, paper 002 Table 2 row MR = {mr})."
                for mr in range(2, MAX_TABLE_OPTIONS + 1)
                for k in range(1, mr + 1)
            },
        },
        table_columns=("mean_hops", "max_hops", "max_channel_load", "throughput_bound", "credit_loop"),
        figures=(
            Figure("mean_hops", x="fabric.switches", y="mean_hops", title="Mean path length", ylabel="mean hops"),
            Figure("non_minimal", x="fabric.switches", y="non_minimal_fraction", title="Pairs on non-minimal paths", ylabel="fraction of CA pairs"),
            Figure("stretch", x="fabric.switches", y="mean_stretch", title="Mean path stretch", ylabel="routed ÷ shortest hops"),
            Figure("max_channel_load", x="fabric.switches", y="max_channel_load", title="Maximum channel load (uniform traffic)", ylabel="load per unit injection"),
            Figure("throughput_bound", x="fabric.switches", y="throughput_bound", title="Channel-load throughput bound", ylabel="fraction of injection bandwidth"),
        ),
    )
)
