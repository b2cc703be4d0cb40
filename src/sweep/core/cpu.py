"""What processor this is: its name and the instruction sets that decide which embedding
runtime is fastest on it (a bfloat16 or int8 product is fast only where the CPU computes
it natively). Read from ``/proc/cpuinfo`` on Linux; elsewhere the name Python knows and no
instruction sets.
"""

from __future__ import annotations

import functools
import os
import platform

__all__ = ["INSTRUCTION_SETS", "cpu_name", "cpu_summary", "instruction_sets"]

#: The instruction sets that change which backend wins, in the order they are printed.
INSTRUCTION_SETS = (
    "avx2",
    "avx512f",
    "avx512_vnni",
    "avx_vnni",
    "avx512_bf16",
    "amx_bf16",
    "amx_int8",
)


def _cpuinfo_field(name: str) -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(name) and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


@functools.lru_cache(maxsize=1)
def cpu_name() -> str:
    """The processor's model name (``/proc/cpuinfo`` on Linux), else what Python knows."""
    return _cpuinfo_field("model name") or platform.processor() or platform.machine() or "unknown"


@functools.lru_cache(maxsize=1)
def instruction_sets() -> tuple[str, ...]:
    """Which of :data:`INSTRUCTION_SETS` this CPU has (empty when it cannot be read)."""
    flags = set((_cpuinfo_field("flags") or "").split())
    return tuple(f for f in INSTRUCTION_SETS if f in flags)


def cpu_summary() -> str:
    """``AMD EPYC, 2 logical CPUs; instruction sets: avx2``: what a benchmark prints first
    and what a choice of runtime is kept for."""
    have = ", ".join(instruction_sets()) or "none of " + ", ".join(INSTRUCTION_SETS)
    return f"{cpu_name()}, {os.cpu_count()} logical CPUs; instruction sets: {have}"
