"""``python -m verl_cpu_driver SPEC RECORD``: the runner's group driver on the CPU.

The same :class:`rlsys_closure.driver.GroupDriver` and ``main`` the runner
starts for each group, with two steps replaced: the Ray resource is CPUs and
the worker/replica are the runner's worker and verl's replica machinery with
the vLLM server swapped for :mod:`verl_fake_rollout`. Used by the tox env
``verl-actor`` (run in a fresh process per group, as the runner does).
"""

from __future__ import annotations

import os
from typing import Any

import verl_fake_rollout as fake
from rlsys_closure import driver

__all__ = ["CpuGroupDriver", "main"]


class CpuGroupDriver(driver.GroupDriver):
    """The runner's GroupDriver with only the device and the engine replaced."""

    def __init__(self, spec: dict[str, Any], record: driver.GroupRecord) -> None:
        super().__init__(spec, record, nvml=None)  # no NVML on a CPU box

    def resource_pool(self) -> Any:
        from verl.single_controller.ray import RayResourcePool

        return RayResourcePool(process_on_nodes=[1], use_gpu=False, max_colocate_count=1,
                               name_prefix=f"closure_cpu_{self.spec['group']}")

    def worker_class(self) -> type:
        return fake.FakeRolloutWorker

    def server_manager(self, cfg: Any, wg: Any) -> Any:
        fake.install()  # the replica class, in this (the driver's) process
        return super().server_manager(cfg, wg)

    def ray_init(self, cfg: Any) -> None:
        import ray

        # No metrics agent: on a loaded CI box the raylet gives up waiting for
        # the agent's port file (a Ray check failure), and nothing here reads metrics.
        os.environ.setdefault("RAY_enable_metrics_collection", "0")
        env = driver.runtime_env_without_cuda(cfg)
        env.setdefault("env_vars", {}).update({
            k: os.environ[k] for k in ("VERL_USE_EXTERNAL_MODULES", "VERL_PLATFORM",
                                       "VERL_ENGINE_DEVICE", "PYTHONPATH") if k in os.environ})
        # Ray waits a fixed 30 s for its raylet; on a loaded CI box that is not
        # always enough, and a second attempt is cheap next to a failed run.
        for attempt in range(3):
            try:
                ray.init(num_cpus=4, include_dashboard=False, runtime_env=env)
                return
            except Exception as exc:
                if "timed out during startup" not in str(exc) or attempt == 2:
                    raise
                ray.shutdown()


def main() -> int:
    return driver.main(driver_factory=CpuGroupDriver)


if __name__ == "__main__":
    raise SystemExit(main())
