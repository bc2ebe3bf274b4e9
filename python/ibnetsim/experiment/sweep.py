"""Running a sweep: scenario → results directory, through an executor, with a progress bar.

The points already in the results directory are skipped (by key), the rest go
to the executor, and each row is stored the moment it arrives. Ctrl-C stops
the executor, compacts what finished and reports how far the sweep got; the
same command resumes it. A failing point is stored with its error and does not
stop the others. One sweep at a time writes to a directory (:meth:`Store.writing`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Optional, Union

from rich.console import Console
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

__all__ = ["SweepSummary", "run_sweep"]


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


def run_sweep(
    scenario: Union[_scenario.Scenario, str, os.PathLike],
    out_dir: Union[str, os.PathLike],
    executor: Optional[Executor] = None,
    progress: bool = True,
    retry_failed: bool = True,
    console: Optional[Console] = None,
) -> SweepSummary:
    """Runs every point of ``scenario`` not yet in ``out_dir``.

    ``retry_failed`` re-runs points stored as failed (the default: a failure may
    have been a crashed worker). KeyboardInterrupt is caught, recorded in the
    summary (``interrupted``) and not re-raised, after the finished points are
    safely compacted. Raises :class:`ibnetsim.ResultsError` at once if another
    sweep is writing to ``out_dir``.
    """
    sc = scenario if isinstance(scenario, _scenario.Scenario) else _scenario.load(scenario)
    ex = executor or make_executor("local")
    store = Store(out_dir)
    with store.writing():
        return _run(sc, store, ex, progress, retry_failed, console or Console(stderr=True))


def _run(sc: _scenario.Scenario, store: Store, ex: Executor, progress: bool, retry_failed: bool, console: Console) -> SweepSummary:
    run_no = store.open_run(sc, ex.name, ex.workers)
    finished = store.finished_keys(include_failed=not retry_failed)
    todo = [p for p in sc.points if p.key not in finished]
    summary = SweepSummary(str(store.path), total=len(sc.points), skipped=len(sc.points) - len(todo))
    by_key = {p.key: p for p in sc.points}
    tasks = [Task(p.index, p.key, sc.kind, tuple(sc.plugins), p.config) for p in todo]
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
        disable=not progress,
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
                    bar.console.print(f"[red]point {point.index} ({point.label()}) failed:[/red] {result.get('error')}")
            bar.update(task_id, advance=1, failed=summary.failed)

        try:
            if tasks:
                ex.run(tasks, on_done)
        except KeyboardInterrupt:
            summary.interrupted = True
    summary.elapsed_s = time.perf_counter() - t0
    store.compact()
    store.close_run(run_no, done=summary.done, failed=summary.failed, skipped=summary.skipped, interrupted=summary.interrupted)
    return summary
