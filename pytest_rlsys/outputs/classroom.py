"""GitHub Classroom: the runner result that education/autograding-grading-reporter reads.

The reporter (src/main.js) takes each runner step's ``result`` output, decodes it with
``Buffer.from(value, "base64").toString("utf-8")`` and ``JSON.parse``; it fails the job
when ``status`` is ``"fail"`` or ``"error"``; it prints each test's ``name``,
``status`` (``pass``/``fail``/``error``), ``message`` (errors), ``test_code`` and
``line_no`` (0: none); and src/notify-classroom.js sums ``tests[].score`` in order, when
``max_score`` is set, into the check run's ``Points <sum>/<max_score>`` that Classroom
records.  The file written here is that JSON; ``step_output`` is the base64 a workflow
step puts in ``$GITHUB_OUTPUT``.

The sum is a JavaScript float sum, so the scores are chosen (each within a few ulps of its
hundredths) so that it lands exactly on the report's total: the Points line reads
``Points 97.6/100``, never ``Points 97.60000000000001/100``.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import Any

from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.messages import LOAD_FAILED, Msg, claim_text
from pytest_rlsys.outputs.cases import title
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.terminal import with_hint
from pytest_rlsys.outputs.text import clean, clip, dump_json, js_number, seconds
from pytest_rlsys.outputs.wording import load_error_text, message

__all__ = [
    "WeightGroup",
    "exact_running_scores",
    "points_line",
    "render",
    "runner_name",
    "split_by_weight",
    "step_output",
    "weight_groups",
    "write_runner_outputs",
]

MAX_TEXT = 2000
_STATUS = {"passed": "pass", "failed": "fail"}


def _left_to_right(scores: Sequence[float]) -> float:
    total = 0.0
    for score in scores:
        total += score  # in order, as JavaScript's forEach does
    return total


def _near(value: float, steps: int) -> list[float]:
    """``value`` and its neighbours up to ``steps`` ulps away, nearest first."""
    out = [value]
    up = down = value
    for _ in range(steps):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
        out += [up, down]
    return out


def exact_running_scores(cents: Sequence[int]) -> list[float]:
    """A score per case, each within a few ulps of its hundredths, whose left-to-right
    float sum is exactly ``sum(cents) / 100``.

    Only cases with points are nudged: a failed case stays exactly 0.  The last such case
    absorbs the rounding of the sum before it; when no float does (the sum sits on a
    rounding tie), the one before it moves by an ulp first."""
    scores = [value / 100 for value in cents]
    target = sum(cents) / 100
    earning = [i for i, value in enumerate(cents) if value]
    if not earning or _left_to_right(scores) == target:
        return scores
    last = earning[-1]
    previous = earning[-2] if len(earning) > 1 else None
    # The running sum before the last case: as it is, else moved by an ulp or a few of
    # its own (which may be many of the previous score's: 8.39 + 0.52 does not move by
    # an ulp of 0.52), the previous score absorbing the move.
    partials = [_left_to_right(scores[:last])]
    if previous is not None:
        head = _left_to_right(scores[:previous])
        partials = _near(partials[0], 4)
    for partial in partials:
        if previous is not None:
            shift = next((p for p in _near(partial - head, 8) if head + p == partial), None)
            if shift is None:
                continue
            scores[previous] = shift
        before = _left_to_right(scores[:last])
        for candidate in _near(target - before, 8):
            if before + candidate == target:
                scores[last] = candidate
                return scores
    return [value / 100 for value in cents]  # not reached in practice; still near-exact


# The reporter prints every test: a file that did not load is one test, not every case
# repeating the same error (167 times in Classroom's log).
ALL_CASES = Msg("all {n} cases", "全部 {n} 个用例")


def _test(
    name: str, status: str, score: float, text: str, code: str, took: float
) -> dict[str, Any]:
    """One test as the reporter reads it (no file, no line: the grader's cases have none)."""
    return {
        "name": name,
        "status": status,
        "score": score,
        "message": clip(clean(text), MAX_TEXT),
        "test_code": clip(clean(code), MAX_TEXT),
        "filename": "",
        "line_no": 0,
        "execution_time": f"{seconds(took):.3f}s",
    }


def render(report: ScoreReport, options: RenderOptions) -> str:
    lang = options.lang
    if report.load_error is not None and report.cases:
        hinted = with_hint(load_error_text(report, lang), report.load_exc_type, lang)
        failed = LOAD_FAILED.get(lang).format(error=hinted)
        name = ALL_CASES.get(lang).format(n=len(report.cases))
        tests = [_test(name, "error", report.score, failed, "", 0)]  # the score: 0 in practice
    else:
        scores = exact_running_scores([c.cents for c in report.cases])
        tests = [
            _test(
                title(case, lang),
                _STATUS.get(case.status, "error"),
                score,
                message(case, lang),
                # The chapter's check in the run's language (claims are written in zh).
                claim_text(case.claim, lang) if case.claim else case.call,
                case.seconds,
            )
            for case, score in zip(report.cases, scores, strict=True)
        ]
    if report.load_error is not None:
        status = "error"
    elif all(c.status == "passed" for c in report.cases):
        status = "pass"
    else:
        status = "fail"
    return dump_json(
        {
            "version": 1,
            "status": status,
            "max_score": sum(c.max_cents for c in report.cases) / 100,
            "tests": tests,
        }
    )


def step_output(report: ScoreReport, options: RenderOptions | None = None) -> str:
    """The value of the runner step's ``result`` output: base64 of the UTF-8 JSON."""
    text = render(report, options or RenderOptions())
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def points_line(report: ScoreReport) -> str:
    """``Points X/Y`` exactly as the reporter writes it for this report."""
    earned = sum(c.cents for c in report.cases) / 100
    total = sum(c.max_cents for c in report.cases) / 100
    return f"Points {js_number(earned)}/{js_number(total)}"


# -- one total: the reporter's console and its recorded Points agree -------------------------
#
# The reporter prints, per runner, "Total points" = passed tests / tests x max_score
# (src/console-results.js, helpers/test-helpers.js getTestScore), and records the sum of
# the tests' scores (notify-classroom.js).  With cases of different weights in one runner
# the two differ (96.45 vs 95.53).  So the kit gives the reporter one runner per weight:
# every test of a runner weighs the same, and passed / tests x max_score is exactly the
# sum of its scores.  ``weight_groups`` names the runners when the kit is built (from the
# battery and the rubric); ``split_by_weight`` fills them after grading.

WeightGroup = tuple[str, str, int]  # runner id, section, cents per case


def runner_name(section: str, cents: int) -> str:
    """The name the reporter's console shows for a runner: ``todo1_worth_1_67`` (TODO 1's
    cases worth 1.67 points each).  A step output and an environment variable name too:
    ASCII letters, digits and underscores only."""
    tag = "".join(c for c in section if c.isascii() and c.isalnum()) or "section"
    return f"{tag}_worth_{f'{cents / 100:g}'.replace('.', '_')}"


def weight_groups(cases: Sequence[tuple[str, int]]) -> list[WeightGroup]:
    """One runner per (section, cents per case), in the order the cases come."""
    seen: dict[tuple[str, int], str] = {}
    for section, cents in cases:
        seen.setdefault((section, cents), runner_name(section, cents))
    return [(runner, section, cents) for (section, cents), runner in seen.items()]


def split_by_weight(
    runner: dict[str, Any], score: dict[str, Any] | None, groups: Sequence[WeightGroup]
) -> dict[str, dict[str, Any]]:
    """The runner result cut into one result per weight group (``weight_groups``).

    ``score`` is the same run's score JSON (each test's section and points, in the runner's
    order).  Without it (nothing was graded) or when it does not match the groups, every
    group gets one errored test carrying the reason once, and scores 0.
    """
    tests = runner.get("tests", [])
    cases = (score or {}).get("tests", [])
    members: dict[str, list[tuple[dict[str, Any], int]]] = {g[0]: [] for g in groups}
    by_key = {(section, cents): name for name, section, cents in groups}
    matched = score is not None and len(cases) == len(tests)
    if matched:
        for test, case in zip(tests, cases, strict=True):
            key = (str(case.get("section")), round(float(case.get("max_score", 0)) * 100))
            if key not in by_key:
                matched = False
                break
            members[by_key[key]].append((test, round(float(case.get("score", 0)) * 100)))
    if not matched or any(not items for items in members.values()):
        return _errored(runner, groups)
    order = [(name, i) for name, *_ in groups for i in range(len(members[name]))]
    exact = exact_running_scores([members[name][i][1] for name, i in order])
    out: dict[str, dict[str, Any]] = {}
    position = 0
    for name, _, cents in groups:
        items = members[name]
        group_tests = []
        for test, _ in items:
            group_tests.append({**test, "score": exact[position]})
            position += 1
        statuses = {t.get("status") for t in group_tests}
        status = "error" if "error" in statuses else "fail" if "fail" in statuses else "pass"
        out[name] = {
            "version": 1,
            "status": status,
            "max_score": len(items) * cents / 100,
            "tests": group_tests,
        }
    return out


def _errored(runner: dict[str, Any], groups: Sequence[WeightGroup]) -> dict[str, dict[str, Any]]:
    """Nothing graded: the reason once, in the first group, which carries the whole
    maximum (a group with max_score 0 adds nothing to either total)."""
    first = (runner.get("tests") or [{}])[0]
    message = str(first.get("message") or "the grader produced no result")
    out = {}
    for index, (name, _, _) in enumerate(groups):
        out[name] = {
            "version": 1,
            "status": "error",
            "max_score": float(runner.get("max_score") or 0) if index == 0 else 0,
            "tests": [
                {
                    "name": "rlsys",
                    "status": "error",
                    "score": 0,
                    "message": message if index == 0 else "not graded (see the first runner)",
                    "test_code": "",
                    "filename": "",
                    "line_no": 0,
                    "execution_time": "0s",
                }
            ],
        }
    return out


def write_runner_outputs(
    runner_path: str, score_path: str, output_path: str, groups: Sequence[WeightGroup]
) -> None:
    """For the kit's grade.sh: append ``<runner id>=<base64 result>`` for every group to
    $GITHUB_OUTPUT (and ``result=`` with the whole runner result)."""
    import json

    with open(runner_path, encoding="utf-8") as handle:
        runner = json.load(handle)
    try:
        with open(score_path, encoding="utf-8") as handle:
            score = json.load(handle)
    except (OSError, ValueError):
        score = None
    parts = split_by_weight(runner, score, groups)
    with open(output_path, "a", encoding="utf-8") as out:
        for name, doc in parts.items():
            encoded = base64.b64encode(dump_json(doc).encode("utf-8")).decode("ascii")
            out.write(f"{name}={encoded}\n")
        whole = base64.b64encode(dump_json(runner).encode("utf-8")).decode("ascii")
        out.write(f"result={whole}\n")
