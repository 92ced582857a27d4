"""Every platform file records the fence that graded (SPEC: "Every platform file records
the fence"): the score JSON's ``fence``, Gradescope's top-level ``extra_data`` (stored, not
shown to students), PrairieLearn's ``message``, a JUnit suite property; the kits' own files
(the Actions summary, Classroom 50's release-body.md) are in tests/plugin/test_kits.py."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.outputs import registry

FENCE = {"level": "landlock", "mechanisms": ["landlock-abi-7", "seccomp-allow-list", "rlimits"]}
SAID = "landlock (landlock-abi-7, seccomp-allow-list, rlimits)"


def _report(fence: dict[str, object] | None) -> ScoreReport:
    case = CaseResult(
        id="todo1.c0", section="todo1", visibility="visible", max_cents=100, status="passed"
    )
    return ScoreReport(
        cases=[case],
        seed=1,
        submission=None,
        submission_sha256=None,
        battery_sha256=None,
        fence=fence,
    )


@pytest.mark.parametrize("fence", [FENCE, None])
def test_every_platform_file_records_the_fence(fence: dict[str, object] | None) -> None:
    report = _report(fence)
    score = json.loads(registry.render("report", report))
    gradescope = json.loads(registry.render("gradescope", report))
    prairielearn = json.loads(registry.render("prairielearn", report))
    suite = ET.fromstring(registry.render("junit", report)).find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    if fence is None:  # nothing ran: nothing claimed
        assert "fence" not in score and "extra_data" not in gradescope and "fence" not in props
        assert prairielearn["message"].endswith("no fence recorded (nothing of the submission ran)")
        return
    assert score["fence"] == fence
    assert gradescope["extra_data"] == {"fence": fence}
    assert "Graded behind" not in gradescope["output"]  # the learner's summary: not there
    assert prairielearn["message"].endswith(f"Graded behind the fence: {SAID}")
    assert props["fence"] == SAID
