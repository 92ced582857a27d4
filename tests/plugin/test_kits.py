"""Every instructor kit, built from the installed package, installed offline and run the way
its platform runs it, in a test root (rules: pytest_rlsys/outputs/kits/__init__.py).

- It installs with no package index: the index is pointed at a closed port, so a kit that
  needed one would fail here.
- No readable answer: a "reference thief" submission searches the whole test root for any
  copy of the package's private files (wheels, zips, sdists, installed solutions) and
  answers with what it finds; through the kit it must score what the untouched template
  scores (0).  A control run with one readable copy of the kit shows the thief works.
- A per-assignment seed, root-only, passed as ``--seed @FILE``; no seed, no grade.
- One file name: the only .py file is graded whatever its name; none or several say
  "submit one file named rlsys_ledger.py (found: ...)", as the README says.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from pytest_rlsys.cli import ExitCode, main
from pytest_rlsys.outputs.text import js_number
from pytest_rlsys.resources import exercise_path, solution_path
from tests.conftest import REPO


def points_line_of(result: dict[str, Any]) -> str:
    """The whole runner result's Points line (what rlsys prints)."""
    total = sum(round(t["score"] * 100) for t in result["tests"]) / 100
    return f"Points {js_number(total)}/{js_number(result['max_score'])}"


pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

ROOT_ONLY = os.geteuid() == 0

# A thief that knows where the platform keeps things (the test root), as a learner knows
# /autograder or /grade: it reads every wheel, zip, sdist and solutions/ file it can.
THIEF = """
import io, os, tarfile, zipfile
ROOT = @ROOT@
WANTED = "solutions/rlsys_ledger.py"

def _from_zip(archive):
    for name in archive.namelist():
        if name.endswith(WANTED):
            return archive.read(name).decode("utf-8")
        if name.endswith((".whl", ".zip")):
            found = _from_zip(zipfile.ZipFile(io.BytesIO(archive.read(name))))
            if found:
                return found
    return None

def _steal():
    stack, seen = [ROOT], 0
    while stack and seen < 100000:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.path.endswith(WANTED):
                    return open(entry.path, encoding="utf-8").read()
                elif entry.name.endswith((".whl", ".zip")):
                    found = _from_zip(zipfile.ZipFile(entry.path))
                    if found:
                        return found
                elif entry.name.endswith((".tar.gz", ".tgz")):
                    with tarfile.open(entry.path) as archive:
                        for member in archive.getmembers():
                            if member.name.endswith(WANTED):
                                return archive.extractfile(member).read().decode("utf-8")
            except Exception:
                continue
    return None

_stolen = _steal()
if _stolen:
    exec(compile(_stolen, "stolen", "exec"), globals())
else:
    def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
        raise NotImplementedError
    def transfer_ledger(edges, placement):
        raise NotImplementedError
    def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                          version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
        raise NotImplementedError
"""


def _python() -> str:
    """A system Python with venv (what the platforms' images have)."""
    for name in ("python3.11", "python3.12", "python3.13", "python3"):
        exe = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
        if exe and subprocess.run([exe, "-c", "import venv, ensurepip"]).returncode == 0:
            return exe
    pytest.skip("no system Python with venv and ensurepip")


def _env(root: Path, **extra: str) -> dict[str, str]:
    """The platform's environment: system paths only, and no package index (a closed
    port), so only what the kit carries can be installed."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(root / "home"),
        "LANG": "C.UTF-8",
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_CONFIG_FILE": os.devnull,  # no machine-wide find-links or extra index either
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "1",
    }
    env.update(extra)
    return env


@pytest.fixture
def root() -> Iterator[Path]:
    """A test root other users can enter (as /autograder and /grade are), unlike pytest's
    0700 tmp folder, so that the thief's uid meets only what the kit itself protects."""
    folder = Path(tempfile.mkdtemp(prefix="rlsys-kit-"))
    folder.chmod(0o755)
    (folder / "home").mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _sh(args: list[str], env: dict[str, str], cwd: Path, check: bool = True) -> str:
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"{args} exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def _wheels_anywhere(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.suffix in (".whl", ".zip") or p.name == "rlsys-seed"]


def _others_cannot_read(path: Path) -> bool:
    return not path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO)


def _thief(root: Path) -> str:
    return THIEF.replace("@ROOT@", repr(str(root)))


def _leak(root: Path, archive: Path) -> None:
    """The control: one copy of the kit left readable by everyone."""
    leak = root / "leak"
    leak.mkdir(mode=0o755)
    shutil.copyfile(archive, leak / "kit.zip")
    (leak / "kit.zip").chmod(0o644)


def _zip_folder(folder: Path, archive: Path) -> None:
    with zipfile.ZipFile(archive, "w") as zf:
        for path in folder.rglob("*"):
            if path.is_file():
                zf.write(path, path.relative_to(folder))


# -- what every kit carries --------------------------------------------------------------------


def test_a_kit_carries_its_wheel_and_pinned_dependencies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["kit", "gradescope", str(tmp_path / "kit")]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "Ubuntu 22.04" in out  # which base image to pick
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        names = zf.namelist()
        wheels = [n for n in names if n.startswith("wheels/") and n.endswith(".whl")]
        pins = zf.read("wheels/constraints.txt").decode().split("\n")
        seed_mode = zf.getinfo("rlsys-seed").external_attr >> 16
        seed = int(zf.read("rlsys-seed"))
        main_wheel = zipfile.ZipFile(
            __import__("io").BytesIO(zf.read("wheels/pytest_rlsys-0.1.0-py3-none-any.whl"))
        )
    assert "wheels/pytest_rlsys-0.1.0-py3-none-any.whl" in wheels
    pinned = {re.sub(r"[-_.]+", "_", p.split("==")[0]).lower() for p in pins if "==" in p}
    carried = {Path(w).name.split("-")[0].lower() for w in wheels} - {"pytest_rlsys"}
    assert carried == pinned and {"pytest", "jsonschema_rs", "wcwidth"} <= pinned
    assert all(re.fullmatch(r"[\w.-]+==[\w.+!-]+", p) for p in pins if p and p[0] != "#")
    # The packed wheel is laid out as the real one: the plugin's entry point, the data.
    members = main_wheel.namelist()
    assert "pytest_rlsys/_bundled/solutions/rlsys_ledger.py" in members
    assert "pytest_rlsys/_bundled/schemas/rlsys-score.v1.json" in members
    assert "pytest11" in main_wheel.read("pytest_rlsys-0.1.0.dist-info/entry_points.txt").decode()
    assert seed_mode & 0o777 == 0o600 and 0 <= seed < 2**63
    # Each kit gets its own seed; never the package's constant default.
    from pytest_rlsys.grading.grader import random_seed

    assert main(["kit", "gradescope", str(tmp_path / "kit2")]) == ExitCode.OK
    with zipfile.ZipFile(tmp_path / "kit2" / "autograder.zip") as zf:
        assert int(zf.read("rlsys-seed")) not in (seed, random_seed())


def test_a_kit_built_on_another_platform_fetches_linux_wheels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Built on a Mac: jsonschema-rs is installed there as a macOS wheel, which no image can
    # install; the kit fetches a Linux one for every Python its images run, this one too.
    from pytest_rlsys.outputs.kits import bundle

    real_tags = bundle._tags

    def tags(dist: Any) -> str:
        mac = canonicalize_name(dist.metadata["Name"]) == "jsonschema-rs"
        return "cp310-abi3-macosx_11_0_arm64" if mac else real_tags(dist)

    fetched: list[tuple[str, str]] = []

    def fetch(python: str, pin: str, dest: Path) -> str:
        fetched.append((python, canonicalize_name(pin.split("==")[0])))
        name = f"jsonschema_rs-{pin.split('==')[1]}-cp310-abi3-manylinux_2_17_x86_64.whl"
        (dest / name).write_bytes(b"")
        return ""

    monkeypatch.setattr(bundle, "_tags", tags)
    monkeypatch.setattr(bundle, "_fetch_for", fetch)
    assert main(["kit", "gradescope", str(tmp_path / "kit")]) == ExitCode.OK
    assert "for Python 3.11, 3.12, 3.13)" in capsys.readouterr().out
    assert sorted(fetched) == [(v, "jsonschema-rs") for v in ("3.11", "3.12", "3.13")]
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        carried = [n for n in zf.namelist() if n.startswith("wheels/jsonschema_rs-")]
    assert carried and all("manylinux" in n for n in carried), carried


def test_kit_wheel_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kit", "gradescope", str(tmp_path / "k0"), "--wheel", "nosuch.whl"]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "pytest_rlsys-9.9.9-py3-none-any.whl"
    bad.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip
    # A wheel of another version: a usage error (exit 2), as a wheel that is not there.
    assert main(["kit", "gradescope", str(tmp_path / "k1"), "--wheel", str(bad)]) == 2
    assert "0.1.0" in capsys.readouterr().err
    # A wheel given is the wheel carried.
    assert main(["kit", "prairielearn", str(tmp_path / "k2")]) == ExitCode.OK
    built = tmp_path / "k2" / "tests" / "wheels" / "pytest_rlsys-0.1.0-py3-none-any.whl"
    given = tmp_path / "given" / built.name
    given.parent.mkdir()
    shutil.copyfile(built, given)
    with zipfile.ZipFile(given, "a") as zf:
        zf.writestr("pytest_rlsys/marker.txt", "the instructor's own build")
    assert main(["kit", "actions", str(tmp_path / "k3"), "--wheel", str(given)]) == 0
    carried = tmp_path / "k3" / ".github" / "rlsys" / "wheels" / built.name
    assert carried.read_bytes() == given.read_bytes()
    assert main(["kit", "gradescope", str(tmp_path / "k3")]) == 2  # not empty: no --force


@pytest.mark.parametrize(
    ("platform", "option"),
    [
        ("gradescope", ["--namespace", "course"]),
        ("actions", ["--namespace", "course"]),
        ("prairielearn", ["--hidden-visibility", "hidden"]),
        ("classroom50", ["--hidden-visibility", "after_due_date"]),
    ],
)
def test_kit_refuses_an_option_of_another_platforms_kit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], platform: str, option: list[str]
) -> None:
    # Trial (g): --namespace was silently ignored by the Gradescope and Classroom kits.
    target = tmp_path / "kit"
    assert main(["kit", platform, str(target), *option]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert f"{option[0]} applies to the " in err and f"leave it out for the {platform} kit" in err
    assert not target.exists()


def test_kit_never_creates_a_missing_parent_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial (d): a kit built into a missing deep folder silently created it (and its
    # secret seed there); as for every output path, a missing parent is an error.
    target = tmp_path / "typo" / "deeper" / "kit"
    assert main(["kit", "classroom50", str(target)]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert f"the folder {target.parent} does not exist" in err and "mkdir -p" in err
    assert not (tmp_path / "typo").exists()


def test_kit_readmes_fit_one_screen(tmp_path: Path) -> None:
    for platform, readme in (
        ("gradescope", "README.md"),
        ("prairielearn", "README.md"),
        ("actions", "README.md"),
        ("classroom50", "README.md"),
    ):
        named = ["--namespace", "course"] if platform == "prairielearn" else []
        assert main(["kit", platform, str(tmp_path / platform), *named]) == 0
        lines = (tmp_path / platform / readme).read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 25 and max(map(len, lines)) <= 100, (platform, len(lines))


# -- Gradescope --------------------------------------------------------------------------------


def _gradescope_root(root: Path, tmp_path: Path, *extra: str) -> Path:
    assert main(["kit", "gradescope", str(tmp_path / "kit"), *extra]) == ExitCode.OK
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        (tmp_path / "kit" / "rlsys-seed").write_bytes(zf.read("rlsys-seed"))
    ag = root / "autograder"  # Gradescope unzips the kit into /autograder/source
    ag.mkdir(mode=0o755)
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        zf.extractall(ag / "source")
        for info in zf.infolist():  # zipfile drops the modes; unzip keeps them
            (ag / "source" / info.filename).chmod(info.external_attr >> 16 & 0o777)
    (ag / "submission").mkdir(mode=0o755)
    # Gradescope copies run_autograder to /autograder (specs.md); where setup.sh runs from
    # is not said: the tests run copies there too, the harder case for setup.sh.
    for name in ("run_autograder", "setup.sh"):
        shutil.copy2(ag / "source" / name, ag / name)
    return ag


# The controls' readable copy lies in the test root, below /tmp, which bubblewrap's fence
# replaces with a private tmpfs: they run with the fallback fence (same uid, same
# permissions) so that the copy is in the child's view, as it would be on a platform.
OPEN_VIEW = {"RLSYS_NO_BWRAP": "1"}


def _gradescope_grade(
    ag: Path,
    source: str,
    name: str = "rlsys_ledger.py",
    view: dict[str, str] | None = None,
    **others: str,
) -> dict[str, Any]:
    for old in (ag / "submission").iterdir():
        old.unlink()
    (ag / "submission" / name).write_text(source, encoding="utf-8")
    for other, text in others.items():
        (ag / "submission" / f"{other}.py").write_text(text, encoding="utf-8")
    env = _env(ag.parent, RLSYS_AUTOGRADER_ROOT=str(ag), **(view or {}))
    done = subprocess.run(
        [str(ag / "run_autograder")], env=env, cwd=ag, capture_output=True, text=True, timeout=300
    )
    results = ag / "results" / "results.json"
    # No results.json is Gradescope's infrastructure error ("The autograder failed to
    # execute correctly"): no score is recorded.
    doc: dict[str, Any] = json.loads(results.read_text("utf-8")) if results.exists() else {}
    doc["_stdout"] = done.stdout  # what Gradescope shows instructors only
    doc["_code"] = done.returncode
    return doc


def _interpreter(version: str) -> str | None:
    """A CPython ``version`` with venv: the system's, else a pyenv one (this machine's 3.12)."""
    candidates = [shutil.which(f"python{version}", path="/usr/local/bin:/usr/bin:/bin")]
    pyenv = Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}")
    candidates += sorted(str(p) for p in pyenv)
    for exe in candidates:
        if exe and subprocess.run([exe, "-c", "import venv, ensurepip"]).returncode == 0:
            return exe
    return None


def _image(root: Path, python3: str, *extra: tuple[str, str]) -> Path:
    """A PATH folder standing for an image: the system's tools, its ``python3`` and no
    other Python (nor apt: a call to it fails), plus ``extra`` (name, target) links."""
    image = root / "image-bin"
    image.mkdir()
    for folder in (Path("/usr/bin"), Path("/bin")):
        for tool in folder.iterdir():
            skip = tool.name.startswith(("python", "apt"))
            if not skip and not (image / tool.name).exists():
                (image / tool.name).symlink_to(tool)
    (image / "python3").symlink_to(python3)
    for name, target in extra:
        (image / name).symlink_to(target)
    return image


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_gradescope_kit_installs_offline_on_each_python_of_its_images(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    # Ubuntu 24.04's python3 is 3.12 (its archive has no python3.11); Debian 13's is 3.13;
    # Ubuntu 22.04 gets python3.11 from its archive (the next test).  Binary wheels that fit
    # one Python only (a 3.11-only rpds-py wheel once made pip fail offline on 24.04) are
    # fetched for each.
    ag = _gradescope_root(root, tmp_path)
    notes = capsys.readouterr().out
    if f"for Python {version} (" in notes:
        pytest.skip(f"no {version} wheel could be fetched while building: {notes}")
    assert "for Python 3.11, 3.12, 3.13)" in notes
    wheels = ag / "source" / "wheels"
    main_wheel = next(wheels.glob("pytest_rlsys-*.whl"))
    python = _interpreter(version)
    if python is None:
        # No such Python here: pip resolves the kit for it, offline, as it would install.
        target = tmp_path / "target"
        pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--target"]
        pip += [str(target), "--find-links", str(wheels), "-c", str(wheels / "constraints.txt")]
        pip += ["--python-version", version, "--only-binary", ":all:"]
        pip += ["--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64"]
        _sh([*pip, str(main_wheel)], _env(root), tmp_path)
        return
    # The image's own python3, the only Python on the PATH, and no apt-get: setup.sh uses
    # it and installs offline (the index is unreachable), with no fallback.
    image = _image(root, python)
    env = _env(root, RLSYS_AUTOGRADER_ROOT=str(ag), PATH=str(image))
    log = _sh(["bash", str(ag / "setup.sh")], env, ag)
    assert "package index" not in log and "apt-get" not in log, log
    venv_python = ag / "rlsys-venv" / "bin" / "python"
    got = _sh([str(venv_python), "-c", "import sys; print(sys.version_info[:2])"], env, ag)
    assert got.strip() == str(tuple(int(x) for x in version.split(".")))
    # The chapter's printed reference (the wheel carries its fingerprints, not its code).
    chapter = REPO / "tests" / "corpora" / "learner_corpus" / "ok_chapter_reference.py"
    assert _gradescope_grade(ag, chapter.read_text(encoding="utf-8"))["score"] == 100
    # The instructor-only log (stdout; results.json keeps it hidden) names the near copy.
    again = _env(root, RLSYS_AUTOGRADER_ROOT=str(ag))
    log = _sh([str(ag / "run_autograder")], again, ag, check=False)
    assert re.search(r"shares 1\.00 of its code with the reference.*\(a near copy", log), log
    doc = json.loads((ag / "results" / "results.json").read_text("utf-8"))
    assert doc["stdout_visibility"] == "hidden" and "similarity" not in json.dumps(doc)


def test_gradescope_kit_takes_python311_from_the_archive_where_python3_is_older(
    root: Path, tmp_path: Path
) -> None:
    # Ubuntu 22.04 (Gradescope's default image): python3 is 3.10, below rlsys's floor;
    # its archive has python3.11.  apt-get here records what it is asked and "installs"
    # python3.11 as the archive would.
    old, recent = _interpreter("3.10"), _interpreter("3.11")
    if old is None or recent is None:
        pytest.skip("needs a CPython 3.10 and a 3.11 with venv (pyenv's, here)")
    ag = _gradescope_root(root, tmp_path)
    calls = root / "apt-calls"
    apt = root / "apt-get"
    apt.write_text(
        f'#!/bin/sh\necho "$*" >> {calls}\n'
        f'case "$*" in *python3.11-venv*) ln -s {recent} {root / "image-bin"}/python3.11;; esac\n'
    )
    apt.chmod(0o755)
    image = _image(root, old, ("apt-get", str(apt)))
    env = _env(root, RLSYS_AUTOGRADER_ROOT=str(ag), PATH=str(image))
    log = _sh(["bash", str(ag / "setup.sh")], env, ag)
    assert "package index" not in log, log
    # Asked once, for the one Python the image lacks and rlsys needs (no python3.12, ...).
    assert calls.read_text().splitlines() == [
        "update -q",
        "install -y -q python3.11 python3.11-venv",
    ]
    venv_python = ag / "rlsys-venv" / "bin" / "python"
    got = _sh([str(venv_python), "-c", "import sys; print(sys.version_info[:2])"], env, ag)
    assert got.strip() == "(3, 11)"
    # An archive without python3.11 (universe not enabled): what to do, not only apt's error.
    (root / "image-bin" / "python3.11").unlink()
    apt.write_text(
        "#!/bin/sh\n[ \"$1\" = update ] || { echo 'E: Unable to locate package' >&2; exit 100; }\n"
    )
    done = subprocess.run(
        ["bash", str(ag / "setup.sh")], env=env, cwd=ag, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1
    assert "universe component); or choose the Ubuntu 24.04 base image" in done.stderr


def _kit_root(case: str, tmp_path: Path) -> str:
    """tests/kit_roots.sh's ``case`` in a fresh folder of roots: its one line, or a skip
    with the script's reason (a Python, Ubuntu's archive or its keyring missing here)."""
    tools = ("debootstrap", "unshare", "chroot")
    if not ROOT_ONLY or not all(shutil.which(tool) for tool in tools):
        pytest.skip("needs root, debootstrap, unshare and chroot (sudo tests/kit_roots.sh)")
    env = {**os.environ, "RLSYS": str(Path(sys.executable).parent / "rlsys")}
    env["RLSYS_ROOTS"] = str(tmp_path / "roots")
    try:
        done = subprocess.run(
            ["bash", str(REPO / "tests" / "kit_roots.sh"), case],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    finally:
        shutil.rmtree(tmp_path / "roots", ignore_errors=True)  # 260-750 MB
    if done.returncode == 0 and done.stdout.startswith(f"skip {case}: "):
        pytest.skip(done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_gradescope_kit_installs_offline_in_a_debian_root(tmp_path: Path) -> None:
    # tests/kit_roots.sh's gs-bookworm case (about 70 s, most of it debootstrap): a Debian
    # 12 root with its own python3 and no venv module; setup.sh as Gradescope runs it
    # (apt's the only network), then run_autograder grades the reference (100) and the
    # template (0) with no network at all.
    out = _kit_root("gs-bookworm", tmp_path)
    assert out.startswith("ok gs-bookworm: Python 3.11"), out
    # setup.sh's only network was apt's, to Debian's archive (tests/apt_proxy.py).
    assert "; network: apt only, " in out and "reference 100, template 0" in out


def test_kit_roots_skips_the_ubuntu_cases_and_says_why(tmp_path: Path) -> None:
    # Where CI reaches only Debian's archive and PyPI: each Ubuntu case is skipped with
    # its reason (exit 0), before any debootstrap.
    if not ROOT_ONLY:
        pytest.skip("tests/kit_roots.sh runs as root")
    keyring = tmp_path / "ubuntu-archive-keyring.gpg"
    keyring.write_bytes(b"not a real key")
    env = {**os.environ, "RLSYS": str(Path(sys.executable).parent / "rlsys")}
    env.update(RLSYS_ROOTS=str(tmp_path / "roots"), UBUNTU_KEYRING=str(keyring))
    env["UBUNTU_MIRROR"] = "http://127.0.0.1:9/ubuntu"  # a closed port
    script = str(REPO / "tests" / "kit_roots.sh")

    def run(*cases: str) -> subprocess.CompletedProcess[str]:
        args = ["bash", script, *cases]
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)

    done = run("gs-jammy", "cr-noble")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f"skip {case}: Ubuntu's archive is unreachable from here "
        f"(http://127.0.0.1:9/ubuntu/dists/{release}/Release)"
        for case, release in (("gs-jammy", "jammy"), ("cr-noble", "noble"))
    ]
    env["UBUNTU_KEYRING"] = str(tmp_path / "none.gpg")
    done = run("gs-noble")
    assert done.stdout.startswith("skip gs-noble: no Ubuntu archive keyring at "), done.stdout
    assert not list((tmp_path / "roots").glob("base-*"))


def test_gradescope_kit_installs_offline_in_an_ubuntu_2204_root(tmp_path: Path) -> None:
    # tests/kit_roots.sh's gs-jammy case (about 3 minutes here, half of it debootstrap;
    # skipped where Ubuntu's archive is unreachable, as where CI has only Debian's archive
    # and PyPI): a real Ubuntu 22.04 root, Gradescope's default image, whose python3 is
    # 3.10; setup.sh takes python3.11 and python3.11-venv from Ubuntu's archive (universe;
    # apt's the only network, pip has no index); then the reference scores 100 and the
    # template 0 with no network at all.
    # gs-noble and cr-noble (24.04) run by hand: sudo tests/kit_roots.sh gs-noble cr-noble.
    out = _kit_root("gs-jammy", tmp_path)
    assert out.startswith("ok gs-jammy: Python 3.11"), out
    assert "python3.11-venv" in out and "; network: apt only, " in out
    assert "reference 100, template 0" in out


def test_gradescope_kit_installs_offline_and_grades(root: Path, tmp_path: Path) -> None:
    ag = _gradescope_root(root, tmp_path, "--hidden-visibility", "after_due_date")
    setup = (ag / "source" / "setup.sh").read_text(encoding="utf-8")
    # An image whose python3 is too old (Ubuntu 22.04: 3.10) gets python3.11 from its archive.
    assert "PY=python3.11" in setup and 'apt_get "$PY" "$PY-venv"' in setup
    python = _python()
    env = _env(root, RLSYS_AUTOGRADER_ROOT=str(ag), PATH=f"{Path(python).parent}:/usr/bin:/bin")
    log = _sh(["bash", str(ag / "setup.sh")], env, ag)
    assert "package index" not in log  # offline: the fallback was not needed
    # Nothing of the package is left readable: no wheel, no seed copy, root-only folders.
    assert _wheels_anywhere(ag) == []
    for folder in ("source", "rlsys-venv", "rlsys-secret"):
        assert _others_cannot_read(ag / folder), folder
    assert (ag / "rlsys-secret" / "seed").stat().st_mode & 0o777 == 0o600
    reference = solution_path().read_text(encoding="utf-8")
    doc = _gradescope_grade(ag, reference)
    assert doc["score"] == 100 and doc["stdout_visibility"] == "hidden"
    assert "rlsys: Graded behind the fence: " in doc["_stdout"]  # for instructors only
    assert "Graded behind" not in doc["output"]
    template = _gradescope_grade(ag, exercise_path().read_text(encoding="utf-8"))
    assert template["score"] == 0
    # The kit's hidden visibility reaches every field that carries hidden results.
    hidden = [t for t in template["tests"] if "hidden" in t["tags"]]
    assert hidden and all(t["visibility"] == "after_due_date" for t in hidden)
    assert (
        "hidden cases (" in template["output"] and "hidden cases failed" not in template["output"]
    )
    # One name, said once, with what was found.
    doc = _gradescope_grade(ag, "y = 2\n", "mine.py", other="x = 1\n")
    assert doc["score"] == 0
    assert "submit one file named rlsys_ledger.py (found: mine.py, other.py)" in doc["output"]
    # Another single .py name is graded.
    assert _gradescope_grade(ag, reference, "mine.py")["score"] == 100
    # An empty file did not load: 0, the reason above the table (course trial r5 M1).
    doc = _gradescope_grade(ag, "\n")
    assert doc["score"] == 0 and "the file is empty" in doc["output"]
    assert round(sum(t["max_score"] for t in doc["tests"]), 6) == 100
    # No seed, no grade (never the constant default seed), and no score either: an
    # infrastructure error as Gradescope records one, the reason in the output.
    (ag / "rlsys-secret" / "seed").unlink()
    doc = _gradescope_grade(ag, reference)
    assert doc["_code"] != 0 and "score" not in doc
    assert "infrastructure error, not a grade: the autograder has no seed" in doc["_stdout"]
    shutil.copyfile(tmp_path / "kit" / "rlsys-seed", ag / "rlsys-secret" / "seed")
    if not ROOT_ONLY:
        return  # the child runs as another uid only when the grader is root
    # The thief scores what doing nothing scores, even with one readable copy.
    assert _gradescope_grade(ag, _thief(root))["score"] <= template["score"] == 0
    _leak(root, tmp_path / "kit" / "autograder.zip")
    # Behind Landlock (the kits require it) even a copy left readable by everyone is out
    # of the child's reach; the thief's control, where files are readable, is in
    # tests/plugin/test_fence.py (non-root without Landlock).
    assert _gradescope_grade(ag, _thief(root), view=OPEN_VIEW)["score"] == 0


# -- PrairieLearn ------------------------------------------------------------------------------


def _prairielearn_image(root: Path, tmp_path: Path, namespace: str = "mycourse") -> Path:
    """The kit built, its Dockerfile's RUN lines run (each ``--mount=type=bind`` as the
    kit's own folder, which must come out unchanged: a bind mount is no layer) against a
    venv standing in for the image's Python; returns the question folder."""
    kit = tmp_path / "question"
    assert main(["kit", "prairielearn", str(kit), "--namespace", namespace]) == ExitCode.OK
    image = root / "image"
    subprocess.run([_python(), "-m", "venv", str(image)], check=True)
    env = _env(root, PATH=f"{image / 'bin'}:/usr/bin:/bin")
    docker = kit / "docker"
    before = sorted((p.relative_to(docker), p.read_bytes()) for p in docker.rglob("*.whl"))
    text = (docker / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines[0].startswith("FROM python:3.") and len(lines) == 2
    word, _, rest = lines[1].partition(" ")
    assert word == "RUN"  # no COPY, no ADD: nothing of the kit is in a layer
    mount, _, command = rest.partition(" ")
    fields = dict(f.split("=", 1) for f in mount.removeprefix("--mount=").split(","))
    assert fields["type"] == "bind" and "rw" not in fields
    _sh(["sh", "-c", command.replace(fields["target"], str(docker / fields["source"]))], env, root)
    assert sorted((p.relative_to(docker), p.read_bytes()) for p in docker.rglob("*.whl")) == before
    return kit


def _pl_grade(
    root: Path, kit: Path, source: str, view: dict[str, str] | None = None
) -> dict[str, Any]:
    grade = root / "grade"  # what PrairieLearn mounts: the question's tests/, the files
    shutil.rmtree(grade, ignore_errors=True)
    grade.mkdir(mode=0o755)
    shutil.copytree(kit / "tests", grade / "tests")
    (grade / "student").mkdir(mode=0o755)
    (grade / "student" / "rlsys_ledger.py").write_text(source, encoding="utf-8")
    python = str(root / "image/bin/python")
    env = _env(root, RLSYS_GRADE_ROOT=str(grade), RLSYS_PYTHON=python, **(view or {}))
    _sh(["bash", str(grade / "tests" / "run.sh")], env, root, check=False)
    assert _others_cannot_read(grade / "tests")  # the seed is root-only before grading
    doc: dict[str, Any] = json.loads((grade / "results" / "results.json").read_text("utf-8"))
    return doc


def test_prairielearn_kit_names_its_image_and_grades(root: Path, tmp_path: Path) -> None:
    kit = _prairielearn_image(root, tmp_path)
    info = json.loads((kit / "info.json").read_text(encoding="utf-8"))
    image = info["externalGradingOptions"]["image"]
    assert image == "mycourse/rlsys-grader:0.1.0"
    assert info["externalGradingOptions"]["entrypoint"] == "/grade/tests/run.sh"
    # The README's commands: build and push the image info.json names, from docker/.
    readme = (kit / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"`(docker [^`]+)`", readme)
    assert commands == [f"docker build -t {image} docker", f"docker push {image}"]
    assert (kit / commands[0].split()[-1] / "Dockerfile").is_file()
    assert "sync" in readme.lower() and "--namespace" in readme
    assert (kit / "rlsys_ledger.py").read_text("utf-8") == exercise_path().read_text("utf-8")
    assert 'file-name="rlsys_ledger.py"' in (kit / "question.html").read_text(encoding="utf-8")
    assert (kit / "tests" / "rlsys-seed").stat().st_mode & 0o777 == 0o600
    # The "image" holds no answer (it may be pushed to a public registry): no wheel, no
    # pytest-rlsys, no copy of the reference; the docker/ folder it is built from neither.
    reference = solution_path().read_bytes()
    for folder in (root / "image", kit / "docker"):
        assert not [p for p in folder.rglob("*") if p.suffix == ".whl" and "rlsys" in p.name]
        assert not [p for p in folder.rglob("*.py") if p.read_bytes() == reference]
    assert not list((root / "image").rglob("pytest_rlsys"))
    doc = _pl_grade(root, kit, reference.decode("utf-8"))
    assert doc["gradable"] is True and doc["score"] == 1.0
    assert doc["message"].splitlines()[-1].startswith("Graded behind the fence: ")
    doc = _pl_grade(root, kit, exercise_path().read_text(encoding="utf-8"))
    assert doc["score"] == 0.0
    # An empty file did not load, as any such file: not gradable (no attempt charged),
    # 0 of 100, the reason in format_errors and the message (course trial r5 M1).
    doc = _pl_grade(root, kit, " \n")
    assert doc["gradable"] is False and "the file is empty" in doc["format_errors"][0]
    assert (doc["points"], doc["max_points"]) == (0, 100)
    assert "the file is empty" in doc["message"]
    # No seed: PrairieLearn's "invalid, not gradable", saying it is the set-up's fault.
    (kit / "tests" / "rlsys-seed").rename(tmp_path / "seed")
    doc = _pl_grade(root, kit, reference.decode("utf-8"))
    assert doc["gradable"] is False and "set-up is broken" in doc["message"]
    assert "tell your course staff" in doc["message"] and "no seed" in doc["message"]
    (tmp_path / "seed").rename(kit / "tests" / "rlsys-seed")
    if ROOT_ONLY:  # the thief scores 0, even with one readable copy of the kit
        assert _others_cannot_read(next((root / "image").rglob("site-packages/pytest_rlsys")))
        assert _pl_grade(root, kit, _thief(root))["score"] == 0.0
        _zip_folder(kit / "docker", tmp_path / "docker.zip")
        _leak(root, tmp_path / "docker.zip")
        # Behind Landlock even a readable copy is out of reach (as the Gradescope kit).
        assert _pl_grade(root, kit, _thief(root), OPEN_VIEW)["score"] == 0.0
    # Without a namespace the kit says hosted PrairieLearn needs one.
    assert main(["kit", "prairielearn", str(tmp_path / "q2")]) == 0
    assert main(["kit", "prairielearn", str(tmp_path / "q3"), "--namespace", "Bad Name"]) == 2


@pytest.mark.parametrize("namespace", [None, "course-staff"])
def test_prairielearn_readme_builds_pushes_and_names_one_image(
    tmp_path: Path, namespace: str | None
) -> None:
    kit = tmp_path / "q"
    argv = ["kit", "prairielearn", str(kit)] + (["--namespace", namespace] if namespace else [])
    assert main(argv) == 0
    image = json.loads((kit / "info.json").read_text())["externalGradingOptions"]["image"]
    readme = (kit / "README.md").read_text("utf-8")
    named = re.findall(r"docker (?:build -t|push) (\S+?)[`\s]", readme)
    # Pushed only with a namespace: a local name cannot go to Docker Hub.
    assert len(named) == (2 if namespace else 1) and set(named) == {image}, (named, image)
    assert (namespace is None) == ("hosted PrairieLearn cannot" in readme)


# -- GitHub's runners (Actions, Classroom 50): as the runner's non-root user ----------------

RUNNER_UID = 1001  # GitHub's hosted runner user is not root


def _as_runner(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run as the runner does: a non-root user (dropped to with setpriv when we are root),
    owning its workspace, with no package index."""
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot run as a non-root runner")
        args = [
            "setpriv",
            f"--reuid={RUNNER_UID}",
            f"--regid={RUNNER_UID}",
            "--clear-groups",
            *args,
        ]
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _runner_owns(*paths: Path) -> None:
    if os.geteuid() == 0:
        for path in paths:
            for p in [path, *path.rglob("*")]:
                os.chown(p, RUNNER_UID, RUNNER_UID, follow_symlinks=False)


def _setup_python(root: Path) -> Path:
    """actions/setup-python: a Python of the runner's own, `python` on PATH."""
    venv = root / "setup-python"
    if not venv.exists():
        subprocess.run([_python(), "-m", "venv", str(venv)], check=True)
    _runner_owns(venv)
    return venv / "bin"


def _reachable(root: Path) -> None:
    """The runner's uid can walk to the test root (pytest's tmp folders are 0700)."""
    for folder in [root, *root.parents]:
        if folder == Path("/"):
            break
        folder.chmod(folder.stat().st_mode | 0o711)


def test_the_readmes_say_the_learner_can_read_the_reference(tmp_path: Path) -> None:
    for platform, wheels in (
        ("actions", ".github/rlsys/wheels"),
        ("classroom50", "autograders/rlsys-ledger/wheels"),
    ):
        assert main(["kit", platform, str(tmp_path / platform)]) == 0
        readme = " ".join((tmp_path / platform / "README.md").read_text("utf-8").split())
        found = list((tmp_path / platform / wheels).glob("pytest_rlsys-*"))
        assert found and any(  # what the README says is true of the wheel it ships
            name.endswith("solutions/rlsys_ledger.py")
            for name in zipfile.ZipFile(found[0]).namelist()
        )
        assert "hold the reference solution" in readme and "Nothing here is secret" in readme
        assert "advisory" in readme


def test_the_actions_workflow_is_valid_against_github_s_published_schema(
    tmp_path: Path,
) -> None:
    # check-jsonschema's vendored copy of SchemaStore's github-workflow.json (what
    # editors and CI validate GitHub workflows with); no network.
    assert main(["kit", "actions", str(tmp_path / "repo")]) == 0
    workflow = tmp_path / "repo" / ".github" / "workflows" / "rlsys.yml"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(workflow),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    broken = tmp_path / "broken.yml"  # the control: the schema does reject a bad workflow
    broken.write_text(workflow.read_text("utf-8").replace("runs-on:", "runs_on:"), "utf-8")
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(broken),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 1


def _actions_run(repo: Path, root: Path, seed: str | None) -> dict[str, Any]:
    """The workflow's steps by hand, as the runner's non-root user, offline: checkout (a
    fresh copy), setup-python (a venv, at the version file's Python), the install and
    grade steps' own `run` lines, then what upload-artifact would upload."""
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "rlsys.yml").read_text())
    job = workflow["jobs"]["grade"]
    assert job["runs-on"] == "ubuntu-latest" and workflow[True] == {
        "push": None,
        "workflow_dispatch": None,
    }  # PyYAML reads the key `on` as True
    steps = {s["name"].split(" ")[0]: s for s in job["steps"]}
    assert steps["Check"]["uses"] == "actions/checkout@v4"
    assert steps["Set"]["with"]["python-version-file"] == ".github/rlsys/python-version"
    upload = steps["Upload"]
    assert upload["uses"] == "actions/upload-artifact@v4" and upload["if"] == "${{ !cancelled() }}"
    runner = root / "runner"
    shutil.rmtree(runner, ignore_errors=True)
    (runner / "temp").mkdir(parents=True)
    work = runner / "checkout"
    shutil.copytree(repo, work)
    python = _setup_python(root)
    summary = runner / "summary.md"
    summary.touch()
    _runner_owns(runner)
    _reachable(root)
    env = _env(
        root,
        PATH=f"{python}:/usr/bin:/bin",
        RUNNER_TEMP=str(runner / "temp"),
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_ACTIONS="true",
    )
    installed = _as_runner(["bash", "-e", "-c", steps["Install"]["run"]], env, work)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "package index" not in installed.stderr
    env.update(steps["Grade"]["env"])
    env["RLSYS_SEED"] = seed or ""  # an unset secret is the empty string
    graded = _as_runner(["bash", "-e", "-c", steps["Grade"]["run"]], env, work)
    artifact = Path(upload["with"]["path"].replace("${{ runner.temp }}", str(runner / "temp")))
    return {
        "code": graded.returncode,
        "log": graded.stdout,
        "summary": summary.read_text("utf-8"),
        "artifact": json.loads(artifact.read_text("utf-8")),
    }


def _commands(log: str) -> list[str]:
    """The workflow commands GitHub acts on in a step's log: those outside a
    stop-commands region."""
    acted, stopped = [], None
    for line in log.splitlines():
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        if line.startswith("::stop-commands::"):
            stopped = line.removeprefix("::stop-commands::")
        elif line.startswith("::"):
            acted.append(line)
    return acted


def test_actions_kit_grades_as_the_runner_runs_it(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    assert main(["kit", "actions", str(repo)]) == ExitCode.OK
    seed = re.search(r"RLSYS_SEED = (\d+)", capsys.readouterr().out)
    assert seed is not None
    assert seed.group(1) not in "".join(  # the seed is not in the learner's repository
        p.read_text("utf-8", "replace") for p in repo.rglob("*") if p.is_file()
    )
    version = (repo / ".github" / "rlsys" / "python-version").read_text().strip()
    assert re.fullmatch(r"3\.1\d", version)
    # The untouched template: 0, the job fails, the summary says the fence that graded.
    run = _actions_run(repo, root, seed.group(1))
    assert run["code"] == 1 and run["artifact"]["score"] == 0
    assert _commands(run["log"]) == ["::notice title=rlsys::Points 0/100"]
    assert "| TODO 1 | 0 | 30 |" in run["summary"]
    assert "Graded behind the fence: " in run["summary"] and "Advisory" in run["summary"]
    # The finished exercise: full marks, the job passes.
    (repo / "rlsys_ledger.py").write_text(solution_path().read_text(encoding="utf-8"))
    run = _actions_run(repo, root, seed.group(1))
    assert run["code"] == 0 and run["artifact"]["score"] == 100
    assert _commands(run["log"]) == ["::notice title=rlsys::Points 100/100"]
    # The install step read the wheels and left them (a dry run on the repository too).
    assert list((root / "runner" / "checkout" / ".github/rlsys/wheels").glob("pytest_rlsys-*"))
    # A broken upload (two files, one named as a workflow command): a clear reason, no
    # command of the learner's acted on, the names escaped in the summary.
    (repo / "rlsys_ledger.py").unlink()
    (repo / "a.py").write_text("x = 1\n", encoding="utf-8")
    (repo / "::error::b_<i>.py").write_text("x = 1\n", encoding="utf-8")
    run = _actions_run(repo, root, seed.group(1))
    commands = _commands(run["log"])
    assert run["code"] == 1 and commands[-1] == "::notice title=rlsys::Points 0/100"
    assert len(commands) == 2 and commands[0].startswith("::warning title=rlsys::submit one")
    assert "score is 0: submit one file named rlsys_ledger.py" in run["summary"]
    assert "<i>" not in run["summary"] and "&lt;i&gt;" in run["summary"]
    assert "rlsys_ledger.py" in run["artifact"]["not_graded"]
    # A file that does not load: graded 0, the reason in the summary and a warning.
    (repo / "::error::b_<i>.py").unlink()
    (repo / "a.py").rename(repo / "rlsys_ledger.py")
    (repo / "rlsys_ledger.py").write_text("def f(:\n", encoding="utf-8")
    run = _actions_run(repo, root, seed.group(1))
    assert run["code"] == 1 and "The file did not load" in run["summary"]
    assert "SyntaxError" in run["summary"] and "SyntaxError" in _commands(run["log"])[0]
    # The log says what the score file says: 0 points, and why (course trial r5 M2).
    assert "rlsys score: Points 0/100; The file did not load" in run["log"]
    assert run["artifact"]["score"] == 0 and "not graded" not in run["log"].lower()
    # An empty file did not load either: 0, "the file is empty" (course trial r5 M1).
    (repo / "rlsys_ledger.py").write_text("\n", encoding="utf-8")
    run = _actions_run(repo, root, seed.group(1))
    assert run["code"] == 1 and run["artifact"]["score"] == 0
    assert "the file is empty" in run["artifact"]["load_error"]
    assert _commands(run["log"])[-1] == "::notice title=rlsys::Points 0/100"
    assert "the file is empty" in run["summary"] and "the file is empty" in run["log"]
    # No RLSYS_SEED secret: an infrastructure error, not a score: the job fails with an
    # ::error::, no Points line, and the summary says why.
    run = _actions_run(repo, root, None)
    assert run["code"] == 1 and "RLSYS_SEED" in run["summary"]
    assert "not a score" in run["summary"] and "Points" not in run["summary"]
    commands = _commands(run["log"])
    assert len(commands) == 1 and commands[0].startswith("::error title=rlsys::")
    assert "RLSYS_SEED" in commands[0] and "Points" not in run["log"]
    assert "RLSYS_SEED" in run["artifact"]["infrastructure_error"]


def _digest(folder: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``folder``: its mode and a hash of its bytes."""
    import hashlib

    return {
        str(p.relative_to(folder)): (p.stat().st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _c50_run(
    kit: Path,
    root: Path,
    source: str | None,
    slug: str = "hello",
    name: str = "rlsys_ledger.py",
    in_place: bool = False,
) -> dict[str, Any]:
    """Classroom 50's runner as runner.py runs an autograder.py: the bundle extracted to
    $RUNNER_TEMP/classroom50-runtime/SLUG/, `[sys.executable, autograder.py]` with the
    learner's checkout as the working folder and its environment (run_entrypoint), as the
    runner's non-root user, offline.  ``in_place``: a dry run on the kit's own folder (what
    an instructor pushes), read-only to that user.  Either way the bundle is unchanged."""
    runner = root / "runner"
    shutil.rmtree(runner, ignore_errors=True)
    runner.mkdir()
    if in_place:
        bundle = kit / "autograders" / "rlsys-ledger"
        _reachable(bundle)
        for folder in [bundle, *(p for p in bundle.rglob("*") if p.is_dir())]:
            folder.chmod(0o555)  # read-only: a write would fail, not just show in the digest
    else:
        bundle = runner / "temp" / "classroom50-runtime" / slug
        shutil.copytree(kit / "autograders" / "rlsys-ledger", bundle)
    checkout = runner / "checkout"
    checkout.mkdir()
    if source is not None:
        (checkout / name).write_text(source, encoding="utf-8")
    python = _setup_python(root)
    (runner / "temp").mkdir(exist_ok=True)
    _runner_owns(runner)
    _reachable(root)
    before = _digest(bundle)
    env = _env(
        root,
        PATH=f"{python}:/usr/bin:/bin",
        RUNNER_TEMP=str(runner / "temp"),
        GITHUB_ACTIONS="true",
        CLASSROOM="cs-rl",
        ASSIGNMENT=slug,
        SUBMISSION_TAG="submit/2026-12-07T01-23-45Z-abc1234",
        PAGES_BASE_URL="https://example.github.io/classroom50",
        CLASSROOM50_BUNDLE_DIR=str(bundle),
        USERNAME="alice",
        OWNER="alice",
        ASSIGNMENT_TYPE="individual",
        COMMIT_URL="https://github.com/o/cs-rl-hello-alice/commit/abc1234",
        RELEASE_URL="https://github.com/o/cs-rl-hello-alice/releases/tag/submit%2F1",
        REVIEW_URL="https://github.com/o/cs-rl-hello-alice/compare/a...b",
    )
    done = _as_runner([str(python / "python"), str(bundle / "autograder.py")], env, checkout)
    assert _digest(bundle) == before, "autograder.py changed its bundle"
    # Its venv (66 MB) and seed copy are gone: dry runs on a laptop do not pile up.
    assert not list((runner / "temp").glob("rlsys-*")), "autograder.py left its work folder"
    if in_place:
        for folder in [bundle, *(p for p in bundle.rglob("*") if p.is_dir())]:
            folder.chmod(0o755)
    result = checkout / "result.json"
    body = checkout / "release-body.md"
    return {
        "code": done.returncode,
        "log": done.stdout + done.stderr,
        "result": json.loads(result.read_text("utf-8")) if result.exists() else None,
        "body": body.read_text("utf-8") if body.exists() else None,
    }


def _valid_classroom50(result: dict[str, Any]) -> None:
    """The vendored classroom50/result/v1 schema, and the rules runner.py's
    validate_result adds in code (score <= max-score, per test and in all)."""
    schema = json.loads((REPO / "tests" / "data" / "classroom50-result-v1.schema.json").read_text())
    import jsonschema

    jsonschema.Draft202012Validator(schema).validate(result)
    assert result["score"] <= result["max-score"]
    assert all(t["score"] <= t["max-score"] for t in result["tests"])
    assert result["score"] == sum(t["score"] for t in result["tests"])


def test_classroom50_kit_grades_as_the_runner_runs_it(root: Path) -> None:
    kit = root / "c50"  # in the test root: the dry run below reads it as the runner's user
    assert main(["kit", "classroom50", str(kit)]) == ExitCode.OK
    bundle = kit / "autograders" / "rlsys-ledger"
    assert sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file()) < 10 * 2**20
    assert (kit / "template" / "rlsys_ledger.py").read_bytes() == exercise_path().read_bytes()
    run = _c50_run(kit, root, solution_path().read_text("utf-8"))
    assert run["code"] == 0, run["log"]
    _valid_classroom50(run["result"])
    assert (run["result"]["score"], run["result"]["max-score"]) == (100, 100)
    assert all(t["passed"] for t in run["result"]["tests"])
    assert "Graded behind the fence: " in run["body"] and "100/100" in run["body"]
    assert "package index" not in run["log"]
    # A dry run on the pushed folder itself, read-only: it grades and the folder, wheels
    # and all, is unchanged (_c50_run checks), so the next run grades as well.
    for _ in range(2):
        run = _c50_run(kit, root, exercise_path().read_text("utf-8"), in_place=True)
        assert run["code"] == 0, run["log"]
        _valid_classroom50(run["result"])
        assert run["result"]["score"] == 0 and run["result"]["max-score"] == 100
    assert list(bundle.glob("wheels/pytest_rlsys-*.whl"))


BROKEN_UPLOADS = {  # the file the learner pushed, and what result.json must say about it
    "nothing": (None, "rlsys_ledger.py", "submit one file named rlsys_ledger.py"),
    "a wrong name": ("x = 1\n", "rlsys_ledger.txt", "other files: rlsys_ledger.txt"),
    "empty": ("\n  \n", "rlsys_ledger.py", "the file is empty"),
    "unparsable": ("def f(:\n", "rlsys_ledger.py", "SyntaxError"),
    "not loading": ("import no_such_module\n", "rlsys_ledger.py", "ModuleNotFoundError"),
}


@pytest.mark.parametrize("upload", BROKEN_UPLOADS)
def test_classroom50_kit_says_why_a_broken_upload_scores_nothing(
    root: Path, tmp_path: Path, upload: str
) -> None:
    """A learner's broken upload is a grade of 0 (exit 0) whose reason is in result.json
    (valid against the schema) and in release-body.md, the Release a learner reads."""
    kit = tmp_path / "c50"
    assert main(["kit", "classroom50", str(kit)]) == ExitCode.OK
    source, name, why = BROKEN_UPLOADS[upload]
    run = _c50_run(kit, root, source, name=name)
    assert run["code"] == 0, run["log"]
    _valid_classroom50(run["result"])
    assert run["result"]["score"] == 0
    assert all(why in t["message"] for t in run["result"]["tests"]), run["result"]
    assert why in run["body"], run["body"]  # names as written: no escape they do not need


def test_classroom50_kit_without_its_seed_is_an_infrastructure_error(
    root: Path, tmp_path: Path
) -> None:
    """No seed in the bundle is the course's error, not the learner's: exit non-zero (the
    runner records an error), no result.json that would read as a score of 0."""
    kit = tmp_path / "c50"
    assert main(["kit", "classroom50", str(kit)]) == ExitCode.OK
    (kit / "autograders" / "rlsys-ledger" / "rlsys-seed").unlink()
    run = _c50_run(kit, root, solution_path().read_text("utf-8"))
    assert run["code"] != 0 and run["result"] is None and run["body"] is None
    assert "infrastructure error, not a score: the bundle has no rlsys-seed" in run["log"]


def test_classroom50_result_words_every_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reports.py, the step after grading: integer points that add up, and an error
    (non-zero) where no learner's problem explains a missing score."""
    from pytest_rlsys.outputs.kits import reports

    monkeypatch.chdir(tmp_path)
    for name, value in {
        "CLASSROOM": "c",
        "ASSIGNMENT": "a",
        "SUBMISSION_TAG": "submit/x",
        "COMMIT_URL": "u",
        "RELEASE_URL": "r",
    }.items():
        monkeypatch.setenv(name, value)
    score = tmp_path / "score.json"
    score.write_text(
        json.dumps(
            {
                "score": 62.75,
                "max_score": 100,
                "fence": {"level": "seccomp", "mechanisms": ["x"]},
                "sections": {
                    "todo1": {"score": 29.5, "max_score": 30},
                    "todo2": {"score": 33.25, "max_score": 35},
                    "todo3": {"score": 0, "max_score": 35},
                },
            }
        )
    )
    assert reports.main(["classroom50", str(score)]) == 0
    result = json.loads((tmp_path / "result.json").read_text())
    _valid_classroom50(result)
    assert [t["score"] for t in result["tests"]] == [30, 33, 0] and result["score"] == 63
    assert not result["tests"][0]["passed"]  # 29.5 of 30 is not a pass, rounded or not
    assert "seccomp (x)" in (tmp_path / "release-body.md").read_text()
    # The grader crashed (no score, no learner's problem): an infrastructure error.
    (tmp_path / "result.json").unlink()
    assert reports.main(["classroom50", str(tmp_path / "none"), "--error", "boom"]) == 1
    assert not (tmp_path / "result.json").exists()
    monkeypatch.delenv("CLASSROOM")
    assert reports.main(["classroom50", str(score)]) == 1


FULL = [3000, 3500, 3500]  # the default rubric's TODO maxima, in hundredths
ODD = [3350, 3350, 3300]  # a rubric whose maxima are not whole points


@pytest.mark.parametrize(
    ("cents", "tops"),
    [
        (FULL, FULL),
        ([2950, 2025, 30], FULL),
        ([1, 1, 1], FULL),
        ([49, 1, 0], FULL),
        ([2950, 3449, 3499], FULL),
        (ODD, ODD),
        ([3350, 0, 3300], ODD),
    ],
)
def test_integer_points_add_up_to_the_rounded_total(cents: list[int], tops: list[int]) -> None:
    from pytest_rlsys.outputs.kits.reports import integer_points

    parts = integer_points(
        [(str(i), c / 100, t / 100) for i, (c, t) in enumerate(zip(cents, tops, strict=True))]
    )
    assert sum(g for _, g, _ in parts) == (sum(cents) + 50) // 100
    assert all(g <= t for _, g, t in parts)
    # A full section keeps its full points.
    full = [(g, t) for (_, g, t), c, top in zip(parts, cents, tops, strict=True) if c == top]
    assert all(g == t for g, t in full)


# -- one name: the project's README agrees with the kits ----------------------------------------


def test_readme_names_one_file(tmp_path: Path) -> None:
    from pytest_rlsys.outputs.kits import SUBMISSION_NAME

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "mine.py" not in readme
    assert f"rlsys grade /autograder/submission/{SUBMISSION_NAME}" in readme.replace("\n  ", " ")


def test_gradescope_readme_names_only_what_the_zip_holds(tmp_path: Path) -> None:
    assert main(["kit", "gradescope", str(tmp_path / "kit")]) == ExitCode.OK
    readme = (tmp_path / "kit" / "README.md").read_text(encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        names = set(zf.namelist())
        assert zf.read("README.md").decode("utf-8") == readme
    folders = {n.split("/")[0] + "/" for n in names if "/" in n}
    prose = re.sub(r"```sh\n.*?```", "", readme, flags=re.S)  # the commands: run below
    for token in re.findall(r"`([^`]+)`", prose):
        for word in token.split():
            word = word.removeprefix("@").rstrip(",")
            if word.startswith("/autograder") or "=" in word or not re.search(r"[./]", word):
                continue  # the platform's own paths, variables, plain words
            if word.endswith(".py") or word == "autograder.zip":
                continue  # the learner's file; the zip itself
            assert word in names or word in folders, word
    assert "rlsys template" in readme  # a real command (test_commands covers it)


def test_gradescope_readme_commands_try_it_in_gradescope_s_layout(root: Path) -> None:
    """The README's "try it elsewhere" commands, run as written (ROOT moved into the test
    root), from the kit's folder: Gradescope's layout ($ROOT/source holds the zip, the
    submission in $ROOT/submission), and the reference scores 100."""
    kit = root / "kit"
    assert main(["kit", "gradescope", str(kit)]) == ExitCode.OK
    readme = (kit / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None and block.group(1).startswith("ROOT=/tmp/ag\n")
    ag = root / "ag"
    commands = block.group(1).replace("ROOT=/tmp/ag", f"ROOT={ag}", 1)
    python = _python()
    # The kit folder holds no learner's file, so the commands make one (a trial's `cp`
    # found none) with the rlsys setup.sh installed: none on PATH (course trial r5 L-c).
    env = _env(root, PATH=f"{Path(python).parent}:/usr/bin:/bin")
    assert shutil.which("rlsys", path=env["PATH"]) is None
    log = _sh(["bash", "-e", "-c", commands], env, kit)
    result = (ag / "results" / "results.json").read_text("utf-8")
    assert result in log and json.loads(result)["score"] == 0, log  # the template
    shutil.copyfile(solution_path(), ag / "submission" / "rlsys_ledger.py")
    log = _sh([f"{ag}/run_autograder"], {**env, "RLSYS_AUTOGRADER_ROOT": str(ag)}, kit)
    result = (ag / "results" / "results.json").read_text("utf-8")
    assert json.loads(result)["score"] == 100, log
    assert (ag / "source" / "setup.sh").is_file() and not (ag / "source" / "wheels").exists()
    assert (kit / "autograder.zip").is_file()  # the zip itself is untouched


def test_a_bad_namespace_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Exit 2 as every other bad option value (it was 3, "could not finish": trial Q6).
    assert main(["kit", "prairielearn", str(tmp_path / "pl"), "--namespace", "Bad Name!"]) == 2
    assert "registry namespace" in capsys.readouterr().err
