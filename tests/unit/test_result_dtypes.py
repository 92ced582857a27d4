"""Issue 40, round 5: dtype-valued config fields outside what the engines accept.

The rule is the engines' own parsing (vLLM's and SGLang's ``_get_and_verify_dtype``: a
lower-cased name from a fixed set; verl's ``PrecisionType.to_dtype``: list membership),
so the tests range over arbitrary values, not a list of bad examples."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rlsys.resultfile.checks import configuration, engines_own

REALISTIC = (
    Path(__file__).resolve().parents[2]
    / "schemas"
    / "examples"
    / "pt-verl-closure.v1-realistic.example.json"
)
BASE: dict[str, Any] = json.loads(REALISTIC.read_text(encoding="utf-8"))["groups"]["release"][
    "config"
]


@pytest.fixture(autouse=True)
def tables_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(engines_own.JUDGE_ENV, "tables")
    configuration._installed.cache_clear()
    yield
    configuration._installed.cache_clear()


def _with(dotted: str, value: object, engine: str = "vllm") -> dict[str, Any]:
    config = copy.deepcopy(BASE)
    config["actor_rollout_ref"]["rollout"]["name"] = engine
    *parents, leaf = dotted.split(".")
    node = config
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value
    return config


def _dtype_problems(config: dict[str, Any]) -> list[str]:
    return [p for p in configuration.config_problems(config) if "dtype" in p]


ENGINE_NAMES = st.sampled_from(configuration.ENGINE_DTYPES)
CASED = ENGINE_NAMES.flatmap(
    lambda n: st.tuples(*(st.sampled_from((c.lower(), c.upper())) for c in n)).map("".join)
)


@settings(max_examples=60, deadline=None)
@given(name=CASED, engine=st.sampled_from(("vllm", "sglang")))
def test_every_dtype_name_the_engines_read_passes_in_any_case(name: str, engine: str) -> None:
    assert _dtype_problems(_with("actor_rollout_ref.rollout.dtype", name, engine)) == []


@settings(max_examples=60, deadline=None)
@given(
    value=st.one_of(st.text(max_size=12), st.integers(), st.floats(), st.booleans()).filter(
        lambda v: not (isinstance(v, str) and v.lower() in configuration.ENGINE_DTYPES)
    ),
    engine=st.sampled_from(("vllm", "sglang")),
)
def test_any_other_rollout_dtype_is_refused(value: object, engine: str) -> None:
    problems = _dtype_problems(_with("actor_rollout_ref.rollout.dtype", value, engine))
    assert len(problems) == 1 and "rollout.dtype" in problems[0]


@settings(max_examples=60, deadline=None)
@given(
    path=st.sampled_from(engines_own.VERL_DTYPE_PATHS),
    value=st.sampled_from(configuration.VERL_PRECISIONS),
)
def test_every_precision_verl_reads_passes(path: str, value: object) -> None:
    assert _dtype_problems(_with(path, value)) == []


@settings(max_examples=80, deadline=None)
@given(
    path=st.sampled_from(engines_own.VERL_DTYPE_PATHS),
    value=st.one_of(st.text(max_size=10), st.integers(), st.booleans()).filter(
        lambda v: isinstance(v, bool) or v not in configuration.VERL_PRECISIONS
    ),
)
def test_any_other_fsdp_precision_is_refused(path: str, value: object) -> None:
    problems = _dtype_problems(_with(path, value))
    assert len(problems) == 1 and path in problems[0]


def test_the_realistic_example_records_accepted_dtypes() -> None:
    assert _dtype_problems(copy.deepcopy(BASE)) == []


def _fake_modules(monkeypatch: pytest.MonkeyPatch, **modules: dict[str, object]) -> None:
    import sys
    import types

    for dotted, attrs in modules.items():
        name = dotted.replace("__", ".")
        module = types.ModuleType(name)
        for key, value in attrs.items():
            setattr(module, key, value)
        monkeypatch.setitem(sys.modules, name, module)
        parent, _, leaf = name.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], leaf, module)


@pytest.mark.parametrize("table", [{"half": 1, "float16": 1, "bfloat16": 1, "float": 1}, {}])
def test_vllms_own_names_judge_the_rollout_dtype(
    monkeypatch: pytest.MonkeyPatch, table: dict[str, int]
) -> None:
    # The installed vLLM's own table where it has one; the 0.24 names where it keeps them
    # elsewhere (never every dtype refused because a private name moved).
    _fake_modules(
        monkeypatch,
        vllm={},
        vllm__config={},
        vllm__config__model={"_STR_DTYPE_TO_TORCH_DTYPE": table},
    )
    engines_own._dtype("BFloat16")
    engines_own._dtype("auto")
    with pytest.raises(ValueError, match="Unknown dtype"):
        engines_own._dtype("fp8")


def test_verls_own_precision_type_judges_the_fsdp_dtypes(monkeypatch: pytest.MonkeyPatch) -> None:
    class PrecisionType:
        @staticmethod
        def to_dtype(precision: object) -> str:
            if precision in configuration.VERL_PRECISIONS:
                return "dtype"
            raise RuntimeError(f"unexpected precision: {precision}")

    _fake_modules(
        monkeypatch,
        verl={},
        verl__utils={},
        verl__utils__torch_dtypes={"PrecisionType": PrecisionType},
    )
    config = _with("actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype", "fp8")
    (problem,) = engines_own._verl_precisions(config)
    assert "param_dtype='fp8'" in problem and "unexpected precision" in problem
    assert engines_own._verl_precisions(copy.deepcopy(BASE)) == []
