"""verl's real Hydra configuration for both groups (runs where verl 0.9.1 is installed).

The tox environment ``verl-config`` installs verl 0.9.1 with a CPU torch and
runs this file; elsewhere it is skipped.
"""

from __future__ import annotations

import pytest
from rlsys_closure.config import FLAG_KEY, RunSettings, check_paired, config_diff, pair_overrides

verl = pytest.importorskip("verl", reason="verl is not installed (tox -e verl-config runs this)")
pytest.importorskip("hydra", reason="hydra-core is not installed")


def _settings(tmp_path):  # type: ignore[no-untyped-def]
    return RunSettings(
        model_path=str(tmp_path / "model"),
        adapter_path=str(tmp_path / "adapter"),
        attn_implementation="sdpa",
    )


def test_verl_is_the_pinned_version() -> None:
    assert verl.__version__ == "0.9.1"


def test_composed_configs_differ_only_in_the_flag(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rlsys_closure.config import compose_pair

    configs = compose_pair(_settings(tmp_path))
    release, retain = configs["release"], configs["retain"]
    assert config_diff(release, retain) == [FLAG_KEY]
    assert check_paired(release, retain) == []
    assert release["actor_rollout_ref"]["rollout"]["free_cache_engine"] is True
    assert retain["actor_rollout_ref"]["rollout"]["free_cache_engine"] is False
    # The settings the runner relies on reached verl's resolved config.
    for cfg in (release, retain):
        model = cfg["actor_rollout_ref"]["model"]
        rollout = cfg["actor_rollout_ref"]["rollout"]
        assert model["lora_rank"] == 16
        assert model["lora_adapter_path"].endswith("adapter")
        assert model["override_config"]["attn_implementation"] == "sdpa"
        assert rollout["tensor_model_parallel_size"] == 1
        assert rollout["load_format"] == "safetensors"
        assert rollout["enable_sleep_mode"] is True
        assert rollout["checkpoint_engine"]["backend"] == "naive"
        assert cfg["actor_rollout_ref"]["actor"]["fsdp_config"]["full_determinism"] is True


def test_grader_agrees_the_composed_pair_is_paired(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rlsys_closure.config import compose_pair

    from pytest_rlsys.resultfile import checks as cc

    configs = compose_pair(_settings(tmp_path))
    assert cc.config_diff(configs["release"], configs["retain"]) == [cc.FREE_CACHE_ENGINE_PATH]


def test_a_one_sided_override_is_caught(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rlsys_closure.config import compose_verl_config, resolved_dict

    ov = pair_overrides(_settings(tmp_path))
    release = resolved_dict(compose_verl_config(ov["release"]))
    retain = resolved_dict(
        compose_verl_config([*ov["retain"], "actor_rollout_ref.rollout.gpu_memory_utilization=0.5"])
    )
    assert "actor_rollout_ref.rollout.gpu_memory_utilization differs" in check_paired(
        release, retain
    )


def test_sft_loss_input_shaping_matches_verl(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The runner's batch goes through verl's own padding helper and sft_loss on CPU:
    the loss is minus the mean log-prob over exactly the response tokens."""
    torch = pytest.importorskip("torch")
    from rlsys_closure.workload import sft_batch, verl_sft_tensordict
    from verl.workers.utils.losses import sft_loss

    prompts = [[5, 6, 7], [8, 9]]
    responses = [[10, 11], [12, 13, 14]]
    batch = sft_batch(prompts, responses, pad_id=0)
    td = verl_sft_tensordict(batch, seed=1)
    offsets = td["input_ids"].offsets()
    assert offsets.tolist() == [0, 5, 10]
    assert td["loss_mask"].offsets().tolist() == offsets.tolist()
    assert td["loss_mask"].values().tolist() == [0, 0, 0, 1, 1, 0, 0, 1, 1, 1]
    # A fake model output: log-prob of token i+1 given the prefix, at position i.
    values = torch.arange(10, dtype=torch.float32) / -10.0
    log_probs = torch.nested.nested_tensor_from_jagged(values, offsets=offsets)
    n_targets = 5
    # What verl's FSDP engine adds before calling the loss.
    from verl.utils import tensordict_utils as tu

    tu.assign_non_tensor(td, batch_num_tokens=n_targets, dp_size=1)
    loss, _ = sft_loss(None, {"log_probs": log_probs}, td)
    # sft_loss shifts the mask left by one: targets sit one position earlier.
    shifted = torch.roll(td["loss_mask"].values(), -1)
    expected = -(values * shifted).sum() / n_targets
    assert torch.allclose(loss, expected)
