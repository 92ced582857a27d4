"""Training and sync coherence: what the update and the syncs record must fit together.

Rules (docs/result-files.md, ``update_and_sync`` and the hash checks), with their sources:

- A digest that is a placeholder is no measurement: ``sha256(b"")`` (the hash of an empty
  state dict), or fewer than ``MIN_DISTINCT_HEX`` distinct hex digits (all zeros, ``abab…``;
  a real SHA-256 has about 16: the chance of 8 or fewer among 64 random digits is below
  1e-15).
- The rollout received the adapter the actor holds: an ``initial_sync``/``sync`` end event
  that records ``detail.streamed_lora_sha256`` records the group's initial/updated hash (the
  runner's ``driver._check_streamed`` hashes the tensors verl streams, ``engine_workers.py:804``).
- ``global_steps`` advances across the sync: verl sets it on the server after each weight
  update (``vllm_rollout.py:248-250``, ``sglang_rollout.py:389-390``) and the runner syncs with
  0 at init and 1 after the update: every rollout after the update reports a step above every
  step before it (and at least 1).
- A zero learning rate cannot change the adapter (AdamW's step, weight decay included, is
  scaled by lr), and a non-finite loss or grad norm skips the step (verl
  ``workers/engine/fsdp/transformer_impl.py:822-825``): the adapter must then be unchanged.
- A rollout phase that records ``responses`` has at least prompts x ``rollout.n`` of them
  (``n`` default 1, verl ``workers/config/rollout.py:167``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.evidence import as_number, mappings, short_hash
from pytest_rlsys.resultfile.checks.identity import lookup

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


def _details(events: list[Mapping[str, Any]], phase: str) -> list[Mapping[str, Any]]:
    return [
        d for e in events if e.get("phase") == phase and isinstance(d := e.get("detail"), Mapping)
    ]


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


def coherence_problems(
    name: str, group: Mapping[str, Any], workload: Mapping[str, Any]
) -> list[str]:
    """The update and sync coherence rules for one group (see the module docstring)."""
    problems: list[str] = []
    events = mappings(group.get("events"))
    initial, updated = group.get("initial_lora_sha256"), group.get("updated_lora_sha256")
    for phase, want, what in (
        ("initial_sync", initial, "initial"),
        ("sync", updated, "updated"),
    ):
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
    before = [
        s for d in _details(events, "rollout_before_update") for s in _steps(d.get("global_steps"))
    ]
    after = [
        s for d in _details(events, "rollout_after_update") for s in _steps(d.get("global_steps"))
    ]
    if after and (min(after) < 1 or (before and min(after) <= max(before))):
        problems.append(
            f"{name}'s rollout after the update reports global_steps {sorted(set(after))}"
            + (f", the one before it {sorted(set(before))}" if before else "")
            + ": the sync sets a later step on the server (vllm_rollout.py:248-250)"
        )
    changed = isinstance(initial, str) and isinstance(updated, str) and initial != updated
    config = group.get("config")
    lr: float | None = None
    if isinstance(config, Mapping):
        present, value = lookup(config, LR_PATH)
        lr = as_number(value) if present else None
    for detail in _details(events, "update"):
        if lr is None:
            lr = as_number(detail.get("lr"))
    if changed and lr == 0:
        problems.append(
            f"{name}'s learning rate is 0 but its adapter changed in the update "
            f"({short_hash(initial)} -> {short_hash(updated)}): a zero-lr step moves no weight"
        )
    for detail in _details(events, "update"):
        bad = [key for key in ("loss", "grad_norm") if _not_finite(detail.get(key))]
        if changed and bad:
            problems.append(
                f"{name}'s update records a non-finite {' and '.join(bad)} "
                f"({', '.join(repr(detail.get(k)) for k in bad)}) but its adapter changed: verl "
                "skips the optimizer step when the grad norm is not finite "
                "(transformer_impl.py:822-825)"
            )
            break
    n = 1.0
    if isinstance(config, Mapping):
        present, value = lookup(config, N_PATH)
        n = as_number(value) or 1.0 if present else 1.0
    for phase in ("rollout_before_update", "rollout_after_update"):
        for detail in _details(events, phase):
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
