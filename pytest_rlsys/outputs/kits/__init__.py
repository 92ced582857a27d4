"""Instructor kits: what a grading platform needs to run ``rlsys grade`` on a submission.

``write_kit("gradescope", DIR)``   DIR/autograder.zip (setup.sh, run_autograder, install.sh,
                                   wheels/, rlsys-seed) and DIR/README.md
``write_kit("prairielearn", DIR)`` an external-grader question folder (info.json,
                                   question.html, the starter file, tests/run.sh,
                                   tests/rlsys-seed, docker/ with the image's wheels)
``write_kit("classroom", DIR)``    a template repository: the Classroom workflow, its
                                   grading script, the wheels, the starter file

The rules every kit keeps (SPEC section 6, "Instructor kits"; docs/threat-model.md):

1. **Installs with no package-index release.**  The kit carries the wheel of the package
   it was built from (``--wheel``, else one packed from the installed package) and a wheel
   of every dependency, pinned in ``wheels/constraints.txt`` (``bundle.py``).  The install
   is offline; only a wheel that does not fit the image's Python falls back to the index,
   for the same pinned versions.
2. **No readable answer.**  After the install, nothing of the package is readable by the
   submission's uid: the installed package is root-only (``chmod -R go-rwx``), the wheels
   (they hold the reference) are deleted, the venv and the kit's own folder are 0700.
   The grader runs the submission as a fresh unprivileged uid (it runs as root on every
   platform but Classroom).
3. **A per-assignment secret seed.**  Generated when the kit is built
   (``secrets.randbits(63)``), stored root-only on the platform and passed as
   ``--seed @FILE`` (a command line is readable by every uid in ``/proc``); a kit never
   grades with the package's constant default seed: without its seed file it writes
   score 0 and the reason.
4. **One file name.**  Learners submit ``rlsys_ledger.py`` (the template's name); a script
   that finds another single ``.py`` file grades it.
5. Every script writes the platform's result file even when grading itself fails (no
   file, a crash): score 0 and the reason.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

from pytest_rlsys import __version__
from pytest_rlsys.outputs.classroom import WeightGroup, weight_groups
from pytest_rlsys.outputs.kits.bundle import Bundle, BundleError, build_bundle
from pytest_rlsys.resources import exercise_path

__all__ = [
    "GRADESCOPE_IMAGE",
    "PLATFORMS",
    "SUBMISSION_NAME",
    "Kit",
    "KitError",
    "new_seed",
    "write_kit",
]

PLATFORMS = ("gradescope", "prairielearn", "classroom")
SUBMISSION_NAME = "rlsys_ledger.py"  # the template's name; learners submit this file
IMAGE_NAME = "rlsys-grader"
GRADESCOPE_IMAGE = "Ubuntu 22.04 (Gradescope's default) or Ubuntu 24.04"
# rlsys's requires-python floor: an image whose python3 is older (Ubuntu 22.04: 3.10)
# gets python3.11 from its archive.
MIN_PYTHON = "3.11"
# The Pythons the Gradescope kit's wheels fit: 22.04's python3.11, 24.04's python3.12,
# and Debian 13's 3.13 (where the kit is tested in a root).
GRADESCOPE_PYTHONS = ("3.11", "3.12", "3.13")


class KitError(Exception):
    """The kit cannot be written (bad wheel, unwritable folder, a dependency missing)."""


class KitUsageError(KitError):
    """An option's value is wrong (the user's to fix, exit 2), not the kit's making."""


@dataclass(frozen=True)
class Kit:
    """What ``write_kit`` wrote (the bundled wheels as one line of advice), and what the
    instructor must do next (one line each)."""

    files: tuple[Path, ...]
    advice: tuple[str, ...]


def new_seed() -> int:
    """A per-assignment secret seed (what ``--seed`` accepts: 0 <= seed < 2**63)."""
    return secrets.randbits(63)


# -- the scripts' shared parts ----------------------------------------------------------------

# POSIX sh (python:*-slim images have dash): install offline from the bundled wheels, fall
# back to the index for the same pins only when a wheel does not fit this Python, then
# leave nothing of the package readable by other users.
_INSTALL = r"""#!/bin/sh
# Installs the bundled pytest-rlsys into the Python "$1" from the wheels in "$2":
# offline, with every dependency pinned (constraints.txt); then makes the installed
# package root-only and deletes the wheels (they hold the reference solution), so the
# submission's unprivileged uid can read no copy of it.
set -eu
PY="$1"
WHEELS="$2"
# pip unpacks the wheels (the reference among them) under TMPDIR: a private folder of our
# own, removed at the end, so nothing is left in /tmp and nobody else's files are touched.
TMPDIR=$(mktemp -d)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
if ! "$PY" -m pip install --no-cache-dir --disable-pip-version-check --no-index \
    --find-links "$WHEELS" -c "$WHEELS/constraints.txt" "$WHEELS/MAIN"; then
  echo "rlsys: a bundled wheel does not fit $("$PY" -V 2>&1); installing the same" \
    "pinned versions from the package index" >&2
  "$PY" -m pip install --no-cache-dir --disable-pip-version-check \
    --find-links "$WHEELS" -c "$WHEELS/constraints.txt" "$WHEELS/MAIN"
fi
PKG=$("$PY" -I -c 'import os, pytest_rlsys; print(os.path.dirname(pytest_rlsys.__file__))')
chmod -R go-rwx "$PKG"
rm -rf "$WHEELS"
"""

# Picks the file to grade: the template's name, else the only .py file submitted; else
# PROBLEM says, once, what to submit and what was found.  The names are the learner's:
# the fallback below escapes them.
_PICK = r"""
pick_submission() {
  SUBMISSION="$1/NAME"
  PROBLEM=""
  [ -f "$SUBMISSION" ] && return
  found=$(cd "$1" 2>/dev/null && find . -maxdepth 3 -path './.*' -prune -o -name '*.py' \
          -type f -print 2>/dev/null | sed 's|^\./||' | sort | head -n 20)
  count=$(printf '%s\n' "$found" | grep -c .)
  if [ "$count" = 1 ]; then SUBMISSION="$1/$found"; return; fi
  list=$(printf '%s\n' "$found" | grep . | paste -sd ',' - | sed 's/,/, /g')
  PROBLEM="submit one file named NAME (found: ${list:-no .py file})"
}
""".replace("NAME", SUBMISSION_NAME)

# Makes sure the platform file exists after grading.  $PY runs the grader; the fallback
# needs only the standard library.  $WHY may hold learner file names: escaped, bounded.
_FALLBACK = r"""
if [ ! -s "$RESULT" ]; then
  FPY="$PY"; command -v "$FPY" >/dev/null 2>&1 || FPY=python3
  "$FPY" -I - "$RESULT" "$KIND" "$WHY" <<'EOF'
import json, sys
path, kind, why = sys.argv[1], sys.argv[2], sys.argv[3] or "the grader produced no result"
why = "".join(c if c.isprintable() else "\\u%04x" % ord(c) for c in why)[:2000]
message = "rlsys could not grade this submission: " + why
doc = {"gradescope": {"score": 0, "output": message, "output_format": "text", "tests": []},
       "prairielearn": {"gradable": False, "score": 0.0, "points": 0, "max_points": 100,
                        "message": message, "format_errors": [message], "tests": []},
       "classroom": {"version": 1, "status": "error", "max_score": 100,
                     "tests": [{"name": "rlsys", "status": "error", "score": 0,
                                "message": message, "test_code": "", "filename": "",
                                "line_no": 0, "execution_time": "0s"}]}}[kind]
with open(path, "w", encoding="utf-8") as handle:
    json.dump(doc, handle)
EOF
fi
"""

# Grade $SUBMISSION into $RESULT ($KIND is also the output flag's name) with the seed in
# $SEED, then make sure the platform file exists.  The kits require the seccomp allow-list,
# not Landlock: each platform discards its container after one grading, and a container
# runtime whose seccomp profile predates Landlock's calls would otherwise refuse every
# submission (docs/threat-model.md, container recipe).  -P: the current folder (in Classroom,
# the learner's repository) is not put on sys.path, so no folder of theirs can pose as
# the grader's package.
_GRADE = (
    r"""
if [ -n "$PROBLEM" ]; then
  WHY="$PROBLEM"
elif [ ! -s "$SEED" ]; then
  WHY="$NO_SEED"
else
  "$PY" -P -m pytest_rlsys grade "$SUBMISSION" --seed "@$SEED" --require-fence seccomp \
    --"$KIND" "$RESULT" \
    ${EXTRA[@]+"${EXTRA[@]}"} 2>"$ERR"
  CODE=$?
  cat "$ERR" >&2
  WHY="$(tail -n 1 "$ERR") (rlsys grade exit status $CODE)"
fi
"""
    + _FALLBACK
)


def _write(target: Path, files: dict[str, str | bytes], secret: set[str]) -> list[Path]:
    """Write ``files``; return those a person reads (the wheels go unlisted)."""
    written = []
    for name, content in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        path.chmod(0o600 if name in secret else 0o755 if name.endswith(".sh") else 0o644)
        if "/wheels/" not in f"/{name}":
            written.append(path)
    return written


def _install_script(bundle: Bundle) -> str:
    return _INSTALL.replace("MAIN", bundle.main)


def _wheel_files(bundle: Bundle, wheels: Path, prefix: str) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        f"{prefix}/{name}": (wheels / name).read_bytes() for name in bundle.wheels
    }
    files[f"{prefix}/constraints.txt"] = bundle.constraints
    return files


# -- Gradescope -------------------------------------------------------------------------------


def _gradescope(
    target: Path, bundle: Bundle, wheels: Path, seed: int, hidden_visibility: str
) -> Kit:
    fits = " ".join(bundle.pythons or (bundle.python,))
    setup = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
# Base image: {GRADESCOPE_IMAGE}.
# rlsys needs Python >= {MIN_PYTHON}: the image's own python3 when it is one (24.04: 3.12;
# only its venv module, python3-venv, may come from the archive), else python{MIN_PYTHON}
# from the archive (22.04: its python3 is 3.10).  The bundled wheels fit Python {fits};
# another one takes the same pinned versions from the package index.
set -euo pipefail
ROOT="${{RLSYS_AUTOGRADER_ROOT:-/autograder}}"
HERE="$(cd "$(dirname "$0")" && pwd)"
# The zip's files are in $ROOT/source (Gradescope's specs.md); it copies run_autograder to
# $ROOT and does not say where setup.sh runs from: from a copy, the files are still found.
[ -f "$HERE/install.sh" ] || HERE="$ROOT/source"
VENV="$ROOT/rlsys-venv"
RECENT='import sys; sys.exit(sys.version_info < ({MIN_PYTHON.replace(".", ", ")}))'
# Whether "$1" is a Python >= {MIN_PYTHON} that can make rlsys's venv (it then has).
venv_from() {{
  rm -rf "$VENV"
  "$1" -c "$RECENT" 2>/dev/null && "$1" -m venv "$VENV" >/dev/null 2>&1
}}
apt_get() {{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"; }}
PY=python3
if ! venv_from python3; then
  apt-get update -q
  command -v python3 >/dev/null 2>&1 || apt_get python3
  if ! python3 -c "$RECENT"; then
    PY=python{MIN_PYTHON}  # an older python3 (Ubuntu 22.04: 3.10)
  fi
  apt_get "$PY" "$PY-venv" || {{
    echo "rlsys: the archive did not install $PY and $PY-venv (22.04: python3.11 is in" \\
      "Ubuntu's universe component); or choose the Ubuntu 24.04 base image (python3 3.12)" >&2
    exit 1; }}
  venv_from "$PY" || {{
    echo "rlsys: no Python >= {MIN_PYTHON} with venv here; base image: {GRADESCOPE_IMAGE}" >&2
    exit 1; }}
fi
sh "$HERE/install.sh" "$VENV/bin/python" "$HERE/wheels"
# The assignment's seed: root-only, read by run_autograder as --seed @FILE.
install -d -m 700 "$ROOT/rlsys-secret"
install -m 600 "$HERE/rlsys-seed" "$ROOT/rlsys-secret/seed"
rm -f "$HERE/rlsys-seed"
chmod 700 "$VENV" "$HERE"
"$VENV/bin/python" -I -c 'import pytest_rlsys.cli'
"""
    run = f"""#!/usr/bin/env bash
# Gradescope runs this for every submission, as root, in a fresh container.
set -u
ROOT="${{RLSYS_AUTOGRADER_ROOT:-/autograder}}"
PY="${{RLSYS_PYTHON:-$ROOT/rlsys-venv/bin/python}}"
RESULT="$ROOT/results/results.json"
SEED="$ROOT/rlsys-secret/seed"
NO_SEED="the autograder has no seed ($SEED): rebuild it from autograder.zip"
ERR="$(mktemp)"
KIND=gradescope
# When learners see the hidden cases' results (and the score with them): rlsys kit
# gradescope --hidden-visibility; every field that carries hidden results follows it.
EXTRA=(--hidden-visibility {hidden_visibility})
mkdir -p "$ROOT/results"
rm -f "$RESULT"
# Kept root-only whatever the platform did since setup.sh.
chmod -R go-rwx "$ROOT/source" "$ROOT/rlsys-secret" "$ROOT/rlsys-venv" 2>/dev/null
{_PICK}
pick_submission "$ROOT/submission"
cd "$ROOT"
{_GRADE}
# Instructors only: Gradescope shows this script's output to them alone (results.json sets
# stdout_visibility hidden).  How near a copy of the reference the file is; no score changes.
if [ -z "$PROBLEM" ]; then "$PY" -I -m pytest_rlsys.similarity "$SUBMISSION" || true; fi
"""
    readme = f"""# rlsys Gradescope autograder (pytest-rlsys {__version__})

1. Create a "Programming Assignment"; Autograder: "Zip file upload", base image
   {GRADESCOPE_IMAGE}; upload `autograder.zip`.
2. Learners submit one file named `{SUBMISSION_NAME}` (the template, `rlsys template`).
   Hidden cases' results are shown: {hidden_visibility} (`--hidden-visibility`).

`setup.sh` uses the image's python3 (its venv module, or python{MIN_PYTHON} where python3
is older, from the archive where needed), then installs pytest-rlsys and its pinned
dependencies from the zip's `wheels/` (offline), makes them root-only and deletes the
wheels. `rlsys-seed` is this assignment's secret seed (root-only after setup; keep the
zip private; regrade locally with `--seed @rlsys-seed`). `run_autograder` grades
`/autograder/submission` as an unprivileged uid into `/autograder/results/results.json`.
Try it elsewhere: unzip into a scratch copy (setup.sh consumes its own folder as on
Gradescope: it deletes `wheels/` and `rlsys-seed` there and makes the folder root-only),
then `RLSYS_AUTOGRADER_ROOT=/tmp/ag bash setup.sh` and `run_autograder`. It removes
nothing outside that folder but its own temporary one.
"""
    files: dict[str, str | bytes] = {
        "setup.sh": setup,
        "run_autograder": run,
        "install.sh": _install_script(bundle),
        "rlsys-seed": f"{seed}\n",
        "README.md": readme,
        **_wheel_files(bundle, wheels, "wheels"),
    }
    archive = target / "autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            mode = 0o600 if name == "rlsys-seed" else 0o644
            if name in ("setup.sh", "run_autograder", "install.sh"):
                mode = 0o755
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, content)
    archive.chmod(0o600)  # it holds the seed
    written = [*_write(target, {"README.md": readme}, set()), archive]
    return Kit(
        tuple(written),
        (
            f"Gradescope: upload {archive.name} with the base image {GRADESCOPE_IMAGE}",
            "the assignment's secret seed is rlsys-seed inside the zip: keep the zip private",
        ),
    )


# -- PrairieLearn -----------------------------------------------------------------------------


def _prairielearn(
    target: Path, bundle: Bundle, wheels: Path, seed: int, namespace: str | None
) -> Kit:
    image = (
        f"{namespace}/{IMAGE_NAME}:{__version__}" if namespace else f"{IMAGE_NAME}:{__version__}"
    )
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
# PrairieLearn's external grader runs this as root in the image named in info.json, with
# the question's tests/ at /grade/tests and the student's files at /grade/student.
set -u
ROOT="${{RLSYS_GRADE_ROOT:-/grade}}"
PY="${{RLSYS_PYTHON:-python3}}"
RESULT="$ROOT/results/results.json"
SEED="$ROOT/tests/rlsys-seed"
NO_SEED="the question has no seed (tests/rlsys-seed): rebuild it with rlsys kit prairielearn"
ERR="$(mktemp)"
KIND=prairielearn
# The seed root-only before anything runs: the tests/ folder, and /grade itself (the
# submission reaches the child through a pipe, so the child needs nothing under it).
chmod -R go-rwx "$ROOT/tests" 2>/dev/null
chmod 700 "$ROOT" 2>/dev/null
mkdir -p "$ROOT/results"
rm -f "$RESULT"
{_PICK}
pick_submission "$ROOT/student"
# Fail closed: a seed other users could still reach (a read-only mount) is not used.
seed_private() {{
  "$PY" -I -c 'import os, stat, sys
sys.exit(not any(os.stat(p).st_mode & 0o077 == 0 for p in sys.argv[1:]))' \
    "$ROOT" "$ROOT/tests" "$SEED"
}}
if [ -z "$PROBLEM" ] && [ -e "$SEED" ] && ! seed_private; then
  PROBLEM="the question's seed cannot be made root-only (a read-only mount?): not graded"
fi
cd "$ROOT"
{_GRADE}"""
    dockerfile = f"""# The grading image named in info.json ({image}).
# PrairieLearn grades with networking off, so rlsys is installed here (offline, from
# wheels/), not at grading time; the wheels are deleted and the installed package is
# root-only.  The seed is not in the image (it is in the question's tests/).
FROM python:{bundle.python}-slim
COPY wheels /tmp/rlsys-wheels
COPY install.sh /tmp/rlsys-install.sh
RUN sh /tmp/rlsys-install.sh python /tmp/rlsys-wheels && rm -f /tmp/rlsys-install.sh
"""
    # Every step names the one image info.json names (a trial built without --namespace
    # and read steps that pushed NAMESPACE/... while info.json named a local image).
    where = (
        f"Its image is `{image}` (`--namespace {namespace}`)."
        if namespace
        else f"Built without `--namespace`, its image is the local name `{image}`: a local "
        "PrairieLearn (`docker` on your machine) can use it, hosted PrairieLearn cannot: "
        "it pulls from Docker Hub, so build the kit again with `--namespace NAME` "
        "(a Docker Hub account or organisation you own)."
    )
    # A name without a namespace cannot be pushed to Docker Hub: no push step for it.
    push = (
        f"Push it:          `docker push {image}`"
        if namespace
        else "No push: a local name stays on this machine (see above)."
    )
    pulls = "; hosted PrairieLearn then pulls the image" if namespace else ""
    readme = f"""# rlsys PrairieLearn question (pytest-rlsys {__version__})

{where}

1. Build the image:  `docker build -t {image} docker`
2. {push}
3. The image:        info.json `externalGradingOptions.image` is already `{image}`
4. Copy this folder into your course repository's `questions/`, commit, and sync
   ("Sync" on the course's page){pulls}.

Learners edit and submit `{SUBMISSION_NAME}`. `tests/rlsys-seed` is the question's secret
seed: keep the course repository private. `tests/run.sh` grades as an unprivileged uid.
"""
    files: dict[str, str | bytes] = {
        "info.json": json.dumps(info, indent=2) + "\n",
        "question.html": question,
        SUBMISSION_NAME: exercise_path().read_text(encoding="utf-8"),
        "tests/run.sh": run,
        "tests/rlsys-seed": f"{seed}\n",
        "docker/Dockerfile": dockerfile,
        "docker/install.sh": _install_script(bundle),
        "README.md": readme,
        **_wheel_files(bundle, wheels, "docker/wheels"),
    }
    written = _write(target, files, {"tests/rlsys-seed"})
    advice = [f"PrairieLearn: build and push {image} (see README.md), then sync"]
    if not namespace:
        advice.append("hosted PrairieLearn needs a registry namespace: pass --namespace NAME")
    return Kit(tuple(written), tuple(advice))


# -- GitHub Classroom -------------------------------------------------------------------------


def _classroom_groups(seed: int) -> list[WeightGroup]:
    """The runners of the reporter step: one per (TODO, points per case) of the battery
    under the default rubric (what the kit's grade.sh grades with)."""
    from pytest_rlsys.grading.grader import prepare_battery
    from pytest_rlsys.grading.rubric import Rubric, assign_points

    cases = prepare_battery(seed).cases
    cents = assign_points(cases, Rubric())
    return weight_groups([(case.section, cents[case.id]) for case in cases])


def _classroom(target: Path, bundle: Bundle, wheels: Path, seed: int) -> Kit:
    groups = _classroom_groups(seed)
    env = "\n".join(
        f'          {name.upper()}_RESULTS: "${{{{steps.rlsys.outputs.{name}}}}}"'
        for name, _, _ in groups
    )
    grade = f"""#!/usr/bin/env bash
# The grading step of .github/workflows/classroom.yml: grade, then hand the runner result
# to the reporter as a base64 step output (the way Classroom's own graders do).  The
# learner owns this repository, this script and the workflow: the score is advisory.
set -u
PY="${{RLSYS_PYTHON:-python}}"
RESULT="${{RUNNER_TEMP:-/tmp}}/rlsys-result.json"
SEED="${{RUNNER_TEMP:-/tmp}}/rlsys-seed"
NO_SEED="the course has not set the RLSYS_SEED secret (see README.md); nothing was graded"
ERR="$(mktemp)"
KIND=classroom
SCORE="${{RUNNER_TEMP:-/tmp}}/rlsys-score.json"
EXTRA=(--report "$SCORE")
rm -f "$RESULT" "$SEED" "$SCORE"
if [ -n "${{RLSYS_SEED:-}}" ]; then (umask 077; printf '%s\\n' "$RLSYS_SEED" > "$SEED"); fi
{_PICK}
pick_submission .
{_GRADE}
rm -f "$SEED"
# One runner per case weight, so that the reporter's console total (passed / tests x max,
# per runner) and the Points it records (the sum of the scores) are the same number.
"$PY" -P - "$RESULT" "$SCORE" "${{GITHUB_OUTPUT:-/dev/stdout}}" <<'EOF'
import sys
from pytest_rlsys.outputs.classroom import write_runner_outputs
write_runner_outputs(sys.argv[1], sys.argv[2], sys.argv[3], {groups!r})
EOF
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
          python-version: "{bundle.python}"
      - name: Install the grader
        run: sh .github/classroom/install.sh python .github/classroom/wheels
      - name: rlsys
        id: rlsys
        env:
          RLSYS_SEED: "${{{{ secrets.RLSYS_SEED }}}}"
        run: bash .github/classroom/grade.sh
      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{env}
        with:
          runners: {",".join(name for name, _, _ in groups)}
"""
    readme = f"""# rlsys GitHub Classroom template (pytest-rlsys {__version__})

**The score here is advisory.** Each learner owns their repository, its workflow and this
grading script, and can change any of them; grade for the record with `rlsys batch` (or
Gradescope / PrairieLearn). **Nothing here is secret from a learner but the seed**: the
wheels in `.github/classroom/wheels` hold the reference solution (the grader computes each
case's expected value from it; the chapter prints it too), and any learner can unzip them.
`rlsys batch` on the class's files says who handed in a near copy of it. GitHub has
announced the sunset of GitHub Classroom (gh.io/classroom-sunset) and marked its
autograding reporter deprecated; the workflow is a plain GitHub Actions job and keeps
printing the score in its log.

1. Push this folder to a new repository of your organisation; in its Settings, tick
   "Template repository".
2. Add an organisation secret `RLSYS_SEED` (visible to the assignment's repositories)
   with the seed `rlsys kit classroom` printed; without it nothing is graded.
3. Create the assignment from this template. Add **no** autograding tests in Classroom's
   form: Classroom then rewrites `.github/workflows/classroom.yml` with its own.

Each push runs `.github/workflows/classroom.yml`: `install.sh` installs the grader from
`.github/classroom/wheels` (offline), `grade.sh` grades `{SUBMISSION_NAME}`, and the
reporter records `Points X/Y`, the score rlsys prints. The reporter counts passed tests
per runner, so grade.sh hands it one runner per case weight: its console and its
recorded Points say the same total.
"""
    files: dict[str, str | bytes] = {
        ".github/classroom/grade.sh": grade,
        ".github/classroom/install.sh": _install_script(bundle),
        ".github/workflows/classroom.yml": workflow,
        SUBMISSION_NAME: exercise_path().read_text(encoding="utf-8"),
        "README.md": readme,
        **_wheel_files(bundle, wheels, ".github/classroom/wheels"),
    }
    written = _write(target, files, set())
    return Kit(
        tuple(written),
        (
            f"Classroom: add the organisation secret RLSYS_SEED = {seed} (this assignment's seed; "
            "it is written nowhere else: keep it to regrade with the same hidden cases)",
            "the Classroom score is advisory: the learner owns the repository (see README.md)",
        ),
    )


def write_kit(
    platform: str,
    target: Path,
    wheel: Path | None = None,
    *,
    seed: int | None = None,
    namespace: str | None = None,
    hidden_visibility: str = "visible",
) -> Kit:
    """Write the kit for ``platform`` into ``target`` (a fresh secret seed unless given)."""
    if platform not in PLATFORMS:
        raise KitError(f"unknown platform {platform!r} (choose from {', '.join(PLATFORMS)})")
    if wheel is not None:
        if not wheel.name.endswith(".whl") or not zipfile.is_zipfile(wheel):
            raise KitError(f"--wheel {wheel}: not a wheel file")
        if not wheel.name.startswith(f"pytest_rlsys-{__version__}-"):
            raise KitUsageError(
                f"--wheel {wheel}: expected pytest_rlsys-{__version__}-*.whl, the "
                "version of this rlsys"
            )
    if namespace is not None and not _valid_namespace(namespace):
        raise KitUsageError(
            f"--namespace {namespace!r}: a registry namespace is lower-case letters, digits, "
            "'.', '_', '-' and '/' (e.g. a Docker Hub user or organisation)"
        )
    seed = new_seed() if seed is None else seed
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as scratch:
            wheels = Path(scratch)
            pythons = GRADESCOPE_PYTHONS if platform == "gradescope" else ()
            bundle = build_bundle(wheels, wheel, pythons)
            if platform == "gradescope":
                kit = _gradescope(target, bundle, wheels, seed, hidden_visibility)
            elif platform == "prairielearn":
                kit = _prairielearn(target, bundle, wheels, seed, namespace)
            else:
                kit = _classroom(target, bundle, wheels, seed)
    except BundleError as exc:
        raise KitError(str(exc)) from None
    except OSError as exc:
        raise KitError(f"cannot write the kit into {target}: {exc.strerror or exc}") from None
    carried = (
        f"carries {len(bundle.wheels)} wheels (pytest-rlsys and its dependencies, pinned, "
        f"for Python {', '.join(bundle.pythons or (bundle.python,))}): it installs offline"
    )
    return Kit(kit.files, (carried, *bundle.notes, *kit.advice))


def _valid_namespace(text: str) -> bool:
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789._-/")
    return bool(text) and set(text) <= allowed and not text.startswith(("/", ".", "-"))
