"""Quantities (kplan/model/quantity.py) against apimachinery's resource.Quantity rules.

Reference 2.2: parsing is exact, anything finer than 1e-9 rounds up to the next nano unit,
``MilliValue`` (cpu) and ``Value`` (everything else) round up away from zero.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kplan.model.quantity import (
    QuantityError,
    format_bytes,
    format_milli_cpu,
    milli_value,
    parse_quantity,
    resource_value,
    value,
)

DECIMAL_SUFFIXES = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 10**3), "": Fraction(1),
                    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
                    "P": Fraction(10**15), "E": Fraction(10**18)}
BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
ALL_SUFFIXES = {**DECIMAL_SUFFIXES, **{k: Fraction(v) for k, v in BINARY_SUFFIXES.items()}}
NANO = 10**9


def ceil_away(x: Fraction) -> int:
    """The reference's rounding, written independently of the module under test."""
    n = -((-abs(x.numerator)) // x.denominator)
    return n if x >= 0 else -n


def nano_ceil(x: Fraction) -> Fraction:
    return Fraction(ceil_away(x * NANO), NANO)


# ------------------------------------------------------------------------------ worked rows

@pytest.mark.parametrize("text, exact", [
    pytest.param("250m", Fraction(1, 4), id="250m is a quarter"),
    pytest.param("1Gi", Fraction(2**30), id="1Gi is 2^30"),
    pytest.param("1G", Fraction(10**9), id="1G is 10^9"),
    pytest.param("1.5Gi", Fraction(3 * 2**29), id="a fraction with a binary suffix is exact"),
    pytest.param("1e3", Fraction(1000), id="a lower-case exponent multiplies by a power of ten"),
    pytest.param("1E3", Fraction(1000), id="an upper-case exponent multiplies by a power of ten"),
    pytest.param("1E", Fraction(10**18), id="a bare E is the exa suffix, not an exponent"),
    pytest.param("5e-3", Fraction(5, 1000), id="a negative exponent divides"),
    pytest.param("2e+2", Fraction(200), id="an explicit plus in the exponent is accepted"),
    pytest.param("+3", Fraction(3), id="a leading plus sign is accepted"),
    pytest.param("-1.5", Fraction(-3, 2), id="a negative value keeps its sign"),
    pytest.param(".5", Fraction(1, 2), id="a number may start at the decimal point"),
    pytest.param("1.", Fraction(1), id="a number may end at the decimal point"),
    pytest.param("007", Fraction(7), id="leading zeros are ignored"),
    pytest.param("0.0000000001", Fraction(1, NANO), id="below a nano unit rounds up to one nano"),
    pytest.param("1.0000000001", Fraction(NANO + 1, NANO), id="a tail below nano precision rounds up"),
    pytest.param("-0.0000000001", Fraction(-1, NANO), id="negative sub-nano values round away from zero"),
    pytest.param(" 2Gi ", Fraction(2 * 2**30), id="surrounding spaces are trimmed as JSON decoding does"),
    pytest.param(3, Fraction(3), id="a YAML integer is a quantity"),
    pytest.param(0.5, Fraction(1, 2), id="a YAML float is read by its shortest decimal form"),
])
def test_parse_quantity(text: object, exact: Fraction) -> None:
    assert parse_quantity(text) == exact


@pytest.mark.parametrize("text, millis, units", [
    pytest.param("100m", 100, 1, id="100m is 100 millicores and rounds up to one whole unit"),
    pytest.param("1", 1000, 1, id="one core is 1000 millicores"),
    pytest.param("0.1m", 1, 1, id="a tenth of a millicore rounds up to one millicore"),
    pytest.param("1n", 1, 1, id="one nano rounds up to one milli and to one unit"),
    pytest.param("1500m", 1500, 2, id="1.5 rounds up to 2 units"),
    pytest.param("1Ki", 1024000, 1024, id="binary suffixes are exact units"),
    pytest.param("0", 0, 0, id="zero stays zero"),
    pytest.param("-1500m", -1500, -2, id="negative values round away from zero"),
    pytest.param("-0.1m", -1, -1, id="small negative values round away from zero too"),
])
def test_milli_value_and_value_round_up(text: str, millis: int, units: int) -> None:
    assert milli_value(text) == millis
    assert value(text) == units


@pytest.mark.parametrize("name, text, expected", [
    pytest.param("cpu", "250m", 250, id="cpu is kept in millicores"),
    pytest.param("memory", "1.5Ki", 1536, id="memory is kept in bytes"),
    pytest.param("memory", "100m", 1, id="memory below a byte rounds up to one byte"),
    pytest.param("example.com/gpu", "2", 2, id="extended resources are kept in units"),
    pytest.param("pods", "110", 110, id="the pod count is kept in units"),
])
def test_resource_value_picks_the_scale_by_name(name: str, text: str, expected: int) -> None:
    assert resource_value(name, text) == expected


@pytest.mark.parametrize("text", [
    pytest.param("", id="an empty string"),
    pytest.param("abc", id="letters that are no suffix"),
    pytest.param("1.2.3", id="two decimal points"),
    pytest.param("1Ki2", id="digits after a binary suffix"),
    pytest.param("1e", id="an exponent marker without digits"),
    pytest.param("1ki", id="a lower-case binary suffix"),
    pytest.param("1K", id="an upper-case K alone"),
    pytest.param("1 Gi", id="a space between number and suffix"),
    pytest.param("1Mb", id="a unit written the way humans do"),
    pytest.param("1e1.5", id="a fractional exponent"),
    pytest.param("--1", id="two signs"),
    pytest.param("0x10", id="hexadecimal"),
    pytest.param("1_000", id="digit separators"),
    pytest.param("1,5", id="a decimal comma"),
    pytest.param("1m5", id="digits after a decimal suffix"),
    pytest.param(True, id="a boolean"),
    pytest.param(None, id="null"),
    pytest.param([1], id="a list"),
])
def test_invalid_quantities_are_rejected(text: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


# ------------------------------------------------------------------------------ properties

mantissas = st.integers(min_value=0, max_value=10**12)
fraction_digits = st.text(alphabet="0123456789", min_size=0, max_size=12)


@given(mantissas, st.sampled_from(sorted(ALL_SUFFIXES)))
def test_every_suffix_scales_an_integer_exactly(n: int, suffix: str) -> None:
    assert parse_quantity(f"{n}{suffix}") == nano_ceil(n * ALL_SUFFIXES[suffix])


@given(mantissas, fraction_digits, st.sampled_from(sorted(ALL_SUFFIXES)), st.sampled_from(["", "+", "-"]))
def test_decimal_numbers_with_any_suffix(n: int, digits: str, suffix: str, sign: str) -> None:
    text = f"{sign}{n}.{digits}{suffix}"
    exact = Fraction(f"{n}.{digits or '0'}") * ALL_SUFFIXES[suffix]
    if sign == "-":
        exact = -exact
    assert parse_quantity(text) == nano_ceil(exact)


@given(st.integers(min_value=-(10**6), max_value=10**6), st.integers(min_value=-12, max_value=12),
       st.sampled_from(["e", "E"]))
def test_exponent_forms(m: int, exponent: int, marker: str) -> None:
    exact = Fraction(m) * Fraction(10) ** exponent
    assert parse_quantity(f"{m}{marker}{exponent}") == nano_ceil(exact)


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_nano_quantities_round_trip_and_cpu_rounds_up_to_millicores(nanos: int) -> None:
    q = parse_quantity(f"{nanos}n")
    assert q == Fraction(nanos, NANO)
    assert milli_value(f"{nanos}n") == ceil_away(Fraction(nanos, 10**6))
    assert value(f"{nanos}n") == ceil_away(Fraction(nanos, NANO))


@given(st.integers(min_value=0, max_value=10**12))
def test_value_is_the_ceiling_of_millis(millis: int) -> None:
    assert value(f"{millis}m") == -(-millis // 1000)
    assert milli_value(f"{millis}m") == millis


@given(st.integers(min_value=0, max_value=2**62))
def test_formatted_bytes_parse_back_when_exact(b: int) -> None:
    text = format_bytes(b)
    if "." not in text:
        assert value(text) == b


@given(st.integers(min_value=0, max_value=10**9))
def test_formatted_millicores_parse_back(m: int) -> None:
    assert milli_value(format_milli_cpu(m)) == m


BAD_CHARS = "xZb_,#/@ "


@given(mantissas, st.sampled_from(sorted(ALL_SUFFIXES)), st.sampled_from(list(BAD_CHARS)), st.data())
def test_a_foreign_character_anywhere_inside_is_rejected(n: int, suffix: str, bad: str, data: st.DataObject) -> None:
    # apimachinery consumes only sign, digits, one ".", suffix letters and exponent digits;
    # any other character stops the scan before the end, which is ErrFormatWrong.
    text = f"{n}{suffix}"
    at = data.draw(st.integers(min_value=1, max_value=len(text) - 1)) if len(text) > 1 else 1
    broken = text[:at] + bad + text[at:]
    assume(broken.strip() == broken)  # JSON decoding trims surrounding spaces
    with pytest.raises(QuantityError):
        parse_quantity(broken)
