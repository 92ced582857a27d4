"""rlsys for Classroom 50 (pytest-rlsys's classroom50 kit; README.md).

Classroom 50's runner runs this with its own Python, in the learner's checkout, with the
assignment's facts in the environment (CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, COMMIT_URL,
RELEASE_URL, USERNAME, CLASSROOM50_BUNDLE_DIR: the folder this file came in).  It installs
the grader into a fresh venv from the wheels beside it (offline), grades with the kits'
one run script, and leaves ./result.json and ./release-body.md (nothing else: the venv's
temporary folder is removed).  Exit 0: graded (a
learner's problem is a grade of 0 with its reason); non-zero: an infrastructure error,
which the runner records as one.  Standard library only.
"""

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    # The work folder (the venv, 66 MB, and the seed's copy) goes when grading ends: a
    # runner is thrown away, but an instructor's dry runs would pile them up.
    work = Path(tempfile.mkdtemp(prefix="rlsys-", dir=os.environ.get("RUNNER_TEMP") or None))
    try:
        return grade(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def grade(work: Path) -> int:
    here = Path(os.environ.get("CLASSROOM50_BUNDLE_DIR") or Path(__file__).resolve().parent)
    python = work / "venv" / "bin" / "python"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
        install = ["sh", str(here / "install.sh"), str(python), str(here / "wheels")]
        subprocess.run(install, check=True, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"rlsys: could not install the grader: {exc}", file=sys.stderr)
        return 1
    # The bundle comes out of a tarball with its modes (0644): the grader takes a seed
    # file only when no other user can read it, so it gets a private copy.
    seed = work / "seed"
    try:
        text = (here / "rlsys-seed").read_text(encoding="ascii")
        with os.fdopen(os.open(seed, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
            f.write(text)
    except (OSError, UnicodeDecodeError):
        pass  # run.sh says there is no seed: an infrastructure error
    env = dict(
        os.environ,
        RLSYS_KIND="classroom50",
        RLSYS_PYTHON=str(python),
        RLSYS_SUBMITTED=".",
        RLSYS_SEED_FILE=str(seed),
        RLSYS_NO_SEED="the bundle has no rlsys-seed: build the kit again (rlsys kit classroom50)",
        RLSYS_WORK=str(work / "grade"),
    )
    # Nothing the grader prints (a learner's file name, say) is read as a workflow
    # command while it runs: GitHub's stop-commands, with a token nobody knows.
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    try:
        done = subprocess.run(["bash", str(here / "run.sh")], env=env, stdin=subprocess.DEVNULL)
    finally:
        print(f"::{token}::", flush=True)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
