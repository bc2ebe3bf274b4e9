"""Running a sweep: scenario → results directory, through an executor, with a progress bar.

The points already in the results directory are skipped (by key), the rest go
to the executor, and each row is stored the moment it arrives. Ctrl-C stops
the executor, compacts what finished and reports how far the sweep got; the
same command resumes it. A failing point is stored with its error and does not
stop the others. One sweep at a time writes to a directory (:meth:`Store.writing`).

On a terminal (or in Jupyter) progress is a live bar. Written to a file (a log,
a Slurm job's output) a live bar shows nothing until the end and then one line
cut to 80 columns, so there progress is plain timestamped lines instead, at
most one per ``progress_interval`` seconds and a last one at the end.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from dataclasses import dataclass, field
from typing import Optional, Union

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ibnetsim._cliutil import plural
from ibnetsim.experiment import scenario as _scenario
from ibnetsim.experiment.executors import Executor, Task, make_executor
from ibnetsim.experiment.kinds import STATUS_OK
from ibnetsim.experiment.store import Store

__all__ = ["SweepSummary", "run_sweep", "PROGRESS_INTERVAL_S"]

#: Seconds between progress lines when the output is not a terminal.
PROGRESS_INTERVAL_S = 30.0


@dataclass
class SweepSummary:
    """What one call of :func:`run_sweep` did."""

    directory: str
    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    interrupted: bool = False
    errors: list[tuple[str, str]] = field(default_factory=list)  # (point label, error)
    elapsed_s: float = 0.0

    @property
    def remaining(self) -> int:
        return self.total - self.skipped - self.done - self.failed

    def __str__(self) -> str:
        parts = [plural(self.total, "point"), f"{self.skipped} already done", f"{self.done} ran", f"{self.failed} failed"]
        s = ", ".join(parts) + f" in {self.elapsed_s:.1f} s"
        if self.interrupted:
            s += f"; interrupted with {self.remaining} left: run the same command again to resume"
        return s


class _ProgressLines:
    """Progress as plain lines, ``[12:03:04] 7/20 points finished, 1 failed,
    elapsed 0:03:10, ETA 0:05:40``: one when a point finishes, unless one was
    printed less than ``interval`` seconds ago, and one at the end."""

    def __init__(self, console: Console, total: int, interval: float):
        self.console = console
        self.total = total
        self.interval = interval
        self.t0 = time.monotonic()
        self.last: Optional[float] = None

    def _print(self, finished: int, failed: int, eta: bool) -> None:
        elapsed = time.monotonic() - self.t0
        line = f"[{time.strftime('%H:%M:%S')}] {finished}/{plural(self.total, 'point')} finished, {failed} failed, elapsed {_clock(elapsed)}"
        if eta and finished:
            line += f", ETA {_clock(elapsed / finished * (self.total - finished))}"
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)
        self.last = time.monotonic()

    def point_finished(self, finished: int, failed: int) -> None:
        # The last point is left to the final line.
        if finished < self.total and (self.last is None or time.monotonic() - self.last >= self.interval):
            self._print(finished, failed, eta=True)

    def end(self, finished: int, failed: int) -> None:
        self._print(finished, failed, eta=False)


def _clock(seconds: float) -> str:
    return str(_dt.timedelta(seconds=int(seconds)))


def run_sweep(
    scenario: Union[_scenario.Scenario, str, os.PathLike],
    out_dir: Union[str, os.PathLike],
    executor: Optional[Executor] = None,
    progress: bool = True,
    retry_failed: bool = True,
    console: Optional[Console] = None,
    progress_interval: float = PROGRESS_INTERVAL_S,
) -> SweepSummary:
    """Runs every point of ``scenario`` not yet in ``out_dir``.

    ``retry_failed`` re-runs points stored as failed (the default: a failure may
    have been a crashed worker). KeyboardInterrupt is caught, recorded in the
    summary (``interrupted``) and not re-raised, after the finished points are
    safely compacted. Progress goes to ``console`` (default: stderr): a live bar
    on a terminal, else a plain line at most every ``progress_interval``
    seconds. Raises :class:`ibnetsim.ResultsError` at once if another sweep is
    writing to ``out_dir``.
    """
    if not progress_interval >= 0:
        raise ValueError(f"progress_interval must be a number of seconds >= 0 (got {progress_interval})")
    sc = scenario if isinstance(scenario, _scenario.Scenario) else _scenario.load(scenario)
    ex = executor or make_executor("local")
    store = Store(out_dir)
    with store.writing():
        return _run(sc, store, ex, progress, retry_failed, console or Console(stderr=True), progress_interval)


def _run(sc: _scenario.Scenario, store: Store, ex: Executor, progress: bool, retry_failed: bool, console: Console, progress_interval: float) -> SweepSummary:
    run_no = store.open_run(sc, ex.name, ex.workers)
    finished = store.finished_keys(include_failed=not retry_failed)
    todo = [p for p in sc.points if p.key not in finished]
    summary = SweepSummary(str(store.path), total=len(sc.points), skipped=len(sc.points) - len(todo))
    by_key = {p.key: p for p in sc.points}
    live = progress and (console.is_terminal or console.is_jupyter)
    # In a log, a long point reports its own progress too (a bar would not show).
    within = progress_interval if progress and not live else None
    tasks = [Task(p.index, p.key, sc.kind, tuple(sc.plugins), p.config, within) for p in todo]
    lines = _ProgressLines(console, len(tasks), progress_interval) if progress and not live and tasks else None
    bar = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[failed]} failed"),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not live,
        transient=False,
    )
    t0 = time.perf_counter()
    with bar:
        task_id = bar.add_task(sc.name or sc.kind, total=len(tasks), failed=0)

        def on_done(t: Task, result: dict) -> None:
            point = by_key[t.key]
            store.write_point(point, result, run_no)
            if result.get("status") == STATUS_OK:
                summary.done += 1
            else:
                summary.failed += 1
                summary.errors.append((point.label(), str(result.get("error", ""))))
                if progress:
                    console.print(f"[red]point {point.index} ({escape(point.label())}) failed:[/red] {escape(str(result.get('error')))}", soft_wrap=True)
            bar.update(task_id, advance=1, failed=summary.failed)
            if lines:
                lines.point_finished(summary.done + summary.failed, summary.failed)

        try:
            if tasks:
                ex.run(tasks, on_done)
        except KeyboardInterrupt:
            summary.interrupted = True
    if lines:
        lines.end(summary.done + summary.failed, summary.failed)
    summary.elapsed_s = time.perf_counter() - t0
    store.compact()
    store.close_run(run_no, done=summary.done, failed=summary.failed, skipped=summary.skipped, interrupted=summary.interrupted)
    return summary
