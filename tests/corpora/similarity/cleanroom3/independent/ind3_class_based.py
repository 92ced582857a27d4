"""System ledger exercise, organised around a small Ledger class."""
import math
from typing import Dict, List

_TOL = dict(rel_tol=1e-9, abs_tol=1e-12)


class LedgerError(ValueError):
    pass


class Number:
    @staticmethod
    def check(value, what, allow_zero):
        ok = math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
        if not ok:
            kind = "non-negative" if allow_zero else "positive"
            raise LedgerError(f"{what} must be a finite {kind} number, got {value!r}")
        return value


class Pipeline:
    def __init__(self, rates, multipliers, arrival):
        if not rates:
            raise LedgerError("no stages given")
        if set(rates) != set(multipliers):
            raise LedgerError("rates and multipliers describe different stages")
        self.arrival = Number.check(arrival, "arrival rate", True)
        self.effective = {}
        for stage in rates:
            q = Number.check(rates[stage], f"rate of {stage}", False)
            m = Number.check(multipliers[stage], f"multiplier of {stage}", False)
            self.effective[stage] = q / m

    def report(self):
        cap = min(self.effective.values())
        margins = {k: v - self.arrival for k, v in self.effective.items()}
        unstable = sorted(k for k in margins if margins[k] < 0)
        return {
            "effective_rates": dict(self.effective),
            "capacity": cap,
            "bottlenecks": sorted(k for k, v in self.effective.items() if math.isclose(v, cap, **_TOL)),
            "queue_margins": margins,
            "unstable_stages": unstable,
            "queue_stable": len(unstable) == 0,
        }


class Edge:
    def __init__(self, raw, placement):
        self.raw = raw
        for endpoint in (raw["source"], raw["target"]):
            if endpoint not in placement:
                raise LedgerError(f"endpoint {endpoint!r} is not placed in any pool")
        self.overlap = raw.get("overlap_fraction", 0)
        if not (0 <= self.overlap <= 1):  # NaN fails too
            raise LedgerError(f"overlap_fraction {self.overlap!r} outside [0, 1]")
        self.bandwidth = Number.check(raw["bandwidth_bytes_per_s"], "bandwidth", False)
        self.items = Number.check(raw["items_per_work_unit"], "items_per_work_unit", False)
        self.size = Number.check(raw["bytes_per_item"], "bytes_per_item", True)
        self.freq = Number.check(raw["work_units_per_second"], "work_units_per_second", True)
        self.cross = placement[raw["source"]] != placement[raw["target"]]
        self.fabric = None
        if self.cross:
            fabric = raw.get("fabric_id")
            if fabric is None or not str(fabric).strip():
                raise LedgerError("a cross-pool edge must name its fabric")
            self.fabric = fabric

    def loads(self):
        if not self.cross:
            return 0.0, 0.0, 0.0
        traffic = self.size * self.items * self.freq
        transfer = traffic / self.bandwidth
        return traffic, transfer, transfer * (1 - self.overlap)

    def row(self):
        traffic, transfer, exposed = self.loads()
        out = dict(self.raw)
        out["cross_pool"] = self.cross
        out["traffic_bytes_per_s"] = traffic
        out["transfer_seconds_per_s"] = transfer
        out["exposed_seconds_per_s"] = exposed
        return out


class TransferBook:
    def __init__(self, edges, placement):
        self.edges = [Edge(e, placement) for e in edges]
        self.bandwidths = {}
        for edge in self.edges:
            if not edge.cross:
                continue
            first = self.bandwidths.setdefault(edge.fabric, edge.bandwidth)
            if not math.isclose(first, edge.bandwidth, **_TOL):
                raise LedgerError(f"fabric {edge.fabric!r} declared with two bandwidths")

    def report(self):
        rows = [e.row() for e in self.edges]
        per_fabric = {}
        for e, r in zip(self.edges, rows):
            if e.cross:
                per_fabric[e.fabric] = per_fabric.get(e.fabric, 0.0) + r["exposed_seconds_per_s"]
        worst = max(per_fabric.values()) if per_fabric else 0.0
        return {
            "rows": rows,
            "cross_pool_bytes_per_s": sum(r["traffic_bytes_per_s"] for r in rows),
            "fabric_exposed_seconds_per_s": per_fabric,
            "critical_exposed_seconds_per_s": worst,
            "critical_fabrics": sorted(f for f, v in per_fabric.items() if v == worst),
        }


class Gate:
    HARD = ("memory_limit", "version_sync", "recovery_not_ready")
    SOFT = ("unstable_queue", "exposed_transfer")

    def __init__(self, capacity_report, memory, limits, transfer_report, sync_ok, recovery_ok, budget):
        self.budget = Number.check(budget, "max_exposed_s_per_s", True)
        for p, v in memory.items():
            Number.check(v, f"memory of pool {p}", True)
        for p, v in limits.items():
            Number.check(v, f"limit of pool {p}", True)
        self.exposure = transfer_report["fabric_exposed_seconds_per_s"]
        for f, v in self.exposure.items():
            Number.check(v, f"exposure of fabric {f}", True)
        self.over = sorted(p for p, v in memory.items() if p not in limits or v > limits[p])
        self.unstable = sorted(capacity_report["unstable_stages"])
        self.overloaded = sorted(f for f, v in self.exposure.items() if v > self.budget)
        self.flags = {
            "memory_limit": bool(self.over),
            "version_sync": not sync_ok,
            "recovery_not_ready": not recovery_ok,
            "unstable_queue": bool(self.unstable),
            "exposed_transfer": bool(self.overloaded),
        }

    def report(self):
        hard = [r for r in self.HARD if self.flags[r]]
        soft = [r for r in self.SOFT if self.flags[r]]
        if hard:
            decision, reasons = "reject", hard
        elif soft:
            decision, reasons = "tune", soft
        else:
            decision, reasons = "accept", []
        return {
            "decision": decision,
            "reasons": reasons,
            "over_limit_pools": self.over,
            "unstable_stages": self.unstable,
            "overloaded_fabrics": self.overloaded,
        }


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    return Pipeline(stage_rates, items_per_work_unit, arrival_rate).report()


def transfer_ledger(edges, placement):
    return TransferBook(edges, placement).report()


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    return Gate(capacity_report, memory_by_pool, memory_limits, transfer_report,
                version_sync_ok, recovery_ok, max_exposed_s_per_s).report()
