"""The ``ibnetsim`` command.

Exit status: 0 on success, 1 when ``check`` finds a defect, 2 on bad input
(the message names the file, line or option to fix).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable, Optional

import click

import ibnetsim
from ibnetsim import _core, topology
from ibnetsim._cliutil import friendly_errors
from ibnetsim.errors import IbnetsimError
from ibnetsim.sm import SubnetManager, routing_engines


_friendly_errors = friendly_errors()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(ibnetsim.__version__, prog_name="ibnetsim")
def main() -> None:
    """ibnetsim: InfiniBand fabric simulator with its own subnet manager."""


# --------------------------------------------------------------------------- topo
@main.group()
def topo() -> None:
    """Generate, inspect and convert fabrics."""


def _link_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--cable-m", "cable_length_m", default=1.0, show_default=True, help="Cable length in metres (5 ns/m).")(fn)
    fn = click.option("--speed", "link_speed", default="SDR", show_default=True, help="SDR, DDR, QDR, FDR10, FDR, EDR, HDR or NDR.")(fn)
    fn = click.option("--width", "link_width", default="1x", show_default=True, help="1x, 2x, 4x, 8x or 12x.")(fn)
    fn = click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Output file (ibnetdiscover/ibsim net format).")(fn)
    return fn


def _write_generated(fab: topology.Fabric, output: str) -> None:
    fab.write(output)
    click.echo(f"wrote {output}: {fab.num_switches} switches, {fab.num_cas} CAs, {fab.num_links} links")


@topo.group("gen")
def topo_gen() -> None:
    """Generate a fabric (seeded and deterministic)."""


@topo_gen.command("irregular")
@click.option("--switches", type=int, required=True, help="Number of switches.")
@click.option("--ports", "switch_ports", type=int, required=True, help="Ports per switch.")
@click.option("--links", "links_per_switch", type=int, default=None, help="Switch-to-switch links per switch.")
@click.option("--total-links", type=int, default=None, help="Total switch-to-switch links (instead of --links).")
@click.option("--cycles", "independent_cycles", type=int, default=None, help="Independent cycles (instead of --links).")
@click.option("--hosts", "hosts_per_switch", type=int, required=True, help="Hosts per switch.")
@click.option("--seed", type=int, required=True, help="Random seed.")
@_link_options
@_friendly_errors
def gen_irregular(output: str, **kw: Any) -> None:
    """Random irregular fabric, as in papers 000-003."""
    link = {k: kw.pop(k) for k in ("link_width", "link_speed", "cable_length_m")}
    _write_generated(topology.irregular(**kw, **link), output)


@topo_gen.command("mesh")
@click.option("--dims", required=True, help="Sizes per dimension, e.g. 4x4 or 4,4,4.")
@click.option("--torus", is_flag=True, help="Wrap around (torus).")
@click.option("--hosts", "hosts_per_switch", type=int, default=1, show_default=True)
@_link_options
@_friendly_errors
def gen_mesh(output: str, dims: str, torus: bool, hosts_per_switch: int, **link: Any) -> None:
    """n-dimensional mesh or torus (dimension d on ports 2d+1/2d+2)."""
    try:
        sizes = [int(x) for x in dims.replace("x", ",").split(",") if x]
    except ValueError:
        raise click.BadParameter(f"'{dims}' is not a list of sizes like 4x4 or 4,4,4", param_hint="--dims")
    maker = topology.torus if torus else topology.mesh
    _write_generated(maker(sizes, hosts_per_switch=hosts_per_switch, **link), output)


@topo_gen.command("hypercube")
@click.option("--dim", "dimension", type=int, required=True, help="Dimension d: 2^d switches.")
@click.option("--hosts", "hosts_per_switch", type=int, default=1, show_default=True)
@_link_options
@_friendly_errors
def gen_hypercube(output: str, dimension: int, hosts_per_switch: int, **link: Any) -> None:
    """Hypercube (dimension i on port i+1)."""
    _write_generated(topology.hypercube(dimension, hosts_per_switch=hosts_per_switch, **link), output)


@topo_gen.command("fattree")
@click.option("-k", "k", type=int, required=True, help="Arity: switches have 2k ports.")
@click.option("-n", "n", type=int, required=True, help="Levels: k^n hosts.")
@_link_options
@_friendly_errors
def gen_fattree(output: str, k: int, n: int, **link: Any) -> None:
    """k-ary n-tree fat tree."""
    _write_generated(topology.fat_tree(k, n, **link), output)


@topo_gen.command("ring")
@click.option("--switches", type=int, required=True)
@click.option("--hosts", "hosts_per_switch", type=int, default=1, show_default=True)
@_link_options
@_friendly_errors
def gen_ring(output: str, switches: int, hosts_per_switch: int, **link: Any) -> None:
    """A ring of switches."""
    _write_generated(topology.ring(switches, hosts_per_switch=hosts_per_switch, **link), output)


@topo.command("kinds")
def topo_kinds() -> None:
    """List the generators: the `topo gen` command of each, and its Python name."""
    commands = set(topo_gen.commands)
    for name, summary in topology.generator_kinds():
        command = name.replace("_", "")
        if command in commands:
            click.echo(f"{command:11} {summary} (Python: topology.generate({name!r}, ...))")
        else:
            click.echo(f"{'-':11} {summary} (Python only: topology.generate({name!r}, ...))")


@topo.command("convert")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Output file (ibnetdiscover/ibsim net format).")
@click.option("--ibnl-dir", multiple=True, type=click.Path(file_okay=False), help="Extra folder of .ibnl system files.")
@_friendly_errors
def topo_convert(file: str, output: str, ibnl_dir: tuple[str, ...]) -> None:
    """Convert FILE (any format `topo info` reads: ibnetdiscover/ibsim net,
    IBDM .topo with its .ibnl systems, OpenSM subnet.lst) to an
    ibnetdiscover/ibsim net file, the format ibsim, ib_flit_sim's converters
    and our own readers take. Node names, GUIDs, descriptions, port numbers
    and link widths and speeds are kept."""
    fab = topology.read(file, ibnl_dir)
    fab.write(output)
    click.echo(f"wrote {output}: {fab.num_switches} switches, {fab.num_cas} CAs, {fab.num_links} links (from {fab.source_format})")


@topo.command("info")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--ibnl-dir", multiple=True, type=click.Path(file_okay=False), help="Extra folder of .ibnl system files.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_friendly_errors
def topo_info(file: str, ibnl_dir: tuple[str, ...], as_json: bool) -> None:
    """Summarise a topology file."""
    fab = topology.read(file, ibnl_dir)
    info = fab.info()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"{file} ({fab.source_format})")
    for key, value in info.items():
        click.echo(f"  {key:24} {value}")


# --------------------------------------------------------------------------- route / check
def _configure(file: str, engine: str, lmc: int, root: tuple[str, ...], lfts: Optional[str], fdbs_key: Optional[str], ibnl_dir: tuple[str, ...], guid2lid: Optional[str] = None, max_vls: Optional[int] = None, lash_start_vl: Optional[int] = None, lid_order: str = "ibnetsim", torus_config: Optional[str] = None) -> tuple[topology.Fabric, SubnetManager, float, float]:
    t0 = time.perf_counter()
    fab = topology.read(file, ibnl_dir)
    t1 = time.perf_counter()
    try:
        sm = SubnetManager(fab, routing=engine, lmc=lmc, root=list(root), lfts_file=lfts, fdbs_key=fdbs_key, guid2lid=guid2lid, max_vls=max_vls, lash_start_vl=lash_start_vl, lid_order=lid_order, torus_config=torus_config)
    except IbnetsimError as e:
        # Name the topology too: "disconnected" or "unroutable" is about this file.
        raise type(e)(f"{file}: {e}") from None
    t2 = time.perf_counter()
    return fab, sm, t1 - t0, t2 - t1


def _routing_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--lid-order",
        type=click.Choice(_core.lid_orders()),
        default="ibnetsim",
        show_default=True,
        help="How ports are numbered: CA ports first (ibnetsim), or as OpenSM numbers a fresh subnet, the first node as the SM "
        "(opensm): the tables then compare with OpenSM's dumps without its guid2lid.",
    )(fn)
    fn = click.option("--guid2lid", type=click.Path(exists=True, dir_okay=False), help="OpenSM's guid2lid file: take every port's LIDs (and the LMC) from it instead of assigning them.")(fn)
    fn = click.option("--ibnl-dir", multiple=True, type=click.Path(file_okay=False), help="Extra folder of .ibnl system files.")(fn)
    fn = click.option("--fdbs-key", type=click.Path(exists=True, dir_okay=False), help="The .fdbs.ini key of an ib_flit_sim .fdbs table.")(fn)
    fn = click.option("--root", multiple=True, help="up*/down* root switch (name or GUID), or a file of root GUIDs (OpenSM's root_guid_file, opensm-updn-roots.dump); repeat for several.")(fn)
    fn = click.option("--lmc", type=click.IntRange(0, 7), default=0, show_default=True, help="LID mask control: 2^LMC LIDs per CA port.")(fn)
    fn = click.option("--max-vls", type=click.IntRange(1, 15), default=None, help="dfsssp, lash, nue: virtual layers (one VL each) their paths may use [default: 15; nue: 1].")(fn)
    fn = click.option("--torus-config", type=click.Path(exists=True, dir_okay=False), help="torus-2QoS: its torus-2QoS.conf (radices, seed links, datelines), OpenSM's --torus_config.")(fn)
    fn = click.option("--lash-start-vl", type=click.IntRange(0, 14), default=None, help="lash: first VL (SL) of its layers, below --max-vls [default: 0].")(fn)
    return fn


@main.command("route")
@click.argument("file", type=click.Path(exists=True, dir_okay=False), required=False)
@click.option("--engine", default="minhop", show_default=True, help="Routing engine (see --list), or a comma-separated chain such as dfsssp,updn: the first that routes the fabric is used.")
@click.option("--lfts-file", type=click.Path(exists=True, dir_okay=False), help="Input tables for --engine file.")
@_routing_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write opensm-lfts.dump here.")
@click.option("--list", "list_engines", is_flag=True, help="List routing engines and exit.")
@_friendly_errors
def route(file: Optional[str], engine: str, lmc: int, max_vls: Optional[int], lash_start_vl: Optional[int], torus_config: Optional[str], root: tuple[str, ...], lfts_file: Optional[str], fdbs_key: Optional[str], ibnl_dir: tuple[str, ...], guid2lid: Optional[str], lid_order: str, output: Optional[str], list_engines: bool) -> None:
    """Compute forwarding tables for FILE and write them as an OpenSM LFT dump."""
    if list_engines:
        for name, summary in routing_engines():
            click.echo(f"{name:10} {summary}")
        return
    if file is None:
        raise click.UsageError("FILE is required (or use --list)")
    fab, sm, t_read, t_route = _configure(file, engine, lmc, root, lfts_file, fdbs_key, ibnl_dir, guid2lid, max_vls, lash_start_vl, lid_order, torus_config)
    for note in sm.notes:
        click.echo(f"note: {note}", err=True)
    if output:
        sm.write_lfts(output)
        click.echo(f"wrote {output}: {fab.num_switches} switches, LIDs up to {sm.lft.shape[1] - 1}, engine {sm.routing}, lmc {sm.lmc}")
    else:
        click.echo(sm.lfts_dump(), nl=False)
    click.echo(f"read {t_read:.2f} s, routed {t_route:.2f} s", err=True)


@main.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--lfts", "lfts_file", type=click.Path(exists=True, dir_okay=False), help="Check these tables (OpenSM dump or .fdbs) instead of routing.")
@click.option("--engine", default="minhop", show_default=True, help="Routing engine (or comma-separated chain) when no --lfts is given.")
@_routing_options
@click.option("--vls", "data_vls", type=click.IntRange(1, 15), default=1, show_default=True, help="Data VLs for the default SL2VL (SL i -> VL i mod VLs); an engine's own tables (torus-2QoS) replace it.")
@click.option("--qos", "qos_file", type=click.Path(exists=True, dir_okay=False), help="opensm.conf-style QoS options (qos_sl2vl, qos_max_vls, ...).")
@click.option("--sl2vl", "sl2vl_file", type=click.Path(exists=True, dir_okay=False), help="OpenSM's opensm-sl2vl.dump: the credit-loop check uses the SL2VL tables it lists.")
@click.option("--lid-matrix", "lid_matrix_file", type=click.Path(exists=True, dir_okay=False), help="OpenSM's opensm-lid-matrix.dump: compare it with the fabric's hop counts and the routes with its least hops.")
@click.option("--sl", type=click.IntRange(0, 15), default=0, show_default=True, help="Service level of every route in the credit-loop check, except routes the engine gave an SL (dfsssp, lash, nue).")
@click.option("--include-switch-lids", is_flag=True, help="Add routes from and to switches (management traffic on data VLs) to the credit-loop check.")
@click.option("--spread-lmc", is_flag=True, help="Spread uniform traffic over every LID of a port for the channel load.")
@click.option("--escape-first", is_flag=True, help="Read the tables as the fa engine lays them out (LID offset 0 the escape path, the others adaptive) and check Duato's condition on the escape channels.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@_friendly_errors
def check(file: str, lfts_file: Optional[str], engine: str, lmc: int, max_vls: Optional[int], lash_start_vl: Optional[int], torus_config: Optional[str], root: tuple[str, ...], fdbs_key: Optional[str], ibnl_dir: tuple[str, ...], guid2lid: Optional[str], lid_order: str, data_vls: int, qos_file: Optional[str], sl2vl_file: Optional[str], lid_matrix_file: Optional[str], sl: int, include_switch_lids: bool, spread_lmc: bool, escape_first: bool, as_json: bool) -> None:
    """Reachability, loops, path stretch, channel load and credit loops of FILE's routing.

    Exits 1 if any CA pair is unreachable, a forwarding loop exists, or the
    channel dependency graph has a cycle (a possible credit-loop deadlock).
    For tables with escape options (--engine fa, or --escape-first) the
    verdict on credit loops is the escape channels' graph (paper 002's fully
    adaptive switches).
    """
    if lfts_file:
        given = click.get_current_context().get_parameter_source("engine") != click.core.ParameterSource.DEFAULT
        if given and engine != "file":
            raise click.UsageError(f"--lfts checks the tables in that file; --engine {engine} would compute others: give one of them")
        engine = "file"
    if sl2vl_file and (qos_file or click.get_current_context().get_parameter_source("data_vls") != click.core.ParameterSource.DEFAULT):
        raise click.UsageError("--sl2vl gives the SL2VL tables; --qos and --vls would give others: give one of them")
    fab, sm, t_read, t_route = _configure(file, engine, lmc, root, lfts_file, fdbs_key, ibnl_dir, guid2lid, max_vls, lash_start_vl, lid_order, torus_config)
    for note in sm.notes:
        click.echo(f"note: {note}", err=True)
    t0 = time.perf_counter()
    report = sm.check(data_vls=data_vls, qos_file=qos_file, sl2vl_file=sl2vl_file, lid_matrix_file=lid_matrix_file, spread_lmc=spread_lmc, sl=sl, include_switch_lids=include_switch_lids, escape_first=escape_first)
    t_check = time.perf_counter() - t0
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(str(report))
    click.echo(f"read {t_read:.2f} s, routed {t_route:.2f} s, checked {t_check:.2f} s", err=True)
    sys.exit(0 if report.ok else 1)


# --------------------------------------------------------------------------- demo
@main.command("demo")
@_friendly_errors
def demo() -> None:
    """Route and check built-in example fabrics (no files needed).

    A 16-switch irregular fabric (8-port switches, 4 links and 4 hosts per
    switch, as in the papers) routed with up*/down* and with minhop, and a 4x4
    torus routed with dor on one VL, which has a credit loop.
    """
    fab = topology.irregular(switches=16, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1)
    click.echo(f"== {fab!r}")
    for engine in ("updn", "minhop"):
        sm = SubnetManager(fab, routing=engine)
        report = sm.check()
        click.echo(f"\n-- routing engine {engine}" + "".join(f"\n   note: {n}" for n in sm.notes))
        click.echo(str(report))
    torus = topology.torus([4, 4], hosts_per_switch=1)
    click.echo(f"\n== {torus!r}\n-- routing engine dor, 1 data VL")
    click.echo(str(SubnetManager(torus, routing="dor").check(data_vls=1)))


# --------------------------------------------------------------------------- sweep / results / plot / reproduce
from ibnetsim.experiment.cli import register as _register_experiment_commands  # noqa: E402

_register_experiment_commands(main)
__import__("ibnetsim.run_cli", fromlist=["register"]).register(main)  # run / bench
__import__("ibnetsim.qos_cli", fromlist=["register"]).register(main)  # qos plan / setup


if __name__ == "__main__":
    main()
