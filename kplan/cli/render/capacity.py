"""The table renderer of the CapacityResult document (``-o table``; json and yaml print the document)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate


def capacity_table(doc: Mapping[str, Any]) -> str:
    pod = doc["pod"]
    n = doc["replicas"]
    more = "+" if doc["limitReached"] else ""
    out = [f"{n}{more} more replica{'s' if n != 1 else ''} of {doc['workload']} (priority {pod['priority']}) fit."]
    if doc["placements"]:
        out.append("")
        out.append(tabulate(sorted(doc["placements"].items()), headers=["NODE", "REPLICAS"], tablefmt="plain"))
    out.append("")
    if doc["limitReached"]:
        out.append(f"Stopped at the limit of {doc['limit']} replicas (--limit).")
    else:
        out.append(f"The next replica does not fit: {doc['message']}")
    if doc["evictions"]:
        out.append("")
        out.append("Pods the replicas preempt:")
        out.append(tabulate([[f"{e['namespace']}/{e['name']}", e["node"], e["priority"], e["preemptor"]]
                             for e in doc["evictions"]],
                            headers=["EVICTED POD", "NODE", "PRIORITY", "PREEMPTED BY"], tablefmt="plain"))
    return "\n".join(out) + "\n"

