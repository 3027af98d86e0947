"""turneval.freed_memory: pages a command has freed go back to the system between its steps."""
from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest

from turneval.freed_memory import return_freed_memory


def resident_mib() -> float:
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_heap_pages_leave_the_resident_set():
    # a freed 16 MiB block raises glibc's mmap threshold: the 2 MiB blocks after it come from the
    # heap, and one kept at its top stops glibc from shrinking it on its own (a report's pattern)
    np.ones(16 << 20, dtype=np.uint8)  # made and freed
    blocks = [np.ones(2 << 20, dtype=np.uint8) for _ in range(100)]
    kept = blocks[-1]
    del blocks
    before = resident_mib()
    assert return_freed_memory()
    assert before - resident_mib() > 100, "the freed 200 MiB stayed resident"
    assert kept.sum() == 2 << 20
