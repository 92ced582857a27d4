import math
from typing import Dict, List


class SystemLedger:
    """Capacity, transfer and admission ledger for a post-training topology."""

    rel_tol = 1e-9
    abs_tol = 1e-12

    @staticmethod
    def finite(value):
        return math.isfinite(value)

    def close(self, a, b):
        return math.isclose(a, b, rel_tol=self.rel_tol, abs_tol=self.abs_tol)

    # ---------------------------------------------------------------- capacity
    def capacity(self, stage_rates, arrival_rate, items_per_work_unit):
        rates = [float(rate) for rate in stage_rates.values()]
        multipliers = [float(value) for value in items_per_work_unit.values()]
        arrival_rate = float(arrival_rate)
        if not stage_rates or any(not self.finite(rate) or rate <= 0 for rate in rates):
            raise ValueError('stage rates must be positive finite numbers')
        if not self.finite(arrival_rate) or arrival_rate < 0:
            raise ValueError('arrival_rate must be a non-negative finite number')
        if set(stage_rates) != set(items_per_work_unit) or any(not self.finite(v) or v <= 0 for v in multipliers):
            raise ValueError('every stage needs a positive finite multiplier')
        effective_rates = {name: float(rate) / float(items_per_work_unit[name]) for name, rate in stage_rates.items()}
        capacity = min(effective_rates.values())
        bottlenecks = sorted(name for name, rate in effective_rates.items() if self.close(rate, capacity))
        queue_margins = {name: rate - arrival_rate for name, rate in effective_rates.items()}
        unstable_stages = sorted(name for name, margin in queue_margins.items() if margin < 0)
        return {'capacity': capacity, 'effective_rates': effective_rates, 'bottlenecks': bottlenecks,
                'queue_margins': queue_margins, 'unstable_stages': unstable_stages,
                'queue_stable': not unstable_stages}

    # ---------------------------------------------------------------- transfer
    def __init__(self):
        self.reset()

    def reset(self):
        self.rows, self.total_bytes, self.fabric_exposed, self.fabric_bandwidths = [], 0.0, {}, {}

    def add_edge(self, edge, placement):
        source, target = edge['source'], edge['target']
        if source not in placement or target not in placement:
            raise ValueError('both ends of an edge must be placed in a pool')
        cross_pool = placement[source] != placement[target]
        overlap = float(edge.get('overlap_fraction', 0.0))
        bandwidth = float(edge['bandwidth_bytes_per_s'])
        if not self.finite(overlap) or not self.finite(bandwidth) or not 0.0 <= overlap <= 1.0 or bandwidth <= 0:
            raise ValueError('overlap must be in [0, 1] and bandwidth positive')
        bytes_per_item = float(edge['bytes_per_item'])
        items_per_work_unit = float(edge['items_per_work_unit'])
        work_units_per_second = float(edge['work_units_per_second'])
        if (any(not self.finite(v) for v in (bytes_per_item, items_per_work_unit, work_units_per_second))
                or bytes_per_item < 0 or items_per_work_unit <= 0 or work_units_per_second < 0):
            raise ValueError('edge sizes and rates must be finite; items per unit must be positive')
        traffic = bytes_per_item * items_per_work_unit * work_units_per_second if cross_pool else 0.0
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        self.total_bytes += traffic
        if cross_pool:
            self.charge_fabric(edge, bandwidth, exposed)
        self.rows.append(edge | {'cross_pool': cross_pool, 'traffic_bytes_per_s': traffic,
                                 'transfer_seconds_per_s': transfer, 'exposed_seconds_per_s': exposed})

    def charge_fabric(self, edge, bandwidth, exposed):
        fabric_id = str(edge.get('fabric_id', '')).strip()
        if not fabric_id:
            raise ValueError('a cross-pool edge must name its fabric_id')
        previous = self.fabric_bandwidths.setdefault(fabric_id, bandwidth)
        if not self.close(previous, bandwidth):
            raise ValueError('one fabric_id cannot have two bandwidths')
        self.fabric_exposed[fabric_id] = self.fabric_exposed.get(fabric_id, 0.0) + exposed

    def transfer(self, edges, placement):
        self.reset()
        for edge in edges:
            self.add_edge(edge, placement)
        critical = max(self.fabric_exposed.values(), default=0.0)
        fabrics = sorted(n for n, v in self.fabric_exposed.items() if v == critical) if self.fabric_exposed else []
        return {'cross_pool_bytes_per_s': self.total_bytes, 'fabric_exposed_seconds_per_s': self.fabric_exposed,
                'critical_exposed_seconds_per_s': critical, 'critical_fabrics': fabrics, 'rows': self.rows}

    # ---------------------------------------------------------------- gate
    def hard_failures(self, over_limit_pools, version_sync_ok, recovery_ok):
        failures = []
        if over_limit_pools:
            failures.append('memory_limit')
        if not version_sync_ok:
            failures.append('version_sync')
        if not recovery_ok:
            failures.append('recovery_not_ready')
        return failures

    def tuning_pressures(self, capacity_report, transfer_report, unstable, overloaded, budget):
        pressures = []
        if unstable or not capacity_report['queue_stable']:
            pressures.append('unstable_queue')
        if overloaded or transfer_report['critical_exposed_seconds_per_s'] > budget:
            pressures.append('exposed_transfer')
        return pressures

    def gate(self, capacity_report, memory_by_pool, memory_limits, transfer_report,
             version_sync_ok, recovery_ok, max_exposed_s_per_s):
        budget = float(max_exposed_s_per_s)
        memory_values = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
        exposures = transfer_report.get('fabric_exposed_seconds_per_s', {})
        transfer_values = [float(v) for v in exposures.values()]
        if not self.finite(budget) or budget < 0:
            raise ValueError('the exposure budget must be non-negative and finite')
        if any(not self.finite(v) or v < 0 for v in memory_values + transfer_values):
            raise ValueError('memory and exposure values must be non-negative and finite')
        over = sorted(p for p, used in memory_by_pool.items() if p not in memory_limits or used > memory_limits[p])
        hard = self.hard_failures(over, version_sync_ok, recovery_ok)
        unstable = sorted(capacity_report.get('unstable_stages', []))
        overloaded = sorted(n for n, v in exposures.items() if v > budget)
        soft = self.tuning_pressures(capacity_report, transfer_report, unstable, overloaded, budget)
        decision = 'reject' if hard else ('tune' if soft else 'accept')
        return {'decision': decision, 'reasons': hard if hard else soft, 'over_limit_pools': over,
                'unstable_stages': unstable, 'overloaded_fabrics': overloaded}


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    return SystemLedger().capacity(stage_rates, arrival_rate, items_per_work_unit)


def transfer_ledger(edges, placement):
    return SystemLedger().transfer(edges, placement)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    return SystemLedger().gate(capacity_report, memory_by_pool, memory_limits, transfer_report,
                               version_sync_ok, recovery_ok, max_exposed_s_per_s)
