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

import base64
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
    built = tmp_path / "k2" / "docker" / "wheels" / "pytest_rlsys-0.1.0-py3-none-any.whl"
    given = tmp_path / "given" / built.name
    given.parent.mkdir()
    shutil.copyfile(built, given)
    with zipfile.ZipFile(given, "a") as zf:
        zf.writestr("pytest_rlsys/marker.txt", "the instructor's own build")
    assert main(["kit", "classroom", str(tmp_path / "k3"), "--wheel", str(given)]) == 0
    carried = tmp_path / "k3" / ".github" / "classroom" / "wheels" / built.name
    assert carried.read_bytes() == given.read_bytes()
    assert main(["kit", "gradescope", str(tmp_path / "k3")]) == 2  # not empty: no --force


@pytest.mark.parametrize(
    ("platform", "option"),
    [
        ("gradescope", ["--namespace", "course"]),
        ("classroom", ["--namespace", "course"]),
        ("prairielearn", ["--hidden-visibility", "hidden"]),
        ("classroom", ["--hidden-visibility", "after_due_date"]),
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
    assert main(["kit", "classroom", str(target)]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert f"the folder {target.parent} does not exist" in err and "mkdir -p" in err
    assert not (tmp_path / "typo").exists()


def test_kit_readmes_fit_one_screen(tmp_path: Path) -> None:
    for platform, readme in (
        ("gradescope", "README.md"),
        ("prairielearn", "README.md"),
        ("classroom", "README.md"),
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
    _sh([str(ag / "run_autograder")], env, ag, check=False)
    doc: dict[str, Any] = json.loads((ag / "results" / "results.json").read_text("utf-8"))
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
    assert _gradescope_grade(ag, reference)["score"] == 100
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
    # No seed, no grade (never the constant default seed).
    (ag / "rlsys-secret" / "seed").unlink()
    doc = _gradescope_grade(ag, reference)
    assert doc["score"] == 0 and "no seed" in doc["output"]
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
    """The kit built, its Dockerfile's COPY and RUN lines run against a root-owned venv
    standing in for the image's Python; returns the question folder."""
    kit = tmp_path / "question"
    assert main(["kit", "prairielearn", str(kit), "--namespace", namespace]) == ExitCode.OK
    image = root / "image"
    subprocess.run([_python(), "-m", "venv", str(image)], check=True)
    env = _env(root, PATH=f"{image / 'bin'}:/usr/bin:/bin")
    docker = kit / "docker"
    lines = (docker / "Dockerfile").read_text(encoding="utf-8").splitlines()
    assert lines[[line.startswith("FROM") for line in lines].index(True)].startswith(
        "FROM python:3."
    )
    for line in lines:
        word, _, rest = line.partition(" ")
        if word == "COPY":
            src, dst = rest.split()
            target = root / dst.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            copy = shutil.copytree if (docker / src).is_dir() else shutil.copyfile
            copy(docker / src, target)
        elif word == "RUN":
            _sh(["sh", "-c", rest.replace("/tmp/", f"{root}/tmp/")], env, root)
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
    # The "image": installed offline, no wheel left, the package root-only.
    assert not (root / "tmp" / "rlsys-wheels").exists()
    assert not [p for p in (root / "image").rglob("*.whl")]
    reference = solution_path().read_text(encoding="utf-8")
    doc = _pl_grade(root, kit, reference)
    assert doc["gradable"] is True and doc["score"] == 1.0
    doc = _pl_grade(root, kit, exercise_path().read_text(encoding="utf-8"))
    assert doc["score"] == 0.0
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


def test_classroom_readme_says_the_learner_can_read_the_reference(tmp_path: Path) -> None:
    assert main(["kit", "classroom", str(tmp_path / "repo")]) == 0
    readme = " ".join((tmp_path / "repo" / "README.md").read_text("utf-8").split())
    wheels = list((tmp_path / "repo" / ".github" / "classroom" / "wheels").glob("pytest_rlsys-*"))
    assert wheels and any(  # what the README says is true of the wheel it ships
        name.endswith("solutions/rlsys_ledger.py") for name in zipfile.ZipFile(wheels[0]).namelist()
    )
    assert "hold the reference solution" in readme and "Nothing here is secret" in readme


# -- GitHub Classroom --------------------------------------------------------------------------


def _classroom_run(repo: Path, root: Path, seed: str | None) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install the grader")
    grading = next(s for s in steps if s.get("id") == "rlsys")
    runner = root / "runner"
    shutil.rmtree(runner, ignore_errors=True)
    runner.mkdir()
    venv = root / "setup-python"
    if not venv.exists():  # actions/setup-python: a Python on PATH as `python`
        subprocess.run([_python(), "-m", "venv", str(venv)], check=True)
    output = runner / "github_output"
    env = _env(
        root,
        PATH=f"{venv / 'bin'}:/usr/bin:/bin",
        GITHUB_OUTPUT=str(output),
        RUNNER_TEMP=str(runner),
    )
    work = runner / "checkout"  # actions/checkout: a fresh copy of the repository
    shutil.copytree(repo, work)
    _sh(["bash", "-c", install["run"]], env, work)
    if seed is not None:
        env["RLSYS_SEED"] = seed
    _sh(["bash", "-c", grading["run"]], env, work, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    reporter = next(s for s in steps if "autograding-grading-reporter" in s.get("uses", ""))
    runners = {}
    for name in reporter["with"]["runners"].split(","):
        # Readable (todo1_worth_1_67), and a step output and environment variable name.
        assert re.fullmatch(r"todo[123]_worth_\d+(_\d+)?", name)
        value = reporter["env"][f"{name.upper()}_RESULTS"]
        assert value == f"${{{{steps.rlsys.outputs.{name}}}}}"
        runners[name] = json.loads(base64.b64decode(outputs[name]))
    result: dict[str, Any] = json.loads(base64.b64decode(outputs["result"]))
    result["runners"] = runners
    return result


def _reporter_totals(runners: dict[str, Any]) -> tuple[float, float, float]:
    """What the reporter shows: its console's total (per runner: passed tests / tests x
    max_score, src/helpers/test-helpers.js getTestScore), the Points it records (every
    test's score summed in order, notify-classroom.js) and the maximum."""
    console = points = maximum = 0.0
    for results in runners.values():
        tests = results["tests"]
        passed = sum(t["status"] == "pass" for t in tests)
        console += passed / len(tests) * (results["max_score"] or 0)
        if results["max_score"]:
            maximum += results["max_score"]
            for test in tests:
                points += test["score"]
    return console, points, maximum


def test_classroom_kit_cannot_pass_by_itself(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    assert main(["kit", "classroom", str(repo)]) == ExitCode.OK
    seed = re.search(r"RLSYS_SEED = (\d+)", capsys.readouterr().out)
    assert seed is not None
    # No file awards points for what the output contains (the legacy autograding.json).
    assert not (repo / ".github" / "classroom" / "autograding.json").exists()
    for path in repo.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".yml", ".sh"):
            assert '"Points"' not in path.read_text(encoding="utf-8"), path
    readme = (repo / "README.md").read_text(encoding="utf-8")
    assert "advisory" in readme and "Template repository" in readme
    assert "no** autograding tests" in readme and "RLSYS_SEED" in readme
    assert seed.group(1) not in "".join(  # the seed is not in the learner's repository
        p.read_text("utf-8", "replace") for p in repo.rglob("*") if p.is_file()
    )
    # The untouched template, pushed as it is: 0 points, and the job fails.
    result = _classroom_run(repo, root, seed.group(1))
    assert sum(t["score"] for t in result["tests"]) == 0 and result["status"] == "fail"
    assert _reporter_totals(result["runners"]) == (0, 0, 100)
    assert all(r["status"] == "fail" for r in result["runners"].values())
    # One bug: the console's total and the recorded Points are one number.
    example = (REPO / "examples" / "learner_example.py").read_text(encoding="utf-8")
    (repo / "rlsys_ledger.py").write_text(example, encoding="utf-8")
    result = _classroom_run(repo, root, seed.group(1))
    console, points, maximum = _reporter_totals(result["runners"])
    assert f"Points {js_number(points)}/{js_number(maximum)}" == points_line_of(result)
    assert round(console, 2) == points and maximum == 100 and 90 < points < 100
    # The finished exercise: full marks.
    (repo / "rlsys_ledger.py").write_text(solution_path().read_text(encoding="utf-8"))
    result = _classroom_run(repo, root, seed.group(1))
    assert (sum(t["score"] for t in result["tests"]), result["max_score"]) == (100, 100)
    assert _reporter_totals(result["runners"]) == (100, 100, 100)
    # No RLSYS_SEED secret: nothing graded, and the reason, said once.
    result = _classroom_run(repo, root, None)
    assert result["status"] == "error" and "RLSYS_SEED" in result["tests"][0]["message"]
    runners = list(result["runners"].values())
    said = [t["message"] for r in runners for t in r["tests"] if "RLSYS_SEED" in t["message"]]
    assert len(said) == 1 and _reporter_totals(result["runners"])[1:] == (0, 100)


# -- one name, one recipe: the project's README agrees with the kits --------------------------


def test_readme_and_kits_name_one_file_and_one_reporter(tmp_path: Path) -> None:
    from pytest_rlsys.outputs.kits import SUBMISSION_NAME

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "mine.py" not in readme
    assert f"rlsys grade /autograder/submission/{SUBMISSION_NAME}" in readme.replace("\n  ", " ")
    assert main(["kit", "classroom", str(tmp_path / "repo")]) == ExitCode.OK
    workflow = (tmp_path / "repo" / ".github" / "workflows" / "classroom.yml").read_text("utf-8")
    used = set(re.findall(r"uses: ([\w.-]+/autograding[\w.-]+@\w+)", workflow))
    named = set(re.findall(r"`([\w.-]+/autograding[\w.-]+@\w+)`", readme))
    assert used and used == named, (used, named)


def test_gradescope_readme_names_only_what_the_zip_holds(tmp_path: Path) -> None:
    assert main(["kit", "gradescope", str(tmp_path / "kit")]) == ExitCode.OK
    readme = (tmp_path / "kit" / "README.md").read_text(encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "kit" / "autograder.zip") as zf:
        names = set(zf.namelist())
        assert zf.read("README.md").decode("utf-8") == readme
    folders = {n.split("/")[0] + "/" for n in names if "/" in n}
    for token in re.findall(r"`([^`]+)`", readme):
        for word in token.split():
            word = word.removeprefix("@").rstrip(",")
            if word.startswith("/autograder") or "=" in word or not re.search(r"[./]", word):
                continue  # the platform's own paths, variables, plain words
            if word.endswith(".py") or word == "autograder.zip":
                continue  # the learner's file; the zip itself
            assert word in names or word in folders, word
    assert "rlsys template" in readme  # a real command (test_commands covers it)


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
    # Every kit picks the file with the same shell function; the README says what it does.
    from pytest_rlsys.outputs import kits

    for name in files:
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    script = f'{kits._PICK}\npick_submission "$1"\nprintf "%s\\n%s" "$SUBMISSION" "$PROBLEM"'
    done = subprocess.run(
        ["bash", "-c", script, "pick", str(tmp_path)], capture_output=True, text=True, check=True
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
    from pytest_rlsys.outputs.kits import _INSTALL

    script = tmp_path / "install.sh"
    script.write_text(_INSTALL.replace("MAIN", "main.whl"), encoding="utf-8")
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
    others = Path(tempfile.mkdtemp(prefix="pip-", dir="/tmp"))  # another user's pip folder
    try:
        subprocess.run(["sh", str(script), str(python), str(wheels)], check=True, timeout=60)
        used = Path(seen.read_text(encoding="utf-8").strip())
        assert others.is_dir(), "install.sh removed a pip folder it did not make"
        assert used != Path("/tmp") and not used.exists(), used  # its own, and removed
        assert not wheels.exists() and stat.S_IMODE(pkg.stat().st_mode) & 0o077 == 0
    finally:
        shutil.rmtree(others, ignore_errors=True)


def test_a_bad_namespace_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Exit 2 as every other bad option value (it was 3, "could not finish": trial Q6).
    assert main(["kit", "prairielearn", str(tmp_path / "pl"), "--namespace", "Bad Name!"]) == 2
    assert "registry namespace" in capsys.readouterr().err
