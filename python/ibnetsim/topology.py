"""Fabrics: generate them, read them from files, look at them, write them.

A :class:`Fabric` wraps the Rust fabric model. Generators are seeded and
deterministic; readers understand ibnetdiscover/ibsim net files, IBDM
``.topo`` files (with ``.ibnl`` system definitions) and OpenSM ``subnet.lst``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Sequence

from ibnetsim._lazy import pandas as pd

from ibnetsim import _args, _core
from ibnetsim.errors import ConfigError, TopologyError

__all__ = [
    "Fabric",
    "read",
    "generate",
    "irregular",
    "mesh",
    "torus",
    "hypercube",
    "fat_tree",
    "ring",
    "single_switch",
    "generator_kinds",
]


class Fabric:
    """An InfiniBand fabric: switches, channel adapters and the links between them."""

    def __init__(self, inner: "_core.Fabric"):
        self._inner = inner

    # -- construction -----------------------------------------------------
    @classmethod
    def read(
        cls,
        path: str | os.PathLike,
        ibnl_dirs: Sequence[str | os.PathLike] = (),
        *,
        link_width: Optional[str] = None,
        link_speed: Optional[str] = None,
        cable_length_m: Optional[float] = None,
        cable_lengths: Optional[str | os.PathLike] = None,
    ) -> "Fabric":
        """Reads a topology file; the format is detected from its content.

        ``link_width`` (``"4x"``) and ``link_speed`` (``"QDR"``) apply to cables
        whose file gives none (otherwise 1x SDR in a net file, 4x SDR in an
        IBDM file); ``cable_length_m`` to every cable (no format carries
        lengths; otherwise 1 m). ``cable_lengths`` is a file of ``NODE PORT
        LENGTH_M`` lines giving some cables their own length (docs/formats.md).
        """
        length = None if cable_length_m is None else _args.number("cable_length_m", cable_length_m, lo=0.0, error=TopologyError)
        return cls(
            _core.Fabric.read(
                os.fspath(path),
                [os.fspath(d) for d in ibnl_dirs],
                link_width,
                link_speed,
                length,
                None if cable_lengths is None else os.fspath(cable_lengths),
            )
        )

    # -- summary ----------------------------------------------------------
    @property
    def num_switches(self) -> int:
        return self._inner.num_switches

    @property
    def num_cas(self) -> int:
        """Channel adapters (HCAs and TCAs)."""
        return self._inner.num_cas

    @property
    def num_links(self) -> int:
        return self._inner.num_links

    @property
    def source_format(self) -> Optional[str]:
        """Format of the file the fabric was read from, or None if generated."""
        return self._inner.source_format

    def info(self) -> dict[str, Any]:
        """Counts, port use, link rates and the switch-graph diameter."""
        return dict(self._inner.info())

    @property
    def nodes(self) -> pd.DataFrame:
        """One row per node: name, kind, guid (hex), description, num_ports, connected_ports."""
        return pd.DataFrame(self._inner.nodes_columns())

    @property
    def links(self) -> pd.DataFrame:
        """One row per link: both ends (node, port), width, speed, length_m, data rate."""
        return pd.DataFrame(self._inner.links_columns())

    # -- output -----------------------------------------------------------
    def to_netfile(self) -> str:
        """The fabric in ibnetdiscover/ibsim net format (readable by ibsim and by :meth:`read`)."""
        return self._inner.to_netfile()

    def write(self, path: str | os.PathLike) -> None:
        """Writes the fabric in ibnetdiscover/ibsim net format (``.net``; any
        name but ``.topo``, ``.lst`` or ``.ibnl``, which readers take for IBDM,
        subnet.lst and system files)."""
        suffix = os.path.splitext(os.fspath(path))[1].lower()
        if suffix in (".topo", ".lst", ".ibnl"):
            raise ConfigError(
                f"{os.fspath(path)}: the fabric is written in ibnetdiscover/ibsim net format, but a {suffix} file "
                "would be read back as another format; name it .net"
            )
        self._inner.write_netfile(os.fspath(path))

    def __repr__(self) -> str:
        return f"<Fabric: {self.num_switches} switches, {self.num_cas} CAs, {self.num_links} links>"


def read(path: str | os.PathLike, ibnl_dirs: Sequence[str | os.PathLike] = (), **links: Any) -> Fabric:
    """Reads a topology file (ibnetdiscover/ibsim net, IBDM .topo, OpenSM subnet.lst);
    ``links`` are :meth:`Fabric.read`'s ``link_width``, ``link_speed``, ``cable_length_m``
    and ``cable_lengths``."""
    return Fabric.read(path, ibnl_dirs, **links)


def generator_kinds() -> list[tuple[str, str]]:
    """(name, summary) of every built-in generator."""
    return list(_core.generator_kinds())


def generate(
    kind: str,
    *,
    link_width: str = "1x",
    link_speed: str = "SDR",
    cable_length_m: float = 1.0,
    **params: Any,
) -> Fabric:
    """Generates a fabric of ``kind`` with generator-specific ``params``.

    Unknown parameter names and impossible values raise :class:`ibnetsim.TopologyError`
    naming the parameter. ``link_*`` and ``cable_length_m`` apply to every link.
    """
    spec = {
        "kind": kind,
        **params,
        "link": {"width": link_width, "speed": link_speed, "length_m": _args.number("cable_length_m", cable_length_m, lo=0.0, error=TopologyError)},
    }
    return Fabric(_core.Fabric.generate(json.dumps(spec)))


def irregular(
    switches: int,
    switch_ports: int,
    hosts_per_switch: int,
    seed: int,
    links_per_switch: Optional[int] = None,
    total_links: Optional[int] = None,
    independent_cycles: Optional[int] = None,
    **link: Any,
) -> Fabric:
    """Random irregular fabric, as in the papers: every switch has ``links_per_switch``
    switch-to-switch links (or the fabric has ``total_links`` / ``independent_cycles``),
    at most one link between two switches, always connected."""
    params: dict[str, Any] = dict(
        switches=switches, switch_ports=switch_ports, hosts_per_switch=hosts_per_switch, seed=seed
    )
    for key, value in (
        ("links_per_switch", links_per_switch),
        ("total_links", total_links),
        ("independent_cycles", independent_cycles),
    ):
        if value is not None:
            params[key] = value
    return generate("irregular", **params, **link)


def mesh(dims: Sequence[int], hosts_per_switch: int = 1, **link: Any) -> Fabric:
    """n-dimensional mesh of switches; dimension d uses ports 2d+1 (+) and 2d+2 (-)."""
    return generate("mesh", dims=list(dims), torus=False, hosts_per_switch=hosts_per_switch, **link)


def torus(dims: Sequence[int], hosts_per_switch: int = 1, **link: Any) -> Fabric:
    """n-dimensional torus of switches; dimension d uses ports 2d+1 (+) and 2d+2 (-)."""
    return generate("mesh", dims=list(dims), torus=True, hosts_per_switch=hosts_per_switch, **link)


def hypercube(dimension: int, hosts_per_switch: int = 1, **link: Any) -> Fabric:
    """2^dimension switches; dimension i on port i+1."""
    return generate("hypercube", dimension=dimension, hosts_per_switch=hosts_per_switch, **link)


def fat_tree(k: int, n: int, **link: Any) -> Fabric:
    """k-ary n-tree: k^n hosts, n levels of k^(n-1) switches with 2k ports."""
    return generate("fat_tree", k=k, n=n, **link)


def ring(switches: int, hosts_per_switch: int = 1, **link: Any) -> Fabric:
    """A ring of switches."""
    return generate("ring", switches=switches, hosts_per_switch=hosts_per_switch, **link)


def single_switch(hosts: int, **link: Any) -> Fabric:
    """One switch with ``hosts`` hosts."""
    return generate("single_switch", hosts=hosts, **link)
