"""The kits' shell scripts (pytest_rlsys/outputs/kits/scripts/), checked as files: lint
(shellcheck, as CI runs it), the file-picking rule the README states, and the install
script's clean-up.  The kits built and run as each platform runs them:
tests/plugin/test_kits.py."""

from __future__ import annotations

import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from pytest_rlsys.outputs.kits import SCRIPTS, script
from tests.conftest import REPO

# Files only: an installed package may hold a __pycache__ beside the scripts.
SHELL_SCRIPTS = sorted(
    p for p in SCRIPTS.iterdir() if p.is_file() and p.suffix not in (".py", ".yml", ".pyc")
)


def test_every_kit_script_passes_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    assert {p.name for p in SHELL_SCRIPTS} >= {"install.sh", "run.sh", "gradescope-setup.sh"}
    for path in SHELL_SCRIPTS:
        # install.sh is POSIX sh (python:*-slim images have dash); the rest are bash.
        shell = "sh" if path.read_text(encoding="utf-8").startswith("#!/bin/sh") else "bash"
        done = subprocess.run(
            [shellcheck, "-s", shell, str(path)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout


def test_shellcheck_sees_a_planted_fault(tmp_path: Path) -> None:
    """The control: the check above would fail on the faults it is there for."""
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    bad = tmp_path / "bad.sh"
    bad.write_text(script("run.sh").replace('grade "$SUBMISSION"', "grade $SUBMISSION"), "utf-8")
    done = subprocess.run([shellcheck, "-s", "bash", str(bad)], capture_output=True, text=True)
    assert done.returncode != 0 and "SC2086" in done.stdout


def test_gradescope_and_prairielearn_share_one_run_script() -> None:
    """Each platform's own script sets its paths and runs run.sh; no other script grades."""
    for name in ("gradescope-run_autograder", "prairielearn-run.sh", "actions-grade.sh"):
        text = script(name)
        assert "pytest_rlsys grade" not in text and "run.sh" in text, name
    assert script("run.sh").count("-m pytest_rlsys grade") == 1
    assert "run.sh" in script("classroom50-autograder.py")


@pytest.mark.parametrize(
    ("files", "graded", "problem"),
    [
        (["rlsys_ledger.py", "helper.py"], "rlsys_ledger.py", ""),
        (["my_ledger.py"], "my_ledger.py", ""),
        (
            ["a.py", "b.py"],
            "rlsys_ledger.py",
            "submit one file named rlsys_ledger.py (found: a.py, b.py)",
        ),
        ([], "rlsys_ledger.py", "submit one file named rlsys_ledger.py (found: no .py file)"),
    ],
)
def test_the_kits_pick_the_file_the_readme_says(
    tmp_path: Path, files: list[str], graded: str, problem: str
) -> None:
    # Every kit picks the file with run.sh's one function; the README says what it does.
    for name in files:
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    run = SCRIPTS / "run.sh"
    pick = f"eval \"$(sed -n '/^pick_submission() {{/,/^}}/p' '{run}')\""
    code = pick + '\npick_submission "$1"\nprintf "%s\\n%s" "$SUBMISSION" "$PROBLEM"'
    done = subprocess.run(
        ["bash", "-c", code, "pick", str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n") == [str(tmp_path / graded), problem]
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "the only `.py` file submitted is graded whatever its name" in readme
    assert (
        'no `.py` file or several get "submit one file named rlsys_ledger.py (found: ...)"'
        in readme
    )


def test_the_install_script_removes_only_what_it_made(tmp_path: Path) -> None:
    # The kits' install.sh once ended with `rm -rf /tmp/pip-*`: run by root on a shared
    # machine ("try it elsewhere"), it deleted other users' pip folders.  pip now unpacks
    # into a private folder of the script's own, removed at the end.
    installer = tmp_path / "install.sh"
    installer.write_text(script("install.sh"), encoding="utf-8")
    seen = tmp_path / "tmpdir-seen"
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    python = tmp_path / "python"  # a stand-in: pip unpacks into TMPDIR, -c names the package
    python.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = -m ]; then echo "$TMPDIR" > {seen}; mkdir -p "$TMPDIR/pip-unpack";'
        f" else echo {pkg}; fi\n",
        encoding="utf-8",
    )
    python.chmod(0o755)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "pytest_rlsys-0.1.0-py3-none-any.whl").write_bytes(b"")
    others = Path(tempfile.mkdtemp(prefix="pip-", dir="/tmp"))  # another user's pip folder
    try:
        subprocess.run(["sh", str(installer), str(python), str(wheels)], check=True, timeout=60)
        used = Path(seen.read_text(encoding="utf-8").strip())
        assert others.is_dir(), "install.sh removed a pip folder it did not make"
        assert used != Path("/tmp") and not used.exists(), used  # its own, and removed
        assert not wheels.exists() and stat.S_IMODE(pkg.stat().st_mode) & 0o077 == 0
    finally:
        shutil.rmtree(others, ignore_errors=True)


def test_a_reason_is_inert_in_the_job_summary_and_the_release_body() -> None:
    """reports._md: a learner's file name in a reason shows as written, never as markup."""
    from pytest_rlsys.outputs.kits.reports import Outcome, actions_summary

    why = "submit one file (found: it's_<img src=x>.py, [a](http://x), *b*, \x1b[31m)"
    text = actions_summary(Outcome(None, problem=why))
    line = next(x for x in text.splitlines() if x.startswith("Not graded"))
    assert "<img" not in line and "&lt;img src=x&gt;" in line and "it's" in line
    assert "\\[a\\]\\(http://x\\)" in line and "\\*b\\*" in line
    assert "\x1b" not in text and "Points 0/100" in text
