"""``-o html``: one self-contained page per document, to open in a browser, offline.

The page is rendered from the document alone, like every format: Jinja2 templates (autoescaped:
pod names and scheduler messages cannot inject markup) and charts drawn on this side by
matplotlib as inline SVG. No script, no font, no stylesheet and no image is fetched: the page
carries a Content-Security-Policy that forbids every load, so it works from a file, in a mail or
an air-gapped network, and a browser would report anything that tried.

Node utilisation is drawn per node, grouped by pool, up to MAX_NODE_BARS nodes; beyond, per
pool (summed requests over summed allocatable). Tables stop after MAX_ROWS rows; -o json has
everything.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from kplan import __version__
from kplan.cli.render import RenderOptions
from kplan.cli.render.pools import NO_POOL, PoolUse, Use, pools, resources_of
from kplan.cli.render.reasons import merged, shape
from kplan.cli.render.units import plural, usage
from kplan.errors import InputError
from kplan.report.capacity import CapacityDocument
from kplan.report.document import NodeUsage, PendingPod, SimulationDocument
from kplan.report.explain import ExplanationDocument
from kplan.report.sweep import PointDoc, ScaleAxisDoc, SweepDocument
from kplan.report.whatif import WhatIfDocument

#: nodes drawn one bar each; a larger cluster is drawn per pool
MAX_NODE_BARS = 300
#: rows of a table, and pods listed under one reason
MAX_ROWS = 500
MAX_PODS_PER_REASON = 20
POOL_COLORS = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5",
               "#9c6b4e", "#9498a0")
#: the resources of the utilisation chart, with their panels' titles
RESOURCES = (("cpu", "CPU requested"), ("memory", "Memory requested"), ("pods", "Pods"))
#: height of one bar's row in the utilisation and placement charts, in inches
ROW_IN = 0.2


@cache
def _environment() -> Any:
    try:
        import jinja2
    except ImportError:
        raise InputError("-o html needs Jinja2 and matplotlib: pip install 'kplan[html]'") from None
    env = jinja2.Environment(loader=jinja2.PackageLoader("kplan.cli.render", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["pct"] = lambda x: "-" if x is None else f"{x}%"
    env.filters["plural"] = plural  # {{ n | plural("node") }}: 1 node, 2 nodes
    env.globals["amounts"] = usage  # requested/allocatable as every renderer writes it
    return env


def _render(template: str, **context: Any) -> str:
    return str(_environment().get_template(template).render(**context))


# ------------------------------------------------------------------------------ charts

def _svg(fig: Any, tight: bool = True) -> Any:
    """The figure as inline SVG markup (no XML prolog, fixed ids, no date: the same document
    gives the same page)."""
    import matplotlib
    from markupsafe import Markup

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "kplan"}):
        # no RDF metadata block: it only names the creator and links to vocabularies
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
                    bbox_inches="tight" if tight else None)
    text = buf.getvalue()
    return Markup(text[text.index("<svg"):])


def _figure(width: float, height: float, layout: Any = "constrained") -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("-o html needs Jinja2 and matplotlib: pip install 'kplan[html]'") from None
    with _style():
        return Figure(figsize=(width, height), layout=layout)


def _style() -> Any:
    import matplotlib

    return matplotlib.rc_context({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                                  "axes.grid": True, "grid.alpha": 0.3, "font.family": "sans-serif"})


def _integer_ticks(*axes: Any) -> None:
    """Ticks at whole numbers only, on axes that count things (nodes, pods, replicas): never a
    tick at 0.5 nodes."""
    from matplotlib.ticker import MaxNLocator

    for axis in axes:
        axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


#: markers of the sweep's curves, so that curves drawn over each other stay visible
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def _curve_style(i: int) -> dict[str, Any]:
    """The i-th curve: its colour, and a hollow marker of its own, smaller than the previous
    curve's, so that a curve drawn over another leaves the other's marker showing."""
    return {"color": POOL_COLORS[i % len(POOL_COLORS)], "marker": MARKERS[i % len(MARKERS)],
            "markersize": max(4.0, 10.0 - 1.5 * i), "markerfacecolor": "none", "markeredgewidth": 1.5}


def utilisation_chart(nodes: Sequence[NodeUsage], before: Sequence[NodeUsage] | None = None) -> Any:
    """Requested share of cpu, memory and pods: a bar per node grouped by pool, or per pool. With
    ``before`` (whatif), an outline behind each bar shows the share before the change."""
    after_names = {n.name for n in nodes}
    every = [*nodes, *(n for n in before or () if n.name not in after_names)]
    if not every:
        return None
    per_node = len(every) <= MAX_NODE_BARS
    sides: list[dict[str, list[int]]] = []
    if per_node:
        ordered = sorted(every, key=lambda n: (n.pool or NO_POOL, n.name))
        labels = [n.name for n in ordered]
        pool_of = [n.pool or NO_POOL for n in ordered]
        for side in (nodes, before):
            if side is not None:
                by_name = {n.name: n for n in side}
                sides.append({r: [(by_name[n.name].percent.get(r) or 0) if n.name in by_name else 0
                                  for n in ordered] for r, _ in RESOURCES})
    else:
        _, rows = pools(every)
        labels = [f"{p.pool} ({plural(p.nodes, 'node')})" for p in rows]
        pool_of = [p.pool for p in rows]
        for side in (nodes, before):
            if side is not None:
                use = {p.pool: p.use for p in pools(side)[1]}
                sides.append({r: [(use[p.pool][r].percent or 0) if p.pool in use else 0 for p in rows]
                              for r, _ in RESOURCES})
    names = sorted(set(pool_of))
    colors = [POOL_COLORS[names.index(p) % len(POOL_COLORS)] for p in pool_of]
    # margins by hand: matplotlib's automatic layout measures every tick label again and again,
    # seconds for a few hundred nodes
    label_in = 0.2 + 0.065 * max(len(x) for x in labels)
    legend = (per_node and len(names) > 1) or before is not None
    # a row of 0.2 in holds a 9-point label (0.125 in) with a gap: labels of neighbours never touch
    height = 0.55 + ROW_IN * len(labels) + (0.5 if legend else 0)
    fig = _figure(10.5 + label_in, height, layout=None)
    with _style():
        fig.subplots_adjust(left=label_in / (10.5 + label_in), right=0.98, top=1 - 0.35 / height,
                            bottom=(0.35 + (0.5 if legend else 0)) / height, wspace=0.08)
        axes = fig.subplots(1, 3)
        ys = list(range(len(labels)))
        for i, (ax, (r, title)) in enumerate(zip(axes, RESOURCES, strict=True)):
            ax.barh(ys, sides[0][r], color=colors, height=0.8)
            if before is not None:
                ax.barh(ys, sides[1][r], color="none", edgecolor="#24292f", linewidth=0.9, height=0.8)
            ax.set_xlim(0, max(100, *sides[0][r], *(sides[1][r] if before is not None else ())))
            ax.set_ylim(len(labels) - 0.5, -0.5)
            ax.set_title(title + " (% of allocatable)")
            ax.axvline(100, color="#999", linewidth=0.8)
            ax.grid(False, axis="y")
            if i == 0:
                ax.set_yticks(ys, labels)
            else:
                ax.set_yticks([])
        if legend:
            from matplotlib.patches import Patch

            handles = [Patch(color=POOL_COLORS[i % len(POOL_COLORS)], label=p) for i, p in enumerate(names)]
            if before is not None:
                handles.append(Patch(facecolor="none", edgecolor="#24292f", label="before the change"))
            fig.legend(handles=handles, loc="lower center", ncols=min(len(handles), 7), title="pool", frameon=False)
    return _svg(fig, tight=False)


def placements_chart(placements: Mapping[str, int]) -> Any:
    if not placements:
        return None
    names = sorted(placements)
    fig = _figure(8, 1.0 + max(ROW_IN, 0.22) * len(names))
    with _style():
        ax = fig.subplots()
        bars = ax.barh(range(len(names)), [placements[n] for n in names], color=POOL_COLORS[0], height=0.7)
        ax.bar_label(bars, padding=3, fontsize=8)
        ax.set_yticks(range(len(names)), names)
        ax.invert_yaxis()
        ax.set_xlabel("replicas placed")
        ax.grid(False, axis="y")
        _integer_ticks(ax.xaxis)
    return _svg(fig)


# ------------------------------------------------------------------------------ pods

def pending_by_reason(pods: Iterable[PendingPod]) -> list[dict[str, Any]]:
    """The pods that do not run, grouped by status and what kube-scheduler's reason says (node
    counts aside: kplan.cli.render.reasons), most pods first; a group's reason shows each count as
    the range of its values."""
    groups: dict[tuple[str, str], list[PendingPod]] = {}
    for p in pods:
        if p.status == "Scheduled":
            continue
        groups.setdefault((p.status, shape(p)), []).append(p)
    out = [{"status": status, "reason": merged(group) or "(no message)", "count": len(group),
            "pods": [p.key for p in group[:MAX_PODS_PER_REASON]], "more": max(0, len(group) - MAX_PODS_PER_REASON)}
           for (status, _), group in groups.items()]
    return sorted(out, key=lambda g: (-g["count"], g["status"], g["reason"]))


def _nodes_section(nodes: Sequence[NodeUsage], before: Sequence[NodeUsage] | None = None) -> dict[str, Any]:
    """The chart and the per-pool table of node use (kplan.cli.render.pools), before and after
    when ``before`` is given."""
    resources = resources_of([*nodes, *(before or ())])
    _, rows = pools(nodes, resources)
    was: dict[str, PoolUse] = {}
    if before is not None:
        _, before_rows = pools(before, resources)
        was = {p.pool: p for p in before_rows}
        # a pool the change removed: nothing left of it after
        rows += [PoolUse(p.pool, 0, {r: Use(r, 0, 0) for r in resources}) for p in before_rows
                 if p.pool not in {q.pool for q in rows}]
        rows.sort(key=lambda p: p.pool)
    count = len({n.name for n in (*nodes, *(before or ()))})
    return {"chart": utilisation_chart(nodes, before), "resources": resources, "pools": rows, "before": was,
            "compare": before is not None, "per_node": count <= MAX_NODE_BARS, "count": count,
            "max_bars": MAX_NODE_BARS}


def _page(template: str, title: str, doc: Any, opts: RenderOptions, **context: Any) -> str:
    return _render(template, title=title, doc=doc, run=opts.run, version=__version__, max_rows=MAX_ROWS, **context)


# ------------------------------------------------------------------------------ documents

def simulation_html(doc: SimulationDocument, opts: RenderOptions) -> str:
    from kplan.cli.render.summary import simulation_summary

    return _page("simulation.html.j2", "kplan simulate", doc, opts, summary=simulation_summary(doc),
                 reasons=pending_by_reason(doc.pods), nodes=_nodes_section(doc.nodes))


def whatif_html(doc: WhatIfDocument, opts: RenderOptions) -> str:
    from kplan.cli.render.summary import simulation_summary

    return _page("whatif.html.j2", "kplan whatif", doc, opts, before=simulation_summary(doc.before),
                 after=simulation_summary(doc.after), reasons=pending_by_reason(doc.after.pods),
                 reasons_before=pending_by_reason(doc.before.pods),
                 nodes=_nodes_section(doc.after.nodes, doc.before.nodes))


def explain_html(doc: ExplanationDocument, opts: RenderOptions) -> str:
    """The pod, its facts, what would help (as the table shows it: changes that open no node and
    nearest nodes no change helps are counted, not listed, unless --all), the reasons over all
    nodes, the filters of the nodes shown and the preemption."""
    from kplan.cli.render.explain import _node_row, _resource_fact

    near, changes = list(doc.nearest_nodes), list(doc.remediation)
    if not opts.full:
        near = [n for n in near if n.lacks or n.fits_with_changes]
        changes = [c for c in changes if c.opens_nodes]
    hidden = len(doc.nearest_nodes) - len(near) + len(doc.remediation) - len(changes)
    shown = near or changes or doc.more_nodes or hidden or (doc.resource_claims and doc.resource_claims.remedy)
    help_ = {"near": near, "changes": changes, "hidden": hidden} if shown else None
    rows = [[*_node_row(n, doc.decision.chosen), n.total] for n in doc.nodes]
    return _page("explain.html.j2", "kplan explain pod", doc, opts, fact=_resource_fact(doc.resources), help=help_,
                 node_rows=rows)


def capacity_html(doc: CapacityDocument, opts: RenderOptions) -> str:
    from kplan.cli.render.capacity import capacity_table

    headline = capacity_table(doc, RenderOptions()).splitlines()[0]
    return _page("capacity.html.j2", "kplan capacity", doc, opts, headline=headline,
                 placements=placements_chart(doc.placements),
                 nodes=_nodes_section(doc.nodes) if doc.nodes else None)


def sweep_html(doc: SweepDocument, opts: RenderOptions) -> str:
    from kplan.cli.render import sweep

    headers, rows = sweep.rows(doc)
    return _page("sweep.html.j2", "kplan sweep", doc, opts, header=sweep.header(doc), verdict=sweep.verdict(doc),
                 headers=headers, rows=rows, charts=sweep_charts(doc))


# ------------------------------------------------------------------------------ sweep curves

def _series(doc: SweepDocument) -> dict[str, list[PointDoc]]:
    """The points grouped by the scale axes' values, the release and the autoscalers' bound (one
    curve per workload size, release and bound)."""
    scale = [(i, a) for i, a in enumerate(doc.axes) if isinstance(a, ScaleAxisDoc)]
    out: dict[str, list[PointDoc]] = {}
    for p in doc.points:
        parts = [f"{a.workload.split(' ', 1)[-1]}={p.values[i]}" for i, a in scale]
        parts += [f"release {p.release}"] if p.release is not None else []
        parts += [f"hpa {p.hpa}"] if p.hpa is not None else []
        out.setdefault(", ".join(parts) or "all points", []).append(p)
    return out


MAX_CURVES = 10


def sweep_charts(doc: SweepDocument) -> list[dict[str, Any]]:
    """Pending pods and fit probability against the number of added nodes, and cost (or nodes)
    against fit probability. Where several node axes add the same number of nodes, a curve shows
    the best mix for that number (fewest pending pods, highest fit probability)."""
    series = list(_series(doc).items())[:MAX_CURVES]
    charts = []
    fig = _figure(7, 3.6)
    with _style():
        ax = fig.subplots()
        for i, (label, points) in enumerate(series):
            best: dict[int, PointDoc] = {}
            for p in points:
                x = p.added_nodes
                if x not in best or p.pending.median < best[x].pending.median:
                    best[x] = p
            xs = sorted(best)
            med = [best[x].pending.median for x in xs]
            lo = [m - best[x].pending.min for x, m in zip(xs, med, strict=True)]
            hi = [best[x].pending.max - m for x, m in zip(xs, med, strict=True)]
            ax.errorbar(xs, med, yerr=[lo, hi], capsize=3, label=label, **_curve_style(i))
        ax.set_xlabel("nodes added")
        ax.set_ylabel("pending pods (median, min-max over seeds)")
        _integer_ticks(ax.xaxis, ax.yaxis)
        if len(series) > 1:
            ax.legend(fontsize=8)
    charts.append({"title": "Pending pods against nodes added", "svg": _svg(fig)})

    fig = _figure(7, 3.6)
    with _style():
        ax = fig.subplots()
        for i, (label, points) in enumerate(series):
            fit: dict[int, float] = {}
            for p in points:
                x = p.added_nodes
                fit[x] = max(fit.get(x, 0.0), float(p.fit_probability))
            xs = sorted(fit)
            ax.plot(xs, [fit[x] for x in xs], label=label, **_curve_style(i))
        ax.axhline(float(doc.confidence), color="#999", linestyle="--", linewidth=0.8)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("nodes added")
        _integer_ticks(ax.xaxis)
        ax.set_ylabel("fit probability")
        if len(series) > 1:
            ax.legend(fontsize=8)
    charts.append({"title": "Fit probability against nodes added", "svg": _svg(fig)})

    priced = any(p.cost is not None for p in doc.points)
    fig = _figure(7, 3.6)
    with _style():
        ax = fig.subplots()
        ys = [float(p.cost or 0) if priced else float(p.added_nodes) for p in doc.points]
        ax.scatter([float(p.fit_probability) for p in doc.points], ys, color=POOL_COLORS[0], alpha=0.6)
        # the cheapest points, marked and labelled: points at one place share one label, and a label
        # sits left of a point near the right edge, so that labels neither overlap nor leave the plot
        marked: dict[tuple[float, float], list[str]] = {}
        for rank, c in enumerate(doc.cheapest, 1):
            y = float(c.cost or 0) if priced else float(c.added_nodes)
            marked.setdefault((float(c.fit_probability), y), []).append(f"{rank}. #{c.index}")
        for (fx, fy), names in marked.items():
            ax.scatter([fx], [fy], color=POOL_COLORS[2], zorder=3)
            right = fx > 0.7
            ax.annotate(", ".join(names), (fx, fy), textcoords="offset points", xytext=(-7 if right else 7, 0),
                        ha="right" if right else "left", va="center", fontsize=8,
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
        ax.axvline(float(doc.confidence), color="#999", linestyle="--", linewidth=0.8)
        ax.set_xlim(-0.05, 1.05)
        ax.set_xlabel("fit probability")
        ax.set_ylabel("cost per hour" if priced else "nodes added")
        if not priced:
            _integer_ticks(ax.yaxis)
    charts.append({"title": ("Cost" if priced else "Nodes added") + " against fit probability", "svg": _svg(fig)})
    return charts
