"""cel-go's optional types (as functions: cel-python's parser has no ``.?``/``[?`` syntax) and the
Kubernetes named-formats library (kplan/cel/formats.py): a table of selectors and what cel-go and the API
server's library (apiserver/pkg/cel/library/format.go) give for them."""

from __future__ import annotations

import pytest

from kplan.cel import CelError, compile_selector, device_activation, evaluate
from kplan.model.dra import Device

A = 'device.attributes["gpu.example.com"]'
DEV = Device("gpu-0", {"name": ("string", "gpu-0"), "bad": ("string", "GPU 0")}, {})
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                 "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
               "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
               "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                   "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                   "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")

TRUE = [
    # optional types
    ("optional.of and hasValue", "optional.of(1).hasValue() && !optional.none().hasValue()"),
    ("value", 'optional.of("x").value() == "x"'),
    ("orValue", "optional.none().orValue(2) == 2 && optional.of(3).orValue(2) == 3"),
    ("or", "optional.none().or(optional.of(4)).value() == 4 && optional.of(1).or(optional.of(4)).value() == 1"),
    ("ofNonZeroValue", 'optional.ofNonZeroValue("") == optional.none() && !optional.ofNonZeroValue(0).hasValue()'
                       " && !optional.ofNonZeroValue([]).hasValue() && !optional.ofNonZeroValue(false).hasValue()"
                       " && optional.ofNonZeroValue(1) == optional.of(1)"),
    ("optionals equal by value", "optional.of([1]) == optional.of([1]) && optional.of(1) != optional.of(2)"
                                 " && optional.none() == optional.none() && optional.of(1) != optional.none()"),
    ("an optional is unequal to a plain value", "dyn(optional.of(1)) != dyn(1) && dyn(1) != dyn(optional.of(1))"),
    ("optMap", "optional.of(2).optMap(x, x * 2) == optional.of(4) && optional.none().optMap(x, x * 2) == optional.none()"),
    ("optFlatMap", "optional.of(2).optFlatMap(x, optional.of(x + 1)).value() == 3"
                   " && !optional.none().optFlatMap(x, optional.of(x)).hasValue()"),
    ("an optional device attribute", f'optional.of({A}.name).orValue("") == "gpu-0"'),
    # format: valid strings give optional.none()
    ("dns1123Label valid", '!format.dns1123Label().validate("my-label-name").hasValue()'),
    ("dns1123Subdomain valid", 'format.dns1123Subdomain().validate("apiextensions.k8s.io") == optional.none()'),
    ("qualifiedName valid", 'format.qualifiedName().validate("apiextensions.k8s.io/v1beta1") == optional.none()'
                            ' && format.qualifiedName().validate("my.name") == optional.none()'),
    ("dns1123LabelPrefix valid", 'format.dns1123LabelPrefix().validate("my-label-prefix-") == optional.none()'),
    ("dns1123SubdomainPrefix valid", 'format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-") == optional.none()'),
    ("dns1035LabelPrefix valid", 'format.dns1035LabelPrefix().validate("my-label-prefix-") == optional.none()'),
    ("uri valid", 'format.uri().validate("http://example.com") == optional.none()'),
    ("uuid valid", 'format.uuid().validate("123e4567-e89b-12d3-a456-426614174000") == optional.none()'
                   ' && format.uuid().validate("123E4567E89B12D3A456426614174000") == optional.none()'),
    ("byte valid", 'format.byte().validate("aGVsbG8=") == optional.none()'),
    ("date valid", 'format.date().validate("2020-01-01") == optional.none() && format.date().validate("2024-02-29") == optional.none()'),
    ("datetime valid", 'format.datetime().validate("2020-01-01T00:00:00Z") == optional.none()'
                       ' && format.datetime().validate("2020-01-01t23:59:59.5+02:00") == optional.none()'),
    ("labelValue valid", 'format.labelValue().validate("my-cool-label-Value") == optional.none()'
                         ' && format.labelValue().validate("") == optional.none()'),
    ("a device attribute validated", f"!format.dns1123Label().validate({A}.name).hasValue()"),
    # format: invalid strings give the validators' messages
    ("dns1123Label invalid", f'format.dns1123Label().validate("contains a space").value() == ["{LABEL_MSG}"]'),
    ("dns1123Label with dots", 'format.dns1123Label().validate("a.b").value() == ["must not contain dots"]'),
    ("dns1123Label too long", 'format.dns1123Label().validate("' + "a" * 64 + '").value() == ["must be no more than 63 characters"]'),
    ("dns1123Subdomain invalid", f'format.dns1123Subdomain().validate("contains a space").value() == ["{SUBDOMAIN_MSG}"]'),
    ("dns1035Label invalid", f'format.dns1035Label().validate("contains a space").value() == ["{DNS1035_MSG}"]'),
    ("qualifiedName invalid", f'format.qualifiedName().validate("contains a space").value() == ["{QNAME_MSG}"]'),
    ("qualifiedName with an empty prefix", 'format.qualifiedName().validate("/a").value() == ["prefix part must be non-empty"]'),
    ("dns1123LabelPrefix invalid", f'format.dns1123LabelPrefix().validate("contains a space-").value() == ["{LABEL_MSG}"]'),
    ("dns1035LabelPrefix invalid", f'format.dns1035LabelPrefix().validate("contains a space-").value() == ["{DNS1035_MSG}"]'),
    ("labelValue invalid", f'format.labelValue().validate("my-cool-label-Value!!").value() == ["{LABEL_VALUE_MSG}"]'),
    ("uri invalid", 'format.uri().validate("example.com").value() == ["parse \\"example.com\\": invalid URI for request"]'),
    ("uuid invalid", 'format.uuid().validate("123e4567").value() == ["does not match the UUID format"]'),
    ("byte invalid", 'format.byte().validate("aGVsbG8").value() == ["invalid base64"] && format.byte().validate("").hasValue()'),
    ("date invalid", 'format.date().validate("2020-01-32").value() == ["invalid date"]'
                     ' && format.date().validate("2023-02-29").hasValue() && format.date().validate("2020-1-01").hasValue()'),
    ("datetime invalid", 'format.datetime().validate("2020-01-32T00:00:00Z").value() == ["invalid datetime"]'
                         ' && format.datetime().validate("2020-01-01T24:00:00Z").hasValue()'
                         ' && format.datetime().validate("2020-01-01T00:00:00").hasValue()'),
    ("a device attribute invalid", f'format.dns1123Label().validate({A}.bad).value().size() == 1'),
    # format.named
    ("named", 'format.named("uuid").hasValue() && !format.named("unknown").hasValue()'),
    ("named equals the constant", 'format.named("dns1123Label").value() == format.dns1123Label()'
                                  ' && format.dns1123Label() != format.dns1035Label()'),
    ("named then validate", 'format.named("date").value().validate("2021-01-01") == optional.none()'),
]


@pytest.mark.parametrize("expr", [c[1] for c in TRUE], ids=[c[0] for c in TRUE])
def test_optional_and_format_true(expr: str) -> None:
    assert evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV)) is True


ERRORS = [
    ("value of none", "optional.none().value() == 1", "optional.none() dereference"),
    ("or with a plain value", "optional.none().or(1) == 1", "no such overload"),
    ("hasValue of a plain value", f"{A}.name.hasValue()", "no such overload"),
    ("validate of a non-format", f'{A}.name.validate("x").hasValue()', "no such overload"),
    ("an optional as the result", "optional.of(true)", "could not be converted to bool"),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_optional_and_format_errors(expr: str, want: str) -> None:
    with pytest.raises(CelError) as e:
        evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV))
    assert want in str(e.value)


def test_optional_syntax_is_not_parsed() -> None:
    """cel-python's grammar has no optional field selection: kplan refuses such a selector on
    compile (cel-go accepts it); docs/modelled.md says so."""
    with pytest.raises(CelError, match="Syntax error"):
        compile_selector(f"{A}.?name.hasValue()")
