"""What one exploration may spend: states, memory and wall-clock time.

A :class:`Budget` is shared by every exploration of one run (a scenario's searches between
its events, or one game of ``verify all``). When one of its limits is reached the search
stops and says which (:attr:`Budget.spent`): the verdict is then unknown, and the message
names the limit and how to raise it, never another one.

Memory is measured, not estimated: the process's resident size is read every few thousand
states and compared with the limit (by default half the memory available when the run began).
Both come from /proc; where it is missing (not Linux) only the state and time limits apply.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

__all__ = ["Limits", "Budget", "available_memory_mb", "CHECK_EVERY", "MACHINE_DEPENDENT"]

# In the reason of every result that a limit of the machine's (time, memory) decided: such a
# result is not kept between runs (verify.checking.cache).
MACHINE_DEPENDENT = "depends on the machine"

CHECK_EVERY = 4096  # new states between two looks at the clock and the resident size


def available_memory_mb() -> int | None:
    """MemAvailable of /proc/meminfo in MiB, or None where there is no such file."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _resident_mb() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Limits:
    """The limits of a run, each with the option or key that raises it (for the message)."""

    max_states: int
    states_knob: str  # e.g. "max_states in [scenario]"
    memory_mb: int | None = None  # None: half the memory available when the budget starts
    timeout: float | None = None  # seconds of wall-clock time; None: no limit
    memory_knob: str = "--max-memory"
    timeout_knob: str = "--timeout"


class Budget:
    """The states, memory and time spent so far against :class:`Limits`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.states = 0
        self.started = time.monotonic()
        avail = available_memory_mb()
        self.memory_mb = limits.memory_mb if limits.memory_mb is not None else (
            max(256, avail // 2) if avail is not None else None)
        self._base_mb = _resident_mb() or 0
        self._since = 0
        self.spent = ""  # which limit was reached, as the message shows it

    def add(self) -> bool:
        """Count a new state; False (and :attr:`spent` set) once the memory or time limit is
        reached. The state limit is the explorer's to apply, with :attr:`left`."""
        if self.spent:
            return False
        self.states += 1
        self._since += 1
        if self._since >= CHECK_EVERY:
            self._since = 0
            return self.check()
        return True

    def check(self) -> bool:
        """Look at the clock and the resident size now; False (and :attr:`spent`) when past a limit."""
        if self.spent:
            return False
        lim = self.limits
        if lim.timeout is not None and time.monotonic() - self.started > lim.timeout:
            self.spent = (f"the time limit ({lim.timeout:g} s; raise {lim.timeout_knob}; "
                          f"where it stops {MACHINE_DEPENDENT}'s speed)")
            return False
        if self.memory_mb is not None:
            now = _resident_mb()
            if now is not None and now - self._base_mb > self.memory_mb:
                self.spent = (f"the memory limit ({self.memory_mb:,} MiB of states; raise "
                              f"{lim.memory_knob}; where it stops {MACHINE_DEPENDENT}'s memory)")
                return False
        return True

    @property
    def states_text(self) -> str:
        return f"the state limit ({self.limits.max_states:,} states; raise {self.limits.states_knob})"

    @property
    def left(self) -> int:
        """States this budget still allows."""
        return max(0, self.limits.max_states - self.states)
