"""The ranking's own worker pool: an interrupt held back while workers start, every worker gone once the
interrupt is raised, never more workers than tasks or cores."""

import multiprocessing
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

import warpspeed
from warpspeed.studies import workers
from warpspeed.studies.workers import WorkerPool, interrupts_deferred, pool_size

THREADS = (64, 128, 256)


def _no_children_left() -> bool:
    return multiprocessing.active_children() == []  # also joins the workers that have ended


def test_an_interrupt_inside_the_deferred_block_is_raised_after_it():
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            signal.raise_signal(signal.SIGINT)
            reached.append("end of block")
    assert reached == ["end of block"]


def test_the_previous_handler_is_restored_and_gets_the_signal():
    got = []
    before = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        with interrupts_deferred():
            signal.raise_signal(signal.SIGINT)
            assert got == []
        assert got == [signal.SIGINT]
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_interrupt_while_the_pool_starts_leaves_no_worker(monkeypatch):
    """A Ctrl-C in the middle of forking the workers: the submission completes, then the interrupt stops
    every worker (a worker the pool did not know hung the exit before)."""
    submit = ProcessPoolExecutor.submit
    calls = []

    def interrupted_submit(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", interrupted_submit)
    with pytest.raises(KeyboardInterrupt):
        warpspeed.rank("star3d-r1", device="H100-SXM5-80GB", threads=THREADS, jobs=2)
    assert len(calls) > 1  # the interrupt waited for the whole submission
    assert _no_children_left()


def test_an_interrupt_while_results_arrive_terminates_the_workers(tmp_path):
    """Interrupted after the first results: the running tasks are not waited for, and the cache keeps every
    line written so far, readable."""
    seen = []

    def progress(done, total):
        seen.append(done)
        raise KeyboardInterrupt

    cache = tmp_path / "c.jsonl"
    with pytest.raises(KeyboardInterrupt):
        warpspeed.rank("star3d-r1", device="H100-SXM5-80GB", threads=THREADS, jobs=2, cache=cache,
                       progress=progress)
    assert seen and _no_children_left()
    full = warpspeed.rank("star3d-r1", device="H100-SXM5-80GB", threads=THREADS, jobs=1, cache=cache)
    again = warpspeed.rank("star3d-r1", device="H100-SXM5-80GB", threads=THREADS, jobs=1)
    assert [r.configuration for r in full.results] == [r.configuration for r in again.results]


def test_the_pool_ends_its_workers_on_a_normal_exit_too():
    with WorkerPool(2) as pool:
        futures = pool.submit_all(pow, [(2, 10), (3, 3)])
    assert [f.result() for f in futures] == [1024, 27] and _no_children_left()


def test_pool_size_is_bounded_by_tasks_and_cores(monkeypatch):
    monkeypatch.setattr(workers, "available_cores", lambda: 4)
    assert pool_size(1000, 56) == 4  # --jobs 1000 started 1000 processes for 56 configurations
    assert pool_size(None, 56) == 4
    assert pool_size(3, 56) == 3
    assert pool_size(8, 2) == 2
    assert pool_size(None, 0) == 1


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_stop_returns_when_a_worker_died_in_the_middle_of_writing_its_result():
    """A worker terminated while it writes a result leaves part of a message in the result pipe; the pool's
    manager thread waits for the rest. Here the first four bytes of a message (its length, 64 bytes) are
    written as a dying worker would leave them: ``stop`` must still return (it hung in ``shutdown``)."""
    import struct
    import threading

    pool = WorkerPool(2)
    pool.submit_all(_sleep, [(30.0,), (30.0,)])
    time.sleep(0.5)  # the manager thread waits on the result pipe
    os.write(pool.executor._result_queue._writer.fileno(), struct.pack("!i", 64))  # a header, no message
    time.sleep(0.5)
    stopper = threading.Thread(target=pool.stop, daemon=True)
    stopper.start()
    stopper.join(timeout=20)
    assert not stopper.is_alive()
    assert _no_children_left()
