"""A local pool of worker processes that an interrupt stops at once and completely.

A ranking evaluates its configurations on a ``ProcessPoolExecutor`` of its own. Schedulers (SLURM, CI,
``timeout -s INT``) signal the main process alone, not its workers, and a ``KeyboardInterrupt`` can then land
anywhere in the main process. Two places matter:

- while the pool forks its workers and takes its tasks: a worker forked but not yet registered is unknown to
  the pool, takes another worker's stop sentinel at exit, and the exit waits forever. Interrupts are held
  back over that section and raised right after it;
- while results are awaited: the pool would let the running tasks finish (seconds) before the process can
  exit. The workers are terminated instead; their results are lost anyway, and the caller keeps what it had
  recorded (the rank cache is appended line by line in the main process).

Workers ignore SIGINT themselves, so a Ctrl-C to the whole process group ends the main process alone, which
then stops them, without a traceback from every worker.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager


def available_cores() -> int:
    """The cores this process may run on (its affinity, as a batch scheduler sets it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def pool_size(jobs: int | None, tasks: int) -> int:
    """Worker processes for ``tasks`` tasks: ``jobs`` (default: every available core), never more than the
    tasks or the available cores (more processes than cores only share the cores and cost their start)."""
    wanted = available_cores() if jobs is None else jobs
    return max(1, min(wanted, tasks, available_cores()))


def _ignore_interrupts() -> None:
    """A worker's initializer: the main process decides when the work stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back SIGINT over the block and deliver it, to the handler that was in force, once the block is
    over. Only the main thread receives signals, so elsewhere (and where SIGINT is ignored or left to the
    system) this changes nothing."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    caught: list[tuple] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        previous(*caught[0])


class WorkerPool:
    """A ``ProcessPoolExecutor`` of ``size`` workers that ignore SIGINT, whose ``stop`` ends every worker now.

    Use it as a context manager: leaving the block normally waits for the workers to finish; leaving it with
    an exception (an interrupt included) stops them first."""

    def __init__(self, size: int):
        with interrupts_deferred():
            self.executor = ProcessPoolExecutor(max_workers=size, initializer=_ignore_interrupts)

    def submit_all(self, fn, argument_lists: list[tuple]) -> list:
        """Submit ``fn(*args)`` for each tuple of arguments; the pool forks its workers here, so interrupts
        wait until every task is registered."""
        with interrupts_deferred():
            return [self.executor.submit(fn, *args) for args in argument_lists]

    def stop(self) -> None:
        """Cancel what has not started and terminate every worker (running tasks are lost)."""
        with interrupts_deferred():
            terminate = getattr(self.executor, "terminate_workers", None)  # Python 3.14 and later
            if terminate is not None:
                terminate()
                return
            # before 3.14 the pool has no public way to end running tasks; its process table is the only handle
            processes = list((getattr(self.executor, "_processes", None) or {}).values())
            for process in processes:
                process.terminate()
            for process in processes:
                process.join()
            # a worker ended while writing its result leaves part of a message in the result pipe, which the
            # pool's manager thread then waits on for ever (this process holds the pipe's write end too, so no
            # end-of-file comes): closing that end, once no worker lives, ends the wait and lets shutdown join
            writer = getattr(getattr(self.executor, "_result_queue", None), "_writer", None)
            if writer is not None:
                writer.close()
            self.executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if kind is None:
            self.executor.shutdown(wait=True)
        else:
            self.stop()


def run_tasks(fn, argument_lists: list[tuple], executor: Executor | None, workers: int,
              collect: Callable[[list[Future]], None]) -> None:
    """``fn(*args)`` for each tuple of arguments, on ``executor`` or (None) on a local :class:`WorkerPool` of
    ``workers``; ``collect`` receives the futures in the order of the arguments. Whatever ``collect`` raises (an
    interrupt included) stops the local pool or cancels the executor's tasks that have not started."""
    if executor is None:
        with WorkerPool(workers) as pool:
            collect(pool.submit_all(fn, argument_lists))
        return
    futures = [executor.submit(fn, *args) for args in argument_lists]
    try:
        collect(futures)
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
