"""The table renderer of the CapacityResult document (``-o table``; json and yaml print the document)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from kplan.cli.render import RenderOptions
from kplan.cli.render.layout import table, wrap


def capacity_table(doc: Mapping[str, Any], opts: RenderOptions | None = None) -> str:
    width = (opts or RenderOptions()).width
    pod = doc["pod"]
    n = doc["replicas"]
    more = "+" if doc["limitReached"] else ""
    out = [wrap(f"{n}{more} more replica{'s' if n != 1 else ''} of {doc['workload']} (priority {pod['priority']}) fit.",
                width)]
    if doc["placements"]:
        out.append("")
        out.append(tabulate(sorted(doc["placements"].items()), headers=["NODE", "REPLICAS"], tablefmt="plain"))
    out.append("")
    if doc["limitReached"]:
        out.append(f"Stopped at the limit of {doc['limit']} replicas (--limit).")
    else:
        out.append(wrap(f"The next replica does not fit: {doc['message']}", width, hanging="  "))
    if doc["evictions"]:
        out.append("")
        out.append("Pods the replicas preempt:")
        out.append(table([[f"{e['namespace']}/{e['name']}", e["node"], e["priority"], e["preemptor"]]
                          for e in doc["evictions"]], ["EVICTED POD", "NODE", "PRIORITY", "PREEMPTED BY"], width,
                         wrap_columns=[0, 3]))
    return "\n".join(out) + "\n"

