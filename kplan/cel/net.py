"""The Kubernetes CEL network libraries DRA selectors may call (scheduler-reference-dra.md 3.4):
IP addresses and CIDRs (apiserver/pkg/cel/library/ip.go, cidr.go) and URLs (urls.go).

Parsing follows Go's ``net/netip`` (``ParseAddr``, ``ParsePrefix``) and ``net/url``
(``ParseRequestURI``, ``Parse``) rule for rule, because a selector's verdict and its error text
depend on them: IPv4 octets without leading zeros, IPv6 with at most one ``::`` and an embedded
IPv4 tail, a prefix length without sign or leading zero, host bits kept in a CIDR; the library
then refuses zones and IPv4-mapped IPv6 addresses. Errors are ``LibraryError`` with the wording
the API server gives (Go's ``%q`` quoting included).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes

from kplan.cel.values import LibraryError, Opaque


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote``: double quotes, Go escapes for control characters."""
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
             "\\": "\\\\", '"': '\\"'}
    out = []
    for c in s:
        if c in named:
            out.append(named[c])
        elif c.isprintable() or c == " ":
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) <= 0xFFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


# ------------------------------------------------------------------------------ addresses

class _AddrError(Exception):
    """A ``netip.ParseAddr`` failure: ``str`` is Go's text."""

    def __init__(self, text: str, msg: str, at: str | None = None) -> None:
        detail = f"ParseAddr({go_quote(text)}): {msg}"
        if at is not None:
            detail += f" (at {go_quote(at)})"
        super().__init__(detail)


class IPAddr(Opaque):
    """A ``net.IP`` value: an IPv4 (32 bits) or IPv6 (128 bits) address, with the zone it was
    written with (the library refuses zoned addresses; ``netip`` parses them)."""

    __slots__ = ("bits", "value", "zone")

    def __init__(self, bits: int, value: int, zone: str = "") -> None:
        self.bits, self.value, self.zone = bits, value, zone

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IPAddr):
            raise LibraryError("no such overload")
        return (self.bits, self.value, self.zone) == (other.bits, other.value, other.zone)

    def __hash__(self) -> int:
        return hash((self.bits, self.value, self.zone))

    def __repr__(self) -> str:
        return f"ip({self})"

    @property
    def is4(self) -> bool:
        return self.bits == 32

    def is4in6(self) -> bool:
        return self.bits == 128 and self.value >> 32 == 0xFFFF

    def __str__(self) -> str:
        """``netip.Addr.String``: dotted IPv4; IPv6 in lower-case hex with the first longest run
        of two or more zero fields written ``::``."""
        if self.is4:
            return ".".join(str((self.value >> s) & 0xFF) for s in (24, 16, 8, 0))
        if self.is4in6():
            text = "::ffff:" + str(IPAddr(32, self.value & 0xFFFFFFFF))
        else:
            words = [(self.value >> (112 - 16 * i)) & 0xFFFF for i in range(8)]
            best, best_len, i = -1, 0, 0
            while i < 8:
                j = i
                while j < 8 and words[j] == 0:
                    j += 1
                if j - i >= 2 and j - i > best_len:
                    best, best_len = i, j - i
                i = j + 1 if j == i else j
            if best < 0:
                text = ":".join(f"{w:x}" for w in words)
            else:
                text = (":".join(f"{w:x}" for w in words[:best]) + "::"
                        + ":".join(f"{w:x}" for w in words[best + best_len:]))
        return text + ("%" + self.zone if self.zone else "")


def _ipv4_fields(whole: str, part: str) -> list[int]:
    fields: list[int] = []
    val, digits = 0, 0
    for i, c in enumerate(part):
        if "0" <= c <= "9":
            if digits == 1 and val == 0:
                raise _AddrError(whole, "IPv4 field has octet with leading zero")
            val = val * 10 + ord(c) - 48
            digits += 1
            if val > 255:
                raise _AddrError(whole, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == len(part) - 1 or part[i - 1] == ".":
                raise _AddrError(whole, "IPv4 field must have at least one digit", part[i:])
            if len(fields) == 3:
                raise _AddrError(whole, "IPv4 address too long")
            fields.append(val)
            val, digits = 0, 0
        else:
            raise _AddrError(whole, "unexpected character", part[i:])
    if len(fields) < 3:
        raise _AddrError(whole, "IPv4 address too short")
    fields.append(val)
    return fields


_HEX = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}


def _parse_ipv6(whole: str) -> IPAddr:
    s, zone = whole, ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if zone == "":
            raise _AddrError(whole, "zone must be a non-empty string")
    out = [0] * 16
    ellipsis = -1
    if s.startswith("::"):
        ellipsis = 0
        s = s[2:]
        if s == "":
            return IPAddr(128, 0, zone)
    i = 0
    while i < 16:
        off, acc = 0, 0
        while off < len(s) and s[off] in _HEX:
            acc = (acc << 4) + _HEX[s[off]]
            if off > 3:
                raise _AddrError(whole, "each colon-separated field must have at most 4 hex digits", s)
            if acc > 0xFFFF:
                raise _AddrError(whole, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _AddrError(whole, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _AddrError(whole, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise _AddrError(whole, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            out[i:i + 4] = _ipv4_fields(whole, s)
            s = ""
            i += 4
            break
        out[i], out[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if s == "":
            break
        if s[0] != ":":
            raise _AddrError(whole, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _AddrError(whole, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _AddrError(whole, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if s == "":
                break
    if s:
        raise _AddrError(whole, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _AddrError(whole, "address string too short")
        n = 16 - i
        out = out[:ellipsis] + [0] * n + out[ellipsis:i]
    elif ellipsis >= 0:
        raise _AddrError(whole, "the :: must expand to at least one field of zeros", s)
    return IPAddr(128, int.from_bytes(bytes(out), "big"), zone)


def parse_addr(text: str) -> IPAddr:
    """``netip.ParseAddr``; raises _AddrError with Go's text."""
    for c in text:
        if c == ".":
            f = _ipv4_fields(text, text)
            return IPAddr(32, (f[0] << 24) | (f[1] << 16) | (f[2] << 8) | f[3])
        if c == ":":
            return _parse_ipv6(text)
        if c == "%":
            raise _AddrError(text, "missing IPv6 address")
    raise _AddrError(text, "unable to parse IP")


def _library_ip(text: str) -> IPAddr:
    """The library's parseIPAddr: netip's parse, then no zones and no IPv4-mapped IPv6."""
    try:
        addr = parse_addr(text)
    except _AddrError as e:
        raise LibraryError(f"IP Address {go_quote(text)} parse error during conversion from string: {e}") from None
    if addr.zone:
        raise LibraryError(f"IP address {go_quote(text)} with zone value is not allowed")
    if addr.is4in6():
        raise LibraryError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return addr


class CIDR(Opaque):
    """A ``net.CIDR`` value: an address and a prefix length (host bits are kept, as netip keeps them)."""

    __slots__ = ("addr", "prefix")

    def __init__(self, addr: IPAddr, prefix: int) -> None:
        self.addr, self.prefix = addr, prefix

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CIDR):
            raise LibraryError("no such overload")
        return self.addr == other.addr and self.prefix == other.prefix

    def __hash__(self) -> int:
        return hash((self.addr, self.prefix))

    def __str__(self) -> str:
        return f"{self.addr}/{self.prefix}"

    def __repr__(self) -> str:
        return f"cidr({self})"

    def masked(self) -> CIDR:
        host = self.addr.bits - self.prefix
        return CIDR(IPAddr(self.addr.bits, (self.addr.value >> host) << host), self.prefix)

    def contains(self, ip: IPAddr) -> bool:
        """``netip.Prefix.Contains``: same family, no zone, equal in the prefix's bits."""
        if ip.zone or ip.bits != self.addr.bits:
            return False
        host = self.addr.bits - self.prefix
        return ip.value >> host == self.addr.value >> host


def parse_prefix(text: str) -> CIDR:
    """``netip.ParsePrefix``; raises LibraryError with ``netip.ParsePrefix(...)``'s text."""
    def fail(msg: str) -> LibraryError:
        return LibraryError(f"netip.ParsePrefix({go_quote(text)}): {msg}")

    cut = text.rfind("/")
    if cut < 0:
        raise fail("no '/'")
    try:
        addr = parse_addr(text[:cut])
    except _AddrError as e:
        raise fail(str(e)) from None
    if addr.bits == 128 and addr.zone:
        raise fail("IPv6 zones cannot be present in a prefix")
    digits = text[cut + 1:]
    if len(digits) > 1 and not "1" <= digits[0] <= "9":
        raise fail(f"bad bits after slash: {go_quote(digits)}")
    if not digits.isascii() or not digits.isdigit():
        raise fail(f"bad bits after slash: {go_quote(digits)}")
    bits = int(digits)
    if bits > addr.bits:
        raise fail("prefix length out of range")
    return CIDR(addr, bits)


def _library_cidr(text: str) -> CIDR:
    """The library's parseCIDR and stringToCIDR, each adding its prefix to the text."""
    head = "network address parse error during conversion from string: "
    try:
        net = parse_prefix(text)
    except LibraryError as e:
        raise LibraryError(head + head + str(e)) from None
    if net.addr.is4in6():
        raise LibraryError(head + f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return net


# ---------------------------------------------------------------------------- IP functions

def _s(v: Any) -> str:
    if not isinstance(v, celtypes.StringType):
        raise LibraryError("no such overload")
    return str(v)


def _ip_arg(v: Any) -> IPAddr:
    if not isinstance(v, IPAddr):
        raise LibraryError("no such overload")
    return v


def _cidr_arg(v: Any) -> CIDR:
    if not isinstance(v, CIDR):
        raise LibraryError("no such overload")
    return v


def ip(v: Any) -> Any:
    """``ip(string)``, and ``<CIDR>.ip()``: the CIDR's address as written."""
    if isinstance(v, CIDR):
        return v.addr
    return _library_ip(_s(v))


def _accepts(parse: Callable[[str], object], v: Any) -> celtypes.BoolType:
    """The is* functions: whether ``parse`` takes the string without a library error."""
    try:
        parse(_s(v))
    except LibraryError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def is_ip(v: Any) -> celtypes.BoolType:
    return _accepts(_library_ip, v)


def ip_is_canonical(v: Any) -> celtypes.BoolType:
    text = _s(v)
    return celtypes.BoolType(str(_library_ip(text)) == text)


def family(v: Any) -> celtypes.IntType:
    return celtypes.IntType(4 if _ip_arg(v).is4 else 6)


def is_unspecified(v: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_ip_arg(v).value == 0)


def _is_loopback(a: IPAddr) -> bool:
    return a.value >> 24 == 127 if a.is4 else a.value == 1


def _is_multicast(a: IPAddr) -> bool:
    return a.value >> 28 == 0xE if a.is4 else a.value >> 120 == 0xFF


def _is_link_local_unicast(a: IPAddr) -> bool:
    return a.value >> 16 == 0xA9FE if a.is4 else a.value >> 118 == 0xFE80 >> 6


def is_loopback(v: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_is_loopback(_ip_arg(v)))


def is_link_local_multicast(v: Any) -> celtypes.BoolType:
    a = _ip_arg(v)
    # netip: 224.0.0.0/24; IPv6 ff02::/16 with any flags (the first 16 bits masked by 0xff0f)
    return celtypes.BoolType(a.value >> 8 == 0xE00000 if a.is4 else (a.value >> 112) & 0xFF0F == 0xFF02)


def is_link_local_unicast(v: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_is_link_local_unicast(_ip_arg(v)))


def is_global_unicast(v: Any) -> celtypes.BoolType:
    """netip: not unspecified, not the IPv4 broadcast address, not loopback, multicast or link-local
    unicast (private and ULA addresses count as global)."""
    a = _ip_arg(v)
    if a.value == 0 or (a.is4 and a.value == 0xFFFFFFFF):
        return celtypes.BoolType(False)
    return celtypes.BoolType(not (_is_loopback(a) or _is_multicast(a) or _is_link_local_unicast(a)))


# -------------------------------------------------------------------------- CIDR functions

def cidr(v: Any) -> CIDR:
    return _library_cidr(_s(v))


def is_cidr(v: Any) -> celtypes.BoolType:
    return _accepts(_library_cidr, v)


def contains_ip(net: Any, other: Any) -> celtypes.BoolType:
    address = _library_ip(str(other)) if isinstance(other, celtypes.StringType) else _ip_arg(other)
    return celtypes.BoolType(_cidr_arg(net).contains(address))


def contains_cidr(net: Any, other: Any) -> celtypes.BoolType:
    """The other network's address masked to this prefix is this network, and its prefix is no
    shorter (as fixed in Kubernetes 1.33: the other address is masked before comparing)."""
    inner = _library_cidr(str(other)) if isinstance(other, celtypes.StringType) else _cidr_arg(other)
    outer = _cidr_arg(net)
    if inner.addr.bits != outer.addr.bits or inner.addr.zone:
        return celtypes.BoolType(False)
    same = CIDR(inner.addr, outer.prefix).masked() == outer.masked()
    return celtypes.BoolType(same and outer.prefix <= inner.prefix)


def masked(v: Any) -> CIDR:
    return _cidr_arg(v).masked()


def prefix_length(v: Any) -> celtypes.IntType:
    return celtypes.IntType(_cidr_arg(v).prefix)


# ------------------------------------------------------------------------------------ URLs

_PATH, _USER, _QUERY, _FRAGMENT, _HOST, _ZONE = "path", "user", "query", "fragment", "host", "zone"
_SUB_DELIMS_HOST = set("!$&'()*+,;=:[]<>\"")


def _should_escape(c: str, mode: str) -> bool:
    """net/url's shouldEscape for one ASCII byte."""
    if c.isascii() and c.isalnum():
        return False
    if mode in (_HOST, _ZONE) and c in _SUB_DELIMS_HOST:
        return False
    if c in "-_.~":
        return False
    if c in "$&+,/:;=?@":
        if mode == _PATH:
            return c == "?"
        if mode == _USER:
            return c in "@/?:"
        if mode == _QUERY:
            return True
        if mode == _FRAGMENT:
            return False
    if mode == _FRAGMENT and c in "!()*":
        return False
    return True


def _escape(s: str, mode: str) -> str:
    out = []
    for b in s.encode():
        c = chr(b)
        if b < 0x80 and not _should_escape(c, mode):
            out.append(c)
        elif c == " " and mode == _QUERY:
            out.append("+")
        else:
            out.append(f"%{b:02X}")
    return "".join(out)


def _unescape(s: str, mode: str) -> str:
    """net/url's unescape: checks every %XX (hosts may escape only non-ASCII bytes and %25),
    refuses characters a host cannot hold, decodes (``+`` is a space in a query component)."""
    data = s.encode()
    i = 0
    while i < len(data):
        c = chr(data[i])
        if c == "%":
            if i + 2 >= len(data) or chr(data[i + 1]) not in _HEX or chr(data[i + 2]) not in _HEX:
                bad = data[i:i + 3].decode(errors="replace")
                raise LibraryError(f"invalid URL escape {go_quote(bad)}")
            seq = data[i:i + 3].decode()
            v = int(seq[1:], 16)
            if mode == _HOST and v < 0x80 and seq != "%25":
                raise LibraryError(f"invalid URL escape {go_quote(seq)}")
            if mode == _ZONE and seq != "%25" and v != 0x20 and (v >= 0x80 or _should_escape(chr(v), _HOST)):
                raise LibraryError(f"invalid URL escape {go_quote(seq)}")
            i += 3
        else:
            if mode in (_HOST, _ZONE) and data[i] < 0x80 and _should_escape(c, mode):
                raise LibraryError(f"invalid character {go_quote(c)} in host name")
            i += 1
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 0x25:
            out.append(int(data[i + 1:i + 3].decode(), 16))
            i += 3
        elif data[i] == 0x2B and mode == _QUERY:
            out.append(0x20)
            i += 1
        else:
            out.append(data[i])
            i += 1
    return out.decode(errors="surrogateescape")


def _valid_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _valid_encoded(s: str, mode: str) -> bool:
    for c in s:
        if c in "!$&'()*+,;=:@[]%":
            continue
        if not c.isascii() or _should_escape(c, mode):
            return False
    return True


def _raw_stands_for(raw: str, decoded: str, mode: str) -> bool:
    """Go's EscapedPath and EscapedFragment keep the raw form when it is validly encoded and
    unescapes to the decoded one."""
    if not raw or not _valid_encoded(raw, mode):
        return False
    try:
        return _unescape(raw, mode) == decoded
    except LibraryError:
        return False


class URL(Opaque):
    """A ``kubernetes.URL`` value: the parts Go's url.Parse gives."""

    __slots__ = ("force_query", "fragment", "host", "omit_host", "opaque", "password", "path", "raw_fragment",
                 "raw_path", "raw_query", "scheme", "user")

    def __init__(self) -> None:
        self.scheme = self.opaque = self.host = self.path = self.raw_path = self.raw_query = ""
        self.fragment = self.raw_fragment = ""
        self.user: str | None = None
        self.password: str | None = None
        self.force_query = self.omit_host = False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, URL):
            raise LibraryError("no such overload")
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"url({self})"

    def escaped_path(self) -> str:
        if _raw_stands_for(self.raw_path, self.path, _PATH):
            return self.raw_path
        if self.path == "*":
            return "*"
        return _escape(self.path, _PATH)

    def escaped_fragment(self) -> str:
        if _raw_stands_for(self.raw_fragment, self.fragment, _FRAGMENT):
            return self.raw_fragment
        return _escape(self.fragment, _FRAGMENT)

    def split_host(self) -> tuple[str, str]:
        host, port = self.host, ""
        colon = host.rfind(":")
        if colon != -1 and _valid_port(host[colon:]):
            host, port = host[:colon], host[colon + 1:]
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        return host, port

    def __str__(self) -> str:
        """Go's URL.String (what URL equality compares)."""
        out = ""
        if self.scheme:
            out += self.scheme + ":"
        if self.opaque:
            out += self.opaque
        else:
            if (self.scheme or self.host or self.user is not None) and not (
                    self.omit_host and not self.host and self.user is None):
                if self.host or self.path or self.user is not None:
                    out += "//"
                if self.user is not None:
                    out += _escape(self.user, _USER)
                    if self.password is not None:
                        out += ":" + _escape(self.password, _USER)
                    out += "@"
                if self.host:
                    out += _escape(self.host, _HOST)
            path = self.escaped_path()
            if path and path[0] != "/" and self.host:
                out += "/"
            if not out and ":" in path.split("/", 1)[0]:
                out += "./"
            out += path
        if self.force_query or self.raw_query:
            out += "?" + self.raw_query
        if self.fragment:
            out += "#" + self.escaped_fragment()
        return out


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if (c.isascii() and c.isdigit()) or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise LibraryError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return "", raw
    return "", raw


def _parse_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise LibraryError("missing ']' in host")
        colon_port = host[end + 1:]
        if not _valid_port(colon_port):
            raise LibraryError(f"invalid port {go_quote(colon_port)} after host")
        zone = host[:end].find("%25")
        if zone >= 0:
            return _unescape(host[:zone], _HOST) + _unescape(host[zone:end], _ZONE) + _unescape(host[end:], _HOST)
    else:
        colon = host.rfind(":")
        if colon != -1 and not _valid_port(host[colon:]):
            raise LibraryError(f"invalid port {go_quote(host[colon:])} after host")
    return _unescape(host, _HOST)


_USERINFO_OK = set("-._:~!$&'()*+,;=%@")


def _parse(raw: str, via_request: bool) -> URL:
    """net/url's parse (the part before any fragment)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise LibraryError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise LibraryError("empty url")
    u = URL()
    if raw == "*":
        u.path = "*"
        return u
    scheme, rest = _scheme(raw)
    u.scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        u.force_query = True
        rest = rest[:-1]
    else:
        rest, _, u.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if u.scheme:
            u.opaque = rest
            return u
        if via_request:
            raise LibraryError("invalid URI for request")
        if ":" in rest.split("/", 1)[0]:
            raise LibraryError("first path segment in URL cannot contain colon")
    if (u.scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, rest = rest[2:], ""
        slash = authority.find("/")
        if slash >= 0:
            authority, rest = authority[:slash], authority[slash:]
        at = authority.rfind("@")
        u.host = _parse_host(authority[at + 1:] if at >= 0 else authority)
        if at >= 0:
            info = authority[:at]
            if not all((c.isascii() and c.isalnum()) or c in _USERINFO_OK for c in info):
                raise LibraryError("net/url: invalid userinfo")
            name, sep, password = info.partition(":")
            u.user = _unescape(name, _USER)
            u.password = _unescape(password, _USER) if sep else None
    elif u.scheme and rest.startswith("/"):
        u.omit_host = True
    u.path = _unescape(rest, _PATH)
    u.raw_path = "" if _escape(u.path, _PATH) == rest else rest
    return u


def check_request_uri(raw: str) -> None:
    """url.ParseRequestURI's verdict; raises LibraryError with its text (``parse "...": ...``)."""
    try:
        _parse(raw, True)
    except LibraryError as e:
        raise LibraryError(f"parse {go_quote(raw)}: {e}") from None


def parse_url(raw: str) -> URL:
    """The library's stringToUrl: url.ParseRequestURI must accept the text, then url.Parse gives
    the value (ParseRequestURI would keep a fragment in the path or query)."""
    head = "URL parse error during conversion from string: "
    try:
        check_request_uri(raw)
    except LibraryError as e:
        raise LibraryError(f"{head}{e}") from None
    before, sep, frag = raw.partition("#")
    try:
        u = _parse(before, False)
    except LibraryError as e:
        raise LibraryError(f"{head}parse {go_quote(before)}: {e}") from None
    if sep and frag:
        try:
            u.fragment = _unescape(frag, _FRAGMENT)
        except LibraryError as e:
            raise LibraryError(f"{head}parse {go_quote(raw)}: {e}") from None
        u.raw_fragment = "" if _escape(u.fragment, _FRAGMENT) == frag else frag
    return u


def url(v: Any) -> URL:
    return parse_url(_s(v))


def is_url(v: Any) -> celtypes.BoolType:
    return _accepts(check_request_uri, v)


def _url_arg(v: Any) -> URL:
    if not isinstance(v, URL):
        raise LibraryError("no such overload")
    return v


def get_query(v: Any) -> celtypes.MapType:
    """url.Values of the raw query: ``&``-separated pairs, pairs holding ``;`` or failing to
    unescape skipped, empty ones skipped, values of a repeated key in order."""
    found: dict[str, list[str]] = {}
    for pair in _url_arg(v).raw_query.split("&") if _url_arg(v).raw_query else []:
        if ";" in pair or pair == "":
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = _unescape(key, _QUERY), _unescape(value, _QUERY)
        except LibraryError:
            continue
        found.setdefault(key, []).append(value)
    return celtypes.MapType({celtypes.StringType(k): celtypes.ListType([celtypes.StringType(x) for x in vals])
                             for k, vals in found.items()})


def to_string(v: Any) -> celtypes.StringType | None:
    """``string(ip)``, ``string(cidr)``; None for a value of another type."""
    if isinstance(v, (IPAddr, CIDR)):
        return celtypes.StringType(str(v))
    return None


#: receiver-style and global functions, by name (``ip`` and ``string`` are shared with a CIDR)
FUNCTIONS: dict[str, Any] = {
    "ip": ip, "isIP": is_ip, "family": family, "isUnspecified": is_unspecified, "isLoopback": is_loopback,
    "isLinkLocalMulticast": is_link_local_multicast, "isLinkLocalUnicast": is_link_local_unicast,
    "isGlobalUnicast": is_global_unicast, "cidr": cidr, "isCIDR": is_cidr, "containsIP": contains_ip,
    "containsCIDR": contains_cidr, "masked": masked, "prefixLength": prefix_length,
    "url": url, "isURL": is_url,
    "getScheme": lambda u: celtypes.StringType(_url_arg(u).scheme),
    "getHost": lambda u: celtypes.StringType(_url_arg(u).host),
    "getHostname": lambda u: celtypes.StringType(_url_arg(u).split_host()[0]),
    "getPort": lambda u: celtypes.StringType(_url_arg(u).split_host()[1]),
    "getEscapedPath": lambda u: celtypes.StringType(_url_arg(u).escaped_path()),
    "getQuery": get_query,
}

#: functions called by a qualified name
QUALIFIED: dict[tuple[str, str], Any] = {("ip", "isCanonical"): ip_is_canonical}
