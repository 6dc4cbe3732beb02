"""apimachinery's name and label rules (kplan/model/name_rules.py): what v1.34's
k8s.io/apimachinery/pkg/util/validation says of each string."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kplan.model.name_rules import (
    dns1035_label,
    dns1123_label,
    dns1123_subdomain,
    label_value,
    qualified_name,
)

LABEL_REGEX = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
               "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
               "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
NAME_REGEX = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
              "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
SUBDOMAIN_REGEX = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                   "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")

CASES = [
    ("a label", dns1123_label, "web-1", []),
    ("a label with dots: the subdomain's shape, so only the dots are named", dns1123_label, "a.b",
     ["must not contain dots"]),
    ("a label with an upper-case letter", dns1123_label, "Web", [LABEL_REGEX]),
    ("a label of 64 bytes", dns1123_label, "a" * 64, ["must be no more than 63 characters"]),
    ("a label's length in bytes", dns1123_label, "é" * 32, ["must be no more than 63 characters", LABEL_REGEX]),
    ("a label with a trailing newline", dns1123_label, "web\n", [LABEL_REGEX]),
    ("a subdomain", dns1123_subdomain, "example.com", []),
    ("a DNS-1035 label may not start with a digit", dns1035_label, "1abc",
     ["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
      "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
      "is '[a-z]([-a-z0-9]*[a-z0-9])?')"]),
    ("a qualified name", qualified_name, "topology.kubernetes.io/zone", []),
    ("an empty name part is also no match for the regex", qualified_name, "example.com/",
     ["name part must be non-empty", NAME_REGEX]),
    ("a prefix too long and of bad characters gets both", qualified_name, "A" * 254 + "/zone",
     ["prefix part must be no more than 253 characters", "prefix part " + SUBDOMAIN_REGEX]),
    ("an empty prefix", qualified_name, "/zone", ["prefix part must be non-empty"]),
    ("a label value may be empty", label_value, "", []),
    ("a label value of 64 bytes", label_value, "x" * 64, ["must be no more than 63 characters"]),
]


@pytest.mark.parametrize(("rule", "value", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(rule: Callable[[str], list[str]], value: str, want: list[str]) -> None:
    assert rule(value) == want
