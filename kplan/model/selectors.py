"""Label selectors and node selector terms, compiled once and matched many times.

Mirrors k8s.io/apimachinery/pkg/labels/selector.go (label selectors) and
k8s.io/component-helpers/scheduling/corev1/nodeaffinity (node selector terms).
A ``None`` label selector means "nil": it matches nothing, as the scheduler's plugins treat it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kplan.model.shared import share_frozen_dataclasses

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
LABEL_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
NODE_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): optional sign and decimal digits only."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    n = int(text)
    if not -(2**63) <= n < 2**63:
        return None
    return n


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key operator values`` expression of a label or node selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == IN:
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == NOT_IN:
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GT, LT):
            v = labels.get(self.key)
            if v is None or len(self.values) != 1:
                return False
            have, want = parse_int64(v), parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GT else have < want
        return False


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A non-nil ``metav1.LabelSelector``; empty (no labels, no expressions) matches everything."""

    match_labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        for k, v in self.match_labels:
            if labels.get(k) != v:
                return False
        for r in self.expressions:
            if not r.matches(labels):
                return False
        return True

    def with_requirements(self, extra: tuple[Requirement, ...]) -> LabelSelector:
        """This selector ANDed with more requirements (matchLabelKeys merging)."""
        return LabelSelector(self.match_labels, self.expressions + extra)

    def requirements(self) -> tuple[Requirement, ...]:
        """All terms as requirements (matchLabels become ``In`` with one value)."""
        return tuple(Requirement(k, IN, (v,)) for k, v in self.match_labels) + self.expressions


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """A nil selector matches nothing; otherwise the selector decides."""
    return selector is not None and selector.matches(labels)


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One term of ``nodeSelectorTerms``: expressions and fields, all of which must hold."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()
    #: a term with an unparseable requirement never matches (nodeaffinity.go)
    valid: bool = True

    @property
    def is_empty(self) -> bool:
        return not self.match_expressions and not self.match_fields

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if not self.valid or self.is_empty:
            return False
        for r in self.match_expressions:
            if not r.matches(labels):
                return False
        for f in self.match_fields:
            if f.key != "metadata.name" or len(f.values) != 1:
                return False
            if f.operator == IN:
                if node_name != f.values[0]:
                    return False
            elif f.operator == NOT_IN:
                if node_name == f.values[0]:
                    return False
            else:
                return False
        return True


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """``requiredDuringSchedulingIgnoredDuringExecution``: an OR of terms."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        return any(t.matches(node_name, labels) for t in self.terms)


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    weight: int
    term: NodeSelectorTerm


share_frozen_dataclasses(globals())
