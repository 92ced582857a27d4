"""The closure runner's order of events, written once as data.

The runner (``gpu/rlsys_closure``) enforces it on its own recorder
(:class:`StepOrder`, hooked into the driver's ``EventRecorder``), and the grader
(``checks/sequence.py``) refuses every record it cannot produce. What it says, read off
``runner.run`` and ``driver.GroupDriver``:

* the groups run one after the other in ``GROUP_ORDER``, each in a fresh process on the
  host's CLOCK_MONOTONIC (never rebased); the second starts only after the first's process
  exited with 0 and a completed record, and after its start check (whole-GPU memory back at
  the first group's baseline) passed; the first failure ends the run;
* a group: ``INIT_STEPS`` one after the other, then ``CYCLE`` one after the other (the
  sync's sub-phases ``SYNC_SUB_PHASES`` inside the sync, recorded by the actor);
* a phase that raises is closed with ``failed``; the failure names the phase the driver
  was in (``current_phase``: the open phase, or the one whose follow-up work raised);
* the driver writes its record to disk after the phases in ``FLUSHED_AFTER`` (and at the
  end); a group killed from outside (``KILL_TYPES``) leaves the record of the last flush,
  and the runner names the phase its step note gave.

Pure data and pure functions: no import from the checks or the runner.
"""

from __future__ import annotations

from collections.abc import Sequence

GROUP_ORDER: tuple[str, ...] = ("release", "retain")

INIT_STEPS: tuple[str, ...] = (
    "init_ray",
    "init_actor",
    "init_lora_check",
    "init_rollout_server",
    "init_checkpoint_manager",
    "init_sleep",  # verl's trainers sleep the engine before the first sync
)

CYCLE: tuple[str, ...] = (
    "initial_sync",
    "rollout_before_update",
    "engine_sleep",  # both groups; a no-op (detail.effective false) in retain
    "score_before_update",
    "update",
    "sync",
    "rollout_after_update",
    "score_after_update",
)

SYNC_SUB_PHASES: tuple[str, ...] = ("resume_weights", "weight_transfer", "resume_kv_cache")

# GroupDriver._collect runs (and flushes the record) after these phases' follow-up work.
FLUSHED_AFTER: tuple[str, ...] = ("initial_sync", "score_before_update", "update", "sync")

# Failure types the runner writes for a group it killed or lost from outside: the record
# is the last flush, and the phase is the driver's last step note.
KILL_TYPES: tuple[str, ...] = ("GroupTimeout", "Interrupted")


def lost_to_a_kill(last_flushed: str | None) -> tuple[str, ...]:
    """The cycle phases a group killed after ``last_flushed`` (None: before its first
    flush) may have been in without any of them reaching its record: those up to and
    including the next flush point."""
    start = 0 if last_flushed is None else CYCLE.index(last_flushed) + 1
    lost: list[str] = []
    for phase in CYCLE[start:]:
        lost.append(phase)
        if phase in FLUSHED_AFTER:
            break
    return tuple(lost)


class OrderError(RuntimeError):
    """The runner tried a step its own state machine does not allow (a bug in the runner)."""


class StepOrder:
    """The driver's side: a recorder hook that refuses any step out of the machine's order.

    ``hook(phase, edge)`` is an ``EventRecorder`` boundary hook: init steps and cycle
    phases start in the order of ``INIT_STEPS + CYCLE`` (a step may be left out, as the
    CPU tests' drivers do, but never repeated or taken back), none while another is open
    (the sync's sub-phases are the actor's and never pass through the driver's recorder).
    """

    def __init__(self, order: Sequence[str] = (*INIT_STEPS, *CYCLE)) -> None:
        self.order = tuple(order)
        self.position = -1
        self.open: str | None = None

    def hook(self, phase: str, edge: str) -> None:
        if edge == "end":
            if phase != self.open:
                raise OrderError(f"{phase!r} ended but {self.open!r} is the open step")
            self.open = None
            return
        if self.open is not None:
            raise OrderError(f"{phase!r} started while {self.open!r} is open")
        if phase not in self.order or self.order.index(phase) <= self.position:
            raise OrderError(f"{phase!r} is not a step the runner's order allows next")
        self.position = self.order.index(phase)
        self.open = phase
