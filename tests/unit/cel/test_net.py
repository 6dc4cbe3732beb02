"""The Kubernetes IP, CIDR and URL CEL libraries (kplan/cel/net.py) as DRA selectors call them: a table
of selectors and what the API server's libraries (apiserver/pkg/cel/library ip.go, cidr.go,
urls.go, on Go's net/netip and net/url) give for them, results and error texts."""

from __future__ import annotations

import pytest

from kplan.cel import CelError, compile_selector, device_activation, evaluate
from kplan.model.dra import Device

A = 'device.attributes["nic.example.com"]'
DEV = Device("nic-0", {"ip": ("string", "10.1.2.3"), "subnet": ("string", "10.1.0.0/16"),
                       "endpoint": ("string", "https://nic-0.example.com:8443/v1/api?zone=a&zone=b")}, {})

TRUE = [
    # ip, isIP, ip.isCanonical, family
    ("ip family", 'ip("127.0.0.1").family() == 4 && ip("::1").family() == 6'),
    ("ip of a device attribute", f"ip({A}.ip).family() == 4"),
    ("embedded IPv4 tail", 'ip("64:ff9b::1.2.3.4").family() == 6'),
    ("isIP", 'isIP("127.0.0.1") && isIP("::1") && isIP("2001:db8::abcd")'),
    ("isIP refuses bad addresses",
     '!isIP("127.0.0.256") && !isIP(":::1") && !isIP("1.2.3") && !isIP("01.2.3.4") && !isIP("") && !isIP("abc")'),
    ("isIP refuses IPv4-mapped IPv6 and zones", '!isIP("::ffff:1.2.3.4") && !isIP("fe80::1%eth0")'),
    ("ip.isCanonical", 'ip.isCanonical("127.0.0.1") && ip.isCanonical("2001:db8::abcd")'),
    ("ip.isCanonical false", '!ip.isCanonical("2001:DB8::ABCD") && !ip.isCanonical("2001:db8::0:0:0:abcd")'),
    # classification, as netip classifies
    ("isUnspecified", 'ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified() && !ip("::1").isUnspecified()'),
    ("isLoopback", 'ip("127.0.0.1").isLoopback() && ip("127.9.9.9").isLoopback() && ip("::1").isLoopback()'),
    ("isLoopback false", '!ip("192.168.0.1").isLoopback() && !ip("2001:db8::abcd").isLoopback()'),
    ("isLinkLocalMulticast", 'ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()'),
    ("isLinkLocalMulticast ignores the IPv6 flags", 'ip("ff12::1").isLinkLocalMulticast()'),
    ("isLinkLocalMulticast false", '!ip("224.0.1.1").isLinkLocalMulticast() && !ip("fd00::1").isLinkLocalMulticast()'
                                   ' && !ip("ff05::1").isLinkLocalMulticast()'),
    ("isLinkLocalUnicast", 'ip("169.254.169.254").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()'
                           ' && ip("febf::1").isLinkLocalUnicast()'),
    ("isLinkLocalUnicast false", '!ip("192.168.0.1").isLinkLocalUnicast() && !ip("fd80::1").isLinkLocalUnicast()'
                                 ' && !ip("fec0::1").isLinkLocalUnicast()'),
    ("isGlobalUnicast", 'ip("192.168.0.1").isGlobalUnicast() && ip("10.0.0.1").isGlobalUnicast()'
                        ' && ip("2001:db8::abcd").isGlobalUnicast() && ip("fd00::1").isGlobalUnicast()'),
    ("isGlobalUnicast false", '!ip("255.255.255.255").isGlobalUnicast() && !ip("ff00::1").isGlobalUnicast()'
                              ' && !ip("0.0.0.0").isGlobalUnicast() && !ip("127.0.0.1").isGlobalUnicast()'
                              ' && !ip("169.254.1.1").isGlobalUnicast() && !ip("224.0.0.1").isGlobalUnicast()'),
    # string(ip): netip's canonical text
    ("string of an IPv4", 'string(ip("10.0.0.1")) == "10.0.0.1"'),
    ("string compresses the longest zero run", 'string(ip("2001:0:0:1:0:0:0:1")) == "2001:0:0:1::1"'),
    ("string compresses the first of equal runs", 'string(ip("2001:DB8:0:0:1:0:0:1")) == "2001:db8::1:0:0:1"'),
    ("string leaves a single zero field", 'string(ip("2001:db8:0:1:1:1:1:1")) == "2001:db8:0:1:1:1:1:1"'),
    ("string of the ends", 'string(ip("::")) == "::" && string(ip("1::")) == "1::" && string(ip("::1.2.3.4")) == "::102:304"'),
    # equality
    ("IPs equal by address", 'ip("::1") == ip("0:0:0:0:0:0:0:1") && ip("10.0.0.1") != ip("10.0.0.2")'),
    ("an IPv4 is not its IPv6 form", 'ip("1.2.3.4") != ip("::102:304")'),
    ("a string is unequal to an IP", f'{A}.ip != ip("10.1.2.3")'),
    # cidr
    ("cidr of a device attribute", f"cidr({A}.subnet).containsIP({A}.ip)"),
    ("isCIDR", 'isCIDR("192.168.0.0/16") && isCIDR("::1/128") && isCIDR("192.168.0.1/16") && isCIDR("0.0.0.0/0")'),
    ("isCIDR false", '!isCIDR("192.168.0.0/33") && !isCIDR("::1/129") && !isCIDR("192.168.0.0")'
                     ' && !isCIDR("1.2.3.4/024") && !isCIDR("1.2.3.4/+8") && !isCIDR("1.2.3.4/") && !isCIDR("/8")'),
    ("isCIDR refuses IPv4-mapped IPv6 and zones", '!isCIDR("::ffff:1.2.3.4/120") && !isCIDR("fe80::1%eth0/64")'),
    ("containsIP", 'cidr("192.168.0.0/24").containsIP(ip("192.168.0.1")) && cidr("192.168.0.0/24").containsIP("192.168.0.1")'),
    ("containsIP false", '!cidr("192.168.0.0/24").containsIP(ip("192.168.1.1")) && !cidr("192.168.0.0/24").containsIP("192.168.1.1")'),
    ("containsIP across families is false", '!cidr("0.0.0.0/0").containsIP("::1") && !cidr("::/0").containsIP("1.2.3.4")'),
    ("containsIP with host bits in the CIDR", 'cidr("10.1.2.3/8").containsIP("10.200.0.1")'),
    ("containsIP IPv6", 'cidr("2001:db8::/32").containsIP("2001:db8::1") && !cidr("2001:db8::/32").containsIP("2001:dc8::1")'),
    ("containsCIDR", 'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25")) && cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")'),
    ("containsCIDR of a subnet at another address", 'cidr("192.168.0.0/16").containsCIDR("192.168.10.0/24")'
                                                    ' && cidr("192.168.0.0/16").containsCIDR(cidr("192.168.0.1/32"))'),
    ("containsCIDR false", '!cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23") && !cidr("192.168.1.0/24").containsCIDR("192.168.2.0/24")'),
    ("containsCIDR across families is false", '!cidr("0.0.0.0/0").containsCIDR("::/64") && !cidr("::/0").containsCIDR("10.0.0.0/8")'),
    ("containsCIDR IPv6", 'cidr("2001:db8::/32").containsCIDR("2001:db8::/33") && !cidr("2001:db8::/32").containsCIDR("2001:db8::/31")'),
    ("cidr ip", 'cidr("192.168.0.1/24").ip() == ip("192.168.0.1") && cidr("::1/128").ip().family() == 6'),
    ("masked", 'cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24") && string(cidr("2001:db8:1::/32").masked()) == "2001:db8::/32"'),
    ("a CIDR keeps its host bits", 'cidr("192.168.0.1/24") != cidr("192.168.0.1/24").masked() && cidr("192.168.0.0/24") == cidr("192.168.0.0/24").masked()'),
    ("prefixLength", 'cidr("192.168.0.0/16").prefixLength() == 16 && cidr("::1/128").prefixLength() == 128'),
    ("string of a CIDR", 'string(cidr("192.168.0.1/24")) == "192.168.0.1/24" && string(cidr("2001:DB8::/32")) == "2001:db8::/32"'),
    # url
    ("getScheme", 'url("/path").getScheme() == "" && url("https://example.com/").getScheme() == "https"'),
    ("the scheme is lower-cased", 'url("HTTPS://example.com/").getScheme() == "https"'),
    ("getHost", 'url("https://example.com:80/").getHost() == "example.com:80" && url("https://example.com/").getHost() == "example.com"'),
    ("getHost of IPv6", 'url("https://[::1]:80/").getHost() == "[::1]:80" && url("https://[::1]/").getHost() == "[::1]"'),
    ("getHost of a path", 'url("/path").getHost() == ""'),
    ("getHostname", 'url("https://example.com:80/").getHostname() == "example.com" && url("https://127.0.0.1:80/").getHostname() == "127.0.0.1"'),
    ("getHostname of IPv6", 'url("https://[::1]:80/").getHostname() == "::1" && url("/path").getHostname() == ""'),
    ("getPort", 'url("https://example.com:80/").getPort() == "80" && url("https://example.com/").getPort() == ""'),
    ("an empty port", 'url("https://example.com:/").getPort() == "" && url("https://example.com:/").getHostname() == "example.com"'),
    ("getEscapedPath", 'url("https://example.com/path").getEscapedPath() == "/path" && url("https://example.com").getEscapedPath() == ""'),
    ("getEscapedPath escapes", 'url("https://example.com/path with spaces/").getEscapedPath() == "/path%20with%20spaces/"'),
    ("getEscapedPath keeps a valid escaping", 'url("https://example.com/a%2Fb").getEscapedPath() == "/a%2Fb"'),
    ("the fragment is not in the path", 'url("https://example.com/a#frag").getEscapedPath() == "/a"'),
    ("getQuery", 'url("https://example.com/path?k1=a&k2=b&k2=c").getQuery() == {"k1": ["a"], "k2": ["b", "c"]}'),
    ("getQuery unescapes", 'url("https://example.com/path?key with spaces=value with spaces").getQuery() == {"key with spaces": ["value with spaces"]}'
                           ' && url("/p?a+b=c%2Bd").getQuery() == {"a b": ["c+d"]}'),
    ("getQuery of nothing", 'url("https://example.com/path?").getQuery() == {} && url("https://example.com/path").getQuery() == {}'),
    ("getQuery skips bad pairs", 'url("/p?a=1;b=2&c=%zz&d=4").getQuery() == {"d": ["4"]}'),
    ("getQuery empty keys and values", 'url("/p?=x&y").getQuery() == {"": ["x"], "y": [""]}'),
    ("getQuery of a device attribute", f'url({A}.endpoint).getQuery()["zone"] == ["a", "b"] && url({A}.endpoint).getPort() == "8443"'),
    ("a network-path reference has a host", 'url("//example.com/x").getHost() == "example.com"'),
    ("isURL", 'isURL("https://user:pass@example.com:80/path?query=val#fragment") && isURL("/absolute-path")'
              ' && isURL("mailto:someone@example.com") && isURL("*")'),
    ("isURL false", '!isURL("https://a:b:c/") && !isURL("../relative-path") && !isURL("") && !isURL("example.com")'
                    ' && !isURL("http://[::1") && !isURL("http://ex ample.com/") && !isURL(":x")'),
    ("URLs equal by their text", 'url("https://example.com/a") == url("https://example.com/a") && url("/a") != url("/b")'),
    ("URL equality after parsing", 'url("HTTP://example.com/a b") == url("http://example.com/a%20b")'),
    # errors absorbed
    ("a parse error absorbed by ||", 'ip("nope").family() == 4 || true'),
]


@pytest.mark.parametrize("expr", [c[1] for c in TRUE], ids=[c[0] for c in TRUE])
def test_network_library_true(expr: str) -> None:
    assert evaluate(compile_selector(expr), device_activation("nic.example.com", DEV)) is True


ERRORS = [
    ("an IPv4 field above 255", 'ip("127.0.0.256").family() == 4',
     'IP Address "127.0.0.256" parse error during conversion from string: '
     'ParseAddr("127.0.0.256"): IPv4 field has value >255'),
    ("a leading zero", 'ip("01.2.3.4").family() == 4',
     'ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero'),
    ("too short", 'ip("1.2.3").family() == 4', 'ParseAddr("1.2.3"): IPv4 address too short'),
    ("too long", 'ip("1.2.3.4.5").family() == 4', 'ParseAddr("1.2.3.4.5"): IPv4 address too long'),
    ("an empty field", 'ip("1..2.3").family() == 4',
     'ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")'),
    ("three colons", 'ip(":::1").family() == 6',
     'ParseAddr(":::1"): each colon-separated field must have at least one digit (at ":1")'),
    ("two ellipses", 'ip("1::2::3").family() == 6', 'ParseAddr("1::2::3"): multiple :: in address (at ":3")'),
    ("a long hex field", 'ip("12345::1").family() == 6',
     'ParseAddr("12345::1"): each colon-separated field must have at most 4 hex digits (at "12345::1")'),
    ("nine fields", 'ip("1:2:3:4:5:6:7:8:9").family() == 6',
     'ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")'),
    ("no address", 'ip("abc").family() == 4', 'ParseAddr("abc"): unable to parse IP'),
    ("a zone alone", 'ip("%eth0").family() == 6', 'ParseAddr("%eth0"): missing IPv6 address'),
    ("an empty zone", 'ip("fe80::1%").family() == 6', 'ParseAddr("fe80::1%"): zone must be a non-empty string'),
    ("an IPv4-mapped IPv6 address", 'ip("::ffff:1.2.3.4").family() == 6',
     'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ("a zone", 'ip("fe80::1%eth0").family() == 6', 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ("ip.isCanonical of a bad address", 'ip.isCanonical("1.2.3")', 'ParseAddr("1.2.3"): IPv4 address too short'),
    ("an IP compared with a dynamic string", f'ip("10.1.2.3") == {A}.ip', "no such overload"),
    ("family of a dynamic string", f"{A}.ip.family() == 4", "no such overload"),
    ("no bits after the slash", 'cidr("192.168.0.0/").prefixLength() == 1',
     'network address parse error during conversion from string: network address parse error during conversion '
     'from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""'),
    ("a prefix too long", 'cidr("192.168.0.0/33").prefixLength() == 1',
     'netip.ParsePrefix("192.168.0.0/33"): prefix length out of range'),
    ("no slash", 'cidr("192.168.0.0").prefixLength() == 1', "netip.ParsePrefix(\"192.168.0.0\"): no '/'"),
    ("a bad address in a CIDR", 'cidr("1.2.3.256/8").prefixLength() == 8',
     'netip.ParsePrefix("1.2.3.256/8"): ParseAddr("1.2.3.256"): IPv4 field has value >255'),
    ("a zone in a CIDR", 'cidr("fe80::1%eth0/64").prefixLength() == 64',
     'netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix'),
    ("an IPv4-mapped CIDR", 'cidr("::ffff:1.2.3.4/120").prefixLength() == 1',
     'network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" '
     "is not allowed"),
    ("containsIP of a bad string", 'cidr("10.0.0.0/8").containsIP("10.0.0")', 'ParseAddr("10.0.0"): IPv4 address too short'),
    ("a bad port", 'url("https://a:b:c/").getHost() == ""',
     'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host'),
    ("a relative path", 'url("../relative-path").getHost() == ""',
     'URL parse error during conversion from string: parse "../relative-path": invalid URI for request'),
    ("an empty URL", 'url("").getHost() == ""', 'parse "": empty url'),
    ("no scheme before the colon", 'url(":foo").getHost() == ""', 'parse ":foo": missing protocol scheme'),
    ("a space in the host", 'url("http://ex ample.com/").getHost() == ""',
     'parse "http://ex ample.com/": invalid character " " in host name'),
    ("a bad escape", 'url("/a%zz").getHost() == ""', 'parse "/a%zz": invalid URL escape "%zz"'),
    ("an unclosed IPv6 host", 'url("http://[::1/").getHost() == ""', "parse \"http://[::1/\": missing ']' in host"),
    ("a control character", 'url("/a\\tb").getHost() == ""', 'parse "/a\\tb": net/url: invalid control character in URL'),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_network_library_errors(expr: str, want: str) -> None:
    with pytest.raises(CelError) as e:
        evaluate(compile_selector(expr), device_activation("nic.example.com", DEV))
    assert want in str(e.value)
