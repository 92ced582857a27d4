"""Round 5 (issue 40): configuration, engine, versions and cards, judged by the built-in
tables (the engines' own code is tested in test_result_engines_own.py under
``tox -e verl-config``). Every rule against its source in docs/result-files.md."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.resultfile.checks import configuration, engines_own
from pytest_rlsys.resultfile.checks.cards import CARDS, Card, card_of, gpu_bound, unknown_card_note
from pytest_rlsys.resultfile.checks.configuration import CHOICE_RULES, CROSS_RULES
from pytest_rlsys.resultfile.checks.engine import _release_floor
from pytest_rlsys.resultfile.checks.identity import config_sha256
from pytest_rlsys.resultfile.checks.stack import stack_problems
from pytest_rlsys.resultfile.grade import JUDGE_NOTE, grade_document

DOCS = Path(__file__).resolve().parents[2] / "docs" / "result-files.md"
REALISTIC = (
    Path(__file__).resolve().parents[2]
    / "schemas"
    / "examples"
    / "pt-verl-closure.v1-realistic.example.json"
)


@pytest.fixture(autouse=True)
def tables_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The table judge, whatever this machine has installed."""
    monkeypatch.setenv(engines_own.JUDGE_ENV, "tables")
    configuration._installed.cache_clear()
    yield
    configuration._installed.cache_clear()


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(REALISTIC.read_text(encoding="utf-8"))
    return doc


def _set(config: dict[str, Any], dotted: str, value: object) -> None:
    *parents, leaf = dotted.split(".")
    node = config
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value


def _configured(**values: object) -> dict[str, Any]:
    config = copy.deepcopy(_doc()["groups"]["release"]["config"])
    for dotted, value in values.items():
        _set(config, dotted.replace("__", "."), value)
    return config


# --- cards: the whole NVML name ---------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA GeForce RTX 4090 Laptop GPU",
        "NVIDIA GeForce RTX 3080 Ti Laptop GPU",
        "NVIDIA RTX A5000 Laptop GPU",
        "NVIDIA GeForce RTX 4090 D",
        "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
        "NVIDIA GH200 480GB",
    ],
)
def test_a_name_the_table_does_not_know_whole_is_an_unknown_card(name: str) -> None:
    assert card_of(name) is None
    # Its memory is whatever the run recorded: nothing to contradict.
    limit, _, problems = gpu_bound({"gpu_name": name, "gpu_total_mb": 16376})
    assert (limit, problems) == (16376, [])
    note = unknown_card_note({"gpu_name": name})
    assert note is not None and "unknown card, not judged" in note


@pytest.mark.parametrize(
    ("name", "total"),
    [
        ("NVIDIA GeForce RTX 4090", 24564.0),
        ("NVIDIA A100-SXM4-80GB", 81920.0),
        ("NVIDIA A100 80GB PCIe", 81920.0),
        ("NVIDIA A100-PCIE-40GB", 40960.0),
        ("Tesla V100-SXM2-32GB", 32768.0),
        ("Tesla V100-PCIE-16GB", 16384.0),
        ("NVIDIA H100 PCIe", 81559.0),
        ("NVIDIA RTX 6000 Ada Generation", 49140.0),
    ],
)
def test_a_whole_known_name_is_its_card(name: str, total: float) -> None:
    found = card_of(name)
    assert found is not None and found[1] == total


def test_a_laptop_gpu_with_its_own_memory_grades_as_recorded() -> None:
    doc = _doc()
    doc["environment"]["gpu_name"] = "NVIDIA GeForce RTX 4090 Laptop GPU"
    doc["environment"]["gpu_total_mb"] = 16376.0  # the laptop part's 16 GB
    grade = grade_document(doc)
    assert grade.verdict == "passed", [c.message for c in grade.cases if c.status != "passed"]
    assert any("unknown card, not judged" in note for note in grade.notes)
    # The desktop card of the same number has 24 GB: there the total is contradicted.
    doc["environment"]["gpu_name"] = "NVIDIA GeForce RTX 4090"
    assert grade_document(doc).verdict == "contradicted"


# --- kv_cache_memory_bytes: exempt from the share floor of the sleep ----------------------


def test_a_kv_cache_sized_in_bytes_lifts_the_share_floor_of_the_sleep() -> None:
    environment = {"gpu_name": "NVIDIA H100 80GB HBM3", "gpu_total_mb": 81559.0}
    group = {"config": _configured()}
    share = 0.4 * 81559.0 * 0.25
    assert _release_floor(group, environment) == pytest.approx(share)
    kwargs = "actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes"
    _set(group["config"], kwargs, 4 * 2**30)
    assert _release_floor(group, environment) == 256.0
    _set(group["config"], kwargs, 64 * 2**20)  # a pool smaller than the fixed floor
    assert _release_floor(group, environment) == 64.0


# --- values the engines refuse (the tables) -----------------------------------------------

REFUSED = [
    ({"actor_rollout_ref__rollout__mode": "sync"}, "rollout.mode"),
    ({"actor_rollout_ref__rollout__mode": "batch"}, "rollout.mode"),
    ({"actor_rollout_ref__actor__optim__lr_scheduler_type": "linear"}, "lr_scheduler_type"),
    ({"actor_rollout_ref__actor__optim__optimizer": "AdamQ"}, "optim.optimizer"),
    ({"actor_rollout_ref__actor__optim__betas": [0.9, 1.0]}, "optim.betas"),
    ({"actor_rollout_ref__actor__optim__weight_decay": -0.1}, "weight_decay"),
    ({"actor_rollout_ref__model__lora_rank": 1024}, "lora_rank"),
    ({"actor_rollout_ref__model__lora_rank": 8.5}, "lora_rank"),
    ({"actor_rollout_ref__rollout__pipeline_model_parallel_size": 2}, "pipeline"),
    ({"actor_rollout_ref__rollout__expert_parallel_size": 4}, "expert_parallel_size"),
    (
        {
            "actor_rollout_ref__rollout__max_num_batched_tokens": 256,
            "actor_rollout_ref__rollout__max_num_seqs": 1024,
        },
        "max_num_seqs",
    ),
    ({"actor_rollout_ref__rollout__max_num_batched_tokens": 512}, "max_num_seqs"),
    (
        {
            "actor_rollout_ref__rollout__enable_chunked_prefill": False,
            "actor_rollout_ref__rollout__max_num_batched_tokens": 2048,
            "actor_rollout_ref__rollout__max_num_seqs": 64,
            "actor_rollout_ref__rollout__max_model_len": 4096,
        },
        "max_model_len",
    ),
    ({"actor_rollout_ref__rollout__temperature": 2.5}, "temperature"),
    ({"actor_rollout_ref__rollout__repetition_penalty": 0}, "repetition_penalty"),
    ({"actor_rollout_ref__rollout__max_num_seqs": 0}, "max_num_seqs"),
    ({"actor_rollout_ref__rollout__max_model_len": 65536}, "max_position_embeddings"),
    # each family's own config.json (issue 40): Qwen3 states 40960, Llama 3 8192, Qwen2.5's
    # instruction-tuned 7B 32768; verl's SGLang server applies the same check
    (
        {
            "actor_rollout_ref__rollout__max_model_len": 65536,
            "actor_rollout_ref__model__path": "Qwen/Qwen3-8B",
        },
        "max_position_embeddings 40960",
    ),
    (
        {
            "actor_rollout_ref__rollout__max_model_len": 16384,
            "actor_rollout_ref__model__path": "meta-llama/Meta-Llama-3-8B-Instruct",
        },
        "max_position_embeddings 8192",
    ),
    (
        {
            "actor_rollout_ref__rollout__max_model_len": 65536,
            "actor_rollout_ref__model__path": "qwen/qwen2.5-7b-instruct",
        },
        "max_position_embeddings",
    ),
    (
        {
            "actor_rollout_ref__rollout__name": "sglang",
            "actor_rollout_ref__rollout__max_model_len": 40961,
            "actor_rollout_ref__model__path": "Qwen/Qwen3-0.6B",
        },
        "sglang server raises",
    ),
    (
        {
            "actor_rollout_ref__rollout__max_model_len": 262144,
            "actor_rollout_ref__model__path": "meta-llama/Llama-3.1-8B-Instruct",
        },
        "max_position_embeddings 131072",
    ),
    (
        {
            "actor_rollout_ref__rollout__tensor_model_parallel_size": 4,
            "trainer__n_gpus_per_node": 4,
        },
        "attention heads",
    ),
]


@pytest.mark.parametrize(("values", "fragment"), REFUSED)
def test_a_value_the_engine_refuses_is_named(values: dict[str, object], fragment: str) -> None:
    problems = configuration.config_problems(_configured(**values))
    assert problems and fragment in problems[0], problems


ACCEPTED: list[dict[str, object]] = [
    {},
    {"actor_rollout_ref__rollout__mode": "async"},
    {"actor_rollout_ref__actor__optim__lr_scheduler_type": "cosine"},
    {"actor_rollout_ref__actor__optim__optimizer": "SGD"},
    {"actor_rollout_ref__actor__optim__optimizer_impl": "bitsandbytes.optim",
     "actor_rollout_ref__actor__optim__optimizer": "AdamW8bit"},
    {"actor_rollout_ref__actor__optim__betas": [0.9, 0.95]},
    {"actor_rollout_ref__model__lora_rank": 512},
    {"actor_rollout_ref__rollout__expert_parallel_size": 1},
    {"actor_rollout_ref__rollout__max_num_batched_tokens": 1024,
     "actor_rollout_ref__rollout__max_num_seqs": 1024},
    {"actor_rollout_ref__rollout__temperature": 2.0},
    # SGLang's own checks: no upper temperature, a repetition penalty of 0 taken
    {"actor_rollout_ref__rollout__name": "sglang",
     "actor_rollout_ref__rollout__temperature": 2.5,
     "actor_rollout_ref__rollout__repetition_penalty": 0},
    {"actor_rollout_ref__rollout__max_model_len": 32768},
    {"actor_rollout_ref__rollout__tensor_model_parallel_size": 2,
     "trainer__n_gpus_per_node": 2},
    {"actor_rollout_ref__rollout__max_model_len": 65536,
     "actor_rollout_ref__model__path": "/models/my-long-qwen"},
    # the bases from 7B on state 131072; Llama 3.1 131072; a model no table holds, or a
    # config that may override the model's own, is not judged
    {"actor_rollout_ref__rollout__max_model_len": 131072,
     "actor_rollout_ref__model__path": "Qwen/Qwen2.5-7B"},
    {"actor_rollout_ref__rollout__max_model_len": 131072,
     "actor_rollout_ref__model__path": "meta-llama/Llama-3.1-8B-Instruct"},
    {"actor_rollout_ref__rollout__max_model_len": 40960,
     "actor_rollout_ref__model__path": "Qwen/Qwen3-8B"},
    {"actor_rollout_ref__rollout__max_model_len": 65536,
     "actor_rollout_ref__model__path": "Qwen/Qwen2.5-Math-7B-Instruct"},
    {"actor_rollout_ref__rollout__max_model_len": 131072,
     "actor_rollout_ref__model__override_config": {"max_position_embeddings": 131072}},
    {"actor_rollout_ref__rollout__name": "sglang",
     "actor_rollout_ref__rollout__max_num_batched_tokens": 512},
]  # fmt: skip


@pytest.mark.parametrize("values", ACCEPTED)
def test_values_the_engines_accept_pass(values: dict[str, object]) -> None:
    assert configuration.config_problems(_configured(**values)) == []


def test_a_refused_value_contradicts_config_paired_in_both_groups() -> None:
    doc = _doc()
    for group in doc["groups"].values():
        _set(group["config"], "actor_rollout_ref.actor.optim.lr_scheduler_type", "warmup")
        group["config_sha256"] = config_sha256(group["config"])
    (case,) = [c for c in grade_document(doc).cases if c.id == "gpu_result.config_paired"]
    assert case.finding == "false_claim"
    assert "release's config sets actor_rollout_ref.actor.optim.lr_scheduler_type" in case.message


def test_the_report_names_the_judge_with_versions() -> None:
    grade = grade_document(_doc())
    assert grade.notes[0] == (
        f"{JUDGE_NOTE} the built-in tables (verl 0.9.1, vLLM 0.24.0, torch 2.13.0)"
    )


# --- versions and a card that cannot go together ------------------------------------------


def _stack(**environment: object) -> list[str]:
    doc = _doc()
    doc["environment"].update(environment)
    return stack_problems(doc)


def test_the_realistic_stack_goes_together() -> None:
    assert _stack() == []  # vLLM 0.11.0 with torch 2.8.0, CUDA 12.8, driver 575, RTX 5070 Ti


@pytest.mark.parametrize(
    ("environment", "fragment"),
    [
        ({"vllm": "0.24.0", "torch": "2.8.0"}, "requires torch==2.11.0"),
        ({"vllm": "0.11.0", "torch": "2.11.0+cu130"}, "requires torch==2.8.0"),
        ({"vllm": "0.24.0", "torch": "2.11.0+cu130", "cuda": "13.0"}, "needs driver >= 580"),
        ({"cuda": None, "torch": "2.8.0+cu130", "vllm": None}, "needs driver >= 580"),
        ({"gpu_name": "NVIDIA GeForce RTX 3090", "gpu_total_mb": 24576.0, "driver": "470.256.02"},
         "needs driver >= 525.60.13"),
        # a notebook part never has CUDA's forward-compatibility package, known to the card
        # table or not (issue 40: it was not judged)
        ({"gpu_name": "NVIDIA GeForce RTX 5090 Laptop GPU", "gpu_total_mb": 24463.0,
          "cuda": "13.0", "torch": "2.8.0+cu130", "vllm": None}, "needs driver >= 580"),
        ({"gpu_name": "NVIDIA RTX 2000 Ada Generation Laptop GPU", "gpu_total_mb": 8188.0,
          "cuda": "12.4", "torch": "2.5.1+cu124", "vllm": None, "driver": "470.239.06"},
         "needs driver >= 525.60.13"),
        ({"gpu_name": "NVIDIA TITAN RTX", "gpu_total_mb": 24576.0, "cuda": "12.1",
          "torch": "2.3.0+cu121", "vllm": None, "driver": "515.65.01"}, "no forward-compat"),
    ],
)  # fmt: skip
def test_versions_that_cannot_go_together(environment: dict[str, object], fragment: str) -> None:
    problems = _stack(**environment)
    assert problems and fragment in problems[0], problems


@pytest.mark.parametrize(
    "environment",
    [
        {"vllm": "0.24.0", "torch": "2.11.0+cu130", "cuda": "13.0", "driver": "580.95.05"},
        {"vllm": "0.99.0", "torch": "2.20.0"},  # a release no table knows: not judged
        # a data-centre card may run CUDA 13 on an older driver (forward compatibility)
        {"gpu_name": "NVIDIA H100 80GB HBM3", "gpu_total_mb": 81559.0, "cuda": "13.0",
         "torch": "2.8.0+cu130", "vllm": None},
        # a professional board may have the forward-compatibility package (NVIDIA: data
        # centre and select professional RTX): not judged (issue 40: it was refuted)
        {"gpu_name": "NVIDIA RTX A6000", "gpu_total_mb": 49140.0, "cuda": "13.0",
         "torch": "2.8.0+cu130", "vllm": None},
        {"gpu_name": "NVIDIA RTX 6000 Ada Generation", "gpu_total_mb": 49140.0,
         "cuda": "13.0", "torch": "2.8.0+cu130", "vllm": None},
        # minor-version compatibility: any CUDA 12.x on the CUDA 12.0 minimum driver
        {"gpu_name": "NVIDIA GeForce RTX 3090", "gpu_total_mb": 24576.0, "cuda": "12.8",
         "torch": "2.7.0+cu128", "vllm": None, "driver": "525.60.13"},
        # an unknown card whose name does not rule the package out: not judged
        {"gpu_name": "NVIDIA Graphics Device", "cuda": "13.0", "torch": "2.8.0+cu130",
         "vllm": None, "gpu_total_mb": 24463.0},
    ],
)  # fmt: skip
def test_versions_that_go_together_or_are_not_known_pass(environment: dict[str, object]) -> None:
    assert _stack(**environment) == []


def test_bf16_on_a_card_below_compute_8_is_refused_and_fp16_is_not() -> None:
    doc = _doc()
    doc["environment"].update(gpu_name="Tesla T4", gpu_total_mb=15360.0)
    assert any("Bfloat16 is only supported" in p for p in stack_problems(doc))
    for group in doc["groups"].values():
        _set(group["config"], "actor_rollout_ref.rollout.dtype", "float16")
    assert stack_problems(doc) == []


def test_weights_above_the_engine_share_are_refused_unless_the_kv_cache_is_sized() -> None:
    doc = _doc()
    doc["workload"]["model"] = "Qwen/Qwen2.5-7B-Instruct"  # 14 GB of bf16 weights
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["model"]["path"] = "Qwen/Qwen2.5-7B-Instruct"
    # 0.4 x 16303 MiB = 6521 MiB share on the RTX 5070 Ti
    assert any("No available memory for the cache blocks" in p for p in stack_problems(doc))
    for group in doc["groups"].values():  # split over two GPUs: 6676 MiB, still above
        _set(group["config"], "actor_rollout_ref.rollout.tensor_model_parallel_size", 2)
    assert any("tensor parallel 2" in p for p in stack_problems(doc))
    for group in doc["groups"].values():  # over four: 3338 MiB a GPU fits
        _set(group["config"], "actor_rollout_ref.rollout.tensor_model_parallel_size", 4)
    assert stack_problems(doc) == []
    for group in doc["groups"].values():
        _set(group["config"], "actor_rollout_ref.rollout.tensor_model_parallel_size", 1)
        kwargs = "actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes"
        _set(group["config"], kwargs, 2**30)
    assert stack_problems(doc) == []


# --- the docs list the tables the checks apply --------------------------------------------


def _card_row(card: Card) -> str:
    totals = "; ".join(
        f"{'no size' if size is None else f'{size}GB'}: {total:.0f}"
        for size, total in card.totals.items()
    )
    cc = ".".join(map(str, card.capability))
    datacenter = "yes" if card.datacenter else "no"
    return f"| `{' '.join(card.model)}` | {card.label} | {totals} | {cc} | {datacenter} |"


GENERATED = {
    "CARDS": [
        "| model words | card | total MiB by the size in the name | compute | data-centre |",
        "|---|---|---|---|---|",
        *(_card_row(c) for c in CARDS),
    ],
    "CHOICE_RULES": [
        "| configuration value | accepted | source |",
        "|---|---|---|",
        *(
            f"| `{r.path}` | {r.accepted}"
            + (f" (where `{r.when[0]}` is `{r.when[1]}`)" if r.when else "")
            + f" | {r.source} |"
            for r in CHOICE_RULES
        ),
    ],
}


@pytest.mark.parametrize("table", sorted(GENERATED))
def test_the_docs_list_the_tables_the_checks_apply(table: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(f"<!-- rules: {table} ")
    block = text[text.index("\n", start) + 1 : text.index("<!-- /rules -->", start)]
    assert block.strip().splitlines() == GENERATED[table]


def test_the_docs_name_every_cross_rule() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert [fn.__name__ for _, fn in CROSS_RULES if f"`{fn.__name__}`" not in text] == []


def test_a_bare_torch_does_not_switch_the_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    # CI installs a CPU torch without verl: the tables judge there (no seconds-long import).
    monkeypatch.delenv(engines_own.JUDGE_ENV)
    present = {"torch": "2.13.0+cpu"}
    monkeypatch.setattr(engines_own.importlib.util, "find_spec", lambda n: present.get(n))
    monkeypatch.setattr(engines_own.importlib.metadata, "version", present.__getitem__)
    assert engines_own.installed() == {}
    present["verl"] = "0.9.1"
    assert engines_own.installed() == {"verl": "0.9.1", "torch": "2.13.0+cpu"}
