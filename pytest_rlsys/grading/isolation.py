"""Parent side of the isolation boundary: one child interpreter per submission.

The child is started with ``python -I -S -c <child.py source>`` in its own session and
process group, in a scratch directory, behind the fence it applies to itself
(``fence``: rlimits, Landlock, the seccomp allow-list; bubblewrap around it where it runs),
and (when the grader is root) as an unprivileged user.  Calls cross as length-prefixed
JSON frames on dedicated pipes; the child's stdout/stderr go to a third pipe that a drain
thread (``supervision``) reads into a capped buffer.  The parent enforces every
wall-clock limit and kills the whole process group on timeout; the next call then gets a
fresh child.
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import os
import pwd
import select
import subprocess
import sys
import tempfile
import time
from typing import Any

from pytest_rlsys.grading import child_code, fence, identity, leftovers, supervision
from pytest_rlsys.grading.identity import child_identity, ipc_namespace_wrapper
from pytest_rlsys.grading.outcomes import CallOutcome, Limits, SentCall, SubmissionLoad
from pytest_rlsys.grading.replies import (
    ProtocolError,
    decode_frame,
    describe_exit,
    parse_call,
    parse_load,
    unsendable,
)
from pytest_rlsys.messages import Said, said

MAX_FRAME_BYTES = 16 * 1024 * 1024
MAX_STRAY_BYTES = 1024 * 1024  # replies to no call in progress, per call
OUTPUT_SEALED = said("output_sealed")
FENCED_SCRATCH = "/tmp/rlsys-child"  # the child's folder, inside its private /tmp
RELOAD_FAILED = said("reload_failed")
_CHILD_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}


def _own_name() -> str:
    """This process's user name, or its number (``--user 1234``: no passwd entry)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


class ChildProcess:
    """A child interpreter holding the submission, restarted after any failure."""

    def __init__(self, source: str, filename: str, functions: list[str], limits: Limits) -> None:
        self.source, self.filename, self.functions = source, filename, functions
        self.limits = limits
        self.proc: subprocess.Popen[bytes] | None = None
        self.drain: supervision.OutputDrain | None = None
        self.request_w = self.reply_r = -1
        self.scratch: str | None = None  # on the host's disk; None inside the fence
        self.fenced = False  # the running child is inside bubblewrap's namespaces
        self.fence: fence.Fence | None = None  # what the last child started ran behind
        self.next_id = 0
        # The running child's calls not yet answered, in the order sent (ids), and when
        # the last of its answers was read: a call's time limit runs from its sending or
        # from that answer, whichever is later, so a call queued behind others (sent
        # ahead, ``send_ahead``) is not charged for their time.
        self._pending: collections.deque[int] = collections.deque()
        self._answered = 0.0
        self.load: SubmissionLoad | None = None
        self.notes: list[Said] = []  # how it ran, for instructors (ScoreReport.notes)
        self._outputs: list[str] = []
        self._sealed: str | None = None  # the output shown, once hidden cases began
        self.user = child_identity(limits.child_user)
        self.interpreter: str | None = None  # found when the first child starts
        self._interpreter_confirmed = False
        self.run_as = self.user.name if self.user else _own_name()
        # When the submission's budget ends (``Grader``, the probes): no deadline given to
        # this child (a load, a call) runs past it, reloads included.
        self.ends_by = math.inf
        # When the load request already sent (``begin_load``) must be answered by.
        self._load_deadline: float | None = None

    # -- life cycle -------------------------------------------------------------------
    def _use_interpreter(self, found: str | None) -> None:
        user = self.user
        if user and found is None:
            self.notes.append(said("root_fallback", user=user.name))
            self.user = None
            self.run_as = _own_name()
        self.interpreter = found or sys.executable

    def _find_interpreter(self) -> str:
        """The Python the child's user can run.  The first candidate that user can reach
        is taken on trust: probing it would start one more Python before every grade.
        Only a first load that dies is followed by the probe (``_recheck_interpreter``)."""
        if self.interpreter is None:
            self._use_interpreter(identity.likely_interpreter(self.user))
        return self.interpreter or sys.executable

    def _recheck_interpreter(self) -> bool:
        """After the first load died: probe the candidates (``child_interpreter``).  True
        when another interpreter must be used, i.e. the death was the interpreter's (it
        cannot run as the child's user), not the submission's."""
        if self._interpreter_confirmed:
            return False
        self._interpreter_confirmed = True
        confirmed = identity.child_interpreter(self.user)
        if confirmed is not None and confirmed == self.interpreter:
            return False
        self._use_interpreter(confirmed)
        return True

    def _spawn(self) -> None:
        interpreter = self._find_interpreter()
        user = self.user
        tools = fence.bwrap_fence() if user else None
        scratch = self._make_scratch(fenced=bool(tools))
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        out_r, out_w = os.pipe()
        env = {**_CHILD_ENV, "HOME": scratch, "TMPDIR": scratch}
        # argv[2]: the grader's pid, for the child's parent-death check (0: the fence's
        # init is its parent, and the fence dies with the grader).
        parent = "0" if self.fenced else str(os.getpid())
        # argv[3]: the fence the child applies to itself before it reads the submission.
        plan = fence.plan(scratch, self.limits, confined=self.fenced)
        command = [interpreter, "-I", "-S", "-c", child_code.LOADER, child_code.child_code()]
        command += [child_code.CHILD_SOURCE, str(rep_w), parent, plan]
        self.fence = fence.machine_fence(own_uid=user is not None, namespaces=self.fenced)
        wrapper = ipc_namespace_wrapper() if user and not self.fenced else []
        drop = user if user and not wrapper and not self.fenced else None
        if user and tools:
            command = fence.in_bubblewrap(command, scratch, interpreter, user.uid, user.gid, tools)
        elif user and wrapper:
            # unshare enters the new IPC namespace as root, then drops to the child's
            # uid/gid (and clears supplementary groups) before running Python.
            command = [*wrapper, "-G", str(user.gid), "-S", str(user.uid), "--", *command]
        try:
            self.proc = subprocess.Popen(
                command,
                stdin=req_r,
                stdout=out_w,
                stderr=out_w,
                pass_fds=(rep_w,),
                cwd=self.scratch or "/",
                env=env,
                start_new_session=True,
                close_fds=True,
                user=drop.uid if drop else None,
                group=drop.gid if drop else None,
                extra_groups=[] if drop else None,
            )
        finally:
            for fd in (req_r, rep_w, out_w):
                os.close(fd)
        self._watch(self.proc.pid, req_w, rep_r, out_r)

    def _make_scratch(self, fenced: bool) -> str:
        """The child's folder as the child sees it (``self.scratch``: on the host's disk)."""
        if fenced:
            # Inside the fence: the scratch folder lives in the child's private /tmp and
            # vanishes with it; nothing is made on the host's disk.
            self.scratch, self.fenced = None, True
            return FENCED_SCRATCH
        leftovers.remove_stale_scratch()
        # The grader's pid in the name: a later grader can tell a folder whose grader
        # was SIGKILLed (nothing of it could remove its scratch) from a live one's.
        self.scratch = scratch = tempfile.mkdtemp(prefix=f"rlsys-child-{os.getpid()}-")
        self.fenced = False
        leftovers.scratch_made.append(self.scratch)
        if self.user:
            os.chown(self.scratch, self.user.uid, self.user.gid)
            if self._sweeps():
                leftovers.start_walk(self.user.gid)  # for the sweep after this child
        return scratch

    def _watch(self, pid: int, req_w: int, rep_r: int, out_r: int) -> None:
        """The started child's pipes, output drain and supervision."""
        os.set_blocking(req_w, False)
        os.set_blocking(rep_r, False)
        self.request_w, self.reply_r = req_w, rep_r
        self.drain = supervision.OutputDrain(out_r, self.limits.output_kb * 1024)
        self.drain.start()
        if self.fenced:
            supervision.OUTERS.add(pid)
            supervision.become_subreaper()
        supervision.LIVE.add(self)
        supervision.install_signal_handlers()

    def kill(self) -> None:
        """Kill the child's whole process group and collect everything it left.  Never
        raises and is bounded in time: cleanup cannot stop a grade from being recorded."""
        proc = self.proc
        if proc is not None:
            supervision.kill_tree(proc, self.fenced)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            supervision.OUTERS.discard(proc.pid)
            if self.fenced:
                supervision.reap_fence_inits()
                supervision.stop_being_subreaper()
        for fd in (self.request_w, self.reply_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.request_w = self.reply_r = -1
        self._pending.clear()
        self._load_deadline = None
        if self.drain is not None:
            # A Ctrl-C in the child's start can leave the drain running, not marked started.
            with contextlib.suppress(RuntimeError):
                self.drain.join(timeout=2)
            self._outputs.append(self.drain.text())
            self.drain = None
        try:
            if self._sweeps() and proc is not None:
                # Without Landlock: processes that escaped the group, IPC objects, files in
                # /tmp and /dev/shm.  Inside bubblewrap only the four usual folders need a
                # look (the rest of the host is read-only there); outside it, every one.
                folders = leftovers.WORLD_WRITABLE if self.fenced else None
                leftovers.clean_uid(self.user.uid, folders, self.user.gid)  # type: ignore[union-attr]
            if self.scratch:
                leftovers.remove_tree(self.scratch)
        except Exception as exc:  # cleanup must never cost a grade
            self.notes.append(said("cleanup_failed", exc=type(exc).__name__))
        self.scratch = None
        self.proc = None
        supervision.LIVE.discard(self)

    close = kill

    def interrupt(self) -> None:
        """Kill the running child's process tree, from another thread than the one that
        talks to it: that one meets the end of its reply pipe at once and collects and
        cleans up (``kill``) itself.  Only signals are sent from here, never a pipe closed."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            supervision.kill_tree(proc, self.fenced)

    def _sweeps(self) -> bool:
        """Whether a fresh uid's leftovers are swept after its child: only with neither the
        seccomp allow-list nor Landlock (behind the allow-list the child creates no process,
        IPC object or key and writes only where Landlock or bubblewrap confine, or nowhere)."""
        abi = fence.landlock_abi()
        unfenced = not abi and fence.seccomp_program(writes=self.fenced) is None  # as plan()
        return self.user is not None and self.user.fresh and unfenced

    @staticmethod
    def adopt(
        standby: ChildProcess | None, source: str, filename: str, limits: Limits
    ) -> ChildProcess | None:
        """``standby`` made the child of ``source`` when it was started with ``limits``;
        else it is closed (nothing will load into it) and None is returned.  Call it only
        once the private files are protected: the child may load anything after it."""
        if standby is None:
            return None
        if standby.limits != limits:
            standby.close()
            return None
        standby.source, standby.filename = source, filename
        return standby

    @classmethod
    def on_standby(cls, functions: list[str], limits: Limits) -> ChildProcess:
        """A child for a submission not yet known, its interpreter started now
        (``standby``); a Grader with the same limits loads the submission into it."""
        child = cls("", "", functions, limits)
        child.standby()
        return child

    def standby(self) -> None:
        """Start the child's interpreter now, before the submission is known: it waits
        for the load request (``ensure_loaded``, which sends ``source``), running nothing
        but this harness's code until then.  Its start-up then overlaps the grader's own;
        a failure here is left for ``ensure_loaded`` to meet and report."""
        if self.proc is not None:
            return
        try:
            self._spawn()
        except OSError:
            self.kill()
        except BaseException:  # a Ctrl-C while it started: its scratch folder goes too
            self.kill()
            raise

    def restart(self) -> None:
        """As if this child had never run: the next call starts and loads a fresh one,
        and what the old one printed is dropped."""
        self.kill()
        if self._sealed is None:
            self._outputs.clear()
        if self.load is not None and self.load.ok:
            self.load = None

    def output(self, lang: str = "en") -> str:
        """Everything the submission printed so far (capped per child), up to
        ``seal_output``: nothing printed while a hidden case ran is ever shown (a notice
        in ``lang`` says so)."""
        parts = [*self._outputs, self.drain.text() if self.drain else ""]
        full = "".join(p for p in parts if p)
        if self._sealed is None or full == self._sealed:
            return full
        sep = "\n" if self._sealed and not self._sealed.endswith("\n") else ""
        return self._sealed + sep + OUTPUT_SEALED.text(lang)

    def seal_output(self) -> None:
        """From now on what the submission prints is not shown (a hidden case's inputs
        are about to reach it, and ``print(args)`` would show them)."""
        if self._sealed is None:
            if self.drain is not None:
                self.drain.settle()  # what it printed before its last reply is shown
            self._sealed = self.output()

    # -- framing ----------------------------------------------------------------------
    def _send(self, message: dict[str, Any], deadline: float) -> None:
        """Write one request; a child that stops reading (or shrank its pipe) cannot
        block the grader past ``deadline``."""
        view = memoryview(_frame(message))
        waiter = select.poll()  # a plain object, no kernel handle: one per call is free
        waiter.register(self.request_w, select.POLLOUT)
        deadline = min(deadline, self.ends_by)  # nor past the budget
        while view:
            try:  # the pipe usually has room: write first, wait only when it is full
                view = view[os.write(self.request_w, view) :]
            except BlockingIOError:
                _wait(waiter, deadline)
                continue
            if view and time.monotonic() > deadline:
                raise TimeoutError  # a child that drains the pipe a trickle at a time

    def _recv_sized(self, deadline: float) -> tuple[Any, int]:
        """One reply frame, decoded, and its size in bytes (by ``deadline``, ``ends_by``)."""
        deadline = min(deadline, self.ends_by)
        waiter = select.poll()
        waiter.register(self.reply_r, select.POLLIN)
        header = self._read_exact(waiter, 4, deadline)
        size = int.from_bytes(header, "big")
        if size > MAX_FRAME_BYTES:
            raise ProtocolError(f"reply of {size} bytes is over the {MAX_FRAME_BYTES} cap")
        return decode_frame(self._read_exact(waiter, size, deadline)), 4 + size

    def _read_exact(self, waiter: select.poll, size: int, deadline: float) -> bytes:
        buf = bytearray()
        while len(buf) < size:
            try:  # the reply fd does not block: read what is there, else wait for more
                chunk = os.read(self.reply_r, min(1 << 20, size - len(buf)))
            except BlockingIOError:
                _wait(waiter, deadline)
                continue
            if not chunk:
                raise EOFError
            buf += chunk
            if len(buf) < size and time.monotonic() > deadline:
                # An answer already there is taken however late it is read, but a child
                # cannot stretch a call past its limit by sending a trickle of bytes.
                raise TimeoutError
        return bytes(buf)

    def _died(self) -> Said:
        proc = self.proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=2)
        if self.fenced and code is not None and 128 < code < 128 + 65:
            code = 128 - code  # bwrap exits 128 + N for a child killed by signal N
        return describe_exit(code)

    # -- public API -------------------------------------------------------------------
    def begin_load(self) -> None:
        """Send the load request to a started child (``standby``) now, so that the
        submission loads while the grader builds its battery (measured: the load's 25 ms,
        mostly the submission's own imports, were waited for after it); ``ensure_loaded``
        reads the reply, its time limit counted from here.  Call it only once the private
        files are protected."""
        if self.proc is None or self.load is not None or self._load_deadline is not None:
            return
        self._load_deadline = time.monotonic() + self.limits.load_timeout_s
        with contextlib.suppress(TimeoutError, OSError):  # met again, and worded, there
            self._send(self._hello(), self._load_deadline)
            return
        self.kill()  # ensure_loaded starts a fresh child

    def _hello(self) -> dict[str, Any]:
        return {
            # Only the file's name: the child learns nothing of the folders around it.
            "source": self.source,
            "filename": os.path.basename(self.filename),
            "functions": self.functions,
            "recursion_limit": self.limits.recursion_limit,
            "max_frame_bytes": MAX_FRAME_BYTES,
        }

    def ensure_loaded(self) -> SubmissionLoad:
        """Start a child and load the submission, unless loading already failed for good."""
        running = self.proc is not None and self.proc.poll() is None
        if self.load is not None and (running or not self.load.ok):
            return self.load  # loaded, or failed to for good
        # A standby child is loaded into; one begin_load sent the request to is read from,
        # even dead; else a fresh one is started.
        sent_at = self._load_deadline
        spawn_error = None if running or sent_at is not None else self._start()
        if spawn_error is not None:
            self.kill()
            if self._recheck_interpreter():
                return self.ensure_loaded()
            self.load = SubmissionLoad(
                False, stage="crashed", said=said("no_python", error=str(spawn_error))
            )
            return self.load
        lim = self.limits
        deadline = sent_at or time.monotonic() + lim.load_timeout_s
        self._load_deadline = None
        try:
            if sent_at is None:
                self._send(self._hello(), deadline)
            result = parse_load(self._recv_sized(deadline)[0])
        except TimeoutError:
            if time.monotonic() >= self.ends_by:  # cut by the budget: not a load failure
                self.kill()
                return SubmissionLoad(False, stage="budget", said=self._over_budget())
            result = SubmissionLoad(
                False,
                stage="timeout",
                said=said("load_timeout", limit=lim.load_timeout_s),
            )
        except (EOFError, BrokenPipeError):
            result = SubmissionLoad(
                False, stage="crashed", said=said("died_loading", died=self._died())
            )
        except (ProtocolError, ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
            result = SubmissionLoad(
                False, stage="protocol", said=said("garbled_load", error=str(exc))
            )
        if result.stage == "limits":  # said before any learner code ran: the grader's words
            result = SubmissionLoad(
                False, stage="limits", said=said("memory_too_low", limit=lim.address_space_mb)
            )
        if not result.ok:
            self.kill()
            if result.stage == "crashed" and self._recheck_interpreter():
                return self.ensure_loaded()  # once: the interpreter is confirmed now
            if self.next_id > 0:
                # Calls (hidden inputs among them) reached an earlier child: what this
                # one says while loading may be what that one learnt and left behind, so
                # only the grader's own words are kept.
                result = SubmissionLoad(False, stage=result.stage, said=RELOAD_FAILED)
        self._interpreter_confirmed = True
        self.load = result
        return result

    def _start(self) -> OSError | None:
        """A fresh child; the error when its interpreter could not be started at all."""
        self.kill()
        try:
            self._spawn()
        except OSError as exc:
            return exc
        return None

    def _over_budget(self) -> Said:
        return said("budget_ended", limit=self.limits.budget_s)

    def call(self, func: str, args: list[Any], kwargs: dict[str, Any]) -> CallOutcome:
        sent = self.begin_call(func, args, kwargs)
        return sent if isinstance(sent, CallOutcome) else self.end_call(sent)

    def begin_call(
        self, func: str, args: list[Any], kwargs: dict[str, Any]
    ) -> CallOutcome | SentCall:
        """Send a call without waiting for its answer (``end_call`` waits): the child
        works while the grader does something else.  An outcome when it cannot be sent."""
        unsent = unsendable(self.ensure_loaded(), func, self.limits)
        if unsent is not None:
            return unsent
        self.next_id += 1
        sent = SentCall(self.next_id, time.monotonic())
        self._pending.append(sent.ident)
        try:
            self._send(
                {"id": sent.ident, "func": func, "args": args, "kwargs": kwargs},
                sent.started + self.limits.call_timeout_s,
            )
        except (TimeoutError, EOFError, BrokenPipeError) as exc:
            return self._failed(sent, exc)
        return sent

    def send_ahead(
        self, func: str, args: list[Any], kwargs: dict[str, Any]
    ) -> CallOutcome | SentCall | None:
        """Send a call behind calls not yet answered, if that costs no wait: the child
        runs them in order while the grader judges.  None when nothing was sent and
        nothing changed (no child loaded and running to queue it behind, a request over
        one atomic pipe write, a full pipe, a child gone: its earlier calls' answers say
        how); the caller then sends it with ``begin_call`` once those are answered.
        A child is never started here, so the calls in flight are never lost by it."""
        load = self.load
        if load is None or (load.ok and self.proc is None):
            return None
        unsent = unsendable(load, func, self.limits)
        if unsent is not None:
            return unsent
        ident = self.next_id + 1
        data = _frame({"id": ident, "func": func, "args": args, "kwargs": kwargs})
        if len(data) > select.PIPE_BUF:
            return None  # a bigger write may be cut in two: sent in turn, not ahead
        try:
            os.write(self.request_w, data)  # all of it or nothing (at most PIPE_BUF)
        except (BlockingIOError, BrokenPipeError):
            return None
        self.next_id = ident
        self._pending.append(ident)
        return SentCall(ident, time.monotonic())

    def end_call(self, sent: SentCall) -> CallOutcome:
        """The answer to a call ``begin_call`` or ``send_ahead`` sent, within the call's
        time limit counted from its sending or from the answer to the call before it,
        whichever is later (an answer that is already there counts, however late it is
        read)."""
        limit = self.limits.call_timeout_s
        pending = self._pending
        stray = 0
        try:
            while True:
                # The limit runs from the sending, or from the answer to the call sent
                # just before it (the child ran that one first), whichever is later.
                started = max(sent.started, self._answered)
                reply, size = self._recv_sized(started + limit)
                ident = reply.get("id") if type(reply) is dict else None
                if ident is not None and ident in pending:
                    # Answers come in the order sent: this one and any the child skipped.
                    while pending and pending.popleft() != ident:
                        pass
                    self._answered = time.monotonic()
                if ident == sent.ident:
                    break
                # A reply to an earlier call (a stray frame) is skipped, never scored;
                # stray frames count against the call's time and a byte cap, so a child
                # that sends them without end cannot keep the call alive.
                stray += size
                if stray > MAX_STRAY_BYTES:
                    raise ProtocolError(f"over {MAX_STRAY_BYTES} bytes of stray replies")
                if time.monotonic() > started + limit:
                    raise TimeoutError
        except (
            TimeoutError,
            EOFError,
            BrokenPipeError,
            ProtocolError,
            ValueError,
            UnicodeDecodeError,
        ) as exc:
            return self._failed(sent, exc, started)
        return parse_call(reply, time.monotonic() - started)

    def _failed(self, sent: SentCall, exc: Exception, started: float = 0.0) -> CallOutcome:
        """The outcome of a call whose exchange failed (its time counted from
        ``started``, else its sending); the child is killed (the next call gets a fresh one)."""
        seconds = time.monotonic() - max(sent.started, started)
        if isinstance(exc, TimeoutError):
            self.kill()
            told = said("timeout", limit=self.limits.call_timeout_s)
            if time.monotonic() >= self.ends_by:  # the budget ended first
                told = self._over_budget()
            return CallOutcome("timeout", seconds=seconds, said=told)
        if isinstance(exc, EOFError | BrokenPipeError):
            died = self._died()
            self.kill()
            return CallOutcome("crashed", said=died, seconds=seconds)
        self.kill()
        return CallOutcome("protocol", said=said("garbled", error=str(exc)), seconds=seconds)


def _frame(message: dict[str, Any]) -> bytes:
    """One request as it crosses: its length (4 bytes, big-endian), then its JSON."""
    data = json.dumps(message, allow_nan=True).encode("utf-8")
    return len(data).to_bytes(4, "big") + data


def _wait(waiter: select.poll, deadline: float) -> None:
    """Until ``waiter``'s fd is ready, or TimeoutError at ``deadline``."""
    remaining = deadline - time.monotonic()
    if remaining <= 0 or not waiter.poll(max(1, math.ceil(remaining * 1000))):
        raise TimeoutError
