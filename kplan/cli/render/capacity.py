"""The table renderer of the CapacityResult document (``-o table``; json and yaml print the document)."""

from __future__ import annotations

from dataclasses import replace

from kplan.cli.render import RenderOptions
from kplan.cli.render.layout import Names, table, wrap
from kplan.cli.render.units import autoscaler_name, plural
from kplan.report.capacity import CapacityDocument


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _headline(doc: CapacityDocument, declared: int, fit: int) -> str:
    """The declared replicas first, then the extra ones: "3 declared replicas of Deployment shop/web
    (priority 0) fit; 8 more would fit, 11 in all; the 12th fails: <FitError>"."""
    n = doc.replicas
    what = f"{doc.workload} (priority {doc.pod.priority})"
    if declared == 1 and doc.workload.startswith("Pod "):
        first = f"{what} fits" if fit else f"{what} does not fit"
    elif fit == declared:
        first = f"{'the' if declared > 1 else 'its'} {declared} declared replica{'s' if declared != 1 else ''} " \
            f"of {what} fit{'s' if declared == 1 else ''}"
        first = first[0].upper() + first[1:]
    else:
        first = f"{fit} of the {declared} declared replicas of {what} fit"
    if doc.limit_reached:
        return f"{first}; {n}+ more would fit, {fit + n}+ in all (the --limit stopped the count)."
    if not doc.more_counted:
        return f"{first}; {doc.message}."
    if n == 0:
        return f"{first}; no more would fit: {doc.message}"
    return f"{first}; {n} more would fit, {fit + n} in all; the {ordinal(fit + n + 1)} fails: {doc.message}"


def capacity_table(doc: CapacityDocument, opts: RenderOptions | None = None) -> str:
    width = (opts or RenderOptions()).width
    if opts is not None and opts.terminal and doc.message:
        from kplan.cli.render.explain import fold_noise

        doc = replace(doc, message=fold_noise(doc.message)[0])  # the words a user cannot act on, folded
    n = doc.replicas
    more = "+" if doc.limit_reached else ""
    notes: list[str] = []  # what a … in a shortened name stands for, said once at the end
    nodes = Names("a node name", (0,), [*doc.placements, *(e.node for e in doc.evictions)])
    declared = doc.declared
    if declared.replicas:
        out = [wrap(_headline(doc, declared.replicas, declared.fit), width, hanging="  ")]
    else:
        out = [wrap(f"{n}{more} more replica{'s' if n != 1 else ''} of {doc.workload} (priority {doc.pod.priority}) "
                    "fit.", width)]
    if doc.autoscaled:  # --hpa: said first, it sets the declared counts
        out[:0] = [wrap(f"--hpa {a.bound}: {a.workload} scaled from {a.replicas_before} to {a.replicas} replicas "
                        f"(HorizontalPodAutoscaler {a.horizontal_pod_autoscaler}: {a.field}).", width, hanging="  ")
                   for a in doc.autoscaled] + [""]
    if doc.placements:
        out.append("")
        out.append(table(sorted(doc.placements.items()), ["NODE", "MORE REPLICAS" if declared.replicas else "REPLICAS"],
                         width, names=[nodes], notes=notes))
    if doc.limit_reached:
        out += ["", f"Stopped at the limit of {plural(doc.limit, 'replica')} (--limit)."]
    elif not declared.replicas:
        out += ["", wrap(f"The next replica does not fit: {doc.message}", width, hanging="  ")]
    if doc.autoscaling is not None:  # --autoscaler: the nodes it launched for that many replicas
        a = doc.autoscaling
        who = autoscaler_name(a.autoscaler, first=False)
        if doc.launched:
            out += ["", table([[n.name, n.node_pool or n.node_group or "", n.instance_type, n.capacity_type, n.zone,
                                f"{n.price_per_hour:.4f}", str(len(n.pods))] for n in doc.launched],
                              ["NEW NODE", "NODEPOOL", "TYPE", "CAPACITY", "ZONE", "$/HOUR", "PODS"], width,
                              names=[Names("a node name", (0,), [n.name for n in doc.launched])], notes=notes)]
        out += ["", wrap(f"With them {who} launches {plural(a.nodes, 'new node')}: +${a.price_per_hour:,.4f} per hour, "
                         f"+${a.price_per_month:,.2f} per month (730 h).", width)]
        if doc.autoscaler:
            out += [wrap(f"Why {who} launches nothing for the next replica: {doc.autoscaler}", width, hanging="  ")]
    if doc.evictions:
        out.append("")
        out.append("Pods the replicas preempt:")
        out.append(table([[f"{e.namespace}/{e.name}", e.node, e.priority, e.preemptor] for e in doc.evictions],
                         ["EVICTED POD", "NODE", "PRIORITY", "PREEMPTED BY"], width, wrap_columns=[0, 3],
                         names=[replace(nodes, columns=(1,))], notes=notes))
    if notes:  # what the … of shortened names stand for
        out += [""] + [wrap(n, width) for n in notes]
    return "\n".join(out) + "\n"

