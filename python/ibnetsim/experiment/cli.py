"""The experiment commands of ``ibnetsim``: sweep, results, plot, report and reproduce.

They live here, apart from :mod:`ibnetsim.cli`, and join the ``main`` group
through :func:`register`, so the two files change independently.

Exit status: 0 when every point succeeded (and, for ``reproduce``, every value
with a tolerance is within it); 1 when a point failed or a value is outside its
tolerance; 2 on bad input (the message names the file, line and key); 130 when
interrupted with Ctrl-C (finished points are kept: run the same command again).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import click
from rich.console import Console
from rich.table import Table

from ibnetsim._cliutil import friendly_errors, plural
from ibnetsim.experiment.numfmt import number
from ibnetsim.experiment.sweep import PROGRESS_INTERVAL_S

_friendly = friendly_errors(KeyError, ValueError)

__all__ = ["register"]

_EXECUTORS = click.Choice(["local", "serial", "dask"])


def exit_interrupted() -> None:
    """Exits with status 130 after Ctrl-C. Every finished point is already
    stored; the interpreter's own exit would first join the process pool's
    manager thread, which can wait forever on a worker killed in the middle of
    handing back a result, so the process ends here without that hook."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def _executor_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--workers", type=click.IntRange(min=1), default=None, help="Worker processes (default: every core).")(fn)
    fn = click.option("--scheduler", default=None, help="dask scheduler address, e.g. tcp://host:8786 (with --executor dask).")(fn)
    fn = click.option(
        "--executor",
        type=_EXECUTORS,
        default="local",
        show_default=True,
        help="local: process pool; serial: this process; dask: dask.distributed (LocalCluster unless --scheduler).",
    )(fn)
    return fn


def _progress_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--progress-interval",
        type=click.FloatRange(min=0),
        default=PROGRESS_INTERVAL_S,
        show_default=True,
        help="When stderr is not a terminal (a log file, a Slurm job): seconds between plain progress lines "
        "(one at most per finished point; 0: every point).",
    )(fn)
    fn = click.option("--no-progress", is_flag=True, help="No progress bar or lines.")(fn)
    return fn


def _make_executor(executor: str, workers: Optional[int], scheduler: Optional[str]):
    from ibnetsim.experiment.executors import make_executor

    if scheduler and executor != "dask":
        raise click.UsageError("--scheduler needs --executor dask")
    return make_executor(executor, workers=workers, scheduler=scheduler)


@click.command("sweep")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default=None, help="Results directory (default: results/<scenario file stem>, e.g. results/grid for grid.toml).")
@_executor_options
@click.option("--skip-failed", is_flag=True, help="Do not re-run points that failed before.")
@click.option("--dry-run", is_flag=True, help="Validate and list the points, run nothing.")
@_progress_options
@_friendly
def sweep_cmd(
    file: str, out_dir: Optional[str], executor: str, scheduler: Optional[str], workers: Optional[int], skip_failed: bool, dry_run: bool, no_progress: bool, progress_interval: float
) -> None:
    """Run every point of the scenario FILE, skipping those already in the results directory.

    A list in the scenario is a sweep axis; the file expands to the Cartesian
    product. Failed points are recorded with their error and the sweep goes on.
    Ctrl-C stops cleanly; the same command resumes.
    """
    from ibnetsim.experiment.scenario import load
    from ibnetsim.experiment.sweep import run_sweep

    ex = _make_executor(executor, workers, scheduler)
    sc = load(file)
    if dry_run:
        click.echo(f"{file}: kind {sc.kind}, {plural(len(sc.points), 'point')}")
        for a in sc.axes:
            click.echo(f"  axis {a.name}: {', '.join(map(str, a.values))}")
        for p in sc.points:
            click.echo(f"  {p.index:5d} {p.key} {p.label()}")
        return
    out = Path(out_dir) if out_dir else Path("results") / Path(file).stem
    click.echo(f"{file}: {plural(len(sc.points), 'point')} on {ex.describe()} → {out}", err=True)
    summary = run_sweep(sc, out, ex, progress=not no_progress, retry_failed=not skip_failed, progress_interval=progress_interval)
    click.echo(str(summary), err=True)
    for label, err in summary.errors[:10]:
        click.echo(f"  failed: {label}: {err}", err=True)
    if len(summary.errors) > 10:
        click.echo(f"  … and {len(summary.errors) - 10} more (ibnetsim results {out} --failed)", err=True)
    if summary.interrupted:
        exit_interrupted()
    sys.exit(1 if summary.failed else 0)


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, (list, tuple)) or (hasattr(v, "__len__") and not isinstance(v, str)):
        return f"[{plural(len(v), 'value')}]"
    return number(v, digits=6)


def _wide(console: Console, width: int) -> Console:
    """Piped output is as wide as the table needs instead of folded to 80 columns."""
    return console if console.is_terminal else Console(width=max(80, width))


def _is_list_column(s) -> bool:
    first = s.dropna()
    return bool(len(first)) and hasattr(first.iloc[0], "__len__") and not isinstance(first.iloc[0], str)


def _fold_name(name: str, width: int) -> str:
    """``max_channel_load`` as lines of at most ``width`` characters, broken
    after ``_`` and ``.`` (a part longer than that stays whole)."""
    lines = [""]
    for part in re.findall(r"[^_.]*[_.]|[^_.]+$", name):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def _headers(cols: list[str], values: list[int], excess: int) -> list[str]:
    """Column headers for a table ``excess`` characters too wide: the ones that
    save the most broken first (:func:`_fold_name`), until it fits."""
    headers = list(cols)
    folded = [_fold_name(c, w) for c, w in zip(cols, values)]
    saving = [len(c) - max([w] + [len(line) for line in f.split("\n")]) for c, w, f in zip(cols, values, folded)]
    for i in sorted(range(len(cols)), key=lambda i: -saving[i]):
        if excess <= 0 or saving[i] <= 0:
            break
        headers[i] = folded[i]
        excess -= saving[i]
    return headers


def _kind_table_columns(scenario: dict) -> tuple[str, ...]:
    """The columns the sweep's point kind shows by default; () when it names none
    or is a plugin kind that cannot be imported here."""
    from ibnetsim.experiment import kinds

    try:
        for plugin in scenario.get("plugins") or []:
            __import__(plugin)
        return kinds.get(scenario.get("kind", "")).table_columns
    except (ImportError, KeyError):
        return ()


@click.command("results")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--columns", default=None, help="Comma-separated columns to show (default: the swept keys, status and the main results).")
@click.option("--wide", is_flag=True, help="Show every column but the traceback, at full width (page it with less -S).")
@click.option("--failed", is_flag=True, help="Show only failed points, with their error.")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), default=None, help="Also write every column to this CSV file.")
@_friendly
def results_cmd(directory: str, columns: Optional[str], wide: bool, failed: bool, csv_out: Optional[str]) -> None:
    """Print the results of a sweep as a table (load them in Python with
    ibnetsim.experiment.load_results(DIRECTORY)).

    Exits with 1 when a results file is unreadable: the table lacks its
    points, which the next sweep runs again."""
    from ibnetsim.experiment.store import RUNTIME_COLUMNS, Store

    if columns and wide:
        raise click.UsageError("give --columns or --wide, not both")
    store = Store(directory)
    store.require()
    manifest = store.manifest()
    df = store.rows()
    if csv_out:
        df.to_csv(csv_out, index=False)
    if failed:
        df = df[df["status"] != "ok"]
    axes = [a for a in manifest.get("axes", {}) if a in df.columns]
    if columns:
        cols = [c.strip() for c in columns.split(",") if c.strip()]
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise click.UsageError(f"no column {', '.join(missing)} (columns: {', '.join(df.columns)})")
    elif wide:
        cols = [c for c in df.columns if c != "traceback"]
    elif failed:
        cols = ["index"] + axes + ["status", "error"]
    else:
        results = [c for c in _kind_table_columns(manifest.get("scenario", {})) if c in df.columns]
        if not results:
            hidden = {"key", "index", "status", "error", "traceback", "kind", *RUNTIME_COLUMNS}
            params = {c for c in df.columns if "." in c} | {"seed"}
            results = [c for c in df.columns if c not in hidden and c not in params and not _is_list_column(df[c])]
        cols = ["index"] + axes + ["status"] + results
    sc = manifest.get("scenario", {})
    title = f"{sc.get('name') or sc.get('kind', '')} — {plural(len(df), 'point')}"
    table = Table(title=title, show_lines=False)
    cells = [[_fmt(row[c]) for c in cols] for _, row in df.iterrows()]
    values = [max([0] + [len(r[i]) for r in cells]) for i in range(len(cols))]
    width = sum(max(len(c), w) for c, w in zip(cols, values)) + 3 * len(cols) + 1
    console = Console(width=width) if wide else _wide(Console(), width)
    for c, w, header in zip(cols, values, _headers(cols, values, width - console.width)):
        # Values are never folded (errors are prose): in a narrow terminal the headers break first.
        table.add_column(header, overflow="fold", min_width=None if c == "error" else w, justify="left" if c in ("status", "error") else "right")
    for r in cells:
        table.add_row(*r)
    console.print(table)
    nfail = int((df["status"] != "ok").sum()) if not failed and "status" in df else 0
    if nfail:
        click.echo(f"{plural(nfail, 'point')} failed: ibnetsim results {directory} --failed", err=True)
    if store.unreadable:
        click.echo(
            f"{directory}: {plural(len(store.unreadable), 'results file')} not readable ({', '.join(str(f) for f in store.unreadable)}): "
            f"the table lacks their points, which the next sweep into {directory} runs again",
            err=True,
        )
        sys.exit(1)


def _plugins_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--plugins",
        is_flag=True,
        help="Import the plugin modules the directory's manifest names, for their point kinds' figures. "
        "Importing runs their code: allow it only for results you trust.",
    )(fn)


@click.command("plot")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", "out", type=click.Path(file_okay=False), default=None, help="Folder for the figures (default: DIRECTORY/figures).")
@click.option("--format", "formats", multiple=True, type=click.Choice(["png", "svg", "pdf"]), default=("png", "svg"), show_default=True)
@_plugins_option
@_friendly
def plot_cmd(directory: str, out: Optional[str], formats: tuple[str, ...], plugins: bool) -> None:
    """Draw the standard figures of a sweep (PNG and SVG)."""
    from ibnetsim.experiment.plots import plot_results

    paths = plot_results(directory, out, formats, import_plugins=plugins)
    if not paths:
        click.echo(f"{directory}: no figure to draw (no successful points, or no figure applies to these results)", err=True)
        sys.exit(1)
    for p in paths:
        click.echo(str(p))


@click.command("report")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False), default=None, help="HTML file (default: DIRECTORY/report.html).")
@_plugins_option
@_friendly
def report_cmd(directory: str, out: Optional[str], plugins: bool) -> None:
    """Write one self-contained HTML page: figures, scenario and summary tables."""
    from ibnetsim.experiment.report import write_html_report

    click.echo(str(write_html_report(directory, out, import_plugins=plugins)))


@click.command("reproduce")
@click.argument("experiment_id", required=False)
@click.option("--list", "list_entries", is_flag=True, help="List the experiments and exit.")
@click.option("--quick", is_flag=True, help="The scaled-down version (seconds to a minute, for CI).")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default=None, help="Results directory (default: reproduce/ID[-quick]).")
@_executor_options
@_progress_options
@_friendly
def reproduce_cmd(
    experiment_id: Optional[str], list_entries: bool, quick: bool, out_dir: Optional[str], executor: str, scheduler: Optional[str], workers: Optional[int], no_progress: bool, progress_interval: float
) -> None:
    """Run a paper experiment and write a report: the paper's values and ours, side by side."""
    from ibnetsim.experiment import registry

    if list_entries:
        for e in registry.entries():
            click.echo(f"{e.id:36} paper {e.paper}  {e.title}")
        return
    if not experiment_id:
        raise click.UsageError("give an experiment ID (see --list)")
    ex = _make_executor(executor, workers, scheduler)
    rep = registry.reproduce(experiment_id, quick=quick, executor=ex, out_dir=out_dir, progress=not no_progress, progress_interval=progress_interval)
    console = Console()
    table = Table(title=f"{rep.entry.id}{' (quick)' if quick else ''}: {rep.entry.title}")
    for c, j in (("quantity", "left"), ("source", "left"), ("paper", "right"), ("ours", "right"), ("ours − paper", "right"), ("relative", "right"), ("verdict", "left")):
        table.add_column(c, justify=j, overflow="fold")
    colour = {"within": "green", "outside": "red", "missing": "red", "context": "yellow", "not in quick run": "dim", "known deviation": "dark_orange"}
    for r in rep.rows():
        t = registry.display_row(r)
        table.add_row(
            r["quantity"],
            r["citation"],
            f"{t['paper']} {r['unit']}".strip(),
            t["ours"] if r["ours"] is None else f"{t['ours']} {r['unit']}".strip(),
            t["diff"],
            t["relative"],
            f"[{colour[r['verdict']]}]{r['verdict']}[/]",
        )
    _wide(console, 140).print(table)
    click.echo(f"report: {rep.directory / 'report.md'}", err=True)
    if rep.summary is not None and rep.summary.interrupted:
        exit_interrupted()
    sys.exit(0 if rep.ok and not (rep.summary and rep.summary.failed) else 1)


def register(group: click.Group) -> None:
    """Adds the experiment commands to the ``ibnetsim`` group."""
    for cmd in (sweep_cmd, results_cmd, plot_cmd, report_cmd, reproduce_cmd):
        group.add_command(cmd)
