"""The vocabulary of a pt-verl-closure result: check, phase and group names, and the
rules' limits. Data only; every other module of the package reads it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CHECK_NAMES: tuple[str, ...] = (
    "initial_lora_match",
    "updated_lora_match",
    "config_paired",
    "rollout_source_match",
    "update_and_sync",
    "phase_events",
    "resume_calls",
    "resource_sampling",
)


# Must equal the enum of rlsys-common.v1.json#/$defs/phase_name (a test checks it).
PHASE_NAMES: tuple[str, ...] = (
    "initial_sync",
    "rollout_before_update",
    "engine_sleep",
    "score_before_update",
    "update",
    "sync",
    "resume_weights",
    "weight_transfer",
    "resume_kv_cache",
    "rollout_after_update",
    "score_after_update",
)


# The top-level phases every group runs, one after the other, in this order.
REQUIRED_PHASE_ORDER: tuple[str, ...] = (
    "initial_sync",
    "rollout_before_update",
    "score_before_update",
    "update",
    "sync",
    "rollout_after_update",
    "score_after_update",
)


# Sub-phases inside the sync window, in this order when present.
SYNC_SUB_PHASES: tuple[str, ...] = ("resume_weights", "weight_transfer", "resume_kv_cache")


# Phases required only when the engine is released (free_cache_engine true).
RELEASE_ONLY_PHASES: tuple[str, ...] = ("engine_sleep", "resume_weights", "resume_kv_cache")


# Required in both groups: the retained engine still receives the new weights.
ALWAYS_SUB_PHASES: tuple[str, ...] = ("weight_transfer",)


FREE_CACHE_ENGINE_PATH = "actor_rollout_ref.rollout.free_cache_engine"


GROUP_NAMES: tuple[str, ...] = ("release", "retain")


EXPECTED_FREE_CACHE_ENGINE: dict[str, bool] = {"release": True, "retain": False}


# Times are written as floats in seconds; allow for rounding when a writer
# stores a difference it computed itself (duration_s) rather than ours.
TIME_TOLERANCE_S = 1e-6


MEMORY_TOLERANCE_MB = 1e-6


MAX_LISTED = 8


# Top-level phases in the order a group runs them; none may overlap the next.
TOP_LEVEL_ORDER: tuple[str, ...] = (
    "initial_sync",
    "rollout_before_update",
    "engine_sleep",
    "score_before_update",
    "update",
    "sync",
    "rollout_after_update",
    "score_after_update",
)


RESUME_PHASES: tuple[str, ...] = ("resume_weights", "resume_kv_cache")


# Phases inside which a released engine may be resumed.
RESUME_ALLOWED_IN: tuple[str, ...] = ("initial_sync", "sync")


# Sampling coverage: the largest gap between periodic samples over the run is
# at most GAP_FACTOR x interval_s; their median spacing is within
# MEDIAN_TOLERANCE (relative) of interval_s; with boundary samples, one lies
# within BOUNDARY_REACH x interval_s of each phase's start and end (the
# sampler takes it just after a start and just before an end).
GAP_FACTOR = 2.0


MEDIAN_TOLERANCE = 0.25


BOUNDARY_REACH = 0.5


# The probe logs a resume call just before it opens the resume sub-phase.
RESUME_LEAD_S = 1e-3


# Physical ceilings used when the file does not record a total: no GPU has
# 1 TiB of memory, and a GPU host with 8 TiB is beyond any the runner targets;
# a reading above them is a unit slip (KiB or bytes written as MiB).
GPU_CEILING_MB = float(2**20)


HOST_CEILING_MB = float(2**23)


# A retained engine that "sleeps" frees its KV cache: whole-GPU memory falling
# by more than this much (and this fraction) across engine_sleep says it slept.
SLEEP_DROP_MB = 512.0


SLEEP_DROP_FRACTION = 0.1


# created_at: not later than the grader's clock plus this skew, and the run it
# closes (created_at minus the run's length) not before verl existed.
CLOCK_SKEW_S = 3600.0


EARLIEST_RUN = _dt.datetime(2024, 1, 1, tzinfo=_dt.UTC)


# Keys system_decision.measurements may hold: the grader re-derives each.
MEASUREMENT_KEYS: tuple[str, ...] = GROUP_NAMES


Doc = Mapping[str, Any]


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome and a one-line explanation naming the evidence."""

    passed: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """The form stored in ``system_decision.checks.<name>``."""
        return {"passed": self.passed, "detail": self.detail}
