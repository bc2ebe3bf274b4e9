"""Traffic classes for :func:`ibnetsim.simulate`.

Each function returns one class as a plain dict (the ``traffic.classes``
entries of the simulation config); pass one or a list of them as ``traffic=``.
``load`` is the offered load per source as a fraction of its link's data rate,
counted in wire bytes (payload + 26 B of LRH/BTH/ICRC/VCRC).

Hosts are numbered in fabric order (cabled CA ports, node by node). The bit
permutations (``bit_reversal``, ``bit_complement``, ``transpose``,
``perfect_shuffle``) need a power-of-two number of hosts; a host that a
permutation maps onto itself does not send in that class.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

__all__ = [
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

PATTERNS = (
    "uniform",
    "fixed-pairs",
    "bit-reversal",
    "bit-complement",
    "transpose",
    "perfect-shuffle",
    "tornado",
    "hot-spot",
    "random-permutation",
)


def pattern(
    kind: str,
    load: float,
    packet_bytes: int = 256,
    sl: int = 0,
    process: str = "poisson",
    name: Optional[str] = None,
    path_bits: str = "base",
    **pattern_params: Any,
) -> dict[str, Any]:
    """A class sending ``packet_bytes`` of payload per packet to destinations drawn by ``kind``."""
    return {
        "name": name or kind,
        "sl": sl,
        "load": float(load),
        "process": process,
        "payload_bytes": int(packet_bytes),
        "pattern": {"kind": kind, **pattern_params},
        "path_bits": path_bits,
    }


def uniform(load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """Every other host with equal probability."""
    return pattern("uniform", load, packet_bytes, **kw)


def fixed_pairs(pairs: Sequence[tuple[str, str]], load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """Fixed (source, destination) host pairs, by node name; unlisted hosts stay silent."""
    return pattern("fixed-pairs", load, packet_bytes, pairs=[list(p) for p in pairs], **kw)


def bit_reversal(load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to the index whose bits are those of ``s`` reversed (papers 002/003)."""
    return pattern("bit-reversal", load, packet_bytes, **kw)


def bit_complement(load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to ``~s`` (every address bit flipped)."""
    return pattern("bit-complement", load, packet_bytes, **kw)


def transpose(load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to ``s`` with the upper and lower halves of its bits swapped."""
    return pattern("transpose", load, packet_bytes, **kw)


def perfect_shuffle(load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """Host ``s`` sends to ``s`` rotated left by one bit (paper 004)."""
    return pattern("perfect-shuffle", load, packet_bytes, **kw)


def tornado(load: float, packet_bytes: int = 256, dims: Optional[Sequence[int]] = None, **kw: Any) -> dict[str, Any]:
    """Each host sends ⌈k/2⌉−1 positions ahead in every dimension of ``dims``
    (radices, first fastest); without ``dims`` the hosts form one ring."""
    extra = {} if dims is None else {"dims": [int(d) for d in dims]}
    return pattern("tornado", load, packet_bytes, **extra, **kw)


def hot_spot(hosts: Sequence[str], fraction: float, load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """``fraction`` of every source's packets go to the hot ``hosts`` (node names),
    the rest uniformly to all other hosts (papers 002/003: 5, 10, 20 %)."""
    return pattern("hot-spot", load, packet_bytes, hosts=list(hosts), fraction=float(fraction), **kw)


def random_permutation(load: float, packet_bytes: int = 256, permutation_seed: Optional[int] = None, **kw: Any) -> dict[str, Any]:
    """A random derangement of the hosts, drawn once per run (from the run's
    seed unless ``permutation_seed`` is given)."""
    extra = {} if permutation_seed is None else {"seed": int(permutation_seed)}
    return pattern("random-permutation", load, packet_bytes, **extra, **kw)
