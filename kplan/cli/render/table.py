"""Human-readable tables (tabulate), plain text so golden files are stable."""

from __future__ import annotations

from tabulate import tabulate

from kplan.cluster.resources import CPU, MEMORY
from kplan.model.quantity import format_resource
from kplan.scheduler.simulate import SimulationResult

BAR_WIDTH = 10


def bar(used: int, total: int) -> str:
    if total <= 0:
        return "-" * BAR_WIDTH + "   -"
    frac = min(max(used / total, 0.0), 1.0)
    filled = int(round(frac * BAR_WIDTH))
    return "#" * filled + "." * (BAR_WIDTH - filled) + f" {used * 100 // total:3d}%"


def short_reason(message: str | None) -> str:
    if not message:
        return ""
    head = message.split(" no new claims to deallocate")[0].split(" preemption:")[0]
    return head


def simulation_table(result: SimulationResult, wide: bool) -> str:
    rows = []
    for o in result.pods:
        row = [f"{o.pod.namespace}/{o.pod.name}", o.node or "<none>", o.status]
        if wide:
            row += [o.pod.priority, o.attempts, o.nominated_node or "", o.message or ""]
        else:
            row.append(short_reason(o.message))
        rows.append(row)
    headers = ["POD", "NODE", "STATUS"] + (["PRIORITY", "ATTEMPTS", "NOMINATED", "MESSAGE"] if wide else ["REASON"])
    out = [tabulate(rows, headers=headers, tablefmt="plain")] if rows else ["No pending pods."]
    if result.preempted:
        out.append("")
        out.append(tabulate([[f"{e.pod.namespace}/{e.pod.name}", e.node, e.preemptor.key] for e in result.preempted],
                            headers=["EVICTED POD", "NODE", "PREEMPTED BY"], tablefmt="plain"))
    if result.replaced:
        out.append("")
        kept = any(r.kept for r in result.replaced)
        out.append(tabulate([[f"{r.pod.namespace}/{r.pod.name}", r.node or "<none>", r.workload]
                             + (["yes" if r.kept else "no"] if kept else []) for r in result.replaced],
                            headers=["REPLACED POD", "NODE", "BY"] + (["STILL RUNNING"] if kept else []),
                            tablefmt="plain"))
    counts: dict[str, int] = {}
    for o in result.pods:
        counts[o.status] = counts.get(o.status, 0) + 1
    table = result.snapshot.table
    summary = (f"{len(result.pods)} pending pods: {counts.get('Scheduled', 0)} scheduled, "
               f"{counts.get('Unschedulable', 0)} unschedulable")
    if counts.get("Gated"):
        summary += f", {counts['Gated']} gated"
    if counts.get("NotCreated"):
        summary += f", {counts['NotCreated']} not created"
    if result.preempted:
        summary += f"; {len(result.preempted)} pods preempted"
    gone = sum(1 for r in result.replaced if not r.kept)
    if gone:
        summary += f"; {gone} running pod{'s' if gone != 1 else ''} replaced"
    summary += f" ({len(table)} nodes)."
    out += ["", summary, ""]
    node_rows = []
    for i in sorted(range(len(table)), key=lambda i: table.names[i]):
        cpu_a, cpu_r = int(table.alloc[i, CPU]), int(table.requested[i, CPU])
        mem_a, mem_r = int(table.alloc[i, MEMORY]), int(table.requested[i, MEMORY])
        pods_a, pods_r = int(table.allowed_pods[i]), int(table.pod_count[i])
        node_rows.append([table.names[i],
                          f"{format_resource('cpu', cpu_r)}/{format_resource('cpu', cpu_a)}", bar(cpu_r, cpu_a),
                          f"{format_resource('memory', mem_r)}/{format_resource('memory', mem_a)}", bar(mem_r, mem_a),
                          f"{pods_r}/{pods_a}"])
    out.append(tabulate(node_rows, headers=["NODE", "CPU", "", "MEMORY", "", "PODS"], tablefmt="plain"))
    return "\n".join(out) + "\n"
