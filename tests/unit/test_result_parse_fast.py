"""The strict parse's fast path (issue 40): the C scanner without the per-integer and
per-object hooks, taken only where it yields what the hooked parse yields."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile import loading
from pytest_rlsys.resultfile.loading import StrictJSONError, loads_strict

EXAMPLE = schema_dir() / "examples" / "pt-verl-closure.example.json"


def _hooked(text: str) -> Any:
    """The parse every text went through before the fast path."""
    return json.loads(
        text,
        object_pairs_hook=loading._no_duplicates,
        parse_constant=loading._reject_constant,
        parse_float=loading._finite_float,
        parse_int=loading._float_sized_int,
    )


def _outcome(parse: Any, text: str) -> tuple[str, Any]:
    try:
        return "doc", parse(text)
    except (ValueError, RecursionError) as exc:
        return "refused", str(exc)


# Keys from a small alphabet (so objects repeat them), some holding a quote and a colon.
KEYS = st.sampled_from(["a", "b", 'q":', "c :", " "])
NUMBERS = st.one_of(
    st.integers(min_value=-(10**310), max_value=10**310).map(str),
    st.sampled_from(["1e999", "-1e999", "1.5e308", "2e-400", "NaN", "-Infinity", "0.25"]),
)
SPACES = st.sampled_from(["", " ", "\n ", "\t"])


def _render(draw: Any, node: Any) -> str:
    if isinstance(node, list) and node and node[0] == "obj":
        parts = [
            f"{json.dumps(k)}{draw(SPACES)}:{draw(SPACES)}{_render(draw, v)}" for k, v in node[1:]
        ]
        return "{" + ",".join(parts) + "}"
    if isinstance(node, list):
        return "[" + ",".join(_render(draw, v) for v in node) + "]"
    return str(node)


@st.composite
def json_texts(draw: Any) -> str:
    leaves = st.one_of(NUMBERS, st.text(max_size=4).map(json.dumps), st.just("null"))
    tree = st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.lists(st.tuples(KEYS, inner), max_size=4).map(lambda kv: ["obj", *kv]),
        ),
        max_leaves=12,
    )
    return _render(draw, draw(tree))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_texts())
def test_the_fast_path_parses_and_refuses_exactly_as_the_hooked_parse(text: str) -> None:
    fast = loading._fast_parse(text)
    if fast is not loading._SLOW:
        assert _outcome(_hooked, text) == ("doc", fast)
    hooked = _outcome(_hooked, text)
    try:
        assert ("doc", loads_strict(text)) == hooked
    except StrictJSONError as exc:
        assert hooked == ("refused", str(exc))


@pytest.mark.parametrize(
    "text",
    [
        '{"a" : 1, "a" : 2}',  # spaced colons: still counted
        '{"s": "x\\":", "a": 1, "a": 2}',  # a quote-colon inside a string, and a repeat
        '{"n": [' + "9" * 309 + "]}",  # a digit run too long for the unhooked parse
        '{"a": {"k": 1, "k": 2}, "b": 1e999}',  # two refusals: the first in the text told
        '{"s": [{"t": 1.0}, {"t": 1e400}]}',  # a float beyond a double among the samples
        "-1e999",  # ... or alone
    ],
)
def test_what_the_unhooked_parse_cannot_judge_goes_to_the_hooked_one(text: str) -> None:
    assert loading._fast_parse(text) is loading._SLOW
    with pytest.raises(StrictJSONError):
        loads_strict(text)


def test_an_honest_file_takes_the_fast_path() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    fast = loading._fast_parse(text)
    assert fast is not loading._SLOW
    assert fast == _hooked(text)
