"""Reads ``--node-groups FILE`` (YAML or JSON; "-" for stdin) into node groups."""

from __future__ import annotations

from kplan.errors import InputError
from kplan.io.manifests import parse_documents, read_text
from kplan.model.clusterautoscaler import NodeGroup
from kplan.model.parse_clusterautoscaler import parse_node_groups


def read_node_groups(path: str) -> tuple[NodeGroup, ...]:
    docs = [d for d in parse_documents(read_text(path), path) if d is not None]
    if len(docs) != 1:
        raise InputError(f"{path}: expected one document with a list nodeGroups:, got {len(docs)}")
    return parse_node_groups(docs[0], path)
