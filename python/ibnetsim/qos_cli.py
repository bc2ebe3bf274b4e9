"""``ibnetsim qos``: the arbitration tables of paper 001 as a subnet manager would program them.

* ``ibnetsim qos plan TOPOLOGY REQUESTS`` admits the connection requests of a
  request file in order and prints (or writes with ``-o``) every port's VL
  arbitration tables in an OpenSM-style format, or the tables in long form
  as CSV (``--format csv``).
* ``ibnetsim qos setup TOPOLOGY -n N`` runs the paper's random connection
  setup and prints tried and established connections per SL.

Routing defaults to up*/down* (``--engine``), the routing of the irregular
networks paper 001 builds on. The commands join the ``main`` group through
:func:`register`, like :mod:`ibnetsim.experiment.cli`. Exit status 2 on bad
input, with the file and line named.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import click

from ibnetsim import qos, topology
from ibnetsim._cliutil import friendly_errors, plural
from ibnetsim.errors import IbnetsimError
from ibnetsim.sm import SubnetManager

__all__ = ["register"]


def _sm_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--ibnl-dir", multiple=True, type=click.Path(file_okay=False), help="Extra folder of .ibnl system files.")(fn)
    fn = click.option("--root", multiple=True, help="up*/down* root switch (name or GUID); repeat for several.")(fn)
    fn = click.option("--engine", default="updn", show_default=True, help="Routing engine; a connection's path is its LFT route.")(fn)
    fn = click.option("--be-share", type=click.FloatRange(0.0, 1.0), default=0.2, show_default=True, help="Share of every port's frame kept for best effort.")(fn)
    fn = click.option(
        "--rate-basis",
        type=click.Choice(["signalling", "data"]),
        default="signalling",
        show_default=True,
        help="B_link: signalling rate (2.5 Gb/s per SDR lane, as paper 001) or data rate after encoding.",
    )(fn)
    return fn


def _configure(file: str, engine: str, root: tuple[str, ...], ibnl_dir: tuple[str, ...]):
    fab = topology.read(file, ibnl_dir)
    try:
        sm = SubnetManager(fab, routing=engine, root=list(root))
    except IbnetsimError as e:
        raise type(e)(f"{file}: {e}") from None
    return fab, sm


def register(main: click.Group) -> None:
    """Adds the ``qos`` group to ``main``."""

    @main.group("qos")
    def qos_group() -> None:
        """VL arbitration tables and admission control (paper 001, Alfaro et al. 2001)."""

    @qos_group.command("plan")
    @click.argument("topology_file", metavar="TOPOLOGY", type=click.Path(exists=True, dir_okay=False))
    @click.argument("requests_file", metavar="REQUESTS", type=click.Path(exists=True, dir_okay=False))
    @_sm_options
    @click.option("--high-limit", type=click.IntRange(0, 255), default=255, show_default=True, help="LimitOfHighPriority of every port (255: no bound).")
    @click.option("--format", "fmt", type=click.Choice(["opensm", "csv"]), default="opensm", show_default=True, help="OpenSM-style tables, or the entries in long form as CSV.")
    @click.option("--all-ports", is_flag=True, help="List every port, not only those with connections.")
    @click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here instead of stdout.")
    @friendly_errors()
    def qos_plan(
        topology_file: str,
        requests_file: str,
        engine: str,
        root: tuple[str, ...],
        ibnl_dir: tuple[str, ...],
        be_share: float,
        rate_basis: str,
        high_limit: int,
        fmt: str,
        all_ports: bool,
        output: Optional[str],
    ) -> None:
        """Admit the connection REQUESTS on TOPOLOGY and print each port's arbitration tables.

        REQUESTS has one connection a line: `source, destination, class,
        bandwidth` (class DBTS, DB, BE or CH; bandwidth like 64k, 1.55M,
        300Mb/s). Requests are admitted in file order; a refused one is
        listed with the port that refused it. See docs/qos.md.
        """
        reqs = qos.read_requests(requests_file)
        fab, sm = _configure(topology_file, engine, root, ibnl_dir)
        p = qos.plan(fab, sm, reqs, be_share=be_share, rate_basis=rate_basis, high_limit=high_limit)
        text = p.to_text(all_ports=all_ports) if fmt == "opensm" else p.entries.to_csv(index=False)
        if output:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            click.echo(text, nl=False)
        click.echo(f"{plural(len(reqs), 'request')}: {p.accepted} accepted, {p.refused} refused" + (f"; wrote {output}" if output else ""), err=True)

    @qos_group.command("setup")
    @click.argument("topology_file", metavar="TOPOLOGY", type=click.Path(exists=True, dir_okay=False))
    @click.option("-n", "--connections", type=click.IntRange(0), required=True, help="N: connections to establish.")
    @_sm_options
    @click.option("--retry-limit", type=click.IntRange(1), default=qos.DEFAULT_RETRY_LIMIT, show_default=True, help="Refusals in a row after which an SL is exhausted.")
    @click.option("--seed", type=int, default=1, show_default=True, help="Seed of the draws.")
    @click.option("--class", "klass", type=click.Choice(["DB", "DBTS"], case_sensitive=False), default="DB", show_default=True)
    @click.option("--stop", type=click.Choice(["all", "level"]), default="all", show_default=True, help="An exhausted SL ends the setup (all, the paper) or only itself (level).")
    @click.option("--order", type=click.Choice(["balanced", "cyclic", "random"]), default="balanced", show_default=True, help="Which SL each try is for.")
    @click.option("--entry-limit", type=click.Choice(["table", "none", "vl"]), default="table", show_default=True, help="Whether full arbitration tables refuse (table), only the slot budget does (none, the paper's accounting), or the budget and a VL left with no entry (vl).")
    @click.option("--sl2-range", type=click.Choice(["class", "text"]), default="class", show_default=True, help="SL 2 from 1.55 Mb/s (class) or from 64 kb/s as §5.2 prints it (text).")
    @friendly_errors()
    def qos_setup(
        topology_file: str,
        connections: int,
        engine: str,
        root: tuple[str, ...],
        ibnl_dir: tuple[str, ...],
        be_share: float,
        rate_basis: str,
        retry_limit: int,
        seed: int,
        klass: str,
        stop: str,
        order: str,
        entry_limit: str,
        sl2_range: str,
    ) -> None:
        """Try to establish N random CBR connections on TOPOLOGY as paper 001 §5.2 does.

        Prints tried and established connections per SL, and why tries were refused.
        """
        fab, sm = _configure(topology_file, engine, root, ibnl_dir)
        r = qos.setup(
            fab, sm, connections, retry_limit=retry_limit, seed=seed, be_share=be_share, rate_basis=rate_basis, klass=klass, stop=stop,
            order=order, entry_limit=entry_limit, **qos.sl2_bands(sl2_range),
        )
        click.echo(f"{'SL':>3} {'tried':>9} {'established':>12} {'refused:bw':>11} {'refused:entries':>16} {'mean Mb/s':>10}")
        for row in r.per_sl.itertuples(index=False):
            click.echo(
                f"{row.sl:>3} {row.tried:>9} {row.established:>12} {row.refused_bandwidth:>11} {row.refused_entries:>16} {row.mean_bandwidth_bps / 1e6:>10.3f}"
            )
        click.echo(f"N = {r.target}: {r.established} established in {r.tried} tries" + (f"; SL {r.exhausted_sl} ran out of retries" if r.exhausted_sl is not None else ""))
