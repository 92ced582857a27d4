"""A case's words come from its record when an output is written (outputs.wording)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pytest_rlsys.grading.grader import Grader
from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.grading.verdicts import HIDDEN_KINDS, PROBLEM_KINDS, ValueDiff
from pytest_rlsys.messages import HIDDEN_WORDS, PROBLEM_WORDS, Msg, has_cjk
from pytest_rlsys.outputs import scorejson, wording
from tests.english import english_sentences

FIELDS = {"exc", "at", "todo", "names", "key", "limit", "path", "note"}


def _fields(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


def test_every_kind_has_words_in_both_languages_with_the_same_fields() -> None:
    assert set(PROBLEM_WORDS) == set(PROBLEM_KINDS)
    for kind, words in PROBLEM_WORDS.items():
        assert _fields(words.en) == _fields(words.zh), kind
        assert _fields(words.en) <= FIELDS, kind
    assert set(HIDDEN_WORDS) == set(HIDDEN_KINDS)


def test_no_record_holds_a_sentence_or_a_language() -> None:
    names = {f.name for f in dataclasses.fields(CaseResult)}
    assert not names & {"message", "lang"}
    assert "lang" not in {f.name for f in dataclasses.fields(ScoreReport)}
    assert "lang" not in {f.name for f in dataclasses.fields(Grader)}
    category = next(f for f in dataclasses.fields(CaseResult) if f.name == "category")
    assert category.type in (Msg, "Msg")


def _visible(kind: str, **detail: object) -> CaseResult:
    return CaseResult(
        "todo1.visible.x",
        "todo1",
        "visible",
        100,
        "failed",
        kind=kind,
        **detail,  # type: ignore[arg-type]
    )


def test_the_calls_own_text_is_shown_as_it_is_never_searched_for_fields() -> None:
    case = _visible("raised", exc_type="KeyError", line=7, note="{path} {exc} {at}")
    assert wording.message(case) == "raised KeyError at line 7 of your file: {path} {exc} {at}"
    assert wording.message(case, "zh") == "抛出了 KeyError（你的文件第 7 行）：{path} {exc} {at}"


@pytest.mark.parametrize(
    ("case", "en", "zh"),
    [
        (
            _visible("missing_key", names=("capacity",)),
            "the result has no key 'capacity'",
            "返回值缺少键 'capacity'",
        ),
        (
            _visible("too_many_timeouts", names=("pipeline_capacity",), limit=3),
            "not run: pipeline_capacity() already timed out 3 times",
            "未运行：pipeline_capacity() 已超时 3 次",
        ),
        (
            _visible("over_budget", limit=120.0),
            "not run: the submission's time budget of 120 s is used up",
            "未运行：提交的总时间预算 120 秒已用完",
        ),
        (
            _visible("not_implemented", todo="todo2"),
            "TODO 2 not implemented yet (raises NotImplementedError)",
            "TODO 2 尚未实现（抛出 NotImplementedError）",
        ),
        (
            _visible("wrong_value", diff=ValueDiff("$.capacity", "wrong_value", "80.0", "81")),
            "$.capacity: wrong value: expected 80.0, got 81",
            "$.capacity：值错误：应为 80.0，得到 81",
        ),
        (
            _visible(
                "wrong_type_list",
                diff=ValueDiff("$.rows", "not_a_list", got="(1,)", got_type="tuple"),
            ),
            "$.rows: wrong type: expected list, got tuple (1,)",
            "$.rows：类型错误：应为 list，得到 tuple (1,)",
        ),
        (
            _visible(
                "missing_key",
                diff=ValueDiff("$.rows[1]", "keys", missing=("cross_pool",), extra=("crosspool",)),
            ),
            "$.rows[1]: missing keys ['cross_pool'], unexpected keys ['crosspool']",
            "$.rows[1]：缺少键 ['cross_pool']；多余的键 ['crosspool']",
        ),
        (
            _visible(
                "wrong_type_number",
                diff=ValueDiff(
                    "$.capacity",
                    "nonplain",
                    got="<fractions.Fraction>",
                    want_type="float",
                    got_type="fractions.Fraction",
                ),
            ),
            "$.capacity: wrong type: got a fractions.Fraction object, expected a plain float",
            "$.capacity：类型错误：得到 fractions.Fraction 对象，应为普通的 float",
        ),
        (
            _visible("wrong_type_dict", path="$"),
            "wrong type at $ (expected dict)",
            "$ 处的类型错误（应为 dict）",
        ),
        (_visible("", note="a result-file check's words"), "a result-file check's words", None),
    ],
)
def test_each_kind_is_worded_from_its_detail(case: CaseResult, en: str, zh: str | None) -> None:
    assert wording.message(case, "en") == en
    assert wording.message(case, "zh") == (zh if zh is not None else en)


def test_a_hidden_case_is_worded_from_its_kind_and_schema_path_only() -> None:
    # Whatever else the record held (it never does), the words cannot show it.
    case = CaseResult(
        "todo1.hidden.x",
        "todo1",
        "hidden",
        100,
        "failed",
        kind="wrong_value",
        path="$.bottlenecks",
        note="secret",
        exc_type="Secret",
        names=("secret",),
    )
    assert wording.message(case) == "wrong value at $.bottlenecks"
    assert "secret" not in wording.message(case, "zh").lower()


def test_one_grading_gives_both_languages(reference_source: str) -> None:
    broken = reference_source.replace("capacity = min(", "capacity = max(", 1)
    assert broken != reference_source
    grader = Grader(Path("rlsys_ledger.py"), broken.encode(), 1)
    grader.run_all()
    report = grader.report()
    en, zh = (scorejson.document(report, lang) for lang in ("en", "zh"))
    assert en["reproducibility"]["lang"] == "en" and zh["reproducibility"]["lang"] == "zh"
    failed = [i for i, t in enumerate(en["tests"]) if t["status"] != "passed"]
    assert failed
    for i in failed:
        a, b = en["tests"][i], zh["tests"][i]
        assert {k: v for k, v in a.items() if k not in ("message", "category")} == {
            k: v for k, v in b.items() if k not in ("message", "category")
        }
    assert any(en["tests"][i]["category"] != zh["tests"][i]["category"] for i in failed)


def test_a_missing_package_gets_the_stdlib_hint_from_the_exception_class(
    reference_source: str,
) -> None:
    """The hint reads the class of the exception the import raised, never the text."""
    from pytest_rlsys.outputs import batchline, terminal

    future = "from __future__ import annotations\n"
    assert future in reference_source
    source = reference_source.replace(future, future + "import numpy_not_installed_here\n", 1)
    grader = Grader(Path("rlsys_ledger.py"), source.encode(), 1)
    grader.run_all()
    report = grader.report()
    assert report.load_exc_type == "ModuleNotFoundError"
    for lang, hint in (
        ("en", "only the standard library is available"),
        ("zh", "只能使用 Python 标准库"),
    ):
        text = "\n".join(terminal.terminal_summary(report, lang))
        assert "ModuleNotFoundError" in text and hint in text
        assert hint in batchline.below_full_marks(report, lang)
    # A text that merely mentions the name earns no hint.
    assert terminal.with_hint("ModuleNotFoundError in a note", "", "en") == (
        "ModuleNotFoundError in a note"
    )


@pytest.mark.parametrize(
    ("case", "en", "zh"),
    [
        (
            _visible("raised", exc_type="MemoryError", line=3, note="out of memory"),
            "raised MemoryError at line 3 of your file: out of memory",
            "抛出了 MemoryError（你的文件第 3 行）：out of memory",
        ),
        (
            _visible("raised", exc_type="RecursionError"),
            "raised RecursionError",
            "抛出了 RecursionError",
        ),
        (
            _visible("raised_other", exc_type="MemoryError", line=3),
            "raised MemoryError at line 3 of your file",
            "抛出了 MemoryError（你的文件第 3 行）",
        ),
    ],
)
def test_a_shared_failure_names_the_exception_not_what_one_case_expected(
    case: CaseResult, en: str, zh: str
) -> None:
    assert wording.shared_message(case, "en") == en
    assert wording.shared_message(case, "zh") == zh
    assert "ValueError" in wording.message(case) or case.kind == "raised"


@pytest.mark.parametrize(
    ("kind", "en", "zh"),
    [
        ("missing_key", "missing key at $.rows", "$.rows 处缺少键"),
        ("unexpected_key", "unexpected key at $.rows", "$.rows 处有多余的键"),
        (
            "wrong_type_list",
            "wrong type at $.rows (expected list)",
            "$.rows 处的类型错误（应为 list）",
        ),
        (
            "wrong_type_number",
            "wrong type at $.rows (expected int or float)",
            "$.rows 处的类型错误（应为 int 或 float）",
        ),
    ],
)
def test_a_hidden_failure_names_what_failed(kind: str, en: str, zh: str) -> None:
    case = CaseResult("todo2.hidden.x", "todo2", "hidden", 100, "failed", kind=kind, path="$.rows")
    assert (wording.message(case), wording.message(case, "zh")) == (en, zh)


@pytest.mark.parametrize(
    ("old", "new", "kind", "path"),
    [
        (
            '"over_limit_pools": over_limit,',
            '"over_limit_pool": over_limit,',
            "missing_key",
            "$.over_limit_pools",
        ),
        (
            '"over_limit_pools": over_limit,',
            '"over_limit_pools": tuple(over_limit),',
            "wrong_type_list",
            "$.over_limit_pools",
        ),
        ('"rows": rows,', '"rows": (r for r in rows),', "wrong_type_list", "$.rows"),
        ('"cross_pool": cross_pool,', '"crosspool": cross_pool,', "missing_key", "$.rows"),
        (
            '"queue_stable": not unstable,',
            '"queue_stable": not unstable, "x": 1,',
            "unexpected_key",
            "$",
        ),
        (
            '"capacity": capacity,',
            '"capacity": __import__("fractions").Fraction(capacity),',
            "wrong_type_number",
            "$.capacity",
        ),
    ],
)
def test_graded_failures_are_named_by_what_failed(
    reference_source: str, old: str, new: str, kind: str, path: str
) -> None:
    """A misspelled key, a tuple, a generator or a Fraction is named as such in the
    hidden cases it fails, never as a wrong value or disagreeing related inputs."""
    assert old in reference_source
    grader = Grader(Path("rlsys_ledger.py"), reference_source.replace(old, new).encode(), 1)
    grader.run_all()
    failed = [c for c in grader.report().cases if c.status != "passed"]
    hidden = {(c.kind, c.path) for c in failed if c.visibility == "hidden"}
    assert (kind, path) in hidden
    assert not {k for k, _ in hidden} & {"wrong_value", "inconsistent"}
    shown = " ".join(wording.message(c, lang) for c in failed for lang in ("en", "zh"))
    assert "$rlsys_nonplain" not in shown


# -- Chinese feedback has no English sentence outside quoted code and values -------------


def test_the_english_detector_finds_sentences_and_leaves_code_alone() -> None:
    assert english_sentences("超时：no answer within 5 s（是否有死循环？）")
    assert english_sentences("无法加载：SyntaxError — line 200 reads: def broken(:")
    assert not english_sentences("$.rows：类型错误：应为 list，得到 tuple (1,)")
    assert not english_sentences("[TODO 1] 拒绝 NaN 阶段速率：抛出了 KeyError：'boom'")
    assert not english_sentences("pipeline_capacity({'rollout': 240}, arrival_rate=70)")
    assert not english_sentences("无法加载：SyntaxError：“invalid syntax (x.py, line 2)”")


def _edit(source: str, old: str, new: str) -> str:
    assert old in source
    return source.replace(old, new, 1)


_FIRST = "    if not stage_rates:\n"
# (name, how the reference is changed): together they exercise every kind of the
# grader's own sentences (timeouts, crashes, load errors, missing functions, output notices)
ZH_SUBMISSIONS = [
    ("wrong_value", ("capacity = min(", "capacity = max(")),
    ("wrong_type", ('"bottlenecks": bottlenecks,', '"bottlenecks": tuple(bottlenecks),')),
    ("missing_key", ('"cross_pool": cross_pool,', '"crosspool": cross_pool,')),
    ("raises", (_FIRST, "    raise KeyError('boom')\n" + _FIRST)),
    ("refuses_everything", (_FIRST, "    raise ValueError('no')\n" + _FIRST)),
    ("not_implemented", (_FIRST, "    raise NotImplementedError('TODO 1')\n" + _FIRST)),
    ("timeout", (_FIRST, "    while True:\n        pass\n" + _FIRST)),
    ("crash", (_FIRST, "    import os\n    os._exit(3)\n" + _FIRST)),
    ("load_error", ("def evaluate_topology(", "def broken(:\ndef evaluate_topology(")),
    ("missing_function", ("def evaluate_topology(", "def evaluate_topology_x(")),
    ("prints", (_FIRST, "    print('hello')\n" + _FIRST)),
    ("not_utf8", ("", "")),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "change"), ZH_SUBMISSIONS, ids=[s[0] for s in ZH_SUBMISSIONS])
def test_chinese_feedback_has_no_english_sentence(
    reference_source: str, name: str, change: tuple[str, str]
) -> None:
    from pytest_rlsys.outputs import terminal

    data = (
        (reference_source + "\n# caf\xe9\n").encode("latin-1", "replace")
        if name == "not_utf8"
        else _edit(reference_source, *change).encode()
    )
    grader = Grader(Path("rlsys_ledger.py"), data, 1)
    grader.run_all()
    report = grader.report()
    assert report.score < 100 or name == "prints"
    shown = terminal.terminal_summary(report, "zh", verbose=True, width=200)
    shown += grader.captured_output("zh").splitlines()[-1:]
    # A claim is the chapter's code after its label ("raises ValueError" is worded).
    claim = terminal.labels("zh")["claim"]
    shown = [line.split(claim, 1)[0] if claim in line else line for line in shown]
    found = [(line, english_sentences(line)) for line in shown if english_sentences(line)]
    assert found == []


def test_every_sentence_of_the_grader_is_worded_in_chinese() -> None:
    # The sandbox's and the grader's own sentences (limits, signals, a missing function,
    # the run-as note...): filled with values, no English sentence is left in Chinese.
    from pytest_rlsys.messages import SAID_WORDS, Said

    for key in SAID_WORDS:
        if key == "as_is":  # text that is not the grader's (a refusal's reason)
            continue
        fields = tuple((name, "1") for name in re.findall(r"\{(\w+)\}", SAID_WORDS[key].en))
        zh = Said(key, fields).text("zh")
        assert has_cjk(zh) and not english_sentences(zh), (key, zh)
        assert Said(key, fields).text("en") != zh, key


def test_a_file_that_is_not_utf8_is_named_by_its_line() -> None:
    from pytest_rlsys.messages import said

    grader = Grader(Path("rlsys_ledger.py"), b"x = 1\r\ny = 2\n# caf\xe9\n", 1)
    try:
        assert grader.decode_error == said("not_utf8", byte="e9", line=3)
        assert "(byte 0xe9 on line 3)" in (grader.report().load_error or "")
    finally:
        grader.close()


@pytest.mark.parametrize(
    "error",
    [{"type": "ReplyTooLarge", "message": ""}, {"type": "ReplyNotSent", "message": "OSError"}],
)
def test_the_childs_account_of_an_unsent_answer_is_the_graders_words(
    error: dict[str, str],
) -> None:
    from pytest_rlsys.grading.battery.checks import outcome_problem
    from pytest_rlsys.grading.replies import parse_call

    verdict = outcome_problem(parse_call({"ok": False, "error": error}, 0.0), "todo1")
    case = _visible("raised", exc_type=verdict.exc_type, note=verdict.note, said=verdict.said)
    zh = wording.message(case, "zh")
    assert has_cjk(zh) and not english_sentences(zh), zh


def test_every_note_is_worded_in_the_output_language() -> None:
    """Instructor and learner notes are facts (``Said``), chosen by the record's field:
    the score JSON and the -v summary word them all in zh, none matched by its text."""
    import json

    from pytest_rlsys.grading.scoring import RenderOptions
    from pytest_rlsys.messages import said
    from pytest_rlsys.outputs import registry, terminal

    report = ScoreReport(
        cases=[],
        seed=1,
        submission=None,
        submission_sha256=None,
        battery_sha256=None,
        notes=[said("cleanup_failed", exc="OSError"), said("root_fallback", user="nobody")],
        learner_notes=[said("missing_parameter", func="evaluate_topology", param="slack")],
        ran_as=said("ran_as", user=said("fresh_uid")),
    )
    notes = json.loads(registry.render("report", report, RenderOptions(lang="zh")))["notes"]
    quiet = terminal.terminal_summary(report, "zh", verbose=False)
    loud = terminal.terminal_summary(report, "zh", verbose=True)
    assert len(notes) == 4 and len(loud) == len(quiet) + 3
    for text in (*notes, *loud):
        assert not english_sentences(text), text


@pytest.mark.parametrize(
    "how", ["not_a_number", "not_a_list", "not_a_dict", "not_a_str", "not_a_bool"]
)
def test_the_type_due_is_worded_in_the_output_language(how: str) -> None:
    diff = ValueDiff(path="$.capacity", how=how, got="'1'", got_type="str")
    zh = wording.diff_text(diff, "zh")
    assert has_cjk(zh) and not english_sentences(zh), zh


def test_no_entry_of_the_catalogue_says_an_english_sentence_in_chinese() -> None:
    """Every entry of the one catalogue (``messages``), its fields filled, reads as
    Chinese in zh: English only in code, identifiers and quoted values."""
    from pytest_rlsys import messages

    entries = [
        (f"{name}[{key}]", words)
        for name, value in vars(messages).items()
        if isinstance(value, dict)
        for key, words in value.items()
        if isinstance(words, Msg)
    ]
    entries += [(name, v) for name, v in vars(messages).items() if isinstance(v, Msg)]
    assert len(entries) > 150
    for name, words in entries:
        zh = words.fill("zh", {f: "1" for f in re.findall(r"\{(\w+)\}", words.zh)})
        assert not english_sentences(zh), (name, zh)


def test_a_cleanup_warning_is_worded_in_the_output_language() -> None:
    from pytest_rlsys.grading.request import GradingRequest
    from pytest_rlsys.grading.scoring import RenderOptions
    from pytest_rlsys.session import GradingSession

    class Stuck:
        def close(self) -> None:
            raise OSError("busy")

    report = ScoreReport(
        cases=[], seed=1, submission=None, submission_sha256=None, battery_sha256=None
    )
    request = GradingRequest(render=RenderOptions(lang="zh"))
    session = GradingSession(Stuck(), None, request, final=report)  # type: ignore[arg-type]
    session.close()
    session.grader = None  # closed: the summary reads the final report only
    warned = [line for line in session.summary_lines(False, 200) if "OSError" in line]
    assert warned == ["警告: 提交运行后的清理失败（OSError('busy')）"]  # as "说明: " is written
