"""Instructor kits: what a grading platform needs to run ``rlsys grade`` on a submission.

``write_kit("gradescope", DIR)``   DIR/autograder.zip (setup.sh, run_autograder, run.sh,
                                   install.sh, wheels/, rlsys-seed) and DIR/README.md
``write_kit("prairielearn", DIR)`` an external-grader question folder (info.json,
                                   question.html, the starter file, tests/ with run.sh,
                                   the pytest-rlsys wheel and the seed, docker/ with the
                                   image's dependency wheels)
``write_kit("actions", DIR)``      a template repository: the workflow, its grading
                                   scripts, the wheels, the starter file
``write_kit("classroom50", DIR)``  DIR/autograders/SLUG/ (autograder.py, the scripts, the
                                   wheels, the seed) and the starter file

The scripts are shell files shipped as package data (``scripts/``, shellcheck-clean); each
platform's own script sets its paths and runs the one ``run.sh`` every kit shares.
GitHub Classroom (retired 2026-08-28) has no kit: its reporter's only reader is gone.

The rules every kit keeps (SPEC section 6, "Instructor kits"; docs/threat-model.md):

1. **Installs with no package-index release.**  The kit carries the wheel of the package
   it was built from (``--wheel``, else one packed from the installed package) and a wheel
   of every dependency, pinned in ``wheels/constraints.txt`` (``bundle.py``).  The install
   is offline; only a wheel that does not fit the image's Python falls back to the index,
   for the same pinned versions.
2. **No readable answer.**  After the install, nothing of the package is readable by the
   submission's uid: the installed package is root-only (``chmod -R go-rwx``), the wheels
   (they hold the reference) are deleted by the platforms whose submission runs as another
   uid (Gradescope's setup.sh, PrairieLearn's run.sh), the venv and the kit's own folder
   are 0700; ``install.sh`` itself only reads the wheels (a Classroom 50 bundle, an Actions
   checkout, a dry run on the pushed folder stay whole).
   The grader runs the submission as a fresh unprivileged uid where it runs as root
   (Gradescope, PrairieLearn); on GitHub's runners (Actions, Classroom 50) the learner
   owns the repository and the score is advisory.
3. **A per-assignment secret seed.**  Generated when the kit is built
   (``secrets.randbits(63)``), stored root-only on the platform and passed as
   ``--seed @FILE`` (a command line is readable by every uid in ``/proc``); a kit never
   grades with the package's constant default seed: without its seed file it reports an
   infrastructure error (rule 5).
4. **One file name.**  Learners submit ``rlsys_ledger.py`` (the template's name); a script
   that finds another single ``.py`` file grades it.
5. A learner's problem (no file, several, an empty one, one that does not load) is a
   grade of 0 whose reason reaches what the platform shows the learner; an
   infrastructure error (no seed, a failed install, no score report) is never a score:
   it is reported as the platform reports errors (``run.sh`` says how, per platform).
6. **The fence that graded is recorded where an instructor sees it**: Gradescope's
   instructor-only script output, PrairieLearn's ``message``, the Actions job summary,
   Classroom 50's ``release-body.md``.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import textwrap
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

from pytest_rlsys import __version__
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

PLATFORMS = ("gradescope", "prairielearn", "actions", "classroom50")
SUBMISSION_NAME = "rlsys_ledger.py"  # the template's name; learners submit this file
IMAGE_NAME = "rlsys-grader"
GRADESCOPE_IMAGE = "Ubuntu 22.04 (Gradescope's default) or Ubuntu 24.04"
# rlsys's requires-python floor: an image whose python3 is older (Ubuntu 22.04: 3.10)
# gets python3.11 from its archive.
MIN_PYTHON = "3.11"
# The Pythons the Gradescope kit's wheels fit: 22.04's python3.11, 24.04's python3.12,
# and Debian 13's 3.13 (where the kit is tested in a root).
GRADESCOPE_PYTHONS = ("3.11", "3.12", "3.13")


# Where what a kit's one-screen README leaves out is written (a dry run, each outcome).
DOCS = "A dry run, and what each outcome looks like: docs/kits.md in pytest-rlsys's repository."


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


# -- the scripts: package data (scripts/), linted by shellcheck in the tests ------------------

SCRIPTS = Path(__file__).parent / "scripts"


def script(name: str) -> str:
    """A kit script as shipped (pytest_rlsys/outputs/kits/scripts/NAME)."""
    return (SCRIPTS / name).read_text(encoding="utf-8")


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


def _wheel_files(
    bundle: Bundle, wheels: Path, prefix: str, names: tuple[str, ...] | None = None
) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        f"{prefix}/{name}": (wheels / name).read_bytes() for name in names or bundle.wheels
    }
    files[f"{prefix}/constraints.txt"] = bundle.constraints
    return files


def _pythons(bundle: Bundle) -> str:
    return ", ".join(bundle.pythons or (bundle.python,))


# -- Gradescope -------------------------------------------------------------------------------


def _gradescope(
    target: Path, bundle: Bundle, wheels: Path, seed: int, hidden_visibility: str
) -> Kit:
    readme = f"""# rlsys Gradescope autograder (pytest-rlsys {__version__})

1. Create a "Programming Assignment"; Autograder: "Zip file upload", base image
   {GRADESCOPE_IMAGE}; upload `autograder.zip`.
2. Learners submit one file named `{SUBMISSION_NAME}` (the template, `rlsys template`).
   Hidden cases' results are shown: {hidden_visibility} (`--hidden-visibility`).

`setup.sh` installs pytest-rlsys and its pinned dependencies root-only, offline, from `wheels/`
(Python {_pythons(bundle)}; python{MIN_PYTHON} from the archive where python3 is older), then
deletes the wheels. `rlsys-seed` is the assignment's secret seed: keep the zip private
(regrade locally with `--seed @rlsys-seed`). `run_autograder` grades `/autograder/submission`
as an unprivileged uid; its output, shown to instructors only, names the fence that graded.
A broken set-up (no seed) is no score: no results.json, and Gradescope says "The autograder
failed to execute correctly"; fix it, then regrade. What Gradescope promises: a fresh
container per submission, run as root, out of the learner's reach: the score is the record.

Try it elsewhere, as root, in Gradescope's layout (`$ROOT` stands for `/autograder`):
```sh
ROOT=/tmp/ag
mkdir -p $ROOT/submission && unzip -q autograder.zip -d $ROOT/source
cp $ROOT/source/run_autograder $ROOT/ && export RLSYS_AUTOGRADER_ROOT=$ROOT
bash $ROOT/source/setup.sh   # once, as Gradescope builds the image: it deletes source/wheels
$ROOT/rlsys-venv/bin/rlsys template $ROOT/submission/{SUBMISSION_NAME}   # 0; or a learner's file
$ROOT/run_autograder && cat $ROOT/results/results.json
```
"""
    files: dict[str, str | bytes] = {
        "setup.sh": script("gradescope-setup.sh"),
        "run_autograder": script("gradescope-run_autograder"),
        "run.sh": script("run.sh"),
        "install.sh": script("install.sh"),
        "hidden-visibility": f"{hidden_visibility}\n",
        "rlsys-seed": f"{seed}\n",
        "README.md": readme,
        **_wheel_files(bundle, wheels, "wheels"),
    }
    archive = target / "autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            mode = 0o600 if name == "rlsys-seed" else 0o644
            if name in ("setup.sh", "run_autograder", "run.sh", "install.sh"):
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
    question = f"""<pl-question-panel>
  <p>Complete TODO 1-3 of <code>{SUBMISSION_NAME}</code> (standard library only), then
  submit. 补全 TODO 1-3 后提交。</p>
  <pl-file-editor file-name="{SUBMISSION_NAME}" ace-mode="ace/mode/python"
                  source-file-name="{SUBMISSION_NAME}"></pl-file-editor>
</pl-question-panel>
<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""
    # The image holds the dependencies only (bind-mounted for the one RUN, never in a
    # layer): it has no answer and may be pushed to a public registry.  pytest-rlsys's own
    # wheel (with the reference) travels in the question's tests/, in the private course
    # repository, and is installed when grading starts (PrairieLearn grades offline).
    dockerfile = f"""# syntax=docker/dockerfile:1
# The grading image named in info.json ({image}): Python and rlsys's pinned dependencies,
# installed offline from wheels/ (bind-mounted for this RUN, never in a layer).  No
# answer is in it: pytest-rlsys itself (it holds the reference) and the seed are in the
# question's tests/, installed as grading starts.  It may be pushed to a public registry.
FROM python:{bundle.python}-slim
RUN --mount=type=bind,source=wheels,target=/tmp/rlsys-wheels \\
    python -m pip install --no-cache-dir --disable-pip-version-check --no-index \\
      --find-links /tmp/rlsys-wheels -r /tmp/rlsys-wheels/constraints.txt
"""
    where = (
        f"Its image is `{image}` (`--namespace {namespace}`)."
        if namespace
        else f"Built without `--namespace`, its image is the local name `{image}`: a local "
        "PrairieLearn (`docker` on your machine) can use it, hosted PrairieLearn cannot: "
        "it pulls from Docker Hub, so build the kit again with `--namespace NAME` "
        "(a Docker Hub account or organisation you own)."
    )
    push = (
        f"Push it:          `docker push {image}`"
        if namespace
        else "No push: a local name stays on this machine (see above)."
    )
    pulls = "; hosted PrairieLearn then pulls the image" if namespace else ""
    readme = f"""# rlsys PrairieLearn question (pytest-rlsys {__version__})

{where}

1. Build the image:  `docker build -t {image} docker` (BuildKit: Docker 23+)
2. {push}
3. The image:        info.json `externalGradingOptions.image` is already `{image}`
4. Copy this folder into your course repository's `questions/`, commit, and sync
   ("Sync" on the course's page){pulls}.

The image holds Python and the pinned dependencies only (no answer: it may be public).
`tests/wheels/` holds pytest-rlsys (with the reference) and `tests/rlsys-seed` the
question's secret seed: keep the course repository private. `tests/run.sh` installs
pytest-rlsys offline, root-only, and grades `{SUBMISSION_NAME}` as an unprivileged uid
(the same `run.sh` as the other kits); the results' `message` names the fence that graded.
What PrairieLearn promises: a fresh container per submission, networking off, the question's
files out of the learner's reach: the score is the record, nothing is advisory.
"""
    deps = tuple(name for name in bundle.wheels if name != bundle.main)
    files: dict[str, str | bytes] = {
        "info.json": json.dumps(info, indent=2) + "\n",
        "question.html": question,
        SUBMISSION_NAME: exercise_path().read_text(encoding="utf-8"),
        "tests/run.sh": script("prairielearn-run.sh"),
        "tests/rlsys-run.sh": script("run.sh"),
        "tests/install.sh": script("install.sh"),
        "tests/rlsys-seed": f"{seed}\n",
        "docker/Dockerfile": dockerfile,
        "README.md": readme,
        **_wheel_files(bundle, wheels, "docker/wheels", deps),
        **_wheel_files(bundle, wheels, "tests/wheels", (bundle.main,)),
    }
    written = _write(target, files, {"tests/rlsys-seed"})
    advice = [f"PrairieLearn: build and push {image} (see README.md), then sync"]
    if not namespace:
        advice.append("hosted PrairieLearn needs a registry namespace: pass --namespace NAME")
    return Kit(tuple(written), tuple(advice))


# -- GitHub Actions (a repository per learner) --------------------------------------------------


ADVISORY = textwrap.fill(
    "**The score here is advisory.** Each learner owns their repository, its workflow and "
    "the grading scripts, and can change any of them; grade for the record with `rlsys "
    "batch` (or Gradescope / PrairieLearn). **Nothing here is secret from a learner**: the "
    "wheels hold the reference solution (the grader computes each case's expected value "
    "from it), and any learner can unzip them; `rlsys batch` on the class's files says who "
    "handed in a near copy of it.",
    90,
)


def _actions(target: Path, bundle: Bundle, wheels: Path, seed: int) -> Kit:
    readme = f"""# rlsys GitHub Actions template (pytest-rlsys {__version__})

{ADVISORY}

1. Push this folder to a new repository of your organisation; tick "Template
   repository" in its Settings, and make each learner's repository from it (by hand,
   ghclass, Classmoji, ...).
2. Add an organisation secret `RLSYS_SEED` (visible to those repositories) with the seed
   `rlsys kit actions` printed; without it no run is graded: the job fails with an
   `::error::` and no score (the set-up's error, not the learner's). A workflow a learner
   pushes can read the secret too: it keeps the hidden cases from a casual look, no more.

Each push runs `.github/workflows/rlsys.yml` on `ubuntu-latest`: Python
{bundle.python} (`.github/rlsys/python-version`), the grader installed from
`.github/rlsys/wheels` (offline, read only), `{SUBMISSION_NAME}` graded by
`.github/rlsys/grade.sh` (the same `run.sh` as the other kits). What GitHub promises: the job
summary shows the score per TODO, why a file scored nothing, and the fence that graded; the
score report is the artefact `rlsys-score`; the log ends with the notice `Points X/Y`; the
job fails below full marks.
{DOCS}
"""
    files: dict[str, str | bytes] = {
        ".github/workflows/rlsys.yml": script("actions-workflow.yml"),
        ".github/rlsys/grade.sh": script("actions-grade.sh"),
        ".github/rlsys/run.sh": script("run.sh"),
        ".github/rlsys/install.sh": script("install.sh"),
        ".github/rlsys/python-version": f"{bundle.python}\n",
        SUBMISSION_NAME: exercise_path().read_text(encoding="utf-8"),
        "README.md": readme,
        **_wheel_files(bundle, wheels, ".github/rlsys/wheels"),
    }
    written = _write(target, files, set())
    return Kit(
        tuple(written),
        (
            f"Actions: add the organisation secret RLSYS_SEED = {seed} (this assignment's "
            "seed; it is written nowhere else: keep it to regrade with the same hidden cases)",
            "the Actions score is advisory: the learner owns the repository (see README.md)",
        ),
    )


# -- Classroom 50 -------------------------------------------------------------------------------

C50_SLUG = "rlsys-ledger"
C50_BUNDLE_MAX = 10 * 1024 * 1024  # runner.py MAX_FETCH_BYTES: a bigger bundle is refused


def _classroom50(target: Path, bundle: Bundle, wheels: Path, seed: int) -> Kit:
    folder = f"autograders/{C50_SLUG}"
    readme = f"""# rlsys Classroom 50 autograder (pytest-rlsys {__version__})

{ADVISORY}
The bundle is served from your organisation's public Pages site: its seed is public too.

1. Copy `{folder}/` to `CLASSROOM/autograders/SLUG/` of your `classroom50`
   repository (SLUG: the assignment's slug) and push; Publish Pages bundles it.
2. Give the assignment the runtime `{{"python": "{bundle.python}"}}` (the wheels carried
   fit Python {_pythons(bundle)}; another Python takes the same pins from the index).
3. Put `template/{SUBMISSION_NAME}` in the assignment's template repository.

On each submission the runner runs `autograder.py` in the learner's checkout: it installs
the grader from `wheels/` into a venv outside the bundle (offline; the bundle is only read),
grades `{SUBMISSION_NAME}` and writes `result.json` (`classroom50/result/v1`: whole points per
TODO, the exact total rounded half up) and `release-body.md` (the table, the exact points,
the fence that graded, why a file scored nothing). What Classroom 50 promises: the Release,
the commit status and `scores.json` carry that score; exit 0 is a grade (a missing, empty or
broken file is 0 with its reason), non-zero an infrastructure error (no seed: no score).
{DOCS}
"""
    files: dict[str, str | bytes] = {
        f"{folder}/autograder.py": script("classroom50-autograder.py"),
        f"{folder}/run.sh": script("run.sh"),
        f"{folder}/install.sh": script("install.sh"),
        f"{folder}/rlsys-seed": f"{seed}\n",
        f"template/{SUBMISSION_NAME}": exercise_path().read_text(encoding="utf-8"),
        "README.md": readme,
        **_wheel_files(bundle, wheels, f"{folder}/wheels"),
    }
    written = _write(target, files, set())
    size = sum(len(v) for k, v in files.items() if k.startswith(folder))
    advice = [
        f"Classroom 50: copy {folder}/ to CLASSROOM/autograders/SLUG/ (see README.md)",
        "the Classroom 50 score is advisory: the bundle and the repository are the learner's "
        "to read (see README.md)",
    ]
    if size > C50_BUNDLE_MAX:
        advice.append(
            f"the bundle is {size / 2**20:.1f} MiB, over the 10 MiB Classroom 50's runner "
            "fetches: build it with --wheel from a smaller install"
        )
    return Kit(tuple(written), tuple(advice))


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
            elif platform == "actions":
                kit = _actions(target, bundle, wheels, seed)
            else:
                kit = _classroom50(target, bundle, wheels, seed)
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
