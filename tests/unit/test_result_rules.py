"""The rules' building blocks, against their sources (docs/result-files.md): verl 0.9.1's
sleep/wake machine per engine, the card table, placeholder digests, and (round 4) the
failure record as a claim, the engines' own ranges, the retained engine's ceiling and
the card's reading method."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.resultfile.checks.cards import CARD_TOLERANCE, gpu_bound, known_card
from pytest_rlsys.resultfile.checks.coherence import COHERENCE_RULES, placeholder
from pytest_rlsys.resultfile.checks.identity import config_sha256
from pytest_rlsys.resultfile.checks.machine import engine_name, machine_for
from pytest_rlsys.resultfile.checks.sampling import model_billions
from pytest_rlsys.resultfile.checks.vocabulary import ENGINE_RANGES
from pytest_rlsys.resultfile.grade import CheckOutcome, grade_document

HONEST = Path(__file__).resolve().parents[1] / "corpora" / "result_corpus" / "honest"


def _honest(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((HONEST / f"{name}.json").read_text(encoding="utf-8"))
    return doc


def _case(doc: dict[str, Any], check: str) -> CheckOutcome:
    (case,) = [c for c in grade_document(doc).cases if c.id == f"gpu_result.{check}"]
    return case


def _finding(doc: dict[str, Any], check: str) -> str:
    return _case(doc, check).finding


def _config(name: str | None, rank: int = 16, merge: bool | None = None) -> dict[str, Any]:
    model: dict[str, Any] = {"path": "Qwen/Qwen2.5-0.5B-Instruct", "lora_rank": rank}
    if merge is not None:
        model["lora"] = {"merge": merge}
    rollout: dict[str, Any] = {"free_cache_engine": True}
    if name is not None:
        rollout["name"] = name
    return {"actor_rollout_ref": {"model": model, "rollout": rollout}}


@pytest.mark.parametrize(
    ("config", "wakes"),
    [
        # engine_workers.py:778-782: vLLM resumes weights whenever it released.
        (_config("vllm"), ("weights", "kv_cache")),
        (_config("vllm", merge=True), ("weights", "kv_cache")),
        (_config(None), ("weights", "kv_cache")),  # the runner's default engine
        # engine_workers.py:775-777 with sglang_rollout.py:206: adapter -> level 1 -> KV only.
        (_config("sglang"), ("kv_cache",)),
        (_config("SGLang", merge=False), ("kv_cache",)),
        # merged, or no LoRA at all: level 2, weights and KV.
        (_config("sglang", merge=True), ("weights", "kv_cache")),
        (_config("sglang", rank=0), ("weights", "kv_cache")),
    ],
)
def test_each_engine_wakes_what_verl_resumes(
    config: dict[str, Any], wakes: tuple[str, ...]
) -> None:
    machine = machine_for(config)
    assert machine is not None and machine.wakes == wakes


def test_an_engine_verl_has_no_path_for_gets_no_machine() -> None:
    assert machine_for(_config("hf")) is None
    assert engine_name(_config(" SGLang ")) == "sglang"
    # Only vLLM needs enable_sleep_mode; SGLang always runs its memory saver.
    vllm, sglang = machine_for(_config("vllm")), machine_for(_config("sglang"))
    assert vllm is not None and vllm.needs_sleep_mode
    assert sglang is not None and not sglang.needs_sleep_mode


@pytest.mark.parametrize(
    ("name", "total"),
    [
        ("NVIDIA H100 80GB HBM3", 81559.0),
        ("NVIDIA H100 NVL", 95830.0),
        ("NVIDIA A100-SXM4-80GB", 81920.0),
        ("NVIDIA A100-PCIE-40GB", 40960.0),
        ("NVIDIA L40S", 46068.0),
        ("NVIDIA L4", 23034.0),
        ("Tesla T4", 15360.0),
        ("NVIDIA GeForce RTX 4070 Ti SUPER", 16376.0),
        ("NVIDIA GeForce RTX 4070 Ti", 12282.0),
        ("NVIDIA GeForce RTX 5070 Ti", 16303.0),
        ("NVIDIA GeForce RTX 5070", 12227.0),
        ("NVIDIA H200", 143771.0),
    ],
)
def test_the_card_table_tells_similar_names_apart(name: str, total: float) -> None:
    found = known_card(name)
    assert found is not None and found[0] == total


@pytest.mark.parametrize("name", ["NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA GH200 480GB", None])
def test_a_mig_slice_or_an_unknown_card_is_not_in_the_table(name: str | None) -> None:
    assert known_card(name) is None


def test_the_bound_follows_the_recorded_total_the_card_or_physics() -> None:
    card = "NVIDIA GeForce RTX 4090"
    assert gpu_bound({"gpu_name": card, "gpu_total_mb": 24564})[0] == 24564
    limit, _, problems = gpu_bound({"gpu_name": card, "gpu_total_mb": None})
    assert limit == pytest.approx(24564 * (1 + CARD_TOLERANCE)) and problems == []
    limit, _, problems = gpu_bound({"gpu_name": card, "gpu_total_mb": 81559})
    assert limit == pytest.approx(24564 * (1 + CARD_TOLERANCE))
    assert "which NVML reports as 24564 MiB" in problems[0]
    assert gpu_bound({"gpu_name": "NVIDIA X1", "gpu_total_mb": None})[0] == 2.0**20
    assert gpu_bound({"gpu_name": "NVIDIA X1", "gpu_total_mb": 50000})[0] == 50000


def test_placeholder_digests_are_told_from_real_ones() -> None:
    assert placeholder(hashlib.sha256(b"").hexdigest())
    assert placeholder("0" * 64) and placeholder("ab" * 32) and placeholder("01234567" * 8)
    for i in range(200):  # real digests: never a placeholder
        assert placeholder(hashlib.sha256(str(i).encode()).hexdigest()) is None


@pytest.mark.parametrize(
    ("name", "billions"),
    [
        ("Qwen/Qwen2.5-0.5B-Instruct", 0.5),
        ("meta-llama/Llama-3.1-8B", 8.0),
        ("/models/Qwen2.5-7B-Instruct/", 7.0),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", None),  # quantized: fewer bytes a parameter
        ("gpt2", None),
    ],
)
def test_the_model_size_is_read_from_its_name(name: str, billions: float | None) -> None:
    assert model_billions(name) == billions


def test_a_config_value_holding_braces_is_quoted_not_formatted() -> None:
    import copy
    import json

    from pytest_rlsys.resources import schema_dir
    from pytest_rlsys.resultfile import checks as cc

    path = schema_dir() / "examples" / "pt-verl-closure.example.json"
    doc = copy.deepcopy(json.loads(path.read_text(encoding="utf-8")))
    doc["groups"]["retain"]["config"]["actor_rollout_ref"]["model"]["lora_rank"] = {"a": 1}
    result = cc.check_config_paired(doc)
    assert not result.passed and "lora_rank=" in result.detail and "{'a': 1}" in result.detail


@pytest.mark.parametrize(
    ("honest", "edit"),
    [
        # The OOM was in release's resume_kv_cache; retain completed.
        ("oom_in_resume_kv_cache", {"group": "retain"}),
        ("oom_in_resume_kv_cache", {"phase": "init"}),
        ("oom_in_resume_kv_cache", {"phase": "update"}),
        ("oom_in_resume_kv_cache", {"phase": "rollout_after_update"}),
        ("oom_in_initial_sync", {"phase": "init"}),
        ("oom_in_initial_sync", {"phase": "score_after_update"}),
        ("failed_in_init", {"group": "release"}),
        ("failed_in_sync", {"phase": "init"}),
    ],
)
def test_a_failure_record_naming_where_the_run_did_not_stop_is_contradicted(
    honest: str, edit: dict[str, Any]
) -> None:
    doc = _honest(honest)
    assert grade_document(doc).verdict == "failed"
    edited = copy.deepcopy(doc)
    edited["failure"].update(edit)
    grade = grade_document(edited)
    assert grade.verdict == "contradicted"
    assert _finding(edited, "update_and_sync") == "false_record"


@pytest.mark.parametrize("honest", ["oom_in_resume_kv_cache", "failed_in_sync", "failed_in_init"])
@pytest.mark.parametrize("key", ["group", "phase"])
def test_an_unknown_group_or_phase_is_no_contradiction(honest: str, key: str) -> None:
    doc = _honest(honest)
    doc["failure"][key] = None  # the schema's "unknown"
    assert grade_document(doc).verdict == "failed"


def _rehashed(doc: dict[str, Any]) -> dict[str, Any]:
    for group in doc["groups"].values():
        group["config_sha256"] = config_sha256(group["config"])
    return doc


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("actor_rollout_ref.rollout.gpu_memory_utilization", 40),
        ("actor_rollout_ref.rollout.gpu_memory_utilization", 1.01),
        ("actor_rollout_ref.rollout.gpu_memory_utilization", 0),
        ("actor_rollout_ref.rollout.gpu_memory_utilization", "0.4"),
        ("actor_rollout_ref.actor.optim.lr", -1e-5),
        ("actor_rollout_ref.rollout.n", 0),
        ("actor_rollout_ref.rollout.n", 2.5),
        ("actor_rollout_ref.rollout.temperature", -0.1),
        ("actor_rollout_ref.rollout.top_p", 0),
        ("actor_rollout_ref.rollout.top_p", True),
        ("actor_rollout_ref.rollout.top_k", -2),
        ("data.max_response_length", 0),
        ("actor_rollout_ref.rollout.response_length", 0),
    ],
)
def test_a_value_the_engine_refuses_contradicts_config_paired(path: str, value: object) -> None:
    doc = _honest("example_reformatted")
    assert grade_document(doc).verdict == "passed"
    *parents, leaf = path.split(".")
    for group in doc["groups"].values():
        node = group["config"]
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    case = _case(_rehashed(doc), "config_paired")
    assert case.finding == "false_claim"
    assert f"config sets {path}={value!r}, which the engine refuses" in case.message


@pytest.mark.parametrize(
    ("path", "accepted", "refused"),
    [
        ("actor_rollout_ref.rollout.gpu_memory_utilization", [1e-3, 0.5, 1, 1.0, None], [0, 1.5]),
        ("actor_rollout_ref.actor.optim.lr", [0, 1e-5, None], [-1e-9]),
        ("actor_rollout_ref.rollout.n", [1, 8, 4.0], [0, -1, 1.5]),
        ("actor_rollout_ref.rollout.temperature", [0, 1.0, 2.0], [-1]),
        ("actor_rollout_ref.rollout.top_p", [1, 0.9, 1e-6], [0, 1.1]),
        ("actor_rollout_ref.rollout.top_k", [-1, 0, 1, 50], [-2, 2.5]),
        ("data.max_response_length", [1, 64, 4096, None], [0, -1, 1.5]),
    ],
)
def test_each_engine_range_accepts_exactly_what_the_engine_accepts(
    path: str, accepted: list[object], refused: list[object]
) -> None:
    (rule,) = [r for r in ENGINE_RANGES if r.path == path]
    assert [v for v in accepted if rule.refuses(v)] == []
    assert [v for v in refused if not rule.refuses(v)] == []


RULE_TABLES = {
    "ENGINE_RANGES": [
        "| configuration value | accepted | source |",
        "|---|---|---|",
        *(f"| `{r.path}` | {r.accepted} | {r.source} |" for r in ENGINE_RANGES),
    ],
    "COHERENCE_RULES": [
        "| rule | the check | reads | source |",
        "|---|---|---|---|",
        *(f"| `{r.id}` | {r.check} | {r.reads} | {r.source} |" for r in COHERENCE_RULES),
    ],
}


@pytest.mark.parametrize("table", sorted(RULE_TABLES))
def test_the_docs_list_the_rules_the_checks_apply(table: str) -> None:
    # The doc's block between its markers is generated from the table: the assertion
    # message is the block to paste.
    doc = (Path(__file__).resolve().parents[2] / "docs" / "result-files.md").read_text("utf-8")
    block = doc.split(f"<!-- rules: {table} ", 1)[1].split("<!-- /rules -->", 1)[0]
    want = "\n".join(RULE_TABLES[table])
    assert block.split("\n", 1)[1].strip() == want, want


def test_each_rule_id_is_named_once() -> None:
    ids = [r.id for r in COHERENCE_RULES]
    assert len(ids) == len(set(ids)) and all(r.source and r.reads for r in COHERENCE_RULES)


@pytest.mark.parametrize(
    "name",
    ["AMD Instinct MI300X", "AMD Radeon PRO W7900", "MI250X", "Intel Gaudi 3", "Ascend 910B"],
)
@pytest.mark.parametrize("source", ["nvml", "nvidia-smi"])
def test_another_vendors_card_read_with_nvml_is_a_contradiction(name: str, source: str) -> None:
    doc = _honest("example_reformatted")
    doc["environment"].update(gpu_name=name, gpu_total_mb=None)
    doc["sampling"]["source"] = source
    case = _case(doc, "resource_sampling")
    assert case.finding == "false_claim"
    assert "which reads NVIDIA GPUs only" in case.message and repr(name) in case.message


@pytest.mark.parametrize(
    "name", ["NVIDIA H200", "NVIDIA GeForce RTX 5070 Ti", "NVIDIA A100-SXM4-80GB", "Tesla T4"]
)
def test_nvidia_cards_read_with_nvml_pass(name: str) -> None:
    doc = _honest("example_reformatted")
    doc["environment"].update(gpu_name=name, gpu_total_mb=None)
    case = _case(doc, "resource_sampling")
    assert "NVIDIA GPUs only" not in case.message


def _set_utilization(doc: dict[str, Any], share: float) -> dict[str, Any]:
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["rollout"]["gpu_memory_utilization"] = share
    return _rehashed(doc)


@pytest.mark.parametrize("share", [0.1, 0.3])
def test_a_retained_engine_holding_more_than_its_share_is_flagged(share: float) -> None:
    # The honest file's retained engine holds ~10 GiB of a 16 GB card with 0.4 configured
    # (0.4 x 16303 + the actor's 2310 MiB + 2048 MiB allowance = 10879 MiB).
    doc = _set_utilization(_honest("example_reformatted"), share)
    case = _case(doc, "resume_calls")
    assert case.finding == "false_claim"
    assert "retain's whole-GPU memory holds 10046 MiB between its initial sync" in case.message
    assert "holds more than the share its config gives it" in case.message


def test_the_ceiling_needs_the_actors_memory_and_allows_cuda_graphs() -> None:
    doc = _set_utilization(_honest("example_reformatted"), 0.3)
    for entry in doc["groups"]["retain"]["phases"].values():
        entry["actor_memory_start_mb"] = entry["actor_memory_end_mb"] = None
    assert "share its config" not in _case(doc, "resume_calls").message
    doc = _honest("example_reformatted")
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["rollout"]["enforce_eager"] = False
    # 0.35 x 16303 + 2310 + 2048 + 1630 for CUDA graphs = 11694 MiB > 10046 MiB held.
    doc = _set_utilization(doc, 0.35)
    case = _case(doc, "resume_calls")
    assert case.finding == "confirmed", case.message


def _set(doc: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    *parents, leaf = path.split(".")
    for group in doc["groups"].values():
        node = group["config"]
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return _rehashed(doc)


@pytest.mark.parametrize(
    ("gpus", "sizes", "fits"),
    [
        (1, {"tensor_model_parallel_size": 2}, False),  # verl's assert: 1 % 2 != 0
        (2, {"tensor_model_parallel_size": 2}, True),
        (4, {"tensor_model_parallel_size": 2, "data_parallel_size": 2}, True),
        (2, {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 4}, False),
        (6, {"tensor_model_parallel_size": 4}, False),
    ],
)
def test_a_rollout_that_cannot_fit_its_gpus_contradicts_config_paired(
    gpus: int, sizes: dict[str, int], fits: bool
) -> None:
    doc = _set(_honest("example_reformatted"), "trainer.n_gpus_per_node", gpus)
    for key, value in sizes.items():
        doc = _set(doc, f"actor_rollout_ref.rollout.{key}", value)
    case = _case(doc, "config_paired")
    assert (case.finding == "confirmed") is fits, case.message
    assert ("verl asserts the world divides by it" in case.message) is not fits


def test_close_sample_pairs_after_stalls_pass_however_many() -> None:
    # The shipped sampler ticks on an absolute schedule: a reading late by most of an
    # interval sits close to the next on-time one (checks/series.py). A loaded host may
    # leave any number of such pairs; each is a late reading, never an early one.
    doc = _honest("example_reformatted")
    interval = doc["sampling"]["interval_s"]
    rows = doc["groups"]["release"]["resource_samples"]
    periodic = [i for i, s in enumerate(rows) if s.get("reason") == "periodic"]
    late = [i for i in periodic[5:-5] if i + 1 in periodic][::3]
    assert len(late) >= 10
    for i in late:
        rows[i]["t_s"] = round(rows[i + 1]["t_s"] - 0.05 * interval, 6)
    found = _case(doc, "resource_sampling").message
    assert "periodic samples within" not in found and "fit no schedule" not in found


def test_a_failure_blaming_a_group_that_never_started_is_contradicted() -> None:
    # release stopped in resume_kv_cache; had it been first to fail, retain never ran.
    doc = _honest("oom_in_resume_kv_cache")
    doc["groups"]["retain"]["events"] = []
    assert _finding(doc, "update_and_sync") != "false_record"  # naming release is true
    for phase in (None, "update"):
        edited = copy.deepcopy(doc)
        edited["failure"].update(group="retain", phase=phase)
        case = _case(edited, "update_and_sync")
        assert case.finding == "false_record", case.message
        assert "marked failed in retain, which never ran, but release did not complete" in (
            case.message
        )


def test_a_retained_engine_is_judged_on_its_own_share_not_the_actors() -> None:
    # retain holds 10046 MiB with the actor's 2310: an engine of 7736 MiB. At 0.7 of the
    # 16303 MiB card the floor is 0.8 x 0.7 x 16303 = 9130 MiB: the whole card (10046)
    # clears it, the engine does not.
    doc = _set_utilization(_honest("example_reformatted"), 0.7)
    case = _case(doc, "resume_calls")
    assert case.finding == "false_claim"
    assert "less the actor's 2310 MiB: its engine holds 7736 MiB, below 0.8 x" in case.message
    # 0.55: floor 7175 MiB, the engine's 7736 MiB clears it.
    assert _case(_set_utilization(doc, 0.55), "resume_calls").finding == "confirmed"


def test_a_released_engine_frees_a_share_of_its_memory_until_the_sync() -> None:
    doc = _honest("example_reformatted")
    assert _case(doc, "resume_calls").finding == "confirmed"
    group = doc["groups"]["release"]
    ends = {e["phase"]: e["t_s"] for e in group["events"] if e["kind"] == "end"}
    starts = {e["phase"]: e["t_s"] for e in group["events"] if e["kind"] == "start"}
    before = [s for s in group["resource_samples"] if s["t_s"] < starts["engine_sleep"]]
    level = max(s["gpu_used_mb"] for s in before[-2:])
    # The memory comes back after the sleep ends, 600 MiB short of the awake level:
    # more than 256 MiB, less than 0.25 x 0.4 x 16303 = 1630 MiB.
    for s in group["resource_samples"]:
        if ends["engine_sleep"] <= s["t_s"] <= starts["sync"]:
            s["gpu_used_mb"] = level - 600
    case = _case(doc, "resume_calls")
    assert case.finding == "false_claim"
    assert "the released engine's sleep freed less than 1630 MiB" in case.message
