"""Instructor kits: what a grading platform needs to run ``rlsys grade`` on a submission.

``write_kit("gradescope", DIR)``   DIR/autograder.zip (setup.sh, run_autograder, README.md)
``write_kit("prairielearn", DIR)`` an external-grader question folder (info.json,
                                   question.html, the starter file, tests/run.sh, docker/)
``write_kit("classroom", DIR)``    a starter repository: the GitHub Classroom workflow,
                                   its grading script and autograding.json, the starter file

How the grader is installed: with ``wheel`` the kit bundles that wheel of pytest-rlsys and
installs it (no package index needed for rlsys itself); without, it installs
``pytest-rlsys==<this version>`` from the package index.  Either way the version is pinned.

Every script writes the platform's result file even when grading itself fails (no file,
a crash): score 0 and the reason, so the platform shows an explanation.
"""

from __future__ import annotations

import json
import shutil
import uuid
import zipfile
from pathlib import Path

from pytest_rlsys import __version__
from pytest_rlsys.resources import exercise_path

__all__ = ["PLATFORMS", "SUBMISSION_NAME", "KitError", "write_kit"]

PLATFORMS = ("gradescope", "prairielearn", "classroom")
SUBMISSION_NAME = "rlsys_ledger.py"  # the template's name; learners submit this file
PYTHON_MIN = (3, 11)


class KitError(Exception):
    """The kit cannot be written (bad wheel, unwritable folder)."""


def _requirement(wheel_name: str | None, where: str) -> str:
    """The pip argument that installs this exact version."""
    if wheel_name:
        return f'"{where}/{wheel_name}"'
    return f"'pytest-rlsys=={__version__}'"


# Makes sure the platform file exists after grading.  $PY runs the grader; the fallback
# needs only the standard library.
_FALLBACK = r"""
if [ ! -s "$RESULT" ]; then
  FPY="$PY"; command -v "$FPY" >/dev/null 2>&1 || FPY=python3
  "$FPY" - "$RESULT" "$KIND" "$WHY" <<'EOF'
import json, sys
path, kind, why = sys.argv[1], sys.argv[2], sys.argv[3] or "the grader produced no result"
message = "rlsys could not grade this submission: " + why
doc = {"gradescope": {"score": 0, "output": message, "tests": []},
       "prairielearn": {"gradable": True, "score": 0.0, "points": 0, "max_points": 100,
                        "message": message, "tests": []},
       "classroom": {"version": 1, "status": "error", "max_score": 100,
                     "tests": [{"name": "rlsys", "status": "error", "score": 0,
                                "message": message, "test_code": "", "filename": "",
                                "line_no": 0, "execution_time": "0s"}]}}[kind]
with open(path, "w", encoding="utf-8") as handle:
    json.dump(doc, handle)
EOF
fi
"""

# Shared by every script: grade $SUBMISSION into $RESULT ($KIND is also the output flag's
# name), then make sure the platform file exists.  -P: the current folder (in Classroom,
# the learner's repository) is not put on sys.path, so no folder of theirs can pose as
# the grader's package.
_GRADE = (
    r"""
"$PY" -P -m pytest_rlsys grade "$SUBMISSION" --"$KIND" "$RESULT" 2>"$ERR"
CODE=$?
cat "$ERR" >&2
WHY="$(tail -n 1 "$ERR") (rlsys grade exit status $CODE)"
"""
    + _FALLBACK
)

# Picks the file to grade: the template's name, else the only .py file submitted.
_PICK = r"""
pick_submission() {
  if [ -f "$1/NAME" ]; then echo "$1/NAME"; return; fi
  found=$(find "$1" -maxdepth 3 -name '*.py' -type f 2>/dev/null)
  if [ "$(printf '%s\n' "$found" | grep -c .)" = 1 ]; then echo "$found"; return; fi
  echo "$1/NAME"
}
""".replace("NAME", SUBMISSION_NAME)


def _gradescope(target: Path, wheel: str | None) -> list[Path]:
    setup = f"""#!/usr/bin/env bash
# Gradescope runs this once when the image is built (Ubuntu 24.04 base: Python 3.12).
set -euo pipefail
ROOT="${{RLSYS_AUTOGRADER_ROOT:-/autograder}}"
HERE="$(cd "$(dirname "$0")" && pwd)"
if ! python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < {PYTHON_MIN})' \\
     2>/dev/null; then
  apt-get update && apt-get install -y python3 python3-venv
fi
python3 -c 'import sys; sys.exit(sys.version_info < {PYTHON_MIN})' || {{
  echo "pytest-rlsys needs Python >= 3.11: choose the Ubuntu 24.04 base image" >&2; exit 1; }}
python3 -m venv "$ROOT/rlsys-venv"
"$ROOT/rlsys-venv/bin/python" -m pip install --no-cache-dir {_requirement(wheel, "$HERE")}
"""
    run = f"""#!/usr/bin/env bash
# Gradescope runs this for every submission, as root, in a fresh container.
set -u
ROOT="${{RLSYS_AUTOGRADER_ROOT:-/autograder}}"
PY="${{RLSYS_PYTHON:-$ROOT/rlsys-venv/bin/python}}"
RESULT="$ROOT/results/results.json"
ERR="$(mktemp)"
KIND=gradescope
mkdir -p "$ROOT/results"
rm -f "$RESULT"
{_PICK}
SUBMISSION=$(pick_submission "$ROOT/submission")
cd "$ROOT/source" 2>/dev/null || cd "$ROOT"
{_GRADE}"""
    readme = f"""# rlsys Gradescope autograder (pytest-rlsys {__version__})

Upload `autograder.zip` as a "Zip file upload" autograder; base image Ubuntu 24.04.
Students submit `{SUBMISSION_NAME}` (the template from `rlsys template`).
`setup.sh` installs {
        "the bundled wheel " + wheel
        if wheel
        else "pytest-rlsys==" + __version__ + " from the package index"
    }
into a venv; `run_autograder` grades `/autograder/submission` into
`/autograder/results/results.json` (set RLSYS_AUTOGRADER_ROOT to try it elsewhere).
"""
    files = {"setup.sh": setup, "run_autograder": run, "README.md": readme}
    written = []
    for name, text in files.items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755 if name != "README.md" else 0o644)
        written.append(path)
    archive = target / "autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in [*files, *([wheel] if wheel else [])]:
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name in ("setup.sh", "run_autograder") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, (target / name).read_bytes())
    return [*written, archive]


def _prairielearn(target: Path, wheel: str | None) -> list[Path]:
    (target / "tests").mkdir(exist_ok=True)
    (target / "docker").mkdir(exist_ok=True)
    image = f"rlsys-grader:{__version__}"
    info = {
        "uuid": str(uuid.uuid4()),
        "title": "PT-RL-SYSTEM: the system ledger (TODO 1-3)",
        "topic": "RL post-training systems",
        "tags": ["rlsys", "autograded"],
        "type": "v3",
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": True,
            "image": image,
            "entrypoint": "/grade/tests/run.sh",
            "timeout": 120,
        },
    }
    question = f'''<pl-question-panel>
  <p>Complete TODO 1-3 of <code>{SUBMISSION_NAME}</code> (standard library only), then
  submit. 补全 TODO 1-3 后提交。</p>
  <pl-file-editor file-name="{SUBMISSION_NAME}" ace-mode="ace/mode/python"
                  source-file-name="{SUBMISSION_NAME}"></pl-file-editor>
</pl-question-panel>
<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
'''
    run = f"""#!/usr/bin/env bash
# PrairieLearn's external grader runs this in the image named in info.json, with the
# question's tests/ at /grade/tests and the student's files at /grade/student.
set -u
ROOT="${{RLSYS_GRADE_ROOT:-/grade}}"
PY="${{RLSYS_PYTHON:-python3}}"
RESULT="$ROOT/results/results.json"
ERR="$(mktemp)"
KIND=prairielearn
mkdir -p "$ROOT/results"
rm -f "$RESULT"
{_PICK}
SUBMISSION=$(pick_submission "$ROOT/student")
cd "$ROOT"
{_GRADE}"""
    copy = f"COPY {wheel} /tmp/\n" if wheel else ""
    dockerfile = f"""# The grading image named in info.json: build, tag {image} and make it
# available to your PrairieLearn grader hosts.  PrairieLearn grades with networking off, so rlsys is
# installed here, not at grading time.
FROM python:3.12-slim
{copy}RUN python -m pip install --no-cache-dir {_requirement(wheel, "/tmp").replace('"', "")}
"""
    files = {
        "info.json": json.dumps(info, indent=2) + "\n",
        "question.html": question,
        SUBMISSION_NAME: exercise_path().read_text(encoding="utf-8"),
        "tests/run.sh": run,
        "docker/Dockerfile": dockerfile,
    }
    written = []
    for name, text in files.items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755 if name.endswith(".sh") else 0o644)
        written.append(path)
    if wheel:
        shutil.move(str(target / wheel), target / "docker" / wheel)
        written.append(target / "docker" / wheel)
    return written


def _classroom(target: Path, wheel: str | None) -> list[Path]:
    where = target / ".github" / "classroom"
    where.mkdir(parents=True, exist_ok=True)
    (target / ".github" / "workflows").mkdir(exist_ok=True)
    install = _requirement(wheel, ".github/classroom")
    grade = f"""#!/usr/bin/env bash
# The grading step of .github/workflows/classroom.yml: grade, then hand the runner result
# to the reporter as a base64 step output (the way Classroom's own graders do).
set -u
PY="${{RLSYS_PYTHON:-python}}"
RESULT="${{RUNNER_TEMP:-/tmp}}/rlsys-result.json"
ERR="$(mktemp)"
KIND=classroom
rm -f "$RESULT"
{_PICK}
SUBMISSION=$(pick_submission .)
{_GRADE}
echo "result=$(base64 -w 0 < "$RESULT")" >> "${{GITHUB_OUTPUT:-/dev/stdout}}"
"""
    workflow = f"""name: Autograding Tests
on: [push, workflow_dispatch, repository_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install the grader
        run: python -m pip install {install}
      - name: rlsys
        id: rlsys
        run: bash .github/classroom/grade.sh
      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
          RLSYS_RESULTS: "${{{{steps.rlsys.outputs.result}}}}"
        with:
          runners: rlsys
"""
    autograding = {
        "tests": [
            {
                "name": "rlsys",
                "setup": f"python -m pip install {install}",
                "run": f"rlsys grade {SUBMISSION_NAME}",
                "input": "",
                "output": "Points",
                "comparison": "included",
                "timeout": 10,
                "points": 100,
            }
        ]
    }
    files = {
        ".github/classroom/grade.sh": grade,
        ".github/workflows/classroom.yml": workflow,
        ".github/classroom/autograding.json": json.dumps(autograding, indent=2) + "\n",
        SUBMISSION_NAME: exercise_path().read_text(encoding="utf-8"),
    }
    written = []
    for name, text in files.items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755 if name.endswith(".sh") else 0o644)
        written.append(path)
    if wheel:
        shutil.move(str(target / wheel), where / wheel)
        written.append(where / wheel)
    return written


def write_kit(platform: str, target: Path, wheel: Path | None = None) -> list[Path]:
    """Write the kit for ``platform`` into ``target``; return the files written."""
    if platform not in PLATFORMS:
        raise KitError(f"unknown platform {platform!r} (choose from {', '.join(PLATFORMS)})")
    wheel_name = None
    if wheel is not None:
        if not wheel.is_file() or not wheel.name.endswith(".whl"):
            raise KitError(f"--wheel {wheel}: not a wheel file")
        if not wheel.name.startswith(f"pytest_rlsys-{__version__}-"):
            raise KitError(
                f"--wheel {wheel}: expected pytest_rlsys-{__version__}-*.whl, the "
                "version of this rlsys"
            )
        wheel_name = wheel.name
    try:
        target.mkdir(parents=True, exist_ok=True)
        if wheel is not None:
            shutil.copyfile(wheel, target / wheel.name)
        if platform == "gradescope":
            return _gradescope(target, wheel_name)
        if platform == "prairielearn":
            return _prairielearn(target, wheel_name)
        return _classroom(target, wheel_name)
    except OSError as exc:
        raise KitError(f"cannot write the kit into {target}: {exc.strerror or exc}") from None
