"""Where points run: in this process, on a local process pool, or on a dask.distributed cluster.

Every executor takes the same tasks and calls ``on_done(task, row)`` in the
calling thread as each point finishes, so the store writes rows and the
progress bar advances in one place (:mod:`.sweep`). Points are independent and
carry their own seed, so the rows do not depend on the executor, the number of
workers or the order points finish in; a test checks exactly that.

- ``serial``: in this process, one after another (debuggers, profilers).
- ``local`` (default): a process pool over all cores. Workers ignore SIGINT;
  Ctrl-C in the parent stops the pool, kills running points and returns,
  finished points having been stored already. A worker that dies (a crash in
  native code, the OOM killer) breaks the pool: the points that were in flight
  are re-run one at a time in fresh pools, so the one that kills its worker is
  recorded as failed and the others complete.
- ``dask``: dask.distributed, on an existing scheduler (``tcp://host:8786``,
  e.g. one started by dask-jobqueue on Slurm) or on a LocalCluster of worker
  processes. Dask retries a task whose worker died and reports ``KilledWorker``
  after that; the point is then recorded as failed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ibnetsim._cliutil import plural
from ibnetsim.experiment.kinds import STATUS_ERROR, run_point

__all__ = ["Task", "Executor", "SerialExecutor", "LocalExecutor", "DaskExecutor", "make_executor", "EXECUTORS"]

EXECUTORS = ("local", "serial", "dask")


@dataclass(frozen=True)
class Task:
    """One point to run: everything a worker needs, and nothing that does not pickle."""

    index: int
    key: str
    kind: str
    plugins: tuple[str, ...]
    config: dict
    #: Seconds between plain progress lines a long point prints to stderr
    #: (None: none), for sweeps whose output is a log, not a terminal.
    progress_interval: Optional[float] = None


OnDone = Callable[[Task, dict], None]


def _crash_row(message: str) -> dict[str, Any]:
    return {"status": STATUS_ERROR, "error": message, "traceback": "", "elapsed_s": None, "host": None, "pid": None}


def _execute(task: Task) -> dict[str, Any]:
    return run_point(task.kind, task.plugins, task.config, progress=(task.progress_interval, f"point {task.index}"))


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group; only the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Executor:
    name = "executor"
    workers: Optional[int] = None

    def run(self, tasks: Sequence[Task], on_done: OnDone) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return self.name


class SerialExecutor(Executor):
    name = "serial"
    workers = 1

    def run(self, tasks: Sequence[Task], on_done: OnDone) -> None:
        for t in tasks:
            on_done(t, _execute(t))


def _mp_context() -> mp.context.BaseContext:
    # fork would copy the progress bar's thread and any dask threads; forkserver
    # is safe and, with ibnetsim preloaded, starts workers fast.
    if sys.platform.startswith("linux"):
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["ibnetsim.experiment.kinds"])
        return ctx
    return mp.get_context("spawn")


class LocalExecutor(Executor):
    """A process pool of ``workers`` processes (default: every core)."""

    name = "local"

    def __init__(self, workers: Optional[int] = None):
        self.workers = workers or os.cpu_count() or 1

    def describe(self) -> str:
        return f"local process pool, {plural(self.workers, 'worker')}"

    def _pool(self, workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context(), initializer=_ignore_sigint)

    @staticmethod
    def _kill(pool: ProcessPoolExecutor) -> None:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(timeout=5)

    def run(self, tasks: Sequence[Task], on_done: OnDone) -> None:
        queue = deque(tasks)
        suspects: deque[Task] = deque()
        pool = self._pool(self.workers)
        inflight: dict[Future, Task] = {}
        try:
            while queue or inflight or suspects:
                if suspects and not inflight:
                    # After a crash: each suspect alone in a fresh pool, to find the culprit.
                    self._kill(pool)
                    t = suspects.popleft()
                    pool = self._pool(1)
                    fut = pool.submit(_execute, t)
                    try:
                        row = fut.result()
                    except BrokenProcessPool:
                        row = _crash_row("the worker process died while running this point (crash in native code, or killed)")
                    on_done(t, row)
                    if not suspects:
                        self._kill(pool)
                        pool = self._pool(self.workers)
                    continue
                broken = False
                while queue and len(inflight) < 2 * self.workers:
                    t = queue.popleft()
                    try:
                        inflight[pool.submit(_execute, t)] = t
                    except BrokenProcessPool:
                        queue.appendleft(t)
                        broken = True
                        break
                if not broken:
                    done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                    for fut in done:
                        t = inflight.pop(fut)
                        try:
                            row = fut.result()
                        except BrokenProcessPool:
                            suspects.append(t)
                            broken = True
                            continue
                        on_done(t, row)
                if broken:
                    # Points that finished before the crash keep their rows; the rest are suspects.
                    for fut, t in inflight.items():
                        if fut.done() and not fut.cancelled() and fut.exception() is None:
                            on_done(t, fut.result())
                        else:
                            suspects.append(t)
                    inflight.clear()
        except KeyboardInterrupt:
            # Ctrl-C can land while results of points that finished wait to
            # be collected: store those, then stop everything. A result still
            # on its way from a worker is not waited for; its point runs again
            # on resume.
            try:
                for fut, t in list(inflight.items()):
                    if fut.done() and not fut.cancelled() and fut.exception() is None:
                        on_done(t, fut.result())
            finally:
                self._kill(pool)
            raise
        except BaseException:
            # An error in on_done: stop everything now; finished points are stored.
            self._kill(pool)
            raise
        self._kill(pool)


class DaskExecutor(Executor):
    """dask.distributed: an existing scheduler, or a LocalCluster of ``workers`` processes."""

    name = "dask"

    def __init__(self, scheduler: Optional[str] = None, workers: Optional[int] = None):
        self.scheduler = scheduler
        self.workers = workers

    def describe(self) -> str:
        if self.scheduler:
            return f"dask cluster at {self.scheduler}"
        return f"dask LocalCluster, {plural(self.workers or os.cpu_count() or 1, 'worker process')}"

    def run(self, tasks: Sequence[Task], on_done: OnDone) -> None:
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError as e:  # pragma: no cover - dask is a dependency
            raise RuntimeError("the dask executor needs dask[distributed] (pip install 'dask[distributed]')") from e
        import uuid

        cluster = None
        if self.scheduler:
            client = Client(self.scheduler)
        else:
            cluster = LocalCluster(
                n_workers=self.workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
            client = Client(cluster)
        futures = {}
        try:
            tag = uuid.uuid4().hex[:8]
            for t in tasks:
                fut = client.submit(_execute, t, key=f"ibnetsim-point-{t.key}-{tag}", pure=False)
                futures[fut] = t
            for fut in as_completed(list(futures)):
                t = futures[fut]
                try:
                    row = fut.result()
                except Exception as e:  # noqa: BLE001 - KilledWorker and friends: the point failed
                    row = _crash_row(f"{type(e).__name__}: {e}")
                on_done(t, row)
                fut.release()
        except BaseException:
            client.cancel(list(futures))
            raise
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def make_executor(name: str = "local", workers: Optional[int] = None, scheduler: Optional[str] = None) -> Executor:
    """The executor called ``name`` (``local``, ``serial`` or ``dask``)."""
    if scheduler and name != "dask":
        raise ValueError("--scheduler needs --executor dask")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1 (got {workers})")
    if name == "local":
        return LocalExecutor(workers)
    if name == "serial":
        return SerialExecutor()
    if name == "dask":
        return DaskExecutor(scheduler, workers)
    raise ValueError(f"unknown executor '{name}' (one of {', '.join(EXECUTORS)})")
