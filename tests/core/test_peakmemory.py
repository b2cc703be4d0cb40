"""``sweep.core.peakmemory``: a job's own peak memory, though several jobs share a process."""

import sys

import pytest

from sweep.core.peakmemory import PeakMemory, process_peak_mb


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM and clear_refs are Linux's")
def test_a_jobs_peak_is_its_own_not_an_earlier_jobs_in_the_same_process():
    first = PeakMemory()
    buffer = bytearray(300 * 2**20)  # touched: resident
    buffer[::4096] = b"x" * len(buffer[::4096])
    big = first.peak_mb()
    del buffer
    second = PeakMemory()  # the next job in the same process holds far less
    small = second.peak_mb()
    assert big is not None and small is not None
    assert big - small > 250 and process_peak_mb() >= small


def test_without_a_reset_the_mark_counts_only_when_it_rose_during_the_job():
    readings = iter([500.0, 500.0])  # an earlier job's peak, not passed during this one
    assert PeakMemory(read=lambda: next(readings), reset=lambda: False).peak_mb() is None
    readings = iter([500.0, 640.0])
    assert PeakMemory(read=lambda: next(readings), reset=lambda: False).peak_mb() == 640.0
    readings = iter([100.0, 120.0])  # reset: the mark is the job's own
    assert PeakMemory(read=lambda: next(readings), reset=lambda: True).peak_mb() == 120.0
    assert PeakMemory(read=lambda: None, reset=lambda: False).peak_mb() is None
