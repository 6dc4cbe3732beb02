"""Exact Kubernetes resource quantities.

Mirrors k8s.io/apimachinery/pkg/api/resource/quantity.go: a quantity is parsed exactly (here as
a Fraction), anything finer than 1e-9 is rounded up to the next nano unit, and the integer views
round up away from zero: ``MilliValue`` for cpu, ``Value`` for everything else.
"""

from __future__ import annotations

import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_NUMBER = r"(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_RE = re.compile(
    _NUMBER + r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exp>[+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))$"
)
_NANO = 10**9
_cache: dict[str, int] = {}
#: the scheduler keeps every amount as an int64 (milli-cpu, bytes, counts)
INT64_MAX = 2**63 - 1
#: an exponent beyond this makes any non-zero quantity far larger than int64 (or smaller than a
#: nano, which rounds up to one); bounding it keeps "1e999999999" from computing 10**999999999
_MAX_EXPONENT = 64


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


def parse_nanos(text: object) -> int:
    """The quantity in units of 1e-9 (exact, since apimachinery keeps nano precision), cached."""
    if isinstance(text, str):
        cached = _cache.get(text)
        if cached is not None:
            return cached
    value = _parse_exact(text)
    # apimachinery keeps at most nano precision and rounds the rest up (away from zero).
    nanos = _ceil_away(value * _NANO)
    if isinstance(text, str) and len(_cache) < 65536:
        _cache[text] = nanos
    return nanos


def parse_quantity(text: object) -> Fraction:
    """Return the exact value of a quantity such as ``"250m"``, ``"1Gi"``, ``"1e3"`` or ``2``."""
    return Fraction(parse_nanos(text), _NANO)


def _parse_exact(text: object) -> Fraction:
    if isinstance(text, bool):
        raise QuantityError(f"quantities must be strings or numbers, not {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        text = repr(text)
    if not isinstance(text, str):
        raise QuantityError(f"quantities must be strings or numbers, not {text!r}")
    m = _RE.match(text.strip())
    if m is None or not text.strip():
        raise QuantityError(f"quantities must match the regular expression "
                            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}")
    try:
        value = Fraction(m.group("num"))
    except ValueError:  # more digits than int() converts
        raise QuantityError("unable to parse numeric part of quantity") from None
    if m.group("bin"):
        value *= _BINARY[m.group("bin")]
    elif m.group("exp") is not None:
        exp = int(m.group("exp")) if len(m.group("exp")) < 12 else (-1 if m.group("exp")[0] == "-" else 1) * 10**12
        if not value:
            exp = 0
        elif exp > _MAX_EXPONENT:
            exp = _MAX_EXPONENT  # still beyond int64: the caller reports it as too large
        elif exp < -_MAX_EXPONENT - len(m.group("num")):
            exp = -_MAX_EXPONENT - len(m.group("num"))  # still below a nano: rounds up to one
        value *= Fraction(10) ** exp
    else:
        value *= _DECIMAL[m.group("dec") or ""]
    if m.group("sign") == "-":
        value = -value
    return value


def fits_int64(amount: int) -> bool:
    """Whether an integer amount fits the scheduler's int64 counters."""
    return -INT64_MAX - 1 <= amount <= INT64_MAX


def nanos_to_milli(nanos: int) -> int:
    """MilliValue of a nano count, rounded up away from zero."""
    return -((-nanos) // 1_000_000) if nanos >= 0 else nanos // 1_000_000


def nanos_to_value(nanos: int) -> int:
    """Value of a nano count, rounded up away from zero."""
    return -((-nanos) // _NANO) if nanos >= 0 else nanos // _NANO


def _ceil_away(x: Fraction) -> int:
    """Round to an integer away from zero, as Quantity's scaled values do."""
    if x >= 0:
        return -((-x.numerator) // x.denominator)
    return x.numerator // x.denominator


def milli_value(text: object) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up away from zero (cpu)."""
    return nanos_to_milli(parse_nanos(text))


def value(text: object) -> int:
    """``Quantity.Value()``: whole units, rounded up away from zero (memory, pods, scalars)."""
    return nanos_to_value(parse_nanos(text))


def resource_value(name: str, text: object) -> int:
    """The integer the scheduler keeps for resource ``name``: millicores for cpu, units otherwise."""
    return milli_value(text) if name == "cpu" else value(text)


def format_milli_cpu(m: int) -> str:
    """Render millicores the way kubectl does: ``"2"`` for whole cores, ``"250m"`` otherwise."""
    return f"{m // 1000}" if m % 1000 == 0 else f"{m}m"


def format_bytes(b: int) -> str:
    """Render bytes with the largest exact binary suffix, falling back to one decimal place."""
    for suffix, size in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if b >= size and b % size == 0:
            return f"{b // size}{suffix}"
    for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if b >= size:
            return f"{b / size:.1f}{suffix}"
    return str(b)


def format_resource(name: str, amount: int) -> str:
    """Render an integer amount of resource ``name`` for people."""
    if name == "cpu":
        return format_milli_cpu(amount)
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return format_bytes(amount)
    return str(amount)


# ------------------------------------------------------------------ quantities with their format
# ResourceQuota's messages print quantities as apimachinery's Quantity.String() does, which
# depends on the format the quantity was written in (and keeps the first operand's through
# additions): "requested: requests.memory=1G" for a request of "1G", "512Mi" for "512Mi".

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"
_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


class Quantity:
    """An exact quantity (in nano units) with the format apimachinery keeps for it; immutable."""

    __slots__ = ("nanos", "format")

    def __init__(self, nanos: int, format: str = DECIMAL_SI) -> None:
        self.nanos, self.format = nanos, format

    @classmethod
    def parse(cls, text: object) -> Quantity:
        """ParseQuantity: the value, and the format its suffix implies (a binary suffix BinarySI, an
        exponent DecimalExponent, else DecimalSI)."""
        nanos = parse_nanos(text)
        m = _RE.match(text.strip()) if isinstance(text, str) else None
        fmt = DECIMAL_SI
        if m is not None and m.group("bin"):
            fmt = BINARY_SI
        elif m is not None and m.group("exp") is not None:
            fmt = DECIMAL_EXPONENT
        return cls(nanos, fmt)

    def add(self, other: Quantity) -> Quantity:
        """Quantity.Add: the sum keeps this one's format, or takes the other's when this is zero."""
        return Quantity(self.nanos + other.nanos, other.format if self.nanos == 0 else self.format)

    def sub(self, other: Quantity) -> Quantity:
        """Quantity.Sub: the difference keeps this one's format, or the other's when this is zero."""
        return Quantity(self.nanos - other.nanos, other.format if self.nanos == 0 else self.format)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and (self.nanos, self.format) == (other.nanos, other.format)

    def __hash__(self) -> int:
        return hash((self.nanos, self.format))

    def __repr__(self) -> str:
        return f"Quantity({self.string()!r})"

    def string(self) -> str:
        """Quantity.String(): the canonical form (CanonicalizeBytes). A BinarySI value below 1024 or
        not a whole number is written in DecimalSI; the decimal forms carry the largest exponent,
        a multiple of 3, that keeps the number whole."""
        n = self.nanos
        if n == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            if -1024 * _NANO < n < 1024 * _NANO or n % _NANO:
                fmt = DECIMAL_SI
            else:
                value, exp = n // _NANO, 0
                while value % 1024 == 0 and exp < len(_BINARY_SUFFIX) - 1:
                    value, exp = value // 1024, exp + 1
                return f"{value}{_BINARY_SUFFIX[exp]}"
        mantissa, exp = n, -9
        while mantissa % 10 == 0:
            mantissa, exp = mantissa // 10, exp + 1
        if exp % 3 == 1:
            mantissa, exp = mantissa * 10, exp - 1
        elif exp % 3 == 2:
            mantissa, exp = mantissa * 100, exp - 2
        if fmt == DECIMAL_EXPONENT:
            return f"{mantissa}e{exp}" if exp else str(mantissa)
        return f"{mantissa}{_DECIMAL_SUFFIX.get(exp, f'e{exp}')}"
