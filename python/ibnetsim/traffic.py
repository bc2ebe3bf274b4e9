"""Traffic classes for :func:`ibnetsim.simulate`.

Each function returns one class as a plain dict (the ``traffic.classes``
entries of the simulation config); pass one or a list of them as ``traffic=``.
``load`` is the offered load per source as a fraction of its link's data rate,
counted in wire bytes (payload + 26 B of LRH/BTH/ICRC/VCRC).
"""

from __future__ import annotations

from typing import Any

__all__ = ["uniform", "fixed_pairs", "pattern"]


def pattern(
    kind: str,
    load: float,
    packet_bytes: int = 256,
    sl: int = 0,
    process: str = "poisson",
    name: str | None = None,
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


def fixed_pairs(pairs: list[tuple[str, str]], load: float, packet_bytes: int = 256, **kw: Any) -> dict[str, Any]:
    """Fixed (source, destination) host pairs, by node name."""
    return pattern("fixed-pairs", load, packet_bytes, pairs=[list(p) for p in pairs], **kw)
