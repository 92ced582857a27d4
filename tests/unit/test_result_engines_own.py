"""The configuration judged by the engines' own code (verl's config dataclasses and
build_optimizer, torch's optimizers): runs under ``tox -e verl-config`` (verl 0.9.1 and a
CPU torch), skips where verl is not installed. The same refused and accepted values as the
tables' test (test_result_engine_rules.py), so both judges are held to one set of rules."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("verl", reason="verl is not installed (tox -e verl-config installs it)")
pytest.importorskip("torch", reason="torch is not installed (tox -e verl-config installs it)")

from pytest_rlsys.resultfile.checks import configuration, engines_own
from pytest_rlsys.resultfile.grade import JUDGE_NOTE, grade_document
from tests.unit.test_result_engine_rules import ACCEPTED, REALISTIC, REFUSED


@pytest.fixture(autouse=True)
def engines_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(engines_own.JUDGE_ENV, raising=False)
    configuration._installed.cache_clear()
    yield
    configuration._installed.cache_clear()


def _configured(**values: object) -> dict[str, Any]:
    doc = json.loads(REALISTIC.read_text(encoding="utf-8"))
    config: dict[str, Any] = copy.deepcopy(doc["groups"]["release"]["config"])
    for dotted, value in values.items():
        *parents, leaf = dotted.split("__")
        node = config
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = copy.deepcopy(value)
    return config


def _own(config: dict[str, Any]) -> tuple[list[str], frozenset[str]]:
    installed = engines_own.installed()
    return engines_own.own_problems(config, "vllm", installed)


@pytest.mark.parametrize(
    ("values", "fragment"),
    [
        ({"actor_rollout_ref__rollout__mode": "sync"}, "RolloutConfig"),
        ({"actor_rollout_ref__rollout__mode": "batch"}, "Unknown rollout mode"),
        ({"actor_rollout_ref__rollout__pipeline_model_parallel_size": 2}, "pipeline"),
        ({"actor_rollout_ref__rollout__expert_parallel_size": 4}, "expert_parallel_size"),
        ({"actor_rollout_ref__rollout__tensor_model_parallel_size": "two"}, "RolloutConfig"),
        ({"actor_rollout_ref__actor__optim__lr_scheduler_type": "linear"}, "FSDPOptimizer"),
        ({"actor_rollout_ref__actor__optim__optimizer": "AdamQ"}, "AdamQ"),
        ({"actor_rollout_ref__actor__optim__betas": [0.9, 1.0]}, "beta"),
        ({"actor_rollout_ref__actor__optim__weight_decay": -0.1}, "weight_decay"),
        ({"actor_rollout_ref__actor__optim__lr": -1e-4}, "learning rate"),
    ],
)
def test_verl_and_torch_refuse_what_their_own_code_refuses(
    values: dict[str, object], fragment: str
) -> None:
    problems, judged = _own(_configured(**values))
    assert {"verl", "torch"} <= judged
    assert problems and fragment in problems[0], problems


def test_verl_and_torch_accept_the_runners_config() -> None:
    problems, judged = _own(_configured())
    assert problems == [] and {"verl", "torch"} <= judged
    problems, _ = _own(_configured(actor_rollout_ref__actor__optim__optimizer="SGD"))
    assert problems == []
    # JSON does not tell 4 from 4.0: a re-serialised file keeps its grade
    problems, _ = _own(
        _configured(actor_rollout_ref__rollout__n=4.0, actor_rollout_ref__rollout__top_k=-1.0)
    )
    assert problems == []


def test_the_report_names_the_engines_and_the_tables_for_the_rest() -> None:
    import torch
    import verl

    doc = json.loads(REALISTIC.read_text(encoding="utf-8"))
    label = grade_document(doc).notes[0]
    assert label.startswith(f"{JUDGE_NOTE} the engines' own code (verl ")
    assert verl.__version__ in label and torch.__version__ in label
    # vLLM is not installed with verl-config: its rules stay with the tables
    assert label.endswith("for the rest, the built-in tables (vLLM 0.24.0)")


def test_a_value_only_the_tables_know_is_still_refused() -> None:
    # max_num_batched_tokens < max_num_seqs is vLLM's rule: without vLLM, the table says it
    config = _configured(actor_rollout_ref__rollout__max_num_batched_tokens=256)
    assert any("max_num_seqs" in p for p in configuration.config_problems(config))


@pytest.mark.parametrize(("values", "fragment"), REFUSED)
def test_both_judges_refuse_the_same_values(values: dict[str, object], fragment: str) -> None:
    assert configuration.config_problems(_configured(**values)), values


@pytest.mark.parametrize("values", ACCEPTED)
def test_both_judges_accept_the_same_values(values: dict[str, object]) -> None:
    assert configuration.config_problems(_configured(**values)) == []
