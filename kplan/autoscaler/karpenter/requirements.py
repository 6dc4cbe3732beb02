"""Karpenter's requirement algebra: sigs.k8s.io/karpenter v1.15.0 pkg/scheduling/requirement.go
and requirements.go.

A requirement is a set of allowed values for one label key: either the listed values
(``complement`` false: In, DoesNotExist when empty) or everything but them (``complement`` true:
NotIn, Exists), optionally bounded by integer bounds (Gt/Lt/Gte/Lte, kept as inclusive ``gte`` and
``lte``), and an optional ``min_values`` (the instance-type flexibility a NodePool asks for).
Requirements are a map key → requirement; adding one intersects it with the one already there.

Deviation: ``Requirement.Any`` picks a random value upstream; kplan picks the smallest, which is the
only value wherever Karpenter reads it (an offering's zone and capacity type).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kplan.model.karpenter import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    GTE,
    IN,
    LT,
    LTE,
    NORMALIZED_LABELS,
    NOT_IN,
)
from kplan.model.karpenter import Requirement as SpecRequirement
from kplan.model.objects import Pod
from kplan.model.selectors import NodeSelectorTerm

_MAX_INT = 2**63 - 1


def _int(text: str) -> int | None:
    """strconv.Atoi."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    n = int(text)
    return n if -(2**63) <= n <= _MAX_INT else None


def within_bounds(value: str, gte: int | None, lte: int | None) -> bool:
    """withinBounds: unbounded keys take any value; bounded ones only integers within them."""
    if gte is None and lte is None:
        return True
    n = _int(value)
    if n is None:
        return False
    return (gte is None or n >= gte) and (lte is None or n <= lte)


@dataclass(frozen=True, slots=True)
class Req:
    """One key's requirement (scheduling.Requirement)."""

    key: str
    complement: bool
    values: frozenset[str]
    gte: int | None = None
    lte: int | None = None
    min_values: int | None = None

    @property
    def operator(self) -> str:
        """Operator(): NotIn/Exists for complements (Exists when nothing is excluded), In or
        DoesNotExist otherwise."""
        if self.complement:
            return NOT_IN if self.values else EXISTS
        return IN if self.values else DOES_NOT_EXIST

    def __len__(self) -> int:
        return _MAX_INT - len(self.values) if self.complement else len(self.values)

    def has(self, value: str) -> bool:
        if self.complement:
            return value not in self.values and within_bounds(value, self.gte, self.lte)
        return value in self.values and within_bounds(value, self.gte, self.lte)

    def any_value(self) -> str:
        """Any(): a value the requirement allows (the smallest listed one for In)."""
        op = self.operator
        if op == IN:
            return min(self.values)
        if op in (NOT_IN, EXISTS):
            low = self.gte if self.gte is not None else 0
            n = low
            while not self.has(str(n)):
                n += 1
            return str(n)
        return ""

    def intersection(self, other: Req) -> Req:
        """Intersection: the values both allow; bounds survive only on a complement."""
        complement = self.complement and other.complement
        gte = _max(self.gte, other.gte)
        lte = _min(self.lte, other.lte)
        min_values = _max(self.min_values, other.min_values)
        if gte is not None and lte is not None and gte > lte:
            return Req(self.key, False, frozenset(), None, None, min_values)
        if self.complement and other.complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if within_bounds(v, gte, lte))
        if not complement:
            gte, lte = None, None
        return Req(self.key, complement, values, gte, lte, min_values)

    def has_intersection(self, other: Req) -> bool:
        gte = _max(self.gte, other.gte)
        lte = _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and within_bounds(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and within_bounds(v, gte, lte) for v in self.values)
        return any(v in other.values and within_bounds(v, gte, lte) for v in self.values)

    def with_min_values(self, n: int | None) -> Req:
        return Req(self.key, self.complement, self.values, self.gte, self.lte, n)

    def __str__(self) -> str:
        """String(): ``key Op [values]`` (at most five values shown), bounds, minValues."""
        op = self.operator
        if op in (EXISTS, DOES_NOT_EXIST):
            s = f"{self.key} {op}"
        else:
            values = sorted(self.values)
            if len(values) > 5:
                values = values[:5] + [f"and {len(values) - 5} others"]
            s = f"{self.key} {op} [{' '.join(values)}]"
        if self.gte is not None:
            s += f" >={self.gte}"
        if self.lte is not None:
            s += f" <={self.lte}"
        if self.min_values is not None:
            s += f" minValues {self.min_values}"
        return s

    def spec(self) -> tuple[SpecRequirement, ...]:
        """NodeSelectorRequirements(): back to the API form (a bounded pair becomes Gte and Lte)."""
        if self.gte is not None and self.lte is not None:
            return (SpecRequirement(self.key, GTE, (str(self.gte),), self.min_values),
                    SpecRequirement(self.key, LTE, (str(self.lte),), self.min_values))
        if self.gte is not None:
            return (SpecRequirement(self.key, GTE, (str(self.gte),), self.min_values),)
        if self.lte is not None:
            return (SpecRequirement(self.key, LTE, (str(self.lte),), self.min_values),)
        return (SpecRequirement(self.key, self.operator, tuple(sorted(self.values)), self.min_values),)


def _max(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _min(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def new_requirement(key: str, operator: str, values: Iterable[str] = (), min_values: int | None = None) -> Req:
    """NewRequirementWithFlexibility: the key normalised, Gt/Lt turned into inclusive bounds."""
    key = NORMALIZED_LABELS.get(key, key)
    vals = tuple(values)
    if operator == IN:
        return Req(key, False, frozenset(vals), None, None, min_values)
    if operator == DOES_NOT_EXIST:
        return Req(key, False, frozenset(), None, None, min_values)
    if operator == NOT_IN:
        return Req(key, True, frozenset(vals), None, None, min_values)
    gte = lte = None
    n = _int(vals[0]) if vals else None
    if n is not None:
        if operator == GT:
            if n == _MAX_INT:
                return Req(key, False, frozenset(), None, None, None)
            gte = n + 1
        elif operator == LT:
            lte = n - 1
        elif operator == GTE:
            gte = n
        elif operator == LTE:
            lte = n
    return Req(key, True, frozenset(), gte, lte, min_values)


def exists(key: str) -> Req:
    return Req(key, True, frozenset())


class Requirements:
    """A map key → requirement (scheduling.Requirements); ``add`` intersects."""

    __slots__ = ("_reqs",)

    def __init__(self, reqs: Iterable[Req] = ()) -> None:
        self._reqs: dict[str, Req] = {}
        self.add(*reqs)

    def copy(self) -> Requirements:
        out = Requirements()
        out._reqs = dict(self._reqs)
        return out

    def add(self, *reqs: Req) -> None:
        for r in reqs:
            existing = self._reqs.get(r.key)
            self._reqs[r.key] = r.intersection(existing) if existing is not None else r

    def put(self, r: Req) -> None:
        """Replace a key's requirement (SetMinValues on the stored one)."""
        self._reqs[r.key] = r

    def remove(self, key: str) -> None:
        self._reqs.pop(key, None)

    def has(self, key: str) -> bool:
        return key in self._reqs

    def get(self, key: str) -> Req:
        """Get: an absent key allows anything (Exists)."""
        r = self._reqs.get(key)
        return r if r is not None else exists(key)

    def keys(self) -> Iterable[str]:
        return self._reqs.keys()

    def values(self) -> Iterable[Req]:
        return self._reqs.values()

    def __len__(self) -> int:
        return len(self._reqs)

    def __contains__(self, key: object) -> bool:
        return key in self._reqs

    def has_min_values(self) -> bool:
        return any(r.min_values is not None for r in self._reqs.values())

    def compatible(self, incoming: Requirements, allow_undefined: frozenset[str] = frozenset()) -> str | None:
        """Compatible: None when ``incoming`` can be met here, else the reason. A key ``incoming``
        requires to exist must be defined here (unless allowed undefined); then every shared key
        must intersect."""
        for key, r in incoming._reqs.items():
            if key in allow_undefined:
                continue
            if key in self._reqs or r.operator in (NOT_IN, DOES_NOT_EXIST):
                continue
            return f'label "{key}" does not have known values{label_hint(self, key, allow_undefined)}'
        return self.intersects(incoming)

    def is_compatible(self, incoming: Requirements, allow_undefined: frozenset[str] = frozenset()) -> bool:
        """``compatible(...) is None`` without writing the reason."""
        mine = self._reqs
        for key, r in incoming._reqs.items():
            if key not in allow_undefined and key not in mine and r.operator not in (NOT_IN, DOES_NOT_EXIST):
                return False
        small, large = (mine, incoming._reqs) if len(mine) <= len(incoming._reqs) else (incoming._reqs, mine)
        for key in small:
            if key not in large:
                continue
            existing, other = mine[key], incoming._reqs[key]
            if existing.has_intersection(other):
                continue
            if other.operator in (NOT_IN, DOES_NOT_EXIST) and existing.operator in (NOT_IN, DOES_NOT_EXIST):
                continue
            return False
        return True

    def intersects(self, incoming: Requirements) -> str | None:
        """Intersects: None when every shared key has a common value (two keys that both only
        exclude values never conflict); else each conflict, ``key K, <incoming> not in <existing>``.
        Upstream joins them in map order; kplan sorts them by key."""
        small, large = (self._reqs, incoming._reqs) if len(self._reqs) <= len(incoming._reqs) else \
            (incoming._reqs, self._reqs)
        errors = []
        for key in sorted(k for k in small if k in large):
            existing, other = self._reqs[key], incoming._reqs[key]
            if existing.has_intersection(other):
                continue
            if other.operator in (NOT_IN, DOES_NOT_EXIST) and existing.operator in (NOT_IN, DOES_NOT_EXIST):
                continue
            errors.append(f"key {key}, {other} not in {existing}")
        return "; ".join(errors) if errors else None

    def labels(self) -> dict[str, str]:
        """The single-valued In requirements as labels (NodeClaim.Labels' rule)."""
        return {k: next(iter(r.values)) for k, r in self._reqs.items() if r.operator == IN and len(r.values) == 1}

    def spec(self) -> tuple[SpecRequirement, ...]:
        """NodeSelectorRequirements, sorted by key for stable output."""
        return tuple(s for k in sorted(self._reqs) for s in self._reqs[k].spec())

    def __str__(self) -> str:
        """String(): the requirements sorted as text, restricted labels (hostname) left out."""
        return ", ".join(sorted(str(r) for r in self._reqs.values() if r.key != "kubernetes.io/hostname"))


def label_hint(reqs: Requirements, key: str, allow_undefined: frozenset[str]) -> str:
    """labelHint: a likely intended key, when one contains ``key`` or ends like it."""
    suffix = key.split("/", 1)[1] if "/" in key else key
    for known in sorted(allow_undefined):
        if key in known or known.endswith(suffix):
            return f' (typo of "{known}"?)'
    for existing in reqs.keys():
        if key in existing or existing.endswith(suffix):
            return f' (typo of "{existing}"?)'
    return ""


def from_spec(reqs: Iterable[SpecRequirement]) -> Requirements:
    """NewNodeSelectorRequirementsWithMinValues."""
    return Requirements(new_requirement(r.key, r.operator, r.values, r.min_values) for r in reqs)


def from_labels(labels: Mapping[str, str]) -> Requirements:
    """NewLabelRequirements: each label an In requirement of its one value."""
    return Requirements(Req(NORMALIZED_LABELS.get(k, k), False, frozenset((v,))) for k, v in labels.items())


def from_term(term: NodeSelectorTerm) -> list[Req]:
    return [new_requirement(r.key, r.operator, r.values) for r in term.match_expressions]


def pod_requirements(pod: Pod, *, strict: bool = False,
                     required_terms: tuple[NodeSelectorTerm, ...] | None = None,
                     preferred: tuple[NodeSelectorTerm, ...] | None = None) -> Requirements:
    """newPodRequirements: the node selector, the heaviest preferred term (unless ``strict``) and
    the FIRST required node-affinity term (Karpenter relaxes the others one by one). The terms may
    be given as the preference relaxation left them."""
    out = from_labels(pod.node_selector)
    if required_terms is None:
        required_terms = pod.required_node_affinity.terms if pod.required_node_affinity is not None else ()
    if preferred is None:
        ordered = sorted(pod.preferred_node_affinity, key=lambda t: -t.weight)
        preferred = tuple(t.term for t in ordered)
    if not strict and preferred:
        out.add(*from_term(preferred[0]))
    if required_terms:
        out.add(*from_term(required_terms[0]))
    return out
