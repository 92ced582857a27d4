"""The fence in every mode (docs/threat-model.md, "The fence, per mode"): the grader runs in
a subprocess started as each platform starts it (root with bubblewrap; a container that
refuses namespaces; not root; a kernel without Landlock), a child is attacked with the
round-4 classes, and what it could do is compared with what the mode promises."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys import settings
from pytest_rlsys.cli.base import ExitCode
from pytest_rlsys.grading import fence
from pytest_rlsys.grading.fence import FENCE_OPEN
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.settings import SettingError

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
IS_ROOT = os.geteuid() == 0
RLSYS = [sys.executable, "-m", "pytest_rlsys"]
SOLUTION = ROOT / "solutions" / "rlsys_ledger.py"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# Refused wherever the allow-list is up; the file attacks only where Landlock is.
PROCESS_ATTACKS = {
    "pdeathsig", "mq_open", "fork", "socket", "signal_grader", "sigio_owner", "sigio_signal",
    "lease", "dnotify", "fifo", "umask", "fanotify", "timer", "ptrace", "process_vm", "pidfd",
}  # fmt: skip
FILE_ATTACKS = {"tmp_folders", "venv_write", "reference", "battery", "seed", "grader_cmdline"}

needs_root = pytest.mark.skipif(not IS_ROOT, reason="the modes are started as root")
needs_landlock = pytest.mark.skipif(not fence.landlock_abi(), reason="no Landlock here")
needs_bwrap = pytest.mark.skipif(
    not IS_ROOT or fence.bwrap_fence() is None, reason="no bubblewrap as root here"
)


def _launch(mode: str) -> list[str]:
    """The command prefix that starts a grader as the platform ``mode`` would."""
    prefix = [sys.executable, str(HERE / "platform_filter.py")]
    return {
        "bubblewrap": [],
        "container": [*prefix, "container"],
        "non-root": NOBODY,
        "no-landlock": [*prefix, "no-landlock"],
        "container+no-landlock": [*prefix, "container+no-landlock"],
        "non-root+no-landlock": [*prefix, "no-landlock", *NOBODY],
    }[mode]


@pytest.fixture
def grader_files() -> Any:
    """The grader's own files, owned by the user the grader runs as in the non-root modes
    (nobody), in a folder that user can reach: a seed, a venv, a reference, a battery."""
    folder = Path(tempfile.mkdtemp(prefix="rlsys-fence-"))
    folder.chmod(0o755)
    (folder / "venv").mkdir()
    (folder / "battery").mkdir(mode=0o700)
    (folder / "battery" / "cases.py").write_text("HIDDEN = 1\n")
    for name, text in (("seed", "42\n"), ("reference.py", "SECRET = 1\n")):
        (folder / name).write_text(text)
        (folder / name).chmod(0o600)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _probe(mode: str, files: Path) -> dict[str, Any]:
    if mode.startswith("non-root"):
        for path in [files, *files.rglob("*")]:
            os.chown(path, 65534, 65534)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            *_launch(mode),
            sys.executable,
            str(HERE / "fence_probe.py"),
            *(str(files / n) for n in ("seed", "venv", "reference.py", "battery")),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@needs_root
@needs_landlock
@pytest.mark.parametrize(
    ("mode", "level"),
    [
        pytest.param("bubblewrap", "bubblewrap", marks=needs_bwrap),
        ("container", "landlock"),
        ("non-root", "landlock"),
    ],
)
def test_behind_landlock_every_attack_is_refused(mode: str, level: str, grader_files: Path) -> None:
    found = _probe(mode, grader_files)
    assert found["fence"]["level"] == level
    assert found["attacks"] == dict.fromkeys(PROCESS_ATTACKS | FILE_ATTACKS, "refused")
    assert found["left"] == []


@needs_root
@pytest.mark.parametrize("mode", ["no-landlock", "container+no-landlock"])
@pytest.mark.slow
def test_root_without_landlock_refuses_processes_and_leaves_nothing(
    mode: str, grader_files: Path
) -> None:
    found = _probe(mode, grader_files)
    assert found["fence"]["level"] == "seccomp"
    refused = {name for name, what in found["attacks"].items() if what == "refused"}
    # The fresh uid keeps the grader's 0600/0700 files out of reach; the allow-list lets
    # the child write only in bubblewrap's private tmpfs, or (in a container) nowhere.
    assert PROCESS_ATTACKS | {"venv_write", "reference", "battery", "seed"} <= refused
    assert found["left"] == []


@needs_root
def test_non_root_without_landlock_says_what_is_open(grader_files: Path) -> None:
    found = _probe("non-root+no-landlock", grader_files)
    assert found["fence"] == {"level": "seccomp", "mechanisms": ["seccomp-allow-list", "rlimits"]}
    refused = {name for name, what in found["attacks"].items() if what == "refused"}
    # Nothing confines where it would write, so it writes nowhere (the allow-list opens
    # files only to read and refuses every call that makes, moves or removes a name).
    assert refused >= PROCESS_ATTACKS | {"venv_write", "tmp_folders"}
    # Documented as not protected in this mode (reading files): `rlsys fence` says so.
    assert "reference" not in refused
    shown = subprocess.run(
        [*_launch("non-root+no-landlock"), *RLSYS, "fence"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd="/",
        timeout=60,
        check=True,
    ).stdout
    assert shown.startswith("fence: seccomp\n")
    assert FENCE_OPEN["reads"].en in shown


@pytest.mark.slow
@needs_root
def test_a_non_root_uid_without_a_passwd_entry_grades() -> None:
    # A container run as `--user 54321` has no passwd entry for its uid: naming the grader's
    # user once raised KeyError in every case, and the reference scored 0.
    uid = 54321
    with contextlib.suppress(KeyError):
        pytest.skip(f"uid {uid} has a passwd entry here: {pwd.getpwuid(uid).pw_name}")
    folder = Path(tempfile.mkdtemp(prefix="rlsys-nopasswd-"))
    try:
        os.chown(folder, uid, uid)
        submission = folder / "rlsys_ledger.py"
        shutil.copyfile(SOLUTION, submission)
        submission.chmod(0o644)
        # The package as this uid's own install would be: the suite's root gradings have
        # made the installed one's battery root-only (grading/private.py), by design.
        source = folder / "src"
        for name in ("pytest_rlsys", "solutions", "exercises", "schemas"):
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("*.pyc"))
        subprocess.run(["chmod", "-R", "a+rX", str(folder)], check=True)
        as_uid = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        grade = [*as_uid, *RLSYS, "grade", str(submission), "--report", str(folder / "r.json")]
        env = {**os.environ, "PYTHONPATH": str(source), "HOME": str(folder)}
        done = subprocess.run(
            grade, capture_output=True, text=True, env=env, cwd="/", timeout=300, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads((folder / "r.json").read_text(encoding="utf-8"))
        assert report["score"] == 100, done.stdout
        # The same install after a grading as root made its battery private: a usage error
        # that says why and what to do, not an AttributeError from an empty folder.
        (source / "pytest_rlsys" / "grading" / "battery").chmod(0o700)
        done = subprocess.run(
            grade, capture_output=True, text=True, env=env, cwd="/", timeout=300, check=False
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert "readable by root only" in done.stderr and "Traceback" not in done.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_HANGER = r"""
import ctypes, os, time
def attack(marker):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, marker.encode(), 0, 0, 0)  # PR_SET_NAME: how the test finds it
    libc.prctl(1, 0, 0, 0, 0)  # clear PR_SET_PDEATHSIG, to outlive the grader
    time.sleep(600)
"""
_GRADER = (
    "import sys\n"
    "from pytest_rlsys.grading.isolation import ChildProcess\n"
    "from pytest_rlsys.grading.outcomes import Limits\n"
    "child = ChildProcess(sys.argv[1], 'h.py', ['attack'], Limits(call_timeout_s=300))\n"
    "child.call('attack', [sys.argv[2]], {})\n"
)


def _named(marker: str) -> list[int]:
    # Live processes only: where PID 1 never reaps (CI's container), a killed orphan stays
    # a zombie under its name for good; it is dead, which is all the test asks.
    found = []
    for name in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if name.isdigit() and Path(f"/proc/{name}/comm").read_text().strip() == marker:
                state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(name))
    return found


@needs_root
@pytest.mark.parametrize("mode", ["container", "non-root", "container+no-landlock"])
def test_a_child_that_clears_its_death_signal_dies_with_the_grader(mode: str) -> None:
    marker = f"rlsysH{os.getpid() % 100000}"
    grader = subprocess.Popen(
        [*_launch(mode), sys.executable, "-c", _GRADER, _HANGER, marker],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd="/",
    )
    try:
        deadline = time.monotonic() + 60
        while not _named(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _named(marker), "the child never started its call"
        grader.send_signal(signal.SIGKILL)
        grader.wait(timeout=30)
        deadline = time.monotonic() + 30  # a loaded machine reaps slowly
        while _named(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _named(marker) == []
    finally:
        for pid in _named(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if grader.poll() is None:
            grader.kill()


# -- the level, recorded and required ----------------------------------------------------


def test_levels_are_ordered_and_a_weaker_fence_is_refused() -> None:
    weak = fence.Fence("seccomp", ("seccomp-allow-list", "rlimits"))
    fence.require("seccomp", weak)
    fence.require(None, weak)
    with pytest.raises(fence.FenceTooWeak, match="weaker than the required 'landlock'"):
        fence.require("landlock", weak)


def test_without_any_mechanism_the_fence_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fence, "landlock_abi", lambda: 0)
    monkeypatch.setattr(fence, "seccomp_program", lambda writes=True: None)
    bare = fence.machine_fence(own_uid=False, namespaces=False)
    assert bare.level == "none"
    assert set(bare.unprotected) == {"seccomp", "landlock", "proc", "signals"}
    assert "not protected:" in fence.describe(bare)
    assert FENCE_OPEN["signals"].en in fence.describe(bare)
    # The run's header says it in the learner's language (issue 44).
    assert "信号：子进程可以向其 uid 的所有进程发送信号" in bare.line("zh")


@needs_root
def test_require_fence_refuses_a_container_asked_for_bubblewrap(tmp_path: Path) -> None:
    source = tmp_path / "mine.py"
    source.write_text("def pipeline_capacity(*a):\n    return 0\n")
    done = subprocess.run(
        [*_launch("container"), *RLSYS, "grade", str(source), "--require-fence", "bubblewrap"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == ExitCode.USAGE, (
        done.stderr
    )  # a usage error, before anything is graded
    assert "weaker than the required 'bubblewrap'" in done.stderr
    assert "Traceback" not in done.stderr


@needs_root
@needs_landlock
@pytest.mark.slow
def test_a_grade_records_its_fence_in_the_score_and_the_header(tmp_path: Path) -> None:
    report = tmp_path / "score.json"
    options = ["--report", str(report), "-v", "--require-fence", "landlock"]
    done = subprocess.run(
        [*_launch("container"), *RLSYS, "grade", str(SOLUTION), *options],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(report.read_text())
    assert document["fence"]["level"] == "landlock"
    assert document["score"] == document["max_score"]  # the fence costs an honest file nothing


def test_the_header_line_names_the_level() -> None:
    line = fence.for_limits(Limits()).line()
    assert line.startswith(fence.machine_fence().level + " (")


# -- the seed file -----------------------------------------------------------------------


def _seed(value: str) -> Any:
    return settings.resolve("seed", value, flag="--seed")


def test_a_private_seed_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "seed"
    path.write_text("1234\n")
    path.chmod(0o600)
    assert _seed(f"@{path}") == 1234


@pytest.mark.parametrize(
    ("mode", "fix"), [(0o644, "chmod 600"), (0o640, "chmod 600"), (0o602, "chmod 600")]
)
def test_a_seed_file_others_can_reach_is_refused(tmp_path: Path, mode: int, fix: str) -> None:
    path = tmp_path / "seed"
    path.write_text("1234\n")
    path.chmod(mode)
    with pytest.raises(SettingError, match=fix):
        _seed(f"@{path}")


@needs_root
def test_a_seed_file_of_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "seed"
    path.write_text("1234\n")
    path.chmod(0o600)
    os.chown(path, 65534, 65534)
    with pytest.raises(SettingError, match="run `chown 0"):
        _seed(f"@{path}")


def test_a_seed_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "seed"
    os.mkfifo(fifo, 0o600)
    for path in (tmp_path, fifo):  # a folder; a FIFO is refused, not waited on
        with pytest.raises(SettingError, match="not a regular file"):
            _seed(f"@{path}")


# -- what a standard-library computation needs still works ------------------------------

_STDLIB = r"""
import asyncio, decimal, hashlib, os, sqlite3, tempfile, time, zoneinfo
def work():
    with tempfile.TemporaryFile() as fh:  # O_TMPFILE and FIOCLEX in the scratch folder
        fh.write(b"x")
    os.makedirs("a/b")
    open("a/b/c", "w").write("1")
    time.sleep(0.001)
    asyncio.run(asyncio.sleep(0))  # its self-pipe is an AF_UNIX socketpair
    return [
        hashlib.sha256(b"x").hexdigest()[:8],
        str(decimal.Decimal(1) / 8),
        sqlite3.connect(":memory:").execute("select 2").fetchone()[0],
        str(zoneinfo.ZoneInfo("UTC")),
        os.path.exists("a/b/c"),
    ]
"""


def test_a_stdlib_computation_runs_behind_the_fence() -> None:
    from pytest_rlsys.grading.isolation import ChildProcess

    child = ChildProcess(_STDLIB, "work.py", ["work"], Limits())
    try:
        outcome = child.call("work", [], {})
    finally:
        child.close()
    assert outcome.kind == "returned", outcome
    assert outcome.value == ["2d711642", "0.125", 2, "UTC", True]


def test_a_sigkilled_grader_s_scratch_is_removed_by_the_next_grader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A grader killed with SIGKILL cannot remove its scratch folder on the host's /tmp
    # (clean-room round 4, container and non-root modes): the next grader does, and
    # leaves a live grader's alone.
    from pytest_rlsys.grading import leftovers
    from pytest_rlsys.grading.isolation import ChildProcess

    gone = subprocess.Popen(["true"])
    gone.wait()
    base = Path(tempfile.gettempdir())
    stale = Path(tempfile.mkdtemp(prefix=f"rlsys-child-{gone.pid}-", dir=base))
    (stale / "KEEP_ME").write_text("x")
    live = Path(tempfile.mkdtemp(prefix="rlsys-child-1-", dir=base))
    monkeypatch.setattr(leftovers, "_STALE_SWEPT", [])
    monkeypatch.setattr(fence, "bwrap_fence", lambda: None)  # its scratch is on the host
    child = ChildProcess("def f():\n    return 1\n", "s.py", ["f"], Limits())
    try:
        assert child.call("f", [], {}).value == 1
        assert not stale.exists()
        assert live.exists()
    finally:
        child.close()
        shutil.rmtree(live, ignore_errors=True)
        shutil.rmtree(stale, ignore_errors=True)


def test_the_help_names_the_level_the_kits_require() -> None:
    # The help of the pytest option, `rlsys grade` and `rlsys batch` comes from one table;
    # what it says the kits require must be what their scripts pass.
    import re

    from pytest_rlsys.outputs import kits

    level = re.search(r"--require-fence (\w+)", kits.script("run.sh"))
    assert level is not None
    helped = re.search(r"the kits require (\w+)", settings.by_name("require_fence").help_text)
    assert helped is not None
    assert helped.group(1) == level.group(1)
    for command in ("grade", "batch"):
        shown = subprocess.run(
            [*RLSYS, command, "--help"], capture_output=True, text=True, check=True
        ).stdout
        assert f"the kits require {level.group(1)}" in " ".join(shown.split())


@needs_root
@pytest.mark.slow
def test_the_kits_level_grades_in_a_container_without_landlock(tmp_path: Path) -> None:
    # A container runtime whose seccomp profile predates Landlock's calls: the level the
    # kits require must still grade there (refusing would fail every submission).
    import re

    from pytest_rlsys.outputs import kits

    level = re.search(r"--require-fence (\w+)", kits.script("run.sh"))
    assert level is not None
    report = tmp_path / "score.json"
    options = ["--report", str(report), "--require-fence", level.group(1)]
    done = subprocess.run(
        [*_launch("container+no-landlock"), *RLSYS, "grade", str(SOLUTION), *options],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(report.read_text())
    assert document["fence"]["level"] == "seccomp"
    assert document["score"] == document["max_score"]


@pytest.mark.parametrize("magic", ["same", "other"])
def test_a_child_runs_the_code_compiled_here_or_compiles_its_own(
    monkeypatch: pytest.MonkeyPatch, magic: str
) -> None:
    # The child's code crosses compiled (marshal) when the child's Python reads this
    # bytecode version; one of another version (its magic number differs) compiles the
    # source it is given instead, and loads and answers the same.
    from pytest_rlsys.grading import child_code, isolation
    from pytest_rlsys.resources import FUNCTIONS, solution_path

    child_code.child_code()  # compiled once per process, from the real source
    if magic == "same":  # the source is not what runs: a child that compiled it would exit
        monkeypatch.setattr(child_code, "CHILD_SOURCE", "raise SystemExit(9)\n")
    else:  # another magic and no code: what runs is the source
        monkeypatch.setattr(child_code, "child_code", lambda: "ff" * 16 + "AAAA")
    child = isolation.ChildProcess(
        solution_path().read_text("utf-8"), "mine.py", list(FUNCTIONS), Limits()
    )
    try:
        assert child.ensure_loaded().ok
        outcome = child.call("pipeline_capacity", [{"rollout": 90}, 30, {"rollout": 1}], {})
        assert outcome.kind == "returned" and outcome.value["queue_stable"] is True, outcome
    finally:
        child.close()


@needs_root
@pytest.mark.parametrize("libseccomp", [True, False])
def test_without_landlock_only_a_child_without_the_allow_list_is_swept(
    libseccomp: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Behind the allow-list alone a child can create no process, IPC object or key and
    # write nowhere: nothing is left to find, so no walk of the machine (a second of CPU
    # per grading process) and no sweep after each child.  Without libseccomp they are
    # what keeps "nothing outlives a child" (the slow test above: nothing is left).
    from pytest_rlsys.grading import leftovers
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.resources import FUNCTIONS

    monkeypatch.setattr(fence, "landlock_abi", lambda: 0)
    monkeypatch.setattr(fence, "_BWRAP_PROBED", True)
    monkeypatch.setattr(fence, "_BWRAP", None)
    if not libseccomp:
        monkeypatch.setattr(fence, "seccomp_program", lambda writes=True: None)
    walks: list[int] = []
    sweeps: list[int] = []
    monkeypatch.setattr(leftovers, "start_walk", lambda gid=0: walks.append(gid))
    monkeypatch.setattr(leftovers, "clean_uid", lambda uid, *a, **k: sweeps.append(uid))
    child = ChildProcess(SOLUTION.read_text("utf-8"), "mine.py", list(FUNCTIONS), Limits())
    try:
        assert child.ensure_loaded().ok
    finally:
        child.close()
    assert child.user is not None and child.user.fresh
    assert (bool(walks), bool(sweeps)) == (not libseccomp, not libseccomp)
    assert ("sweep" in fence.machine_fence(own_uid=True).mechanisms) is not libseccomp


def test_the_fence_named_and_the_plan_sent_share_one_allow_list_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without Landlock or bubblewrap the plan sends the allow-list that refuses writes; the
    # fence the header names asks for that same build, not a second one.
    monkeypatch.setattr(fence, "landlock_abi", lambda: 0)
    fence.seccomp_program.cache_clear()
    try:
        named = fence.machine_fence(own_uid=False, namespaces=False)
        fence.plan("/tmp/rlsys-child", Limits())
        built = fence.seccomp_program.cache_info().misses
    finally:
        fence.seccomp_program.cache_clear()
    assert built == 1
    assert ("seccomp-allow-list" in named.mechanisms) is (fence.seccomp_program() is not None)


# -- two submissions' children at once (fence trial, round 5) ------------------------------

_PROC_SENDER = """
import ctypes, time
ctypes.CDLL(None).prctl(15, b"rlsysPROC", 0, 0, 0)  # PR_SET_NAME: /proc/<pid>/comm
time.sleep(4)
def pipeline_capacity(*a, **k):
    return 0
"""
_PROC_RECEIVER = """
import os, time
def _seen():
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/comm") as fh:
                if fh.read().strip() == "rlsysPROC":
                    return True
        except OSError:
            pass
    return False
_end = time.monotonic() + 5
while time.monotonic() < _end:
    if _seen():
        raise RuntimeError("read a classmate's process name")
    time.sleep(0.05)
def pipeline_capacity(*a, **k):
    return 0
"""


@needs_root
@pytest.mark.slow
def test_where_proc_is_not_hidden_a_batch_grades_one_file_at_a_time(tmp_path: Path) -> None:
    # Behind the allow-list alone, two children graded side by side (`--jobs 2`) passed
    # hidden inputs through /proc/<pid>/comm (PR_SET_NAME) and SigBlk: any field a child
    # controls.  /proc cannot be hidden there (no hidepid, no PID namespace), so no two
    # submissions' children run at once.
    folder = tmp_path / "class"
    folder.mkdir(mode=0o700)
    (folder / "a_sender.py").write_text(_PROC_SENDER)
    (folder / "b_receiver.py").write_text(_PROC_RECEIVER)
    out = tmp_path / "grades.json"
    options = ["--jobs", "2", "--seed", "3", "--json", str(out), "--no-progress"]
    done = subprocess.run(
        [*_launch("container+no-landlock"), *RLSYS, "batch", str(folder), *options],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["submission"]: r for r in json.loads(out.read_text("utf-8"))["submissions"]}
    assert rows["b_receiver.py"]["status"] == "graded", rows["b_receiver.py"]
    assert "one submission at a time, not 2" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("abi", "namespaces", "alone"), [(0, False, True), (6, False, False), (0, True, False)]
)
def test_only_where_nothing_hides_proc_are_submissions_graded_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch, abi: int, namespaces: bool, alone: bool
) -> None:
    # Landlock refuses /proc; bubblewrap's PID namespace shows the child only itself.
    monkeypatch.setattr(fence, "landlock_abi", lambda: abi)
    have = fence.machine_fence(own_uid=True, namespaces=namespaces)
    assert have.one_at_a_time is alone
    assert (FENCE_OPEN["proc"].en in fence.describe(have)) is alone
