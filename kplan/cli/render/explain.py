"""The table renderer of the PodExplanation document (``-o table``; json and yaml print the document)."""

from __future__ import annotations

from dataclasses import replace

from tabulate import tabulate

from kplan.cli.render import RenderOptions
from kplan.cli.render.layout import Names, table, visible_len, wrap
from kplan.cli.render.units import amount, plural
from kplan.report.explain import (
    ClaimsDoc,
    ExplanationDocument,
    FilterDoc,
    NodeDoc,
    PreemptionDoc,
    ResourceFact,
)


def _verdict(f: FilterDoc) -> str:
    detail = f" ({f.detail})" if f.detail else ""
    return f"{f.plugin}: {', '.join(f.reasons) or f.code}{detail}"


def _node_row(n: NodeDoc, chosen: str | None) -> list[str]:
    failing = [f for f in n.filters if f.failing]
    first = next((f for f in failing if f.first_failure), None)
    others = [f for f in failing if f is not first]
    if n.feasible:
        result = "chosen" if n.name == chosen else "feasible"
    elif first is not None:
        result = "rejected"
    elif not n.examined:
        result = "not examined"
    else:
        result = "rejected"
    return [n.name, result, _verdict(first) if first else ("-" if not n.feasible else ""),
            "; ".join(_verdict(f) for f in others) or ("-" if failing else "")]


def abbreviation(plugin: str) -> str:
    """A plugin's initials (NodeResourcesFit → NRF), for score columns on a narrow terminal."""
    return "".join(ch for ch in plugin if ch.isupper()) or plugin


def _scores(doc: ExplanationDocument, width: int | None = None, notes: list[str] | None = None) -> list[str]:
    scored = [(n, n.scores) for n in doc.nodes if n.scores is not None]
    if not scored:
        return []
    plugins = list(scored[0][1])
    rows: list[list[object]] = []
    for rank, (n, scores) in enumerate(scored, 1):
        rows.append([rank, n.name, n.total] + [
            f"{scores[p].weighted} ({scores[p].raw}→{scores[p].normalized})" for p in plugins])
    cell = "weighted (raw→normalised)"
    text = str(tabulate(rows, headers=["RANK", "NODE", "TOTAL"] + plugins, tablefmt="plain"))
    legend = []
    short = [abbreviation(p) for p in plugins]
    if width is not None and visible_len(text) > width and len(set(short)) == len(short):
        # plugin names abbreviated, with a legend; the ranking is the rows' order
        legend = [wrap("Columns: " + ", ".join(f"{a} {p}" for a, p in zip(short, plugins, strict=True)) + ".",
                       width, hanging="  ")]
        text = str(tabulate([r[1:] for r in rows], headers=["NODE", "TOTAL"] + short, tablefmt="plain"))
        if visible_len(text) > width:
            cell = "weighted; -o json has the raw and normalised scores"
            text = table([[r[1], r[2]] + [scores[p].weighted for p in plugins]
                          for r, (_, scores) in zip(rows, scored, strict=True)], ["NODE", "TOTAL"] + short, width,
                         names=[_nodes(doc, (0,))], notes=notes)
    head = f"Scores of the feasible nodes (cell: {cell}; total = sum of weighted)"
    if doc.decision.scores_computed_by_kplan:
        head += "; kube-scheduler did not score here, kplan computed them for information"
    out = [wrap(head + ":", width), text, *legend]
    notes = [wrap(f"  {n.name}  {p}: {s.explanation}", width, hanging="    ") for n, scores in scored
             for p, s in scores.items() if s.explanation]
    if notes:
        out += ["", "Why kplan's own score plugins scored as they did:"] + notes
    return out


def _decision(doc: ExplanationDocument) -> list[str]:
    d = doc.decision
    out = []
    if d.chosen:
        how = ""
        if d.nominated_fast_path:
            how = " (its nominated node, taken without scoring once it passed the filters)"
        elif not d.scored:
            how = " (the only feasible node: kube-scheduler does not score it)"
        out.append(f"Chosen: {d.chosen}{how}")
        if d.ties:
            rule = "at random (seeded)" if d.tie_break == "random" else "by lowest name"
            out.append(f"Tie: {', '.join(d.ties)} shared the top score; kube-scheduler chose {rule}.")
    return out


def _nodes(doc: ExplanationDocument, columns: tuple[int, ...]) -> Names:
    """The nodes the explanation shows, whose names a narrow table may shorten."""
    return Names("a node name", columns, [n.name for n in doc.nodes])


def _preemption(p: PreemptionDoc | None, title: str = "Preemption (DefaultPreemption at this attempt):",
                width: int | None = None, names: Names | None = None, notes: list[str] | None = None) -> list[str]:
    if p is None:
        return []
    out = [wrap(title, width, hanging="  ")]
    if p.message:
        out.append(wrap(f"result: {p.message}", width, "  ", hanging="    "))
    out.append(wrap(f"potential nodes (rejected as Unschedulable, so removing pods may help): {p.potential_nodes}",
                    width, "  ", hanging="    "))
    if p.candidates:
        rows = [[c.node, ", ".join(f"{v.namespace}/{v.name} (priority {v.priority})" for v in c.victims),
                 c.pdb_violations] for c in p.candidates]
        out.append(table(rows, ["CANDIDATE", "VICTIMS", "PDB VIOLATIONS"], width, wrap_columns=[1], indent="  ",
                         names=[replace(names, columns=(0,))] if names else (), notes=notes))
        if p.candidates_total > len(p.candidates):
            out.append(f"  … {p.candidates_total - len(p.candidates)} more candidates (--all-nodes lists them)")
    if p.failed_reasons:
        out.append("  nodes where removing lower-priority pods does not help:")
        for g in p.failed_reasons:
            more = ", …" if g.nodes > len(g.examples) else ""
            out.append(wrap(f"{g.nodes} × {', '.join(g.reasons) or g.code} ({', '.join(g.examples)}{more})",
                            width, "    ", hanging="      "))
    if p.nominated_node:
        out.append(wrap(f"chosen node: {p.nominated_node} (the pod is nominated there; the victims are evicted)",
                        width, "  ", hanging="    "))
    return out


def _remediation(doc: ExplanationDocument, width: int | None = None, full: bool = False, names: Names | None = None,
                 notes: list[str] | None = None) -> list[str]:
    out: list[str] = []
    near, changes = list(doc.nearest_nodes), list(doc.remediation)
    hidden = 0
    if not full:
        # what opens no node, and nearest nodes no change to the node helps, answer nothing: --all lists them
        near = [n for n in near if n.lacks or n.fits_with_changes]
        changes = [c for c in changes if c.opens_nodes]
        hidden = len(doc.nearest_nodes) - len(near) + len(doc.remediation) - len(changes)
    if not changes and not near and not doc.more_nodes and not hidden:
        return out
    out.append(wrap("What would help (each change checked by re-running the scheduler on the cluster of this "
                    "attempt):", width, hanging="  "))
    if near:
        rows: list[list[object]] = []
        for n in near:
            verdict = "yes" if n.fits_with_changes else "no: " + "; ".join(n.still_rejected_by)
            # the resources in human units, then the rest of what it lacks in words
            lacks = [amount(r, q) for r, q in n.lacks_resources.items()] + list(n.lacks[len(n.lacks_resources):])
            rows.append([n.name, ", ".join(lacks) or "-", verdict])
        out.append(table(rows, ["NEAREST NODE", "LACKS", "FITS WITH THAT"], width, wrap_columns=[1, 2], indent="  ",
                         names=[replace(names, columns=(0,))] if names else (), notes=notes))
    if changes:
        rows = [[c.change, c.opens_nodes, ", ".join(c.nodes) + (", …" if c.opens_nodes > len(c.nodes) else "")]
                for c in changes]
        out.append(table(rows, ["CHANGE TO THE POD", "OPENS NODES", "E.G."], width, wrap_columns=[0, 2], indent="  ",
                         names=[replace(names, columns=(2,))] if names else (), notes=notes))
    m = doc.more_nodes
    if m:
        if m.count is not None:
            out.append(wrap(f"{plural(m.count, 'more node')} like {m.template} would make it fit "
                            "(smallest count, found by whole simulations).", width, "  ", hanging="    "))
        else:
            out.append(wrap(f"more nodes: {m.reason}", width, "  ", hanging="    "))
    if hidden:
        out.append(wrap(f"({hidden} hidden: {'it opens' if hidden == 1 else 'they open'} no node; --all lists "
                        f"{'it' if hidden == 1 else 'them'})", width, "  "))
    return out


def explanation_table(doc: ExplanationDocument, opts: RenderOptions | None = None) -> str:
    opts = opts or RenderOptions()
    width = opts.width
    pod, q = doc.pod, doc.queue
    out = [f"Pod {pod.namespace}/{pod.name}",
           f"  Priority:  {pod.priority}" + (f" ({pod.priority_class_name})" if pod.priority_class_name else "")
           + f", preemptionPolicy {pod.preemption_policy}",
           f"  Queue:     position {q.position} of {q.pending} pending pods, {plural(q.attempts, 'attempt')}"
           + (f"; explained at attempt {q.explained_attempt}" if q.explained_attempt else ""),
           f"  Status:    {doc.status}" + (f" on {doc.node}" if doc.node else "")]
    if doc.nominated_node and doc.status != "Scheduled":
        out.append(f"  Nominated: {doc.nominated_node}")
    fact = _resource_fact(doc.resources)
    if fact:
        out.append(wrap(f"  Fact:      {fact}", width, hanging=" " * 13))
    for s in doc.storage:
        text = f"claim {s.claim}: {s.problem}" + (f". Fix: {s.fix}." if s.fix else ".")
        out.append(wrap(f"  Storage:   {text}", width, hanging=" " * 13))
    message, folded = (fold_noise(doc.message) if opts.terminal else (doc.message, [])) if doc.message else ("", [])
    if message:
        out.append(wrap(f"  Message:   {message}" + ("¹" if _postscript(message) else ""), width,
                        hanging=" " * 13))
    if folded:
        out.append(wrap(f"             (kube-scheduler also says {' and '.join(repr(f) for f in folded)}, "
                        "which says nothing about this pod's problem; -o json and a pipe keep its whole message)",
                        width, hanging=" " * 13))
    if doc.evictions:
        out.append(wrap("  Evicted:   " + ", ".join(f"{e.namespace}/{e.name} on {e.node}" for e in doc.evictions),
                        width, hanging=" " * 13))
    if len(doc.history) > 1:
        out.append("  Attempts:")
        for h in doc.history:
            what = f"scheduled on {h.node}" if h.node else (h.message or "failed")
            if h.nominated_node:
                what += f" [nominated to {h.nominated_node}]"
            out.append(wrap(f"    {h.attempt}: {what}", width, hanging="       "))
    if q.explained_attempt is None:
        why = {"Gated": "its scheduling gates hold it back until they are removed",
               "NotCreated": "it was never created (see its message), so kube-scheduler never saw it"}.get(
            doc.status, "no scheduler profile serves it" if doc.message else "it never reached the queue's head")
        if doc.held_back:
            why = ("kube-scheduler keeps it out of its queue (DynamicResources PreEnqueue) and reports no reason: "
                   + "; ".join(doc.held_back))
        return "\n".join(out) + f"\n\n{wrap(f'The pod was never attempted: {why}.', width)}\n"
    out.append("")
    shown, total = doc.nodes_shown, doc.nodes_total
    head = (f"Filters on {plural(total, 'node')}" if shown == total else
            f"Filters on the top {shown} of {total} nodes (--all-nodes for all)")
    out.append(wrap(head + " (FIRST FAILURE: what kube-scheduler records; ALSO REJECTED BY: every other plugin "
                    "that would reject the node):", width))
    rows = [_node_row(n, doc.decision.chosen) for n in doc.nodes]
    notes: list[str] = []  # what a … in a shortened name stands for, said once at the end
    out.append(table(rows, ["NODE", "RESULT", "FIRST FAILURE", "ALSO REJECTED BY"], width, wrap_columns=[2, 3],
                     names=[_nodes(doc, (0,))], notes=notes))
    if doc.reasons:
        out.append("")
        out.append(f"Reasons over all {plural(total, 'node')}:")
        out.append(table([[r.plugin, r.reason, r.nodes, r.first_failure_nodes] for r in doc.reasons],
                         ["PLUGIN", "REASON", "NODES", "AS FIRST FAILURE"], width, wrap_columns=[1]))
    claims = _claims(doc.resource_claims, width)
    if claims:
        out.append("")
        out.extend(claims)
    earlier = doc.earlier_preemption
    names = _nodes(doc, ())
    earlier_block = _preemption(earlier.preemption, f"Preemption at attempt {earlier.attempt}, which nominated "
                                f"{earlier.preemption.nominated_node}:", width, names, notes) if earlier else []
    for block in (_scores(doc, width, notes), _decision(doc), _preemption(doc.preemption, width=width, names=names,
                                                                     notes=notes), earlier_block,
                  _remediation(doc, width, opts.full, names, notes)):
        if block:
            out.append("")
            out.extend(block)
    note = _postscript(message)
    if note:
        out += ["", wrap(f"¹ {note}", width, hanging="  ")]
    if notes:
        out += [""] + [wrap(n, width) for n in notes]
    return "\n".join(out) + "\n"


def _claims(c: ClaimsDoc | None, width: int | None) -> list[str]:
    """The pod's resource claims and the devices remedy (kplan's own account)."""
    if not c:
        return []
    out = [wrap("Resource claims (the DynamicResources rejections above say, per node, which claim and request "
                "fail and why):", width, hanging="  ")]
    for claim in c.claims:
        origin = f"from template {claim.template}" if claim.template else "shared"
        state = "allocated" if claim.allocated else "not allocated"
        out.append(wrap(f"  {claim.name}: ResourceClaim {claim.claim}, {origin}, {state}", width, hanging="      "))
        for r in claim.requests:
            out.append(wrap(f"    request {r}", width, hanging="      "))
        for k in claim.constraints:
            out.append(wrap(f"    constraint {k}", width, hanging="      "))
    if c.remedy:
        out.append(wrap(f"  Remedy: {c.remedy}.", width, hanging="    "))
    return out


def _resource_fact(r: ResourceFact | None) -> str:
    """"It asks for 32 cpu and 128Gi memory; the largest node its other filters allow, gpu-a-1,
    has 15.9 cpu and 60Gi memory allocatable." """
    if not r:
        return ""
    asks = " and ".join(amount(k, v) for k, v in r.requests.items())
    has = " and ".join(amount(k, v) for k, v in r.allocatable.items())
    where = ("the largest node its other filters allow" if r.scope == "allowed" else
             "the largest node (every node also fails another filter)")
    text = f"it asks for {asks}; {where}, {r.largest_node}, has {has} allocatable"
    if r.big_enough and r.short_of_room:
        text += ", but not that much free: the pods on it use the rest"
    elif r.big_enough:
        text += ", enough, but other filters reject it"
    return text + "."


#: kube-scheduler's postscripts that say nothing about the pod's own problem, explained once
_POSTSCRIPTS = (
    (" no new claims to deallocate", "'no new claims to deallocate' is kube-scheduler's DynamicResources plugin "
     "answering, at PostFilter, that a pod without resource claims has none to free; every FitError of releases "
     "1.34 to 1.36 carries it. It says nothing about why this pod does not fit."),
    (" still not schedulable", "'still not schedulable' is DynamicResources' PostFilter answering that none of "
     "the pod's claims that are unavailable on some node could be deallocated to make room (a claim reserved for "
     "other pods never is); it says nothing more about why the pod does not fit."),
    (". not found", "'not found' is the DynamicResources plugin's PostFilter failing because a PreFilter plugin "
     "before it stopped the cycle, so its state was never written; kube-scheduler v1.34 says this, and it also "
     "stops preemption. The reason is the sentence before it."),
)


#: what DynamicResources adds to every FitError of 1.34 (to 1.36) for a pod without claims, as
#: (what the message holds, what it reads folded): kept in documents and pipes, folded on a terminal
_NOISE = (
    (" no new claims to deallocate,", ""),
    (" no new claims to deallocate", ""),
    (". not found, ", ". "),
)


def fold_noise(message: str) -> tuple[str, list[str]]:
    """``message`` without the postscripts a user cannot act on, and the words folded."""
    folded: list[str] = []
    for marker, instead in _NOISE:
        if marker in message:
            message = message.replace(marker, instead)
            words = marker.strip(" ,.")
            if words not in folded:
                folded.append(words)
    if message.endswith(". not found"):
        message = message[:-len(" not found")]
        folded.append("not found")
    return message, folded


def _postscript(message: str) -> str:
    return " ".join(text for marker, text in _POSTSCRIPTS if marker in message)

