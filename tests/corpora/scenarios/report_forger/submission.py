"""Tries to write the report, then to leave a daemon (fork, double fork + setsid, thread, spawn) that rewrites it later."""

import json
import os
import sys
import threading
import time

FORGED = json.dumps({"score": 100, "max_score": 100, "forged": True})


def _submission_folder():
    """The grader tells the child only the file's name; its folder is read off the
    grader's command line (world-readable in /proc), as a real attacker would."""
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
            argv = [arg.decode(errors="replace") for arg in handle.read().split(b"\0")]
    except OSError:
        argv = []
    for flag, value in zip(argv, argv[1:]):
        if flag == "--rlsys-submission":
            return os.path.dirname(os.path.abspath(value))
    return os.path.dirname(os.path.abspath(__file__))


HERE = _submission_folder()


def _report_paths():
    """Where the grader will write: read off the grader's command line, plus guesses."""
    paths = [os.path.join(HERE, name) for name in ("report.json", "results.json")]
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
            argv = [arg.decode(errors="replace") for arg in handle.read().split(b"\0")]
    except OSError:
        argv = []
    for flag, value in zip(argv, argv[1:]):
        if flag.startswith("--rlsys-") and flag != "--rlsys-submission":
            paths.append(value)
    return [p if os.path.isabs(p) else os.path.join(HERE, p) for p in paths]


def _forge():
    for path in _report_paths():
        try:
            with open(path, "w") as handle:
                handle.write(FORGED)
        except OSError:
            pass


def _leave_evidence(what):
    try:
        with open(os.path.join(HERE, "forger-" + what), "w") as handle:
            handle.write(str(os.getpid()))
    except OSError:
        pass


def _forge_later():
    """Keep rewriting the report for a while, from whatever process runs this."""
    _leave_evidence(f"daemon-{os.getpid()}")
    for _ in range(40):
        time.sleep(0.1)
        _forge()


def _fork_daemon():
    if os.fork() == 0:
        os.setsid()
        _forge_later()
        os._exit(0)


def _double_fork():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            _forge_later()
        os._exit(0)
    os.waitpid(pid, 0)


def _thread():
    threading.Thread(target=_forge_later).start()


def _spawn():
    os.posix_spawn(sys.executable, [sys.executable, "-c", "import time; time.sleep(5)"],
                   dict(os.environ))


def _attack():
    _forge()
    for attempt in (_fork_daemon, _double_fork, _thread, _spawn):
        try:
            attempt()
        except BaseException as exc:
            _leave_evidence(attempt.__name__ + "-refused-" + type(exc).__name__)
    _leave_evidence("ran")


_attack()


def pipeline_capacity(*args, **kwargs):
    _attack()
    raise NotImplementedError("TODO 1")


def transfer_ledger(*args, **kwargs):
    _attack()
    raise NotImplementedError("TODO 2")


def evaluate_topology(*args, **kwargs):
    _attack()
    raise NotImplementedError("TODO 3")
