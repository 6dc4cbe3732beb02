"""cel-go's ``<string>.format(<list>)`` as the strings extension at version 2 has it, the version
Kubernetes 1.34 configures (apiserver cel/environment/base.go: ``ext.Strings(ext.StringsVersion(2))``).
Versions below 4 use cel-go's first formatter (ext/formatting.go) with the locale ``en_US``; the
cel-spec formatter of version 4 and later is not the one Kubernetes 1.34 runs.

Clauses: ``%s`` (any CEL value but objects: lists and maps spelt as CEL literals, map entries
sorted by their printed keys), ``%d`` (int, uint), ``%f`` and ``%.Nf`` (double, or the strings
``"NaN"``, ``"Infinity"``, ``"-Infinity"``; six places unless given; en_US digit grouping), ``%e``
(as ``%f``, printed the way golang.org/x/text prints scientific numbers for en_US:
``2.718280 × 10⁰⁰``; cel-go passes the precision as a width, so ``%.Ne`` always has six places),
``%b`` (int, uint, bool), ``%x``/``%X`` (int, uint, and the UTF-8 bytes of a string or bytes),
``%o`` (int, uint) and ``%%``. Failures are runtime errors with cel-go's texts; arguments left
unused are no runtime error (cel-go's compile-time validator reports them, see check.py).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from celpy import celtypes

from kplan.cel.values import LibraryError

#: the default number of places of ``%f`` and ``%e`` (cel-go's defaultPrecision)
DEFAULT_PRECISION = 6

_STRING_CLAUSE_TYPES = ("strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps")


class FormatError(Exception):
    """A clause's failure; ``str`` is cel-go's text before the "error during formatting" prefix."""


# ------------------------------------------------------------------------------ type names

#: the names cel-go's TypeName gives the value kinds of kplan's evaluator
_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (celtypes.BoolType, "bool"), (celtypes.IntType, "int"), (celtypes.UintType, "uint"),
    (celtypes.DoubleType, "double"), (celtypes.StringType, "string"), (celtypes.BytesType, "bytes"),
    (celtypes.ListType, "list"), (celtypes.MapType, "map"), (celtypes.NullType, "null_type"),
    (type(None), "null_type"), (celtypes.TimestampType, "google.protobuf.Timestamp"),
    (celtypes.DurationType, "google.protobuf.Duration"), (type, "type"),
)

#: the Kubernetes and cel-go object types kplan models, by their Python class name
_OBJECT_NAMES = {"Quantity": "kubernetes.Quantity", "Semver": "kubernetes.Semver", "IPAddr": "net.IP",
                 "CIDR": "net.CIDR", "URL": "kubernetes.URL", "Optional": "optional_type",
                 "Format": "kubernetes.NamedFormat"}


def type_name(v: Any) -> str:
    """The CEL type name of a value, as cel-go's errors print it."""
    for kind, name in _TYPE_NAMES:
        if isinstance(v, kind):
            return name
    cls = type(v).__name__
    return _OBJECT_NAMES.get(cls, cls)


def _is_null(v: Any) -> bool:
    return v is None or isinstance(v, celtypes.NullType)


def _is_int(v: Any) -> bool:
    return isinstance(v, celtypes.IntType) and not isinstance(v, celtypes.BoolType)


# ------------------------------------------------------------------------- Go's number text

def _shortest(x: float) -> tuple[str, int]:
    """The shortest decimal digits that give ``x`` back, and the exponent of the first digit."""
    d = Decimal(repr(abs(x)))
    digits = "".join(str(n) for n in d.as_tuple().digits).lstrip("0") or "0"
    if digits == "0":
        return "0", 0
    digits = digits.rstrip("0") or "0"
    return digits, d.adjusted()


def go_g(x: float) -> str:
    """Go's ``%g`` of a float64 with no precision (cel-go's double-to-string conversion): the
    shortest digits, in exponent form when the exponent is below -4 or at least 6."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0"
    digits, exp = _shortest(x)
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    whole = digits[:exp + 1].ljust(exp + 1, "0")
    frac = digits[exp + 1:]
    return sign + whole + ("." + frac if frac else "")


def go_fixed_shortest(x: float) -> str:
    """Go's ``strconv.FormatFloat(x, 'f', -1, 64)``: the shortest digits, never an exponent."""
    return format(Decimal(repr(x)).normalize(), "f")


def _go_f(x: float, places: int) -> str:
    """Go's ``%.Nf`` (cel-go prints doubles inside lists and maps so): NaN, +Inf and -Inf spelt
    as Go spells them."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return format(x, f".{places}f")


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote): printable characters as they are, the C escapes,
    ``\\xHH`` below a space, ``\\uHHHH`` or ``\\UHHHHHHHH`` for other unprintable characters."""
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
             "\\": "\\\\", '"': '\\"'}
    out = ['"']
    for c in s:
        if c in named:
            out.append(named[c])
        elif c.isprintable():
            out.append(c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    out.append('"')
    return "".join(out)


# ---------------------------------------------------------- golang.org/x/text numbers, en_US

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _group(whole: str) -> str:
    """en_US grouping of the integer digits: 1,234,567."""
    head = len(whole) % 3 or 3
    parts = [whole[:head]] + [whole[i:i + 3] for i in range(head, len(whole), 3)]
    return ",".join(parts)


def _en_fixed(x: float, places: int) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    text = format(abs(x), f".{places}f")
    whole, _, frac = text.partition(".")
    sign = "-" if x < 0 else ""  # x/text marks a negative number, not a negative zero
    return sign + _group(whole) + ("." + frac if frac else "")


def _en_scientific(x: float, width: int) -> str:
    if math.isnan(x):
        text = "NaN"
    elif math.isinf(x):
        text = "∞" if x > 0 else "-∞"
    else:
        mantissa, _, exp = format(abs(x), f".{DEFAULT_PRECISION}e").partition("e")
        exponent = int(exp)
        sign = "-" if x < 0 else ""
        shown = ("-" if exponent < 0 else "") + f"{abs(exponent):02d}"
        text = f"{sign}{mantissa}\u202f×\u202f10{shown.translate(_SUPERSCRIPT)}"
    return text.rjust(width)  # the precision given reaches x/text as a width (padded in runes)


# -------------------------------------------------------------------------------- %s

def _timestamp_text(t: datetime.datetime) -> str:
    """Go's RFC 3339 with nanoseconds (cel-go's timestamp-to-string): fraction trimmed, ``Z`` for UTC."""
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if t.microsecond:
        text += "." + f"{t.microsecond:06d}".rstrip("0")
    offset = t.utcoffset() or datetime.timedelta(0)
    if not offset:
        return text + "Z"
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    return text + f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _duration_text(d: datetime.timedelta) -> str:
    """cel-go's duration-to-string: the seconds, shortest, then ``s`` (``duration("1h")`` is ``3600s``)."""
    micros = (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds
    whole, part = divmod(abs(micros), 1_000_000)  # Go's Seconds(): whole seconds + nanoseconds / 1e9
    sign = -1 if micros < 0 else 1
    return go_fixed_shortest(sign * (float(whole) + float(part * 1000) / 1e9)) + "s"


def _bytes_text(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError('could not convert argument "invalid UTF-8 in bytes, cannot convert to string" '
                          "to string") from None


def format_string(v: Any) -> str:
    """The ``%s`` clause: cel-go's FormatString."""
    if isinstance(v, celtypes.ListType):
        return "[" + ", ".join(_literal(item) for item in v) + "]"
    if isinstance(v, celtypes.MapType):
        return _map_text(v)
    if _is_null(v):
        return "null"
    if isinstance(v, celtypes.BoolType):
        return "true" if v else "false"
    if isinstance(v, (celtypes.IntType, celtypes.UintType)):
        return str(int(v))
    if isinstance(v, celtypes.DoubleType):
        return go_g(float(v))
    if isinstance(v, celtypes.StringType):
        return str(v)
    if isinstance(v, celtypes.BytesType):
        return _bytes_text(bytes(v))
    if isinstance(v, celtypes.TimestampType):
        return _timestamp_text(v)
    if isinstance(v, celtypes.DurationType):
        return _duration_text(v)
    if isinstance(v, type):
        return _type_name_of_type(v)
    raise FormatError(f"{CLAUSE_MESSAGES['s']}, was given {type_name(v)}")


def _type_name_of_type(t: type) -> str:
    """A type value (``type(x)``) printed: the name of the type it stands for."""
    if issubclass(t, type):
        return "type"
    for kind, name in _TYPE_NAMES:
        if t is kind or (kind is not type and isinstance(kind, type) and issubclass(t, kind)):
            return name
    return _OBJECT_NAMES.get(t.__name__, t.__name__)


def _literal(v: Any) -> str:
    """A list element or map value printed as a CEL literal (cel-go's clauseForType and quoteForCEL)."""
    if isinstance(v, celtypes.BoolType) or _is_null(v) or isinstance(v, type):
        return format_string(v)
    if isinstance(v, (celtypes.IntType, celtypes.UintType)):
        return str(int(v))
    if isinstance(v, celtypes.StringType):
        return go_quote(str(v))
    if isinstance(v, celtypes.BytesType):
        return "b" + go_quote(_bytes_text(bytes(v)))
    if isinstance(v, celtypes.TimestampType):
        return f'timestamp("{_timestamp_text(v)}")'
    if isinstance(v, celtypes.DurationType):
        return f'duration("{_duration_text(v)}")'
    if isinstance(v, celtypes.DoubleType):
        x = float(v)
        text = _go_f(x, DEFAULT_PRECISION)
        return go_quote(text) if math.isnan(x) or math.isinf(x) else text
    if isinstance(v, (celtypes.ListType, celtypes.MapType)):
        return format_string(v)
    raise FormatError(f"no formatting function for {type_name(v)}")


def _map_text(m: Any) -> str:
    entries: list[tuple[str, str]] = []
    for key, value in m.items():
        if isinstance(key, celtypes.StringType):
            shown = go_quote(str(key))
        elif isinstance(key, (celtypes.BoolType, celtypes.IntType, celtypes.UintType)):
            shown = format_string(key)
        else:
            raise FormatError(f"no formatting function for map key of type {type_name(key)}")
        entries.append((shown, _literal(value)))
    entries.sort(key=lambda e: e[0].encode())
    return "{" + ", ".join(f"{k}:{v}" for k, v in entries) + "}"


# ----------------------------------------------------------------------------- clauses

def _decimal(v: Any) -> str:
    if isinstance(v, (celtypes.IntType, celtypes.UintType)) and not isinstance(v, celtypes.BoolType):
        return str(int(v))
    raise FormatError(f"{CLAUSE_MESSAGES['d']}, was given {type_name(v)}")


def _as_double(v: Any, verb: str) -> float:
    if isinstance(v, celtypes.DoubleType):
        return float(v)
    if isinstance(v, celtypes.StringType) and str(v) in ("NaN", "Infinity", "-Infinity"):
        return float(str(v).replace("Infinity", "inf"))
    raise FormatError(f"{CLAUSE_MESSAGES[verb]}, was given {type_name(v)}")


#: beyond this precision Go's printers give up (a "%!(BADPREC)" text kplan does not reproduce)
MAX_PRECISION = 1_000_000


def _bounded(precision: int | None) -> int:
    if precision is None:
        return DEFAULT_PRECISION
    if precision > MAX_PRECISION:
        raise FormatError(f"precision {precision} is beyond what kplan prints")
    return precision


def _fixed(precision: int | None) -> Callable[[Any], str]:
    places = _bounded(precision)
    return lambda v: _en_fixed(_as_double(v, "f"), places)


def _scientific(precision: int | None) -> Callable[[Any], str]:
    width = _bounded(precision)
    return lambda v: _en_scientific(_as_double(v, "e"), width)


def _binary(v: Any) -> str:
    if isinstance(v, celtypes.BoolType):
        return "1" if v else "0"
    if isinstance(v, (celtypes.IntType, celtypes.UintType)):
        return format(int(v), "b")
    raise FormatError(f"{CLAUSE_MESSAGES['b']}, was given {type_name(v)}")


def _hex(upper: bool) -> Callable[[Any], str]:
    def clause(v: Any) -> str:
        if isinstance(v, celtypes.StringType):
            text = str(v).encode("utf-8").hex()
        elif isinstance(v, celtypes.BytesType):
            text = bytes(v).hex()
        elif _is_int(v) or isinstance(v, celtypes.UintType):
            text = format(int(v), "x")
        else:
            raise FormatError(f"{CLAUSE_MESSAGES['x']}, was given {type_name(v)}")
        return text.upper() if upper else text
    return clause


def _octal(v: Any) -> str:
    if _is_int(v) or isinstance(v, celtypes.UintType):
        return format(int(v), "o")
    raise FormatError(f"{CLAUSE_MESSAGES['o']}, was given {type_name(v)}")


_MAX_INT64 = 2 ** 63 - 1


def parse_clause(spec: bytes) -> tuple[int, str, int | None]:
    """The clause at the start of ``spec`` (the bytes after a ``%``): how many bytes it takes, its
    verb and its precision. Raises LibraryError with cel-go's text for a clause it cannot parse."""
    i, precision = 0, None
    if spec[:1] == b".":
        i = 1
        while True:
            if i >= len(spec):
                raise LibraryError("could not parse formatting clause: error while parsing precision: "
                                   "could not find end of precision specifier")
            if not 0x30 <= spec[i] <= 0x39:
                break
            i += 1
        digits = spec[1:i].decode()
        if not digits or int(digits) > _MAX_INT64:
            why = "invalid syntax" if not digits else "value out of range"
            raise LibraryError("could not parse formatting clause: error while parsing precision: error while "
                               f'converting precision to integer: strconv.Atoi: parsing "{digits}": {why}')
        precision = int(digits)
    verb = chr(spec[i])  # one byte, as cel-go reads it
    if verb not in "sdfebxXo":
        raise LibraryError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
    return i + 1, verb, precision


def clause(verb: str, precision: int | None) -> Callable[[Any], str]:
    """The runtime formatter of one clause; it raises FormatError for an argument it does not take."""
    simple: dict[str, Callable[[Any], str]] = {"s": format_string, "d": _decimal, "b": _binary, "o": _octal,
                                               "x": _hex(False), "X": _hex(True)}
    if verb == "f":
        return _fixed(precision)
    if verb == "e":
        return _scientific(precision)
    return simple[verb]


def walk(fmt: str, count: int, on_clause: Callable[[int, str, int | None], str]) -> tuple[str, int]:
    """cel-go's parseFormatString over a format string and ``count`` arguments: the text with each
    clause replaced by ``on_clause(argument index, verb, precision)``, and how many arguments the
    clauses asked for. A clause that asks beyond the arguments, a ``%`` at the end, and a clause
    that does not parse raise LibraryError with cel-go's text."""
    spec = fmt.encode("utf-8")  # cel-go walks the format string byte by byte
    out = bytearray()
    i = n = 0
    while i < len(spec):
        if spec[i] != 0x25:  # '%'
            out.append(spec[i])
            i += 1
            continue
        if i + 1 < len(spec) and spec[i + 1] == 0x25:
            out.append(0x25)
            i += 2
            continue
        if n >= count:
            raise LibraryError(f"index {n} out of range")
        if i + 1 >= len(spec):
            raise LibraryError("unexpected end of string")
        used, verb, precision = parse_clause(spec[i + 1:])
        out.extend(on_clause(n, verb, precision).encode("utf-8"))
        i += 1 + used
        n += 1
    return out.decode("utf-8"), n


def string_format(fmt: Any, args: Any) -> celtypes.StringType:
    """``fmt.format(args)``: the string with each clause replaced by the next argument."""
    if not isinstance(fmt, celtypes.StringType) or not isinstance(args, celtypes.ListType):
        raise LibraryError("no such overload")
    values = list(args)

    def apply(index: int, verb: str, precision: int | None) -> str:
        try:
            return clause(verb, precision)(values[index])
        except FormatError as e:
            raise LibraryError(f"error during formatting: {e}") from None

    text, _ = walk(str(fmt), len(values), apply)
    return celtypes.StringType(text)


# ------------------------------------------------------------------- the static check

#: the argument types each clause takes, by the names kplan's type check gives them
#: (cel-go's stringFormatChecker; dyn passes every clause)
CLAUSE_TYPES: dict[str, frozenset[str]] = {
    "s": frozenset({"list", "map", "int", "uint", "double", "bool", "string", "google.protobuf.Timestamp", "bytes",
                    "google.protobuf.Duration", "type", "null"}),
    "d": frozenset({"int", "uint"}),
    "f": frozenset({"double", "string"}),
    "e": frozenset({"double", "string"}),
    "b": frozenset({"int", "uint", "bool"}),
    "x": frozenset({"int", "uint", "string", "bytes"}),
    "X": frozenset({"int", "uint", "string", "bytes"}),
    "o": frozenset({"int", "uint"}),
}

#: the start of each clause's message for an argument of the wrong type
CLAUSE_MESSAGES = {
    "s": f"string clause can only be used on {_STRING_CLAUSE_TYPES}",
    "d": "decimal clause can only be used on integers",
    "f": "fixed-point clause can only be used on doubles",
    "e": "scientific clause can only be used on doubles",
    "b": "only integers and bools can be formatted as binary",
    "x": "only integers, byte buffers, and strings can be formatted as hex",
    "X": "only integers, byte buffers, and strings can be formatted as hex",
    "o": "octal clause can only be used on integers",
}
