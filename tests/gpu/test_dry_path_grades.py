"""Files `rlsys closure run` writes through the CPU dry path satisfy every rule.

A completed run grades full marks; a failed one keeps the honest score its
own claims give, with no claim contradicted (docs/result-files.md).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rlsys_closure import runner
from test_run import Fakes, _opts

from pytest_rlsys.resultfile.grade import grade_result_file


@pytest.mark.parametrize("fail_group", [None, "release"])
def test_a_dry_run_grades_as_it_claims(tmp_path: Path, fail_group: str | None) -> None:
    fakes = Fakes(tmp_path, fail_group=fail_group)
    opts = _opts(tmp_path, f"dry_{fail_group or 'ok'}")
    runner.run(opts, fakes.steps(), io.StringIO())
    grade = grade_result_file(opts.output)
    assert grade.gradable, grade.errors
    contradicted = [c.message for c in grade.cases if c.message.startswith(("false", "claimed"))]
    assert contradicted == []
    if fail_group is None:
        assert (grade.score, grade.verdict) == (40.0, "passed")
    else:
        assert grade.verdict == "failed" and 0 < grade.score < 40.0
