"""The change options ``kplan whatif`` and ``kplan sweep`` share, defined once: each option's
definition (the commands may word its help for what it means to them) and its parser.

--add-node, --remove-node, --cordon, --drain, --scale and --price, the node files and
``like=NODE[:COUNT]`` they read, the hint for a node name given where a file was expected, and the
node changes built from them. The commands import this module, never each other.

How to add an option that several commands share (``--autoscaler``, say): a factory here,
``def autoscaler_option(what: str = AUTOSCALER_HELP) -> Any: return typer.Option(..., "--autoscaler",
metavar=..., help=what, rich_help_panel=CHANGES)``, and a parser beside it if the value needs one
(raising InputError with the option and the value in the message); each command then declares
``autoscaler: str | None = chg.autoscaler_option()``. Options that every command has (inputs,
scheduler, output) are in kplan.cli.options. As there, nothing of the engine is imported at module
level (``kplan --help`` and completion start fast): parsers import what they need when called.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import typer

from kplan.cli.options import CHANGES
from kplan.errors import InputError

#: the most nodes one change adds, or --until-fit tries: Kubernetes supports clusters of up to
#: 5,000 nodes, and an unbounded count would keep kplan busy for ever
MAX_ADDED_NODES = 5000

ADD_NODE_HELP = ("Add nodes: a file of Node manifests, or like=NODE[:COUNT] for COUNT empty copies of NODE named "
                 "NODE-whatif-1, … Repeatable.")
REMOVE_NODE_HELP = ("Remove a node with its pods (pods owned by a controller other than a DaemonSet come back "
                    "pending). Repeatable.")
CORDON_HELP = "Mark a node unschedulable; its pods stay. Repeatable."
DRAIN_HELP = ("Cordon a node and evict its pods as kubectl drain does: DaemonSet pods and pods whose eviction "
              "would violate a PodDisruptionBudget stay, controller-owned pods come back pending, bare pods are "
              "deleted. Repeatable.")
SCALE_HELP = ("Scale a workload: KIND/[NAMESPACE/]NAME=REPLICAS (Deployment, ReplicaSet, StatefulSet, "
              "ReplicationController, Job). Repeatable.")
PRICE_HELP = "like=NODE=PRICE: the price of one node like NODE per hour (any unit). Repeatable."


def add_node_option(what: str = ADD_NODE_HELP, metavar: str = "FILE|like=NODE[:N]") -> Any:
    return typer.Option([], "--add-node", metavar=metavar, help=what, rich_help_panel=CHANGES)


def remove_node_option(what: str = REMOVE_NODE_HELP) -> Any:
    return typer.Option([], "--remove-node", metavar="NODE", help=what, rich_help_panel=CHANGES)


def cordon_option(what: str = CORDON_HELP) -> Any:
    return typer.Option([], "--cordon", metavar="NODE", help=what, rich_help_panel=CHANGES)


def drain_option(what: str = DRAIN_HELP) -> Any:
    return typer.Option([], "--drain", metavar="NODE", help=what, rich_help_panel=CHANGES)


def scale_option(what: str = SCALE_HELP, metavar: str = "KIND/NAME=N") -> Any:
    return typer.Option([], "--scale", metavar=metavar, help=what, rich_help_panel=CHANGES)


def price_option(what: str = PRICE_HELP, panel: str = CHANGES) -> Any:
    return typer.Option([], "--price", metavar="like=NODE=PRICE", help=what, rich_help_panel=panel)


# ------------------------------------------------------------------------------ parsers

def parse_like(value: str, option: str) -> tuple[str, int]:
    """``like=NODE[:COUNT]`` → (NODE, COUNT)."""
    spec = value[len("like="):]
    name, sep, count = spec.partition(":")
    if not name:
        raise InputError(f"{option} {value}: give like=NODE or like=NODE:COUNT")
    if not sep:
        return name, 1
    if not (count.isascii() and count.isdigit()) or int(count) < 1:
        raise InputError(f"{option} {value}: COUNT must be a whole number of at least 1")
    if len(count) > 6 or int(count) > MAX_ADDED_NODES:
        raise InputError(f"{option} {value}: COUNT must be at most {MAX_ADDED_NODES} (Kubernetes supports "
                         f"clusters of up to {MAX_ADDED_NODES} nodes)")
    return name, int(count)


def parse_prices(values: Sequence[str]) -> dict[str, Decimal]:
    """``like=NODE=PRICE`` → {NODE: PRICE}."""
    out: dict[str, Decimal] = {}
    for v in values:
        name, sep, price = v[len("like="):].rpartition("=") if v.startswith("like=") else ("", "", "")
        if not sep or not name:
            raise InputError(f"--price {v}: expected like=NODE=PRICE, e.g. like=gen-c-3=0.38")
        try:
            amount = Decimal(price)
        except InvalidOperation:
            raise InputError(f"--price {v}: PRICE must be a number, got {price!r}") from None
        if not amount.is_finite() or amount < 0:
            raise InputError(f"--price {v}: PRICE must be a number of at least 0")
        out[name] = amount
    return out


def read_nodes(path: str, option: str) -> list[Any]:
    """The Node objects of a file an option names (at least one; nothing else)."""
    from kplan.io.manifests import load_manifests
    from kplan.model.parse import parse_node

    nodes = []
    for obj in load_manifests([path]):
        if obj.doc.get("kind") != "Node":
            raise InputError(f"{obj.source}: {option} expects Node objects, found kind {obj.doc.get('kind')!r}")
        nodes.append(parse_node(obj.doc, obj.source))
    if not nodes:
        raise InputError(f"{path}: {option} found no Node in this file")
    return nodes


def looks_like_a_node_name(value: str) -> bool:
    """A value given where a file is expected that is no file and could be a node's name
    (``--add-node gen-c-3`` for ``like=gen-c-3``): judged once the cluster is loaded."""
    return not os.path.exists(value) and "/" not in value and not value.endswith((".yaml", ".yml", ".json", ".gz"))


def check_node_names(values: list[tuple[str, str]], inputs: Any) -> None:
    """The error for each (option, value) that named no file: with the hint ``like=NAME`` when a
    node of that name exists."""
    nodes = {n.name for n in inputs.nodes}
    for option, value in values:
        # --add-node gen-c-3:2 (whatif) and gen-c-3:1..4 (sweep) meant like=gen-c-3:2 and like=gen-c-3:1..4
        name = value.partition(":")[0] if option == "--add-node" else value
        hint = f"; node {name} exists: {option} like={value} takes empty copies of it" if name in nodes else ""
        raise InputError(f"{option} {value}: no such file or folder{hint}")


def build_changes(add_node: Sequence[str], remove_node: Sequence[str], cordon: Sequence[str],
                  drain: Sequence[str], unread: list[tuple[str, str]] | None = None) -> tuple[list[Any], list[Any]]:
    """The node changes, read (the --add-node files parsed) once, before anything is loaded: those
    that apply before the --scale deltas (added nodes) and those that apply after them."""
    from kplan.whatif.changes import AddNodes, CloneNode, CordonNode, DrainNode, RemoveNode

    first: list[Any] = []
    for v in add_node:
        if v.startswith("like="):
            name, count = parse_like(v, "--add-node")
            first.append(CloneNode(name, count))
        elif unread is not None and looks_like_a_node_name(v):
            unread.append(("--add-node", v))
        else:
            first.append(AddNodes(tuple(read_nodes(v, "--add-node"))))
    then: list[Any] = [CordonNode(n) for n in cordon]
    then += [DrainNode(n) for n in drain]
    then += [RemoveNode(n) for n in remove_node]
    return first, then
