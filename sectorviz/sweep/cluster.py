"""The tasks on a Dask distributed cluster (`--scheduler ADDRESS`), or on a LocalCluster of
worker processes on this machine (`--scheduler local`, one thread each).

Each task goes with the files its pattern reads (shipping.py); the workers need sectorviz
(and dask's `distributed`) installed, not the user's folders. Results come back in task
order, identical to the local pool's, with one progress bar. A worker that dies is the
scheduler's to handle: its tasks run again on another worker (Dask's allowed-failures); a
task the cluster gives up on is a gap with its reason, never a lost or hung run. Ctrl-C (or a
`done` that raises) cancels every outstanding future, and the client (and a LocalCluster's
workers) are closed on the way out.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from ..exits import UsageError
from .executor import LOCAL, Done, TaskFn
from .pool import Progress, Task, started_ignoring_interrupts
from .shipping import lost, run_shipped, ship_all

if TYPE_CHECKING:
    from dask.distributed import Client

INSTALL = "pip install sectorviz[cluster]"
CONNECT_TIMEOUT_S = 30  # reaching the scheduler

RETRIES = 2  # a point's own errors are results; what raises is the cluster (a worker lost
# mid-task, a scheduler hiccup), so a raising point runs again before it becomes a gap


def require_distributed(prog: str) -> None:
    """UsageError, one line saying what to install, when Dask's distributed is missing."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise UsageError(f"{prog}: --scheduler needs Dask's distributed scheduler: "
                         f"{INSTALL}") from None


@dataclass(frozen=True)
class Cluster:
    """The tasks on the Dask scheduler at `address` (LOCAL: a LocalCluster of `jobs`
    worker processes); `prog` names the command in a connection error."""

    address: str
    jobs: int
    prog: str

    def __call__(self, fn: TaskFn, tasks: Sequence[Task], unit: str, quiet: bool = False,
                 done: Done | None = None) -> list[dict]:
        shipped = ship_all(fn, tasks)
        results: dict[int, dict] = {}
        with self._client() as client, Progress(len(tasks), unit, quiet) as step:
            run = uuid.uuid4().hex
            futures = {client.submit(run_shipped, s, key=f"sectorviz-{run}-{i}", pure=False,
                                     retries=RETRIES): i for i, s in enumerate(shipped)}
            try:
                for future in _as_completed(futures):
                    i = futures[future]
                    results[i] = _result(client, future, shipped[i], tasks[i])
                    step()
                    if done is not None:
                        done(i, results[i])
            except BaseException:  # Ctrl-C (or the caller's stop): nothing left queued
                client.cancel(list(futures), force=True)
                raise
        return [results[i] for i in range(len(tasks))]

    @contextlib.contextmanager
    def _client(self) -> Iterator[Client]:
        """A client of the scheduler (and the LocalCluster it starts), closed at the end."""
        from dask.distributed import Client
        with contextlib.ExitStack() as stack:
            target: Any = self.address
            if self.address == LOCAL:
                target = stack.enter_context(_local_cluster(self.jobs))
            try:
                client = Client(target, timeout=CONNECT_TIMEOUT_S)
            except (OSError, ValueError, TypeError) as err:
                raise UsageError(f"{self.prog}: --scheduler {self.address}: cannot connect: "
                                 f"{_one_line(err)}") from None
            stack.callback(client.close)
            yield client


def _local_cluster(jobs: int) -> Any:
    """A LocalCluster of `jobs` single-thread worker processes on 127.0.0.1 (its HTTP server
    on a free port), started with SIGINT ignored so a terminal's Ctrl-C reaches only this
    process (a worker the nanny restarts later does not ignore it). Its
    workers get the C allocator the pool's have: not the nanny's MALLOC_TRIM_THRESHOLD_,
    which maps and unmaps every array past 128 KiB (points three times slower)."""
    import dask
    from dask.distributed import LocalCluster

    environ = {name: value for name, value in
               dask.config.get("distributed.nanny.pre-spawn-environ").items()
               if name != "MALLOC_TRIM_THRESHOLD_"}

    def start() -> Any:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
            return LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                host="127.0.0.1", dashboard_address=":0",
                                silence_logs=logging.CRITICAL)
    return started_ignoring_interrupts(start)


def _as_completed(futures: dict[Any, int]) -> Iterator[Any]:
    from dask.distributed import as_completed
    return iter(as_completed(list(futures)))


def _result(client: Client, future: Any, shipped: Any, task: Task) -> dict:
    """A finished future's result; where it raised (the cluster lost it: a killed worker, a
    client-side error of Dask's as the worker goes), the point submitted once more under a
    new key and awaited; where that raises too, the gap of a task the cluster gave up on."""
    try:
        result: dict = future.result()
    except Exception:  # noqa: BLE001 - a lost worker, a cancelled task: run it again
        try:
            result = client.submit(run_shipped, shipped, key=f"{future.key}-again",
                                   pure=False).result()
        except Exception as err:  # noqa: BLE001 - lost twice: a gap with its reason
            return lost(task, f"the cluster could not run it: {_one_line(err)}")
    return result


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__

