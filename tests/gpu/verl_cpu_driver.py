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

from cpu_nvml import CpuNvml
from rlsys_closure import driver

__all__ = ["CpuGroupDriver", "main"]


class CpuGroupDriver(driver.GroupDriver):
    """The runner's GroupDriver with only the device and the engine replaced.

    The worker and the fake engine are imported where the GPU driver imports
    its own (inside ``init_actor`` and ``init_rollout_server``), so this test
    sees the GPU run's import order while the sampler runs.
    """

    sampler_nvml = "cpu_nvml:CpuNvml"

    def __init__(self, spec: dict[str, Any], record: driver.GroupRecord) -> None:
        super().__init__(spec, record, nvml=CpuNvml())

    def resource_pool(self) -> Any:
        from verl.single_controller.ray import RayResourcePool

        return RayResourcePool(
            process_on_nodes=[1],
            use_gpu=False,
            max_colocate_count=1,
            name_prefix=f"closure_cpu_{self.spec['group']}",
        )

    def worker_class(self) -> type:
        import verl_fake_rollout as fake

        return fake.FakeRolloutWorker

    def server_manager(self, cfg: Any, wg: Any) -> Any:
        import verl_fake_rollout as fake

        fake.install()  # the replica class, in this (the driver's) process
        return super().server_manager(cfg, wg)

    def ray_init(self, cfg: Any) -> None:
        """Join the Ray cluster the test started (RAY_ADDRESS), as a new job.

        Each group is still its own process and its own Ray job (its actors go
        when it disconnects); only the cluster is shared, because starting one
        per group takes longer than Ray's fixed 30 s raylet wait on a loaded CI box.
        """
        import ray

        env = driver.closure_runtime_env(cfg)
        env.setdefault("env_vars", {}).update(
            {
                k: os.environ[k]
                for k in (
                    "VERL_USE_EXTERNAL_MODULES",
                    "VERL_PLATFORM",
                    "VERL_ENGINE_DEVICE",
                    "PYTHONPATH",
                    "RLSYS_TEST_ORPHAN_DIR",
                )
                if k in os.environ
            }
        )
        ray.init(address=os.environ["RAY_ADDRESS"], runtime_env=env)


def main() -> int:
    return driver.main(driver_factory=CpuGroupDriver)


if __name__ == "__main__":
    raise SystemExit(main())
