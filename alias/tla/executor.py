"""Where SANY/TLC work runs: one interface for every fan-out of tool runs (verify,
controls, grade with all its grades, the meaningful copies' checks).

``executor.kind: local`` (the default) runs the jobs in a pool of worker processes on this
machine; ``executor.kind: dask`` sends them to a Dask ``distributed`` cluster: a running
scheduler (``executor.dask.address``) or a ``LocalCluster`` of
``executor.dask.local_workers`` worker processes started here.

A job is a module-level function and a self-contained, picklable work item: the item
carries the module texts and the cfg (no shared file system is assumed) and the worker
runs the sandboxed tool and returns its result. Only the driver writes journals, tables
and the store: :meth:`Executor.run` yields each result as it arrives, in the driver's
thread. Items are content-keyed (``keys``): a Dask cluster computes one key once, and
when a worker dies the scheduler gives its items to another worker, so nothing is lost
or done twice.
"""

from __future__ import annotations

import abc
import multiprocessing
import multiprocessing.context
import os
import warnings
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence

from alias.errors import AliasError

__all__ = ["Executor", "LocalExecutor", "DaskExecutor", "make_executor"]


class Executor(abc.ABC):
    """Runs ``fn(context, item)`` for every item and yields ``(index, result)`` as results
    arrive. ``context`` is sent once per worker where the backend allows.
    ``shares_files``: the workers see this machine's file system (a tool-run cache folder
    can be shared)."""

    shares_files = True

    @abc.abstractmethod
    def run(self, fn: Callable[[Any, Any], Any], context: Any, items: Sequence[Any],
            keys: Sequence[str] | None = None) -> Iterator[tuple[int, Any]]:
        """``(index into items, result)`` per item, in the order results arrive."""

    def close(self) -> None:
        pass

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_WORKER: tuple[Callable[[Any, Any], Any], Any] | None = None


def _init_worker(fn: Callable[[Any, Any], Any], context: Any) -> None:
    global _WORKER
    _WORKER = (fn, context)


def _call_worker(item: Any) -> Any:
    assert _WORKER is not None, "worker process not initialised"
    fn, context = _WORKER
    return fn(context, item)


def _mp_context() -> multiprocessing.context.BaseContext:
    """``fork`` where the platform has it: a worker starts with this process's modules
    loaded and never re-runs the caller's script (a ``spawn`` or ``forkserver`` worker runs
    an unguarded script's top level again). The jobs only run tools and return values, so
    no lock a thread of this process held at the fork is touched in the worker."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


class LocalExecutor(Executor):
    """A pool of ``workers`` processes (or threads) on this machine (:func:`_mp_context`); a
    process gets ``context`` once (its initializer), not once per item; the pool lives
    until :meth:`close` for runs with the same function and context."""

    def __init__(self, workers: int = 0, threads: bool = False):
        self.workers = workers or (os.cpu_count() or 1)
        self.threads = threads
        self._pool: ProcessPoolExecutor | None = None
        self._pool_for: tuple[Any, Any] | None = None

    def _process_pool(self, fn: Callable[[Any, Any], Any], context: Any) -> ProcessPoolExecutor:
        if self._pool is None or self._pool_for is None or self._pool_for[0] is not fn \
                or self._pool_for[1] is not context:
            self.close()
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=_mp_context(),
                                             initializer=_init_worker, initargs=(fn, context))
            self._pool_for = (fn, context)
        return self._pool

    def run(self, fn, context, items, keys=None):
        if not items:
            return
        if self.threads or self.workers == 1 or len(items) == 1:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(items))) as pool:
                futures: dict[Future, int] = {pool.submit(fn, context, item): i for i, item in enumerate(items)}
                yield from ((futures[f], f.result()) for f in as_completed(futures))
            return
        pool = self._process_pool(fn, context)
        with warnings.catch_warnings():  # Python >= 3.12 warns of fork() beside threads; see _mp_context
            warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
            futures = {pool.submit(_call_worker, item): i for i, item in enumerate(items)}
        try:
            yield from ((futures[f], f.result()) for f in as_completed(futures))
        except BrokenProcessPool as e:
            self.close()
            raise AliasError(f"a local worker process died ({e}); the finished items are kept: run again to "
                             "resume") from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool, self._pool_for = None, None


class DaskExecutor(Executor):
    """A Dask ``distributed`` client: to a running scheduler at ``address`` or to a
    ``LocalCluster`` of ``local_workers`` processes (one thread each). Raises
    :class:`AliasError` naming the address when the scheduler cannot be reached."""

    def __init__(self, address: str = "", local_workers: int = 0, connect_timeout_s: float = 10.0):
        from distributed import Client, LocalCluster  # heavy, optional: only a Dask run imports it

        self.cluster = None
        self.shares_files = not address
        try:
            if address:
                self.client = Client(address, timeout=connect_timeout_s)
            else:
                self.cluster = LocalCluster(n_workers=max(1, local_workers), threads_per_worker=1, processes=True,
                                            dashboard_address=None)
                self.client = Client(self.cluster)
        except (OSError, TimeoutError) as e:
            raise AliasError(f"cannot reach the Dask scheduler at {address}: {type(e).__name__}: {e}") from None

    def run(self, fn, context, items, keys=None):
        from distributed import as_completed as dask_completed

        if not items:
            return
        ctx = self.client.scatter(context, broadcast=True)
        futures = {}
        for i, item in enumerate(items):
            key = f"alias-{keys[i]}" if keys is not None else None
            futures[self.client.submit(fn, ctx, item, key=key, pure=key is not None, retries=2)] = i
        for f in dask_completed(list(futures)):
            yield futures[f], f.result()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(kind: str = "local", *, workers: int = 0, threads: bool = False, dask_address: str = "",
                  dask_local_workers: int = 0) -> Executor:
    """``kind`` ``local``: a :class:`LocalExecutor` of ``workers`` processes (0 = the
    machine's cores; ``threads`` for a thread pool); ``dask``: a :class:`DaskExecutor` to
    ``dask_address`` (empty: a local cluster of ``dask_local_workers`` processes)."""
    if kind == "dask":
        return DaskExecutor(dask_address, dask_local_workers)
    if kind != "local":
        raise AliasError(f"unknown executor kind {kind!r}: local or dask")
    return LocalExecutor(workers, threads)
