"""Names, hashes and uids the controllers and the API server give to the objects they create.

Upstream algorithms, mirrored:

* ``controller.ComputeHash`` (pkg/controller/controller_utils.go; used for a Deployment's
  ``pod-template-hash`` and a DaemonSet's ``controller-revision-hash``): FNV-1a 32 over the pod
  template, then, when ``status.collisionCount`` is set, over its value as 8 little-endian bytes
  (a uint32 and four zero bytes), rendered with ``rand.SafeEncodeString`` of the decimal sum.
* ``history.HashControllerRevision`` (pkg/controller/history/controller_history.go; a
  StatefulSet's revision name ``<set>-<hash>``): FNV-1 32 over the revision's raw patch
  ``{"spec":{"template":{...,"$patch":"replace"}}}``, then the decimal collision count.
* ``rand.SafeEncodeString`` / ``rand.String`` (apimachinery/pkg/util/rand): the alphabet
  ``bcdfghjklmnpqrstvwxz2456789``; ``names.SimpleNameGenerator``: ``generateName`` cut to 58
  characters plus 5 random ones.

Deviation: upstream hashes the API-server-defaulted Go object (``spew`` dump of the struct for
ComputeHash, ``encoding/json`` of the defaulted object for revisions); kplan hashes the
template as written, serialised canonically (sorted keys, compact, Go's HTML escaping). The
hash has upstream's shape and changes exactly when the written template changes, but its value
differs from the one a live cluster computes. The random 5-character suffix is drawn from a
generator seeded by ``--seed`` and the workload's identity, so a run is reproducible and adding
one workload does not rename the pods of another.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from typing import Any

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
#: names.SimpleNameGenerator: maxNameLength 63 - randomLength 5
MAX_GENERATE_NAME_PREFIX = 58
RANDOM_LENGTH = 5
_ALPHABET_SIZE = len(ALPHANUMS)
_ALPHABET_BITS = _ALPHABET_SIZE.bit_length()
#: uuid.UUID(version=4): the variant bits (RFC 4122: 10) and the version nibble (4) overwritten
_UUID_KEEP = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID_SET = (0x8000 << 48) | (4 << 76)

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv32a(data: bytes, h: int = _FNV_OFFSET) -> int:
    """hash/fnv New32a: xor, then multiply."""
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def fnv32(data: bytes, h: int = _FNV_OFFSET) -> int:
    """hash/fnv New32: multiply, then xor."""
    for b in data:
        h = ((h * _FNV_PRIME) & 0xFFFFFFFF) ^ b
    return h


def safe_encode_string(s: str) -> str:
    """rand.SafeEncodeString: each character mapped into an alphabet without vowels."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def go_json(obj: Any) -> bytes:
    """encoding/json of a map[string]interface{}: sorted keys, compact, <, > and & escaped."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return text.encode("utf-8")


def compute_hash(template: Any, collision_count: int | None) -> str:
    """controller.ComputeHash (see the module docstring for the deviation)."""
    h = fnv32a(go_json(template))
    if collision_count is not None:
        h = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), h)
    return safe_encode_string(str(h))


def revision_hash(template: Any, collision_count: int | None) -> str:
    """history.HashControllerRevision over a StatefulSet's template patch."""
    patch = {"spec": {"template": {**template, "$patch": "replace"}}}
    h = fnv32(go_json(patch))
    if collision_count is not None:
        h = fnv32(str(collision_count).encode(), h)
    return safe_encode_string(str(h))


class NameGenerator:
    """Random suffixes and uids, seeded: the API server's generateName and uid, reproducibly."""

    def __init__(self, seed: int, scope: str) -> None:
        # a str seed is hashed with SHA-512 by random.Random, independent of PYTHONHASHSEED
        self._rng = random.Random(f"kplan/{seed}/{scope}")
        self._given: set[str] = set()

    def suffix(self, n: int = RANDOM_LENGTH) -> str:
        # the draws of randrange(len(ALPHANUMS)) (Random._randbelow_with_getrandbits: getrandbits of
        # the length's bit count, again while out of range), without its two calls a character:
        # names are drawn for every replica of every workload at load
        getrandbits = self._rng.getrandbits
        chars: list[str] = []
        while len(chars) < n:
            r = getrandbits(_ALPHABET_BITS)
            if r < _ALPHABET_SIZE:
                chars.append(ALPHANUMS[r])
        return "".join(chars)

    def generate(self, base: str) -> str:
        """SimpleNameGenerator.GenerateName."""
        if len(base) > MAX_GENERATE_NAME_PREFIX:
            base = base[:MAX_GENERATE_NAME_PREFIX]
        # 27^5 suffixes: among 5,000 replicas two draw the same one more often than not. The API
        # server refuses the second create (AlreadyExists) and the controller tries again with a
        # new name; drawing again here is that retry
        name = base + self.suffix()
        while name in self._given:
            name = base + self.suffix()
        self._given.add(name)
        return name

    def reserve(self, names: Iterable[str]) -> None:
        """Names that exist already: ``generate`` draws again where it would give one of them, as
        the controller tries again after the API server's AlreadyExists."""
        self._given.update(names)

    def uid(self) -> str:
        """str(uuid.UUID(int=getrandbits(128), version=4)), written out: a third of its cost."""
        bits = (self._rng.getrandbits(128) & _UUID_KEEP) | _UUID_SET
        h = f"{bits:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
