"""Human-readable tables of a SimulationResult document (tabulate): ``-o table`` and ``-o wide``.

Plain text unless the options ask for colour (the command does so only for a terminal): then
statuses are coloured and the utilisation bars are drawn in colour with rich's styles. The
layout is the same either way (tabulate measures cells without their escape codes), so golden
files of the plain output pin the coloured one's layout too.
"""

from __future__ import annotations

from kplan.cli.render import RenderOptions
from kplan.cli.render.layout import Names, table, wrap
from kplan.cli.render.style import bar, paint, status_style
from kplan.cli.render.summary import simulation_summary
from kplan.cli.render.units import autoscaler_name, usage
from kplan.report.document import NodeUsage, PendingPod, SimulationDocument


def _headers(names: list[str], color: bool) -> list[str]:
    return [paint(h, "bold", color) if h else h for h in names]


def node_names(doc: SimulationDocument, columns: tuple[int, ...]) -> Names:
    return Names("a node name", columns, [n.name for n in doc.nodes])


#: at a terminal, pods of each status and nodes listed unless --all (as whatif's tables)
TOP = 20


def _shown_pods(doc: SimulationDocument, capped: bool) -> tuple[list[PendingPod], dict[str, int]]:
    """The pods the table lists, in the order tried, and how many of each status it leaves out:
    capped, the first TOP of each status (every status keeps its first pods, so a few failures
    among thousands of scheduled pods are all listed)."""
    if not capped:
        return list(doc.pods), {}
    kept: dict[str, int] = {}
    hidden: dict[str, int] = {}
    shown = []
    for p in doc.pods:
        if kept.get(p.status, 0) < TOP:
            kept[p.status] = kept.get(p.status, 0) + 1
            shown.append(p)
        else:
            hidden[p.status] = hidden.get(p.status, 0) + 1
    return shown, hidden


def _hidden_line(hidden: dict[str, int], what: str) -> str:
    n = sum(hidden.values())
    parts = ", ".join(f"{count:,} {status}" for status, count in hidden.items())
    return f"… and {n:,} more {what} ({parts}; --all lists them)"


def _pods(doc: SimulationDocument, wide: bool, color: bool, width: int | None = None,
          notes: list[str] | None = None, capped: bool = False) -> str:
    rows: list[list[object]] = []
    pods, hidden = _shown_pods(doc, capped)
    for p in pods:
        row: list[object] = [p.key, p.node or "<none>", paint(p.status, status_style(p.status), color)]
        if wide:
            row += [p.priority, p.attempts, p.nominated_node or "", p.message or ""]
        else:
            row.append(p.reason)
        rows.append(row)
    if not rows:
        return "No pending pods."
    headers = ["POD", "NODE", "STATUS"] + (["PRIORITY", "ATTEMPTS", "NOMINATED", "MESSAGE"] if wide else ["REASON"])
    # -o wide shows whole names, as kubectl's -o wide does, however wide they make it
    names = () if wide else (node_names(doc, (1,)), Names("a pod name", (0,), [p.key for p in doc.pods]))
    out = table(rows, _headers(headers, color), width, wrap_columns=[len(headers) - 1], spill=True, names=names,
                notes=notes)
    return out + ("\n" + _hidden_line(hidden, "pods") if hidden else "")


def _usage(n: NodeUsage, res: str, opts: RenderOptions) -> list[str]:
    return [usage(res, n.requested[res], n.allocatable[res]), bar(n.percent[res], opts.color, glyphs=opts.terminal)]


def _shown_nodes(doc: SimulationDocument, capped: bool) -> list[NodeUsage]:
    """The nodes the table lists: capped, the TOP fullest (the larger of their cpu and memory
    shares), in the document's order."""
    if not capped or len(doc.nodes) <= TOP:
        return list(doc.nodes)
    def fullness(n: NodeUsage) -> int:
        return max(n.percent.get("cpu") or 0, n.percent.get("memory") or 0)

    fullest = sorted(range(len(doc.nodes)), key=lambda i: -fullness(doc.nodes[i]))[:TOP]
    return [doc.nodes[i] for i in sorted(fullest)]


def _nodes(doc: SimulationDocument, opts: RenderOptions, wide: bool, notes: list[str] | None,
           capped: bool = False) -> str:
    nodes = _shown_nodes(doc, capped)
    rows = [[n.name, *_usage(n, "cpu", opts), *_usage(n, "memory", opts), f"{n.pods}/{n.allocatable['pods']}"]
            for n in nodes]
    out = table(rows, _headers(["NODE", "CPU", "", "MEMORY", "", "PODS"], opts.color), opts.width,
                names=() if wide else [node_names(doc, (0,))], notes=notes)
    if len(nodes) < len(doc.nodes):
        out += f"\n… and {len(doc.nodes) - len(nodes):,} more nodes, less full (--all lists them)"
    return out


def _launched(doc: SimulationDocument, color: bool, width: int | None, wide: bool, notes: list[str]) -> list[str]:
    """--autoscaler: the nodes it launched (and what they cost), and why it helped no other pod."""
    a = doc.autoscaling
    assert a is not None
    who = autoscaler_name(a.autoscaler)
    out = []
    group = "NODE GROUP" if a.autoscaler == "cluster-autoscaler" else "NODEPOOL"
    for d in a.scale_ups:  # the cluster-autoscaler: the options it weighed and its choice
        if d.min_size_fill:
            filled = ", ".join(f"{f.node_group} +{f.node_count}" for f in d.min_size_fill)
            out += ["", wrap(f"Scale-up {d.round}: below minSize: {filled}.", width)]
        if d.options:
            rows = [[o.node_group, str(o.node_count), str(o.pods_helped), "" if o.score is None else f"{o.score:.4f}",
                     "<-" if o.node_group == d.chosen else ""] for o in d.options]
            out += ["", table(rows, _headers([f"SCALE-UP {d.round}: NODE GROUP", "NODES", "PODS", "SCORE", "CHOSEN"],
                                             color), width, notes=notes)]
        out += [wrap(f"Scale-up {d.round}: " + (f"{d.chosen} +{d.node_count} ({d.why})." if d.chosen else f"{d.why}."),
                     width)]
    if doc.launched:
        rows = [[n.name, n.node_pool or n.node_group or "", n.instance_type, n.capacity_type, n.zone,
                 f"{n.price_per_hour:.4f}", str(len(n.pods))] for n in doc.launched]
        out += ["", table(rows, _headers(["NEW NODE", group, "TYPE", "CAPACITY", "ZONE", "$/HOUR", "PODS"],
                                         color), width, notes=notes,
                          names=() if wide else [Names("a node name", (0,), [n.name for n in doc.launched])])]
        nodes = f"{a.nodes} new node{'s' if a.nodes != 1 else ''}"
        out += ["", wrap(f"{who} launched {nodes}: +${a.price_per_hour:,.4f} per hour, "
                         f"+${a.price_per_month:,.2f} per month (730 h).", width)]
    else:
        out += ["", wrap(f"{who} launched no node.", width)]
    if a.stopped_at_bound:
        out += [wrap(f"{who} still launched nodes after {a.rounds} rounds, where kplan stops asking: more pods "
                     "may fit in a real cluster.", width)]
    unhelped = [p for p in doc.pods if p.autoscaler]
    if unhelped:
        # Karpenter's reasons run to hundreds of characters (each NodePool's requirements): each
        # goes under its pod, as a paragraph
        out += ["", paint(f"WHY {a.autoscaler.upper()} LAUNCHES NOTHING FOR THEM", "bold", color)]
        for p in unhelped:
            out += [p.key, wrap(p.autoscaler or "", width, "    ")]
    return out


def _table(doc: SimulationDocument, opts: RenderOptions, wide: bool) -> str:
    color, width = opts.color, opts.width
    notes: list[str] = []  # what a … in a shortened name stands for, said once at the end
    # at a terminal, long tables are capped (--all lists everything) and the summary comes last,
    # where it is read; a pipe or a file gets every row, in the order scripts know
    capped = opts.terminal and not opts.full
    out = [_pods(doc, wide, color, width, notes, capped)]
    pods = Names("a pod name", (0, 2), [p.key for p in doc.pods] + [f"{e.namespace}/{e.name}" for e in doc.preempted])
    if doc.preempted:
        out += ["", table([[f"{e.namespace}/{e.name}", e.node, e.preemptor] for e in doc.preempted],
                          _headers(["EVICTED POD", "NODE", "PREEMPTED BY"], color), width,
                          names=() if wide else [node_names(doc, (1,)), pods], notes=notes)]
    replaced = doc.replaced
    if replaced:
        kept = any(r.kept for r in replaced)
        rows = [[f"{r.namespace}/{r.name}", r.node or "<none>", r.workload]
                + (["yes" if r.kept else "no"] if kept else []) for r in replaced]
        out += ["", table(rows, _headers(["REPLACED POD", "NODE", "BY"] + (["STILL RUNNING"] if kept else []), color),
                          width, wrap_columns=[2], notes=notes,
                          names=() if wide else [node_names(doc, (1,)), Names("a pod name", (0,), [r[0] for r in rows])])]
    if doc.autoscaled:  # --hpa: the workloads scaled before the run, and by which autoscaler
        rows = [[a.workload, str(a.replicas_before), str(a.replicas), f"{a.horizontal_pod_autoscaler} ({a.field})"]
                for a in doc.autoscaled]
        out += ["", table(rows, _headers(["AUTOSCALED", "FROM", "TO", "HORIZONTALPODAUTOSCALER"], color), width,
                          wrap_columns=[3], notes=notes)]
    if doc.autoscaling is not None:
        out += _launched(doc, color, width, wide, notes)
    summary = wrap(simulation_summary(doc), width)
    if opts.terminal:
        out += ["", _nodes(doc, opts, wide, notes, capped)]
    else:
        out += ["", summary, "", _nodes(doc, opts, wide, notes)]
    if notes:  # what the … of shortened names stand for
        out += [""] + [wrap(n, width) for n in notes]
    if opts.terminal:
        out += ["", summary]
    return "\n".join(out) + "\n"


def simulation_table(doc: SimulationDocument, opts: RenderOptions) -> str:
    return _table(doc, opts, wide=False)


def simulation_wide(doc: SimulationDocument, opts: RenderOptions) -> str:
    return _table(doc, opts, wide=True)
