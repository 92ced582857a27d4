"""The eight checks of a pt-verl-closure result, re-derived from its evidence.

Pure functions, no I/O, in one module per seam (imports only run down this list):
``vocabulary`` (names and limits), ``evidence`` (readers of the untyped document and the
wording of numbers), ``identity`` (config hashes and diffs), ``machine`` (the rollout
engine's sleep/wake machine per engine, from verl 0.9.1), ``cards`` (the GPU table, by
whole NVML name), ``engines_own`` (verl's, vLLM's and torch's own validation, where
installed), ``configuration`` (values the engines refuse: their own code, else the
tables), ``timeline`` (phase windows, the sample series, the phases table), ``coherence``
(training and sync coherence, placeholder digests), ``series`` (the periodic samples
against the sampler's own schedule), ``sequence`` (what the runner's state machine,
``resultfile.runner_states``, cannot produce), then the checks: ``phases``,
``engine``, ``sampling``, ``stack`` (versions and a card that cannot go together; it
reads the model size ``sampling`` parses), ``claims``. This package re-exports their
public API (``__all__``).
The runner (``gpu/rlsys_closure``) calls them to write ``system_decision`` and the
grader calls them to check it, so both compute every check the same way.
Input is a document that is valid against its schema (``pt-verl-closure/1``); the
functions tolerate missing pieces of a failed run by failing
the check that needed them, not by raising.

Besides the claims, each check holds the evidence to the rules a careful reader would
apply (each check's docstring; docs/result-files.md lists them, and which check each
belongs to). Every message names the group, the phase and the numbers.

Writing a result (the runner), per group then for the pair::

    group["phases"] = summarize_phases(group["events"], group["resource_samples"], actor_mem)
    group["sampled_gpu_peak_mb"], group["sampled_gpu_peak_phase"] = whole_run_peak(
        group["resource_samples"], group["phases"])
    doc["system_decision"] = {"checks": {}, "measurements": derive_measurements(doc)}
    doc["system_decision"]["checks"] = {n: r.as_dict() for n, r in derive_checks(doc).items()}

Events are ``{"t_s", "phase", "kind": "start" | "end"}`` with phase names from
``PHASE_NAMES``; initialisation goes in ``group["init"]``, not in the events.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_rlsys.resultfile.checks.claims import (
    check_config_paired,
    check_initial_lora_match,
    check_rollout_source_match,
    check_update_and_sync,
    check_updated_lora_match,
    record_problems,
)
from pytest_rlsys.resultfile.checks.engine import check_resume_calls
from pytest_rlsys.resultfile.checks.evidence import hash_pair
from pytest_rlsys.resultfile.checks.identity import config_diff, config_sha256
from pytest_rlsys.resultfile.checks.phases import check_phase_events
from pytest_rlsys.resultfile.checks.sampling import check_resource_sampling, derive_measurements
from pytest_rlsys.resultfile.checks.timeline import (
    phase_windows,
    shared_readings,
    summarize_phases,
    whole_run_peak,
)
from pytest_rlsys.resultfile.checks.vocabulary import (
    CHECK_NAMES,
    FREE_CACHE_ENGINE_PATH,
    GROUP_NAMES,
    PHASE_NAMES,
    RELEASE_ONLY_PHASES,
    REQUIRED_PHASE_ORDER,
    SYNC_SUB_PHASES,
    TIME_TOLERANCE_S,
    CheckResult,
    Doc,
)

__all__ = [
    "CHECK_FUNCTIONS",
    "CHECK_NAMES",
    "FREE_CACHE_ENGINE_PATH",
    "GROUP_NAMES",
    "PHASE_NAMES",
    "RELEASE_ONLY_PHASES",
    "REQUIRED_PHASE_ORDER",
    "SYNC_SUB_PHASES",
    "TIME_TOLERANCE_S",
    "CheckResult",
    "Doc",
    "check_config_paired",
    "check_resource_sampling",
    "config_diff",
    "config_sha256",
    "derive_checks",
    "derive_measurements",
    "hash_pair",
    "phase_windows",
    "record_problems",
    "shared_readings",
    "summarize_phases",
    "whole_run_peak",
]


CHECK_FUNCTIONS: dict[str, Callable[[Doc], CheckResult]] = {
    "initial_lora_match": check_initial_lora_match,
    "updated_lora_match": check_updated_lora_match,
    "config_paired": check_config_paired,
    "rollout_source_match": check_rollout_source_match,
    "update_and_sync": check_update_and_sync,
    "phase_events": check_phase_events,
    "resume_calls": check_resume_calls,
    "resource_sampling": check_resource_sampling,
}


def derive_checks(doc: Doc) -> dict[str, CheckResult]:
    """All eight checks, in ``CHECK_NAMES`` order, re-derived from the evidence (written into
    a result as the package's docstring shows)."""
    results: dict[str, CheckResult] = {}
    with shared_readings():  # each group's samples read once for all eight
        for name in CHECK_NAMES:
            try:
                results[name] = CHECK_FUNCTIONS[name](doc)
            except Exception as exc:  # a check that cannot be derived is not passed
                results[name] = CheckResult(False, f"could not re-derive this check: {exc!r}")
    return results
