import math


class SystemLedger:
    """Holds the three ledger computations as methods."""

    REL = 1e-9
    ABS = 1e-12

    @staticmethod
    def _finite(x):
        return math.isfinite(x)

    # ---- task 1 -------------------------------------------------------
    def capacity(self, stage_rates, arrival_rate, items_per_work_unit):
        arrival = float(arrival_rate)
        if not self._finite(arrival) or arrival < 0:
            raise ValueError("SystemLedger.capacity: arrival must not be negative or non-finite")
        if not stage_rates:
            raise ValueError("SystemLedger.capacity: no stages supplied")
        for value in stage_rates.values():
            value = float(value)
            if not self._finite(value) or value <= 0:
                raise ValueError("SystemLedger.capacity: every stage rate should be > 0 and finite")
        if set(stage_rates) != set(items_per_work_unit):
            raise ValueError("SystemLedger.capacity: stage names differ between rates and multipliers")
        for value in items_per_work_unit.values():
            value = float(value)
            if not self._finite(value) or value <= 0:
                raise ValueError("SystemLedger.capacity: every multiplier should be > 0 and finite")

        self.effective = {}
        for key, raw in stage_rates.items():
            self.effective[key] = float(raw) / float(items_per_work_unit[key])
        self.cap = min(self.effective.values())
        self.margins = {}
        for key, rate in self.effective.items():
            self.margins[key] = rate - arrival
        return self._capacity_report()

    def _capacity_report(self):
        slow = [k for k, r in self.effective.items()
                if math.isclose(r, self.cap, rel_tol=self.REL, abs_tol=self.ABS)]
        backlog = [k for k, m in self.margins.items() if m < 0]
        return {
            "effective_rates": self.effective,
            "capacity": self.cap,
            "bottlenecks": sorted(slow),
            "queue_margins": self.margins,
            "unstable_stages": sorted(backlog),
            "queue_stable": not backlog,
        }

    # ---- task 2 -------------------------------------------------------
    def links(self, edges, placement):
        self.rows = []
        self.total = 0.0
        self.exposure = {}
        self.bandwidth_of = {}
        for edge in edges:
            self._one_link(edge, placement)
        peak = max(self.exposure.values(), default=0.0)
        tops = sorted(k for k, v in self.exposure.items() if v == peak) if self.exposure else []
        return {
            "rows": self.rows,
            "cross_pool_bytes_per_s": self.total,
            "fabric_exposed_seconds_per_s": self.exposure,
            "critical_exposed_seconds_per_s": peak,
            "critical_fabrics": tops,
        }

    def _one_link(self, edge, placement):
        a, b = edge["source"], edge["target"]
        if a not in placement or b not in placement:
            raise ValueError("SystemLedger.links: endpoint without an assigned pool")
        crosses = placement[a] != placement[b]
        ov = float(edge.get("overlap_fraction", 0.0))
        bw = float(edge["bandwidth_bytes_per_s"])
        if not self._finite(ov) or not 0.0 <= ov <= 1.0:
            raise ValueError("SystemLedger.links: overlap fraction out of [0, 1]")
        if not self._finite(bw) or bw <= 0:
            raise ValueError("SystemLedger.links: bandwidth should be > 0 and finite")
        size = float(edge["bytes_per_item"])
        per_unit = float(edge["items_per_work_unit"])
        freq = float(edge["work_units_per_second"])
        if not (self._finite(size) and self._finite(per_unit) and self._finite(freq)):
            raise ValueError("SystemLedger.links: payload numbers must be finite")
        if size < 0 or freq < 0:
            raise ValueError("SystemLedger.links: bytes and frequency cannot be negative")
        if per_unit <= 0:
            raise ValueError("SystemLedger.links: items per unit should be > 0")
        load = size * per_unit * freq if crosses else 0.0
        busy = load / bw
        visible = busy * (1.0 - ov)
        self.total += load
        if crosses:
            self._charge_fabric(edge, bw, visible)
        row = dict(edge)
        row.update(cross_pool=crosses, traffic_bytes_per_s=load,
                   transfer_seconds_per_s=busy, exposed_seconds_per_s=visible)
        self.rows.append(row)

    def _charge_fabric(self, edge, bw, visible):
        name = str(edge.get("fabric_id", "")).strip()
        if not name:
            raise ValueError("SystemLedger.links: cross-pool link lacks a fabric name")
        known = self.bandwidth_of.setdefault(name, bw)
        if not math.isclose(known, bw, rel_tol=self.REL, abs_tol=self.ABS):
            raise ValueError("SystemLedger.links: fabric bandwidth declared inconsistently")
        self.exposure[name] = self.exposure.get(name, 0.0) + visible

    # ---- task 3 -------------------------------------------------------
    def gate(self, capacity_report, memory_by_pool, memory_limits, transfer_report,
             version_sync_ok, recovery_ok, ceiling):
        ceiling = float(ceiling)
        if not self._finite(ceiling) or ceiling < 0:
            raise ValueError("SystemLedger.gate: exposure ceiling must be finite and >= 0")
        fabric_map = transfer_report.get("fabric_exposed_seconds_per_s", {})
        for group in (memory_by_pool, memory_limits, fabric_map):
            for value in group.values():
                value = float(value)
                if not self._finite(value) or value < 0:
                    raise ValueError("SystemLedger.gate: ledger entries must be finite and >= 0")
        over = sorted(p for p, used in memory_by_pool.items()
                      if p not in memory_limits or used > memory_limits[p])
        stages = sorted(capacity_report.get("unstable_stages", []))
        hot = sorted(n for n, v in fabric_map.items() if v > ceiling)

        blockers = []
        if over:
            blockers.append("memory_limit")
        if not version_sync_ok:
            blockers.append("version_sync")
        if not recovery_ok:
            blockers.append("recovery_not_ready")
        tweaks = []
        if stages or not capacity_report["queue_stable"]:
            tweaks.append("unstable_queue")
        if hot or transfer_report["critical_exposed_seconds_per_s"] > ceiling:
            tweaks.append("exposed_transfer")

        if blockers:
            verdict = "reject"
        elif tweaks:
            verdict = "tune"
        else:
            verdict = "accept"
        return {"decision": verdict, "reasons": blockers or tweaks,
                "over_limit_pools": over, "unstable_stages": stages, "overloaded_fabrics": hot}


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    return SystemLedger().capacity(stage_rates, arrival_rate, items_per_work_unit)


def transfer_ledger(edges, placement):
    return SystemLedger().links(edges, placement)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    return SystemLedger().gate(capacity_report, memory_by_pool, memory_limits, transfer_report,
                               version_sync_ok, recovery_ok, max_exposed_s_per_s)
