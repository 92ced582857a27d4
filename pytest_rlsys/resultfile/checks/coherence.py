"""Training and sync coherence: what the update and the syncs record must fit together.

The rules are rows of ``COHERENCE_RULES`` (id, source, what each reads, the check; the
table in docs/result-files.md is generated from it), plus ``placeholder``: a digest that
is ``sha256(b"")`` (the hash of an empty state dict) or has fewer than
``MIN_DISTINCT_HEX`` distinct hex digits (all zeros, ``abab…``; a real SHA-256 has about
16: the chance of 8 or fewer among 64 random digits is below 1e-15) is no measurement.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.evidence import as_number, mappings, short_hash
from pytest_rlsys.resultfile.checks.identity import lookup
from pytest_rlsys.resultfile.checks.timeline import end_details
from pytest_rlsys.resultfile.checks.vocabulary import Rule

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
MIN_DISTINCT_HEX = 9
LR_PATH = "actor_rollout_ref.actor.optim.lr"
N_PATH = "actor_rollout_ref.rollout.n"


def placeholder(digest: object) -> str | None:
    """Why a digest is a placeholder (None when it looks like a real SHA-256)."""
    if not isinstance(digest, str):
        return None
    if digest.lower() == EMPTY_SHA256:
        return "sha256 of empty input (nothing was hashed)"
    if len(set(digest.lower())) < MIN_DISTINCT_HEX:
        return f"{len(set(digest.lower()))} distinct hex digits (a real SHA-256 has about 16)"
    return None


def _end_detail(events: list[Mapping[str, Any]], phase: str) -> Mapping[str, Any] | None:
    for event in events:
        if event.get("phase") == phase and event.get("kind") == "end":
            detail = event.get("detail")
            return detail if isinstance(detail, Mapping) else None
    return None


def _steps(value: object) -> list[float]:
    values = value if isinstance(value, list) else [value]
    return [n for v in values if (n := as_number(v)) is not None]


def _not_finite(value: object) -> bool:
    if isinstance(value, str):
        try:
            return not math.isfinite(float(value))
        except ValueError:
            return False
    number = as_number(value)
    return number is not None and not math.isfinite(number)


def _streamed(name: str, group: Mapping[str, Any], workload: Mapping[str, Any]) -> list[str]:
    events, problems = mappings(group.get("events")), []
    for phase, what in (("initial_sync", "initial"), ("sync", "updated")):
        want = group.get(f"{what}_lora_sha256")
        detail = _end_detail(events, phase)
        if detail is None or "streamed_lora_sha256" not in detail or detail.get("failed"):
            continue
        got = detail["streamed_lora_sha256"]
        if not isinstance(got, str):
            problems.append(
                f"{name}'s {phase} streamed no adapter (streamed_lora_sha256 null) but the "
                "phase ended normally"
            )
        elif isinstance(want, str) and got != want:
            problems.append(
                f"{name}'s {phase} streamed LoRA {short_hash(got)}, not the {what} adapter "
                f"{short_hash(want)} the actor holds"
            )
    return problems


def _global_steps(name: str, group: Mapping[str, Any], workload: Mapping[str, Any]) -> list[str]:
    events = mappings(group.get("events"))
    before, after = (
        [s for d in end_details(events, phase) for s in _steps(d.get("global_steps"))]
        for phase in ("rollout_before_update", "rollout_after_update")
    )
    if not after or (min(after) >= 1 and not (before and min(after) <= max(before))):
        return []
    return [
        f"{name}'s rollout after the update reports global_steps {sorted(set(after))}"
        + (f", the one before it {sorted(set(before))}" if before else "")
        + ": the sync sets a later step on the server (vllm_rollout.py:248-250)"
    ]


def _changed(group: Mapping[str, Any]) -> bool:
    initial, updated = group.get("initial_lora_sha256"), group.get("updated_lora_sha256")
    return isinstance(initial, str) and isinstance(updated, str) and initial != updated


def _config_number(group: Mapping[str, Any], path: str) -> float | None:
    return as_number(lookup(group.get("config"), path)[1])


def _zero_lr(name: str, group: Mapping[str, Any], workload: Mapping[str, Any]) -> list[str]:
    lr = _config_number(group, LR_PATH)
    for detail in end_details(mappings(group.get("events")), "update"):
        lr = as_number(detail.get("lr")) if lr is None else lr
    if not (_changed(group) and lr == 0):
        return []
    initial, updated = group.get("initial_lora_sha256"), group.get("updated_lora_sha256")
    return [
        f"{name}'s learning rate is 0 but its adapter changed in the update "
        f"({short_hash(initial)} -> {short_hash(updated)}): a zero-lr step moves no weight"
    ]


def _non_finite(name: str, group: Mapping[str, Any], workload: Mapping[str, Any]) -> list[str]:
    for detail in end_details(mappings(group.get("events")), "update") if _changed(group) else []:
        bad = [key for key in ("loss", "grad_norm") if _not_finite(detail.get(key))]
        if bad:
            return [
                f"{name}'s update records a non-finite {' and '.join(bad)} "
                f"({', '.join(repr(detail.get(k)) for k in bad)}) but its adapter changed: verl "
                "skips the optimizer step when the grad norm is not finite "
                "(transformer_impl.py:822-825)"
            ]
    return []


# What each recorded update number is, and so the sign it cannot have: the runner's
# update is verl's sft_loss, the token-mean negative log-likelihood of the references
# (-log p >= 0 for a probability p <= 1; verl `workers/utils/losses.py:28-54`); grad_norm
# is the norm torch's clip_grad_norm_ returns (verl `transformer_impl.py`), never below 0;
# a negative lr torch's Adam refuses (`torch/optim/adam.py:58`).
NON_NEGATIVE_UPDATE = {"loss": "sft", "grad_norm": None, "lr": None}


def impossible_numbers(
    name: str, group: Mapping[str, Any], workload: Mapping[str, Any]
) -> list[str]:
    found: list[str] = []
    for detail in end_details(mappings(group.get("events")), "update"):
        for key, kind in NON_NEGATIVE_UPDATE.items():
            value = as_number(detail.get(key))
            if kind is not None and workload.get("update_kind") != kind:
                continue
            if value is not None and value < 0:
                found.append(f"{key} {value:g}")
    if not found:
        return []
    return [
        f"{name}'s update records {', '.join(found)}: the supervised loss is a negative "
        "log-likelihood (never below 0), the grad norm a norm, and the learning rate one "
        "the optimizer accepts (>= 0)"
    ]


def _responses(name: str, group: Mapping[str, Any], workload: Mapping[str, Any]) -> list[str]:
    n, events, problems = _config_number(group, N_PATH) or 1.0, mappings(group.get("events")), []
    for phase in ("rollout_before_update", "rollout_after_update"):
        for detail in end_details(events, phase):
            if detail.get("failed") or "responses" not in detail:
                continue
            raw = detail.get("responses")
            responses = len(raw) if isinstance(raw, list) else as_number(raw)
            prompts = as_number(detail.get("prompts")) or as_number(workload.get("prompt_count"))
            per = as_number(detail.get("n")) or n
            if responses is not None and prompts is not None and responses < prompts * per:
                problems.append(
                    f"{name}'s {phase} records {responses:g} responses for {prompts:g} prompts "
                    f"x n={per:g}: a completed rollout answers every prompt n times"
                )
    return problems


COHERENCE_RULES: tuple[Rule, ...] = (
    Rule(
        "streamed_adapter",
        "verl `engine_workers.py:804` streams the tensors; the runner hashes them "
        "(`driver._check_streamed`)",
        "`initial_sync`/`sync` end events' `detail.streamed_lora_sha256`; the group's hashes",
        "the rollout received the adapter the actor holds (the initial/updated hash), never "
        "null on a phase that ended normally",
        _streamed,
    ),
    Rule(
        "global_steps",
        "verl sets it on the server after each weight update (`vllm_rollout.py:248-250`, "
        "`sglang_rollout.py:389-390`); the runner syncs with 0 at init and 1 after the update",
        "the rollouts' `detail.global_steps`",
        "the rollout after the update reports steps of at least 1, all above the rollout before it",
        _global_steps,
    ),
    Rule(
        "zero_lr",
        "AdamW's step, weight decay included, is scaled by lr",
        "`actor.optim.lr` (else the update's `detail.lr`); the two adapter hashes",
        "a learning rate of 0 cannot change the adapter",
        _zero_lr,
    ),
    Rule(
        "non_finite_step",
        "verl skips the optimizer step when the grad norm is not finite "
        "(`workers/engine/fsdp/transformer_impl.py:822-825`)",
        'the update\'s `detail.loss` and `detail.grad_norm` (`"nan"`, `"inf"`); the hashes',
        "a non-finite loss or grad norm cannot change the adapter",
        _non_finite,
    ),
    Rule(
        "update_signs",
        "verl `sft_loss` is the token-mean negative log-likelihood (`workers/utils/losses.py:"
        "28-54`), `grad_norm` the norm `clip_grad_norm_` returns, torch's Adam refuses a "
        "negative lr (`torch/optim/adam.py:58`)",
        "the update's `detail.loss` (when `workload.update_kind` is `sft`), `detail.grad_norm`, "
        "`detail.lr`",
        "none of them is below 0",
        impossible_numbers,
    ),
    Rule(
        "responses",
        "`rollout.n` defaults to 1 (verl `workers/config/rollout.py:167`)",
        "the rollouts' `detail.responses`, `detail.prompts`/`detail.n`, else "
        "`workload.prompt_count` and the config's `rollout.n`",
        "a rollout phase that records responses has at least prompts x n of them",
        _responses,
    ),
)


def coherence_problems(
    name: str, group: Mapping[str, Any], workload: Mapping[str, Any]
) -> list[str]:
    """Every ``COHERENCE_RULES`` row's problems for one group."""
    return [p for rule in COHERENCE_RULES for p in rule.problems(name, group, workload)]
