"""The subnet manager: LID assignment, routing engines, forwarding tables and their checks."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Sequence

from ibnetsim._lazy import numpy as np
from ibnetsim._lazy import pandas as pd

from ibnetsim import _args, _core
from ibnetsim.errors import ConfigError
from ibnetsim.topology import Fabric

__all__ = ["SubnetManager", "CheckReport", "routing_engines"]


def routing_engines() -> list[tuple[str, str]]:
    """(name, summary) of every registered routing engine."""
    return list(_core.routing_engines())


class CheckReport:
    """What :meth:`SubnetManager.check` found: reachability, loops, path lengths,
    channel load and credit loops. ``str(report)`` is the human-readable form."""

    def __init__(self, data: dict[str, Any], text: str):
        self._data = data
        self._text = text

    @property
    def ok(self) -> bool:
        """True when no defect was found (every pair reachable, no loop, no credit loop)."""
        return not self._data["has_defects"]

    def to_dict(self) -> dict[str, Any]:
        """The whole report as plain Python data (JSON-compatible)."""
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<CheckReport ok={self.ok}>"


class SubnetManager:
    """Configures a fabric as OpenSM would: LIDs (with LMC) and forwarding tables.

    ``routing`` is an engine name (see :func:`routing_engines`): ``minhop``,
    ``updn``, ``dor``, ``sssp``, ``dfsssp``, … or ``file`` (with ``lfts_file=`` an
    OpenSM ``opensm-lfts.dump``, a ``dump_ucast_routes`` file, or an ib_flit_sim
    ``.fdbs`` plus ``fdbs_key=`` its ``.fdbs.ini``), or a comma-separated chain
    of them such as ``"dfsssp,updn"`` (OpenSM's ``routing_engine a,b``): the
    first engine that routes the fabric is used; :attr:`routing` names it and
    :attr:`notes` say why the earlier ones failed. ``max_vls`` is the number
    of virtual layers (VLs, 1..15, default 15) ``dfsssp`` or ``lash`` may spread
    their paths over, or ``nue`` splits its destinations over (OpenSM's
    ``nue_max_num_vls``, default 1); their per-path SLs are then used by
    :meth:`check` and the simulator. ``lash_start_vl`` is the first of ``lash``'s VLs (OpenSM's
    ``lash_start_vl``, default 0; its layers are ``lash_start_vl`` ..
    ``max_vls - 1``). ``root`` names the up*/down* root switch(es) by name or GUID,
    or is the path of a root GUID file (OpenSM's ``root_guid_file``, or the
    ``opensm-updn-roots.dump`` it writes: one switch GUID a line).
    ``multicast_groups`` maps a multicast LID (``0xC000``..``0xFFFE``) to the
    hosts that join it (``node`` or ``node:port``); each group gets a spanning
    tree in the multicast forwarding tables, as OpenSM's multicast manager
    builds it, and traffic can be sent to it with
    :func:`ibnetsim.traffic.multicast`. With ``routing="fa"`` (paper 002's
    fully adaptive tables), ``non_adaptive_switches`` names switches without
    adaptive support: their tables hold the escape port at every LID of a
    destination. ``guid2lid`` is OpenSM's LID database file (``guid2lid`` in
    its cache directory): every port then gets the LIDs OpenSM gave it, and
    the LMC is the file's, whatever the engine (see docs/check.md).
    ``lid_order="opensm"`` numbers the ports as OpenSM 3.3.23 numbers a fresh
    subnet (the SM's port, taken to be the fabric's first node, then OpenSM's
    port-GUID order), so that tables compare with an OpenSM run's dumps
    without its ``guid2lid``; the default, ``"ibnetsim"``, numbers the CA ports
    first, then the switches. ``torus_config`` is the ``torus-2QoS.conf`` of
    the ``torus-2QoS`` engine (OpenSM's ``--torus_config``: radices, seed links,
    datelines); that engine also programs the SL2VL tables, which
    :meth:`check`, :meth:`sl2vl` and the simulator then use (see
    docs/routing.md).
    """

    def __init__(
        self,
        fabric: Fabric,
        routing: str = "minhop",
        lmc: int = 0,
        root: Optional[str | os.PathLike | Sequence[str | os.PathLike]] = None,
        lfts_file: Optional[str | os.PathLike] = None,
        fdbs_key: Optional[str | os.PathLike] = None,
        seed: int = 0,
        multicast_groups: Optional[Mapping[int, Sequence[str]]] = None,
        non_adaptive_switches: Sequence[str] = (),
        guid2lid: Optional[str | os.PathLike] = None,
        max_vls: Optional[int] = None,
        lash_start_vl: Optional[int] = None,
        lid_order: str = "ibnetsim",
        torus_config: Optional[str | os.PathLike] = None,
    ):
        roots = [os.fspath(r) for r in ([root] if isinstance(root, (str, os.PathLike)) else list(root or []))]
        self.fabric = fabric
        groups = []
        for mlid, members in (multicast_groups or {}).items():
            if isinstance(members, str):
                raise ConfigError(f"multicast group 0x{int(mlid):04x}: give its members as a list of host names, not one string")
            groups.append((_args.integer("multicast_groups key (MLID)", mlid, 0, _args.U16_MAX), [str(m) for m in members]))
        self._inner = _core.Subnet.configure(
            fabric._inner,
            routing,
            _args.integer("lmc", lmc, 0, _args.U8_MAX),
            roots,
            None if lfts_file is None else os.fspath(lfts_file),
            None if fdbs_key is None else os.fspath(fdbs_key),
            _args.integer("seed", seed, 0, _args.U64_MAX),
            groups,
            [str(s) for s in non_adaptive_switches],
            None if guid2lid is None else os.fspath(guid2lid),
            None if max_vls is None else _args.integer("max_vls", max_vls, 0, _args.U8_MAX),
            None if lash_start_vl is None else _args.integer("lash_start_vl", lash_start_vl, 0, _args.U8_MAX),
            _args.choice("lid_order", lid_order, _core.lid_orders()),
            None if torus_config is None else os.fspath(torus_config),
        )

    @property
    def routing(self) -> str:
        """Name of the engine that produced the tables."""
        return self._inner.engine

    @property
    def notes(self) -> list[str]:
        """What the engine reported (chosen root, …)."""
        return list(self._inner.notes)

    @property
    def lmc(self) -> int:
        return self._inner.lmc

    @property
    def lids(self) -> pd.DataFrame:
        """One row per port with LIDs: node, port, kind, base_lid, lmc."""
        return pd.DataFrame(self._inner.lids_columns())

    @property
    def lft(self) -> np.ndarray:
        """Forwarding tables as a (switch × LID) uint8 array; 255 = no path.
        Rows follow :attr:`switches`."""
        return self._inner.lft_matrix()

    @property
    def switches(self) -> list[str]:
        """Switch names, in the row order of :attr:`lft`."""
        return list(self._inner.switch_names())

    def route(self, src: str, dst: str, lid_offset: int = 0) -> list[tuple[str, int]]:
        """The (node, output port) hops from CA ``src`` to CA ``dst`` (its base LID + offset)."""
        return list(self._inner.trace(src, dst, _args.integer("lid_offset", lid_offset, 0, _args.U16_MAX)))

    def path_sl(self, src_lid: int, dst_lid: int) -> Optional[int]:
        """The SL the engine gave the path from the port owning ``src_lid`` to
        ``dst_lid`` (OpenSM's ``path_sl``, the SL of the PathRecord), or None
        where it gives none (most engines; ``dfsssp``, ``lash`` and
        ``torus-2QoS`` give one to every path)."""
        return self._inner.path_sl(_args.integer("src_lid", src_lid, 0, _args.U16_MAX), _args.integer("dst_lid", dst_lid, 0, _args.U16_MAX))

    def lfts_dump(self) -> str:
        """The tables in OpenSM's ``opensm-lfts.dump`` format."""
        return self._inner.lfts_dump()

    def write_lfts(self, path: str | os.PathLike) -> None:
        """Writes ``opensm-lfts.dump``, loadable by OpenSM's ``file`` routing engine."""
        self._inner.write_lfts(os.fspath(path))

    def check(
        self,
        data_vls: int = 1,
        qos_file: Optional[str | os.PathLike] = None,
        spread_lmc: bool = False,
        sl: int = 0,
        include_switch_lids: bool = False,
        escape_first: bool = False,
        sl2vl_file: Optional[str | os.PathLike] = None,
        lid_matrix_file: Optional[str | os.PathLike] = None,
    ) -> CheckReport:
        """Reachability, loops, path stretch, channel load and the credit-loop check.

        ``data_vls`` sets the default SL2VL mapping (SL i → VL i mod data_vls); a
        ``qos_file`` in opensm.conf syntax (``qos_sl2vl``, ``qos_max_vls``, …)
        overrides it; an engine that programs its own tables (``torus-2QoS``)
        overrides both, as in OpenSM; and an ``sl2vl_file`` (OpenSM's ``opensm-sl2vl.dump``)
        replaces it with the tables OpenSM programmed. A ``lid_matrix_file``
        (OpenSM's ``opensm-lid-matrix.dump``) adds a ``lid_matrix`` section:
        its rows against the fabric's hop counts, and the routes longer than
        its least hops (see docs/check.md). ``spread_lmc`` spreads uniform traffic over all LIDs of a port.
        ``sl`` is the service level of every route in the credit-loop check,
        except where the engine gave the route its own (``dfsssp``'s layers):
        that SL is used, so check those with ``data_vls=15`` (SL i on VL i).
        ``include_switch_lids`` adds the routes from and to switch port 0
        (management traffic on data VLs) to the channel dependency graph, which
        otherwise holds CA-to-CA routes only (see docs/check.md).

        Tables with escape options (the ``fa`` engine's, or any tables with
        ``escape_first=True``, read as ``fa`` lays them out: offset 0 the
        escape path, the others adaptive) are also checked as paper 002's
        fully adaptive switches use them: the dependency graph of the escape
        channels, with routes from every switch, must have no cycle (Duato's
        condition), and that graph gives the credit-loop verdict.
        """
        data, text = self._inner.check(
            _args.integer("data_vls", data_vls, 0, _args.U8_MAX),
            None if qos_file is None else os.fspath(qos_file),
            bool(spread_lmc),
            _args.integer("sl", sl, 0, _args.U8_MAX),
            bool(include_switch_lids),
            bool(escape_first),
            None if sl2vl_file is None else os.fspath(sl2vl_file),
            None if lid_matrix_file is None else os.fspath(lid_matrix_file),
        )
        return CheckReport(json.loads(data), text)

    def link_loads(self, spread_lmc: bool = False) -> pd.DataFrame:
        """Load of every directed link under uniform all-to-all traffic.

        One row per link direction: ``from_node``, ``from_port``, ``to_node``,
        ``to_port``, ``data_rate_gbps`` and ``load``. Every CA port sends an
        equal share of its injection rate to every other CA port (its base
        LID, or every LID with ``spread_lmc``); a load of 1.0 is the link's
        data rate, so ``1 / load.max()`` bounds the accepted traffic. The
        maximum is the ``channel_load.max_load`` of :meth:`check`.
        """
        return pd.DataFrame(self._inner.link_loads(bool(spread_lmc)))

    def sl2vl(self, data_vls: int = 1, qos_file: Optional[str | os.PathLike] = None) -> pd.DataFrame:
        """SLtoVL tables, as :meth:`check` uses them.

        One row per (node, in_port, out_port) with both ports cabled (a
        switch's port 0, its own packets, is an input too; a CA's rows have
        ``in_port`` 0), and columns ``sl0`` .. ``sl15`` holding the VL of each
        SL (15 = dropped). ``data_vls`` gives SL i → VL i mod data_vls
        everywhere; a ``qos_file`` (opensm.conf QoS keys) replaces it; an
        engine's own tables (``torus-2QoS``) replace both.
        ``df.filter(like="sl").to_numpy()`` is the (rows × 16) array.
        """
        cols = self._inner.sl2vl_columns(_args.integer("data_vls", data_vls, 0, _args.U8_MAX), None if qos_file is None else os.fspath(qos_file))
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        return f"<SubnetManager routing={self.routing!r} lmc={self.lmc} {self.fabric!r}>"
