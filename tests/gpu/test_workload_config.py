"""The frozen rollout source, the scorer, the SFT batch and the config pair."""

from __future__ import annotations

import pytest
from rlsys_closure.config import (
    FLAG_KEY,
    RunSettings,
    check_paired,
    config_diff,
    config_sha256,
    group_overrides,
    nested_from_overrides,
    overrides_to_dict,
    pair_overrides,
)
from rlsys_closure.workload import build_rollout_source, rollout_source_sha256, score

from pytest_rlsys.resultfile import checks as cc


def _settings(**kw: object) -> RunSettings:
    return RunSettings(model_path="/m", adapter_path="/a", **kw)  # type: ignore[arg-type]


def test_pair_overrides_differ_only_in_the_flag() -> None:
    pair = pair_overrides(_settings(extra_overrides=("actor_rollout_ref.actor.optim.lr=2e-4",)))
    release, retain = (overrides_to_dict(pair[g]) for g in ("release", "retain"))
    assert set(release) == set(retain)
    assert [k for k in release if release[k] != retain[k]] == [FLAG_KEY]
    assert release[FLAG_KEY] == "True" and retain[FLAG_KEY] == "False"
    # Extra overrides go to both groups; sleep mode is pinned on in both.
    assert release["actor_rollout_ref.actor.optim.lr"] == "2e-4"
    assert retain["actor_rollout_ref.rollout.enable_sleep_mode"] == "True"


def test_nested_pair_is_paired_for_the_grader_too() -> None:
    pair = pair_overrides(_settings(attn_implementation="sdpa"))
    a, b = (nested_from_overrides(pair[g]) for g in ("release", "retain"))
    assert config_diff(a, b) == [FLAG_KEY]
    assert check_paired(a, b) == []
    assert cc.config_diff(a, b) == [cc.FREE_CACHE_ENGINE_PATH]
    assert a["actor_rollout_ref"]["rollout"]["free_cache_engine"] is True
    assert a["actor_rollout_ref"]["model"]["lora_rank"] == 16
    assert a["actor_rollout_ref"]["model"]["override_config"]["attn_implementation"] == "sdpa"
    # One copy of each rule: the runner's hash, diff and flag are the grader's.
    assert config_sha256 is cc.config_sha256 and config_diff is cc.config_diff
    assert FLAG_KEY == cc.FREE_CACHE_ENGINE_PATH
    # Deterministic kernels in both groups (the update runs under bf16 autocast).
    fsdp = a["actor_rollout_ref"]["actor"]["fsdp_config"]
    assert fsdp["full_determinism"] is True
    assert b["actor_rollout_ref"]["actor"]["fsdp_config"]["full_determinism"] is True


def test_check_paired_reports_every_stray_difference() -> None:
    a = nested_from_overrides(group_overrides(_settings(), True))
    b = nested_from_overrides(group_overrides(_settings(lora_rank=8), False))
    assert check_paired(a, b) == ["actor_rollout_ref.model.lora_rank differs"]
    same = nested_from_overrides(group_overrides(_settings(), True))
    assert check_paired(a, same) == [f"{FLAG_KEY} does not differ"]


def test_non_finite_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        group_overrides(_settings(lr=float("nan")), True)


def test_rollout_source_is_frozen_by_its_seed() -> None:
    a = build_rollout_source(8, 1234, 64)
    assert rollout_source_sha256(a) == rollout_source_sha256(build_rollout_source(8, 1234, 64))
    assert rollout_source_sha256(a) != rollout_source_sha256(build_rollout_source(8, 1235, 64))
    assert len(a["prompts"]) == 8 and len({p["seed"] for p in a["prompts"]}) == 8
    with pytest.raises(ValueError):
        build_rollout_source(0, 1, 1)


@pytest.mark.parametrize(
    "text,truth,want",
    [
        ("The answer is 42.", "42", 1.0),
        ("42 or 41", "42", 0.0),
        ("no idea", "7", 0.0),
        ("-3", "-3", 1.0),
    ],
)
def test_score(text: str, truth: str, want: float) -> None:
    assert score(text, truth) == want


@pytest.mark.slow
def test_sft_batch_pads_prompts_left_and_responses_right() -> None:
    pytest.importorskip("torch", reason="torch is not installed")
    from rlsys_closure.workload import nested_loss_mask, sft_batch

    batch = sft_batch([[5, 6, 7], [8]], [[10], [11, 12]], pad_id=0)
    assert batch["input_ids"].tolist() == [[5, 6, 7, 10, 0], [0, 0, 8, 11, 12]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 1, 0], [0, 0, 1, 1, 1]]
    assert batch["position_ids"].tolist() == [[0, 1, 2, 3, 3], [0, 0, 0, 1, 2]]
    assert batch["response_mask"].tolist() == [[1, 0], [1, 1]]
    mask = nested_loss_mask(batch)
    assert [row.tolist() for row in mask.unbind()] == [[0, 0, 0, 1], [0, 1, 1]]
    with pytest.raises(ValueError):
        sft_batch([[1]], [[]], pad_id=0)
