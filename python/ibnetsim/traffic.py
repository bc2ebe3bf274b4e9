"""Traffic classes for :func:`ibnetsim.simulate`.

Each function returns one class as a plain dict (the ``traffic.classes``
entries of the simulation config; its keys are the core's, as a scenario's
``[traffic]`` table writes them); pass one or a list of them as ``traffic=``.
``load`` is the offered load per source as a fraction of its link's data rate,
counted in wire bytes (payload + 26 B of LRH/BTH/ICRC/VCRC).

``payload_bytes`` is a fixed payload, or a distribution drawn per packet:
``empirical_sizes([(32, 1), (256, 1)])`` (paper 002's 32 B / 256 B mix) or
``uniform_sizes(32, 256)``. With a distribution the arrival rate follows the
mean wire size, so ``load`` stays the offered fraction of the link rate.

:func:`trace` replays messages from a text file (format in docs/formats.md,
"Traffic traces") and :func:`closed_loop` sends messages with a window of
outstanding ones; both mix with the open-loop classes in the same list. In
the results, traces come after the open-loop classes, then closed-loop classes.

Hosts are numbered in fabric order (cabled CA ports, node by node). The bit
permutations (``bit_reversal``, ``bit_complement``, ``transpose``,
``perfect_shuffle``) need a power-of-two number of hosts; a host that a
permutation maps onto itself does not send in that class.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from ibnetsim import _args, _core

__all__ = [
    "empirical_sizes",
    "uniform_sizes",
    "trace",
    "is_trace",
    "closed_loop",
    "is_closed_loop",
    "connection",
    "is_connection",
    "multicast",
    "PATTERNS",
    "pattern",
    "uniform",
    "fixed_pairs",
    "bit_reversal",
    "bit_complement",
    "transpose",
    "perfect_shuffle",
    "tornado",
    "hot_spot",
    "random_permutation",
]

#: The destination patterns a class names (the core's registry); ``multicast``
#: is left out because it also needs a group on the subnet manager
#: (:func:`multicast`), which a pattern name alone cannot set up.
PATTERNS = tuple(p for p in _core.sim_registries()["patterns"] if p != "multicast")


Sizes = Union[int, dict]


def empirical_sizes(sizes: Union[Mapping[int, float], Sequence[tuple[int, float]]]) -> dict[str, Any]:
    """Payloads drawn per packet from ``(payload bytes, weight)`` pairs (or a
    ``{bytes: weight}`` mapping); weights need not add up to 1. Each size must
    fit the MTU (256 B on VL15)."""
    pairs = list(sizes.items() if isinstance(sizes, Mapping) else sizes)
    return {
        "payload_sizes": [_args.integer(f"payload_sizes[{i}]", b, 0, _args.U32_MAX) for i, (b, _) in enumerate(pairs)],
        "payload_size_weights": [_args.number(f"payload_size_weights[{i}]", w) for i, (_, w) in enumerate(pairs)],
    }


def uniform_sizes(min_bytes: int, max_bytes: int) -> dict[str, Any]:
    """Payloads drawn per packet uniformly from ``min_bytes..=max_bytes``."""
    return {"payload_size_range": [_args.integer("min_bytes", min_bytes, 0, _args.U32_MAX), _args.integer("max_bytes", max_bytes, 0, _args.U32_MAX)]}


def _size_keys(payload_bytes: Sizes) -> dict[str, Any]:
    if isinstance(payload_bytes, dict):
        return dict(payload_bytes)
    return {"payload_bytes": _args.integer("payload_bytes", payload_bytes, 0, _args.U32_MAX)}


def pattern(
    kind: str,
    load: float,
    payload_bytes: Sizes = 256,
    sl: int = 0,
    process: str = "poisson",
    name: Optional[str] = None,
    path_bits: str = "base",
    adaptive_fraction: float = 0.0,
    **pattern_params: Any,
) -> dict[str, Any]:
    """A class sending ``payload_bytes`` of payload per packet (a number, or a
    distribution from :func:`empirical_sizes` / :func:`uniform_sizes`) to
    destinations drawn by the pattern ``kind``, whose parameters are keyword
    arguments named as the keys (``hot_hosts``, ``hot_fraction``,
    ``tornado_dims``, ``pairs``, ``permutation_seed``, ``mlid``). ``adaptive_fraction`` of the packets go
    to the destination's adaptive LID (base + 1, for ``fully-adaptive``
    switches and the ``fa`` routing engine; paper 002), the rest to its base
    LID."""
    cls = {
        "name": name or kind,
        "sl": _args.integer("sl", sl, 0, _args.U8_MAX),
        "load": _args.number("load", load),
        "process": process,
        **_size_keys(payload_bytes),
        "pattern": kind,
        **pattern_params,
        "path_bits": path_bits,
    }
    adaptive_fraction = _args.number("adaptive_fraction", adaptive_fraction)
    if adaptive_fraction:
        cls["adaptive_fraction"] = adaptive_fraction
    return cls


def trace(path: Union[str, os.PathLike], time_scale: float = 1.0, name: Optional[str] = None) -> dict[str, Any]:
    """Replays the messages of the trace file ``path``: one per line,
    ``time_ns source destination bytes sl`` (docs/formats.md, "Traffic
    traces"). Messages larger than the MTU are split into MTU packets.
    ``time_scale`` multiplies every time (0.5 replays twice as fast: paper
    003's time compression). ``name`` labels the results (default: the file
    name without extension). The path is made absolute now, so a later change
    of directory does not matter; the file is read when the simulation is
    built, and a bad line raises :class:`ibnetsim.ConfigError` naming
    ``file:line``."""
    p = Path(path).absolute()
    return {"name": name if name is not None else p.stem, "file": str(p), "time_scale": _args.number("time_scale", time_scale)}


def closed_loop(
    window: int = 1,
    message_bytes: int = 2048,
    gap_ns: float = 0.0,
    pattern: str = "uniform",
    sl: int = 0,
    name: Optional[str] = None,
    path_bits: str = "base",
    gap_distribution: str = "constant",
    **pattern_params: Any,
) -> dict[str, Any]:
    """A closed-loop class: every sending host keeps at most ``window``
    (1 … 65 536) messages of ``message_bytes`` outstanding (split into MTU packets), and
    sends the next one a gap after one completes: ``gap_ns``, or drawn per
    message with that mean when ``gap_distribution`` is ``"exponential"`` or
    ``"uniform"`` (on [0, 2·gap_ns]). Destinations are drawn by ``pattern``
    with its parameters as keyword arguments (as in :func:`pattern`). A message completes when its last packet
    is delivered, or, with ``transport={"ack": "packet"}`` or ``"message"``,
    when its acknowledgement is back. Results report each class's
    ``messages_completed``, its ``message_completion`` time (generation →
    completion) and its ``message_network_latency`` (first packet injected →
    last packet in, as ib_flit_sim measures it). ``window=1`` is
    ib_flit_sim's generator, which waits for its previous message."""
    return {
        "name": name or f"closed-loop-{pattern}",
        "sl": _args.integer("sl", sl, 0, _args.U8_MAX),
        "pattern": pattern,
        **pattern_params,
        "window": _args.integer("window", window, 0, _args.U32_MAX),
        "message_bytes": _args.integer("message_bytes", message_bytes, 0, _args.U32_MAX),
        "gap_ns": _args.number("gap_ns", gap_ns),
        "gap_distribution": _args.choice("gap_distribution", gap_distribution, _core.sim_registries()["gap_distributions"]),
        "path_bits": path_bits,
    }


def is_closed_loop(cls: Mapping[str, Any]) -> bool:
    """Whether a class dict is a closed-loop class (from :func:`closed_loop`),
    kept in ``traffic.closed_loop``."""
    return "window" in cls


def connection(source: str, destination: str, bandwidth_bps: int, packet_bytes: int = 256, sl: int = 0) -> dict[str, Any]:
    """A constant-bit-rate connection from host ``source`` to ``destination``
    (``node`` or ``node:port``): packets of ``packet_bytes`` on the wire,
    headers included, at a mean of ``bandwidth_bps`` bit/s with a random
    phase (paper 001's CBR sources; docs/traffic.md). All connections of a
    run together are one class, ``connections``, and each is also measured
    on its own (``SimResult.connections``)."""
    return {
        "source": source,
        "destination": destination,
        "sl": _args.integer("sl", sl, 0, _args.U8_MAX),
        "bandwidth_bps": _args.integer("bandwidth_bps", bandwidth_bps, 0, _args.U64_MAX),
        "packet_bytes": _args.integer("packet_bytes", packet_bytes, 0, _args.U32_MAX),
    }


def is_connection(cls: Mapping[str, Any]) -> bool:
    """Whether a class dict is a CBR connection (from :func:`connection`),
    kept in ``traffic.connections``."""
    return "bandwidth_bps" in cls


def is_trace(cls: Mapping[str, Any]) -> bool:
    """Whether a class dict is a trace (from :func:`trace`), which the
    simulation config keeps in ``traffic.traces`` rather than ``traffic.classes``."""
    return "file" in cls


def multicast(mlid: int, load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """Every member of the multicast group ``mlid`` sends to the group (set it
    up with ``SubnetManager(..., multicast_groups={mlid: [hosts]})``); the
    switches replicate each packet along the group's tree, and every other
    member receives one copy. Accepted traffic counts every copy delivered."""
    return pattern("multicast", load, payload_bytes, mlid=_args.integer("mlid", mlid, 0, _args.U16_MAX), **kw)


def uniform(load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """Every other host with equal probability."""
    return pattern("uniform", load, payload_bytes, **kw)


def fixed_pairs(pairs: Sequence[Union[str, tuple[str, str]]], load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """Fixed (source, destination) host pairs, by node name, each a tuple or a
    ``"SOURCE>DESTINATION"`` string (as a scenario writes it); unlisted hosts
    stay silent."""
    return pattern("fixed-pairs", load, payload_bytes, pairs=[p if isinstance(p, str) else f"{p[0]}>{p[1]}" for p in pairs], **kw)


def bit_reversal(load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to the index whose bits are those of ``s`` reversed (papers 002/003)."""
    return pattern("bit-reversal", load, payload_bytes, **kw)


def bit_complement(load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to ``~s`` (every address bit flipped)."""
    return pattern("bit-complement", load, payload_bytes, **kw)


def transpose(load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to ``s`` with the upper and lower halves of its bits swapped."""
    return pattern("transpose", load, payload_bytes, **kw)


def perfect_shuffle(load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to ``s`` rotated left by one bit (paper 004)."""
    return pattern("perfect-shuffle", load, payload_bytes, **kw)


def tornado(load: float, payload_bytes: Sizes = 256, tornado_dims: Optional[Sequence[int]] = None, **kw: Any) -> dict[str, Any]:
    """Each host sends ⌈k/2⌉−1 positions ahead in every dimension of
    ``tornado_dims`` (radices, first fastest); without them the hosts form one ring."""
    dims = [_args.integer(f"tornado_dims[{i}]", d, 0, _args.U32_MAX) for i, d in enumerate(tornado_dims or [])]
    return pattern("tornado", load, payload_bytes, tornado_dims=dims, **kw)


def hot_spot(hot_hosts: Sequence[str], hot_fraction: float, load: float, payload_bytes: Sizes = 256, **kw: Any) -> dict[str, Any]:
    """``hot_fraction`` of every source's packets go to the ``hot_hosts`` (node
    names), the rest uniformly to all other hosts (papers 002/003: 5, 10, 20 %)."""
    return pattern("hot-spot", load, payload_bytes, hot_hosts=list(hot_hosts), hot_fraction=_args.number("hot_fraction", hot_fraction), **kw)


def random_permutation(load: float, payload_bytes: Sizes = 256, permutation_seed: Optional[int] = None, **kw: Any) -> dict[str, Any]:
    """A random derangement of the hosts, drawn once per run (from the run's
    seed unless ``permutation_seed`` is given)."""
    extra = {} if permutation_seed is None else {"permutation_seed": _args.integer("permutation_seed", permutation_seed, 0, _args.U64_MAX)}
    return pattern("random-permutation", load, payload_bytes, **extra, **kw)
