"""``python -m hang_driver SPEC RECORD``: the runner's GroupDriver stuck the ways a GPU run can be.

The driver, its watchdog, its sampler process, its record and ``main`` are the
real ones; only ``_run`` (verl's calls) is replaced by one of these, chosen by
the spec's ``fake_mode``:

* ``sync_never_connects``: inside ``initial_sync`` the driver waits on a socket
  no peer ever connects to, as verl's weight sender waits on its ZMQ socket
  when the vLLM-side receiver failed before connecting;
* ``verl_sender_no_receiver``: the same with verl's own ``BucketedWeightSender``
  (tox -e verl-actor only);
* ``blocked_in_asyncio_run``: the same wait made synchronously inside a coroutine run
  by ``asyncio.run``, as verl's naive sync calls ``ray.get`` inside an auto-awaited
  coroutine (``checkpoint_engine/base.py``, ``utils/ray_utils.py``): asyncio turns the
  first SIGINT into a task cancel and the wait resumes;
* ``actor_stuck``: the same, with a worker group whose every call blocks (the actor
  is what is stuck): the failure path must not call it;
* ``ignores_interrupt``: the same wait in a library that swallows SIGINT, so
  only the watchdog's hard stop can end it;
* ``orphan_then_complete``: starts a non-daemon grandchild in its own session
  (as vLLM's EngineCore is: no parent-death check) and completes normally;
* ``hang_everything``: ignores SIGINT and SIGTERM, starts an orphan, and waits
  with the watchdog effectively off (only the runner's group deadline can end it).

The orphan writes its pid to ``<record>.orphan`` so the test can check it is gone.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rlsys_closure import driver


def _spawn_orphan(record_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(1)"],
        start_new_session=True,
    )
    record_path.with_suffix(".orphan").write_text(str(proc.pid))


def _wait_for_a_peer_that_never_comes() -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind("\0rlsys-hang-" + str(time.monotonic_ns()))
        s.listen(1)
        s.accept()


async def _blocked_inside_a_coroutine() -> None:
    _wait_for_a_peer_that_never_comes()


def _verl_sender(record_path: Path) -> tuple[Any, list[tuple[str, Any]]]:
    """verl 0.9.1's own sender (its shm path, as on a host without CUDA IPC); its
    receiver -- vLLM's worker -- never connects (it failed before connecting), so
    ``async_send_weights`` waits on ZMQ for good."""
    import importlib.util
    import os

    import torch
    import verl

    # Loaded by file: the vllm_rollout package's __init__ imports vLLM.
    path = os.path.join(
        os.path.dirname(verl.__file__),
        "workers/rollout/vllm_rollout/bucketed_weight_transfer.py",
    )
    spec = importlib.util.spec_from_file_location("verl_bucketed_weight_transfer", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sender = module.BucketedWeightSender(
        zmq_handle=f"ipc://{record_path.with_suffix('.sock')}", bucket_size_mb=1, use_shm=True
    )
    weights = [("a.lora_A.weight", torch.ones(4, 4)), ("a.lora_B.weight", torch.zeros(4, 4))]
    print("hang_driver: verl sender blocked, waiting for a receiver", flush=True)
    return sender, weights


class _StuckWorkers:
    """A worker group whose actor is busy for good (as when verl's sender blocks inside
    its update_weights): every call to it waits for ever."""

    def _forever(self) -> Any:
        import threading

        threading.Event().wait()

    def closure_drain(self) -> Any:
        return self._forever()

    def closure_actor_memory_mb(self) -> Any:
        return self._forever()


class HangDriver(driver.GroupDriver):
    def __init__(self, spec: dict[str, Any], record: driver.GroupRecord) -> None:
        super().__init__(spec, record, nvml=None)
        self.grace_s = float(spec.get("timeout_grace_s", driver.TIMEOUT_GRACE_S))

    def _shutdown(self) -> None:
        return None  # no Ray here

    def _run(self) -> None:
        mode = self.spec["fake_mode"]
        with self.recorder.phase("init_ray"):
            time.sleep(0.2)
        if mode in ("ignores_interrupt", "hang_everything"):
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if mode == "hang_everything":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if mode in ("orphan_then_complete", "hang_everything"):
            _spawn_orphan(self.record.path)
        if mode == "orphan_then_complete":
            return
        if mode == "verl_sender_no_receiver":
            # Importing torch and verl takes longer than the test's deadline on a loaded
            # box: done before the phase, under a generous one, as the real driver's
            # imports happen in its init steps.
            short = self.watchdog.timeout_s
            self.watchdog.timeout_s = 600.0
            with self.recorder.phase("init_checkpoint_manager"):
                sender, weights = _verl_sender(self.record.path)
            self.watchdog.timeout_s = short
            self.watchdog.arm("before initial_sync")
        if mode == "actor_stuck":
            self.wg = _StuckWorkers()
        with self.phase("initial_sync"):
            if mode in ("sync_never_connects", "actor_stuck"):
                _wait_for_a_peer_that_never_comes()
            elif mode == "blocked_in_asyncio_run":
                asyncio.run(_blocked_inside_a_coroutine())
            elif mode == "verl_sender_no_receiver":
                asyncio.run(sender.async_send_weights(iter(weights)))
            else:
                while True:
                    time.sleep(0.5)


def main() -> int:
    return driver.main(driver_factory=HangDriver)


if __name__ == "__main__":
    raise SystemExit(main())
