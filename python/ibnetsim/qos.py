"""Bandwidth reservation and VL arbitration tables per connection (paper 001).

The subnet manager of Alfaro, Sánchez and Duato ("A Strategy to Compute the
InfiniBand Arbitration Tables", 2001) admits connections one at a time and
writes each into the VL arbitration table of every output port on its path.
The computation is in the Rust core (``crates/sm/src/qos/admission``); this
module reads connection-request files and returns the results as DataFrames.

* :func:`plan` admits a list of requests on a routed fabric and returns the
  per-port tables a subnet manager would program (:class:`Plan`, printable in
  an OpenSM-style format with :meth:`Plan.to_text`).
* :func:`setup` runs the paper's connection-setup experiment: random DB (or
  DBTS) connections spread evenly over the four bandwidth SLs until N are
  established or an SL runs out of retries (:class:`SetupResult`).

Connection-request files (:func:`read_requests`) are text, one request a
line: ``source, destination, class, bandwidth``. See docs/qos.md.

Example::

    import ibnetsim as ib
    from ibnetsim import qos
    fab = ib.topology.hypercube(4, hosts_per_switch=4)
    sm = ib.SubnetManager(fab, routing="updn")
    p = qos.plan(fab, sm, [qos.Request("h0", "h17", "DB", 2_000_000)])
    print(p.to_text())
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from ibnetsim._lazy import pandas as pd

from ibnetsim import _args, _core
from ibnetsim._cliutil import plural
from ibnetsim._textfile import TextFileError, read_text
from ibnetsim.errors import ConfigError

__all__ = [
    "sl2_bands",
    "Request",
    "Plan",
    "SetupResult",
    "plan",
    "setup",
    "read_requests",
    "parse_requests",
    "parse_bandwidth",
    "CLASSES",
    "FRAME_SLOTS",
    "PAPER_BANDS_BPS",
    "PAPER_TEXT_BANDS_BPS",
    "DEFAULT_RETRY_LIMIT",
]

#: Traffic classes of paper 001 §4.1.
CLASSES = ("DBTS", "DB", "BE", "CH")

#: Slots of a frame: 64 entries × weight 255 (units of 64 bytes).
FRAME_SLOTS = 64 * 255

#: Mean-bandwidth range of each of the four SLs in the setup (paper 001 §5.2; SL 2 from §4.1, see docs/qos.md).
PAPER_BANDS_BPS = ((8_000, 64_000), (64_001, 1_550_000), (1_550_001, 64_000_000), (64_000_001, 300_000_000))
#: §5.2's ranges as printed: SL 2 from 64 kb/s (below its §4.1 class); use with ``loose_bands=True``.
PAPER_TEXT_BANDS_BPS = ((8_000, 64_000), (64_001, 1_550_000), (64_001, 64_000_000), (64_000_001, 300_000_000))


def sl2_bands(sl2_range: str) -> dict[str, Any]:
    """:func:`setup` keywords for SL 2's bandwidth range: ``"class"`` (§4.1's
    band, from 1.55 Mb/s) or ``"text"`` (§5.2 as printed, from 64 kb/s)."""
    if sl2_range == "class":
        return {}
    if sl2_range == "text":
        return {"bands": PAPER_TEXT_BANDS_BPS, "loose_bands": True}
    raise ConfigError(f"sl2_range must be 'class' or 'text', not '{sl2_range}'")

#: Refusals in a row after which an SL is exhausted in :func:`setup` (the paper does not give its value).
DEFAULT_RETRY_LIMIT = 10_000

#: The largest mean bandwidth a request may ask for: 1 Pb/s, far above any IBA link.
MAX_BANDWIDTH_BPS = 10**15

_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_BW = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgG]?)\s*(?:b/s|bps|bit/s)?\s*$")


def parse_bandwidth(text: str) -> int:
    """Bit/s of ``text``: a number with an optional decimal SI prefix and unit,
    e.g. ``64000``, ``64k``, ``1.55M``, ``300 Mb/s``, ``2.5Gbps``. Rounds to whole bit/s."""
    m = _BW.match(text)
    if not m:
        raise ValueError(f"bandwidth '{text.strip()}' is not a number with an optional k/M/G prefix (e.g. 64k, 1.55M, 300Mb/s)")
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not value <= MAX_BANDWIDTH_BPS:
        raise ValueError(f"bandwidth '{text.strip()}' is above {MAX_BANDWIDTH_BPS:.0e} b/s, more than any link carries")
    return int(round(value))


@dataclass(frozen=True)
class Request:
    """A connection request: CAs by name (or GUID), class, mean bandwidth in bit/s.

    ``sl`` admits it on that SL rather than on the one its class and bandwidth
    give (§4.1): :func:`setup` with ``loose_bands`` establishes SL 2
    connections below SL 2's class, and replaying them needs their SL.
    """

    source: str
    destination: str
    klass: str
    bandwidth_bps: int
    #: Where it came from (``file:line``), for messages.
    where: str = ""
    #: The SL to admit it on (None: from class and bandwidth).
    sl: Optional[int] = None

    def __post_init__(self) -> None:
        if self.klass.upper() not in CLASSES:
            raise ConfigError(f"{self._at()}class '{self.klass}' is not one of {', '.join(CLASSES)}")
        bw = self.bandwidth_bps
        if isinstance(bw, bool) or not isinstance(bw, int):
            raise ConfigError(f"{self._at()}bandwidth must be a whole number of b/s, not {bw!r} (parse text with parse_bandwidth)")
        if not 0 <= bw <= MAX_BANDWIDTH_BPS:
            raise ConfigError(f"{self._at()}bandwidth {bw} b/s is out of range; expected 0..={MAX_BANDWIDTH_BPS}")
        if self.klass.upper() in ("DB", "DBTS") and self.bandwidth_bps == 0:
            raise ConfigError(f"{self._at()}a {self.klass.upper()} connection needs a mean bandwidth above 0")

    def _at(self) -> str:
        return f"{self.where}: " if self.where else ""


def parse_requests(text: str, name: str = "<requests>") -> list[Request]:
    """Requests from the text of a request file (see :func:`read_requests`); errors name ``name:line``."""
    out: list[Request] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{name}:{lineno}"
        fields = [f.strip() for f in line.split(",")] if "," in line else line.split()
        if len(fields) != 4 or any(f == "" for f in fields):
            raise ConfigError(f"{where}: expected 4 fields 'source, destination, class, bandwidth', got {len(fields)}: '{line}'")
        if not out and fields[2].lower() == "class":
            continue  # a header line
        src, dst, klass, bw = fields
        try:
            bps = parse_bandwidth(bw)
        except ValueError as e:
            raise ConfigError(f"{where}: {e}") from None
        out.append(Request(src, dst, klass.upper(), bps, where))
    return out


def read_requests(path: str | os.PathLike) -> list[Request]:
    """Reads a connection-request file.

    One request a line, ``source, destination, class, bandwidth``, fields
    separated by commas or (with no comma on the line) by whitespace. ``#``
    starts a comment; blank lines are skipped; a first line whose third field
    is ``class`` is a header. Source and destination are channel adapters
    (name, GUID or description); class is DBTS, DB, BE or CH; bandwidth is the
    mean bandwidth (see :func:`parse_bandwidth`). Errors name ``file:line``.
    """
    name = os.fspath(path)
    try:
        text = read_text(path, "a connection-request file")
    except TextFileError as e:
        raise ConfigError(f"{name}:{e.line}: {e.message}" if e.line else f"{name}: {e.message}") from None
    return parse_requests(text, name)


def _check_names(fabric, requests: Sequence[Request]) -> None:
    nodes = fabric.nodes
    kind = dict(zip(nodes["name"], nodes["kind"].astype(str)))
    for r in requests:
        for role, n in (("source", r.source), ("destination", r.destination)):
            k = kind.get(n)
            if k is not None and "switch" in k.lower():
                raise ConfigError(f"{r._at()}{role} '{n}' is a switch; connections run between channel adapters")
        if r.source == r.destination:
            raise ConfigError(f"{r._at()}source and destination are both '{r.source}'")


def _subnet(fabric, sm):
    if fabric is not None and fabric._inner is not sm.fabric._inner:
        raise ConfigError("the subnet manager was configured on another fabric than the one given")
    return sm._inner


@dataclass
class Plan:
    """The outcome of :func:`plan`.

    ``connections``: the requests with ``sl``, ``accepted``, ``source_slots``
    (slots at the source CA port), ``refused_at`` (``node/port``) and ``reason``.
    ``ports``: every cabled output port with its link rate, slots reserved and
    budget, entries used and its tables as ``VL:weight`` strings.
    ``entries``: the tables in long form (node, port, priority, entry, vl, weight).
    """

    connections: pd.DataFrame
    ports: pd.DataFrame
    entries: pd.DataFrame
    sl2vl: str
    idle_vlarb_high: str
    idle_vlarb_low: str
    high_limit: int
    be_slots: int
    rate_basis: str
    #: The BE share the plan was made with (to program the same tables again).
    be_share: float = 0.2
    #: The entry limit it was made with (``table``, ``none`` or ``vl``).
    entry_limit: str = "table"

    @property
    def accepted(self) -> int:
        return int(self.connections["accepted"].sum())

    @property
    def refused(self) -> int:
        return int((~self.connections["accepted"]).sum())

    def to_text(self, all_ports: bool = False) -> str:
        """OpenSM-style text: the options every port shares, then each port's tables.

        OpenSM sets ``qos_vlarb_high``/``qos_vlarb_low`` per port class; here
        they differ per port, so each port whose tables differ from an idle
        port's (every port with ``all_ports``) gets two lines
        ``port NODE/PORT qos_vlarb_high|qos_vlarb_low TABLE``. OpenSM's parser
        (and :meth:`ibnetsim.SubnetManager.check`'s ``qos_file``) skips those
        unknown ``port`` keys, so the text is also a valid opensm.conf
        fragment giving the idle tables.
        """
        c = self.connections
        lines = [
            "# ibnetsim qos plan: VL arbitration tables after Alfaro, Sanchez, Duato (2001)",
            f"# {plural(len(c), 'request')}: {self.accepted} accepted, {self.refused} refused; "
            f"BE share {self.be_slots} of {FRAME_SLOTS} slots; link rate basis {self.rate_basis}",
        ]
        for r in c.itertuples(index=False):
            verdict = "accepted" if r.accepted else f"REFUSED at {r.refused_at} ({r.reason})"
            where = f"{r.where}: " if r.where else ""
            lines.append(f"#   {where}{r.source} -> {r.destination} {r.klass} {r.bandwidth_bps} b/s, SL {r.sl}: {verdict}")
        lines += [
            "qos TRUE",
            "qos_max_vls 15",
            f"qos_high_limit {self.high_limit}",
            f"qos_sl2vl {self.sl2vl}",
            "# tables of a port no connection uses",
            f"qos_vlarb_high {self.idle_vlarb_high}",
            f"qos_vlarb_low {self.idle_vlarb_low}",
        ]
        p = self.ports
        if not all_ports:
            p = p[(p["vlarb_high"] != self.idle_vlarb_high) | (p["vlarb_low"] != self.idle_vlarb_low)]
        lines.append(f"# per-port tables ({len(p)} ports)")
        for r in p.itertuples(index=False):
            lines.append(
                f"# {r.node}/{r.port}: {r.reserved_slots}/{r.budget_slots} slots reserved, "
                f"{r.high_entries}/64 high and {r.low_entries}/64 low entries, link {r.link_bps / 1e9:g} Gb/s"
            )
            lines.append(f"port {r.node}/{r.port} qos_vlarb_high {r.vlarb_high}")
            lines.append(f"port {r.node}/{r.port} qos_vlarb_low {r.vlarb_low}")
        return "\n".join(line.rstrip() for line in lines) + "\n"


def _request_of_tuple(r: tuple, where: str) -> Request:
    if len(r) != 4:
        raise ConfigError(f"{where}: expected (source, destination, class, bandwidth_bps), got {len(r)} fields")
    src, dst, klass, bw = r
    if isinstance(bw, str):
        try:
            bw = parse_bandwidth(bw)
        except ValueError as e:
            raise ConfigError(f"{where}: {e}") from None
    elif isinstance(bw, float):
        if not math.isfinite(bw) or not 0 <= bw <= MAX_BANDWIDTH_BPS:
            raise ConfigError(f"{where}: bandwidth {bw} b/s is out of range; expected 0..={MAX_BANDWIDTH_BPS}")
        bw = int(round(bw))
    return Request(src, dst, str(klass).upper(), bw, where)


def plan(
    fabric,
    sm,
    requests: Iterable[Request | tuple],
    be_share: float = 0.2,
    rate_basis: str = "signalling",
    high_limit: int = 255,
    entry_limit: str = "table",
) -> Plan:
    """Admits ``requests`` in order on ``sm``'s routing and returns the tables.

    A request is a :class:`Request` or a tuple ``(source, destination, class,
    bandwidth_bps)``. ``be_share`` is the frame share kept for BE (paper: 0.2);
    ``rate_basis`` is ``signalling`` (2.5 Gb/s per SDR lane, as the paper) or
    ``data`` (after encoding); ``high_limit`` is the ``LimitOfHighPriority``
    programmed on every port; ``entry_limit`` as in :func:`setup` (``none``:
    only the slot budget refuses, and what a port's 64 entries cannot hold is
    its ``overflow_slots``). A refused request is a row with ``accepted``
    False; a request that cannot be routed raises :class:`ConfigError`.
    """
    reqs = [
        dataclasses.replace(r, where=r.where or f"request {i + 1}") if isinstance(r, Request) else _request_of_tuple(r, f"request {i + 1}")
        for i, r in enumerate(requests)
    ]
    if fabric is not None:
        _check_names(fabric, reqs)
    high_limit = _args.integer("high_limit", high_limit, 0, _args.U8_MAX)
    be_share = _args.number("be_share", be_share)
    d = _core.qos_plan(
        _subnet(fabric, sm),
        [(r.source, r.destination, r.klass.upper(), r.bandwidth_bps, None if r.sl is None else int(r.sl)) for r in reqs],
        [r.where for r in reqs],
        be_share,
        rate_basis,
        high_limit,
        entry_limit,
    )
    conns = pd.DataFrame(
        {
            "where": [r.where for r in reqs],
            "source": [r.source for r in reqs],
            "destination": [r.destination for r in reqs],
            "klass": [r.klass.upper() for r in reqs],
            "bandwidth_bps": pd.array([r.bandwidth_bps for r in reqs], dtype="int64"),
            **d["connections"],
        }
    )
    return Plan(
        connections=conns,
        ports=pd.DataFrame(d["ports"]),
        entries=pd.DataFrame(d["entries"]),
        sl2vl=d["sl2vl"],
        idle_vlarb_high=d["idle_vlarb_high"],
        idle_vlarb_low=d["idle_vlarb_low"],
        high_limit=d["high_limit"],
        be_slots=d["be_slots"],
        rate_basis=rate_basis,
        be_share=be_share,
        entry_limit=entry_limit,
    )


@dataclass
class SetupResult:
    """The outcome of :func:`setup`.

    ``per_sl``: one row per SL with ``tried``, ``established``,
    ``refused_bandwidth``, ``refused_entries`` and ``mean_bandwidth_bps`` of
    the accepted connections. ``ports``: every output port's use at the end.
    ``exhausted_sl`` is the SL that ran out of retries first (None if N were
    established). ``connections``: the established connections in admission
    order (``source``, ``destination``, ``sl``, ``bandwidth_bps``); :meth:`requests`
    makes them requests that :func:`plan` (same ``be_share``, ``rate_basis``
    and ``entry_limit``) admits again into the same tables.
    """

    target: int
    per_sl: pd.DataFrame
    ports: pd.DataFrame
    exhausted_sl: Optional[int]
    connections: pd.DataFrame
    klass: str = "DB"

    def requests(self) -> list[Request]:
        """The established connections as requests on their SLs, named ``setup 1``, ``setup 2``, …"""
        c = self.connections
        return [
            Request(s, d, self.klass, int(bw), f"setup {i + 1}", int(sl))
            for i, (s, d, sl, bw) in enumerate(zip(c["source"], c["destination"], c["sl"], c["bandwidth_bps"]))
        ]

    @property
    def established(self) -> int:
        return int(self.per_sl["established"].sum())

    @property
    def tried(self) -> int:
        return int(self.per_sl["tried"].sum())


def setup(
    fabric,
    sm,
    connections: int,
    retry_limit: int = DEFAULT_RETRY_LIMIT,
    seed: int = 1,
    be_share: float = 0.2,
    rate_basis: str = "signalling",
    klass: str = "DB",
    stop: str = "all",
    bands: Optional[Sequence[tuple[int, int]]] = None,
    order: str = "balanced",
    entry_limit: str = "table",
    source_port: str = "checked",
    loose_bands: bool = False,
) -> SetupResult:
    """Paper 001's connection setup: try to establish ``connections`` connections.

    Each try is for the SL with the fewest established connections
    (``order="balanced"``; ``"cyclic"`` gives the SLs one try each in turn,
    ``"random"`` draws the SL per try); source and destination are drawn
    uniformly among the CAs, the mean bandwidth uniformly in the SL's range
    (``bands``, default :data:`PAPER_BANDS_BPS`; ``loose_bands=True`` lets a
    range leave its SL's class, as :data:`PAPER_TEXT_BANDS_BPS` does). After
    ``retry_limit`` refusals in a row an SL is exhausted: with ``stop="all"``
    (the paper) setup ends, with ``stop="level"`` only that SL stops.
    ``klass`` is ``DB`` (SLs 0–3, low table) or ``DBTS`` (SLs 4–7, high table).
    ``entry_limit="none"`` lets only the slot budget refuse (the paper's
    "only the available bandwidth"; what the 64 entries cannot hold is the
    ports' ``overflow_slots``); ``entry_limit="vl"`` also refuses a connection
    whose VL would have no entry on a port (never served there, it would
    starve); ``source_port="unchecked"`` admits on switch output ports only.
    """
    d = _core.qos_setup(
        _subnet(fabric, sm),
        _args.integer("connections", connections, 0, _args.U32_MAX),
        _args.integer("retry_limit", retry_limit, 1, _args.U32_MAX),
        _args.integer("seed", seed, 0, _args.U64_MAX),
        _args.number("be_share", be_share),
        rate_basis,
        klass.upper(),
        stop,
        [tuple(_args.integer(f"bands[{i}]", x, 0, _args.U64_MAX) for x in b) for i, b in enumerate(bands)] if bands is not None else None,
        order,
        entry_limit,
        source_port,
        bool(loose_bands),
    )
    est = d["established"]
    bw = d["bandwidth_bps"]
    per_sl = pd.DataFrame(
        {
            "sl": [d["first_sl"] + b for b in range(4)],
            "tried": d["tried"],
            "established": est,
            "refused_bandwidth": d["refused_bandwidth"],
            "refused_entries": d["refused_entries"],
            "mean_bandwidth_bps": [bw[b] / est[b] if est[b] else float("nan") for b in range(4)],
        }
    )
    ex = d["exhausted"]
    return SetupResult(
        target=d["target"],
        per_sl=per_sl,
        ports=pd.DataFrame(d["ports"]),
        exhausted_sl=None if ex < 0 else d["first_sl"] + ex,
        connections=pd.DataFrame(d["connections"]),
        klass=klass.upper(),
    )
