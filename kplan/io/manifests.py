"""Reading Kubernetes objects from files, folders and stdin.

Accepts multi-document YAML, JSON (one object, a ``kind: List`` or any ``*List``), and
``kubectl get -o yaml|json`` output. JSON goes through the JSON parser; a YAML stream whose
documents are each one JSON object (as the conformance files are) is split and parsed as JSON
too; anything else goes through ruamel.yaml's C-backed safe loader, and what its libyaml (0.1, older
than go-yaml's rules) refuses is read again by ruamel.yaml's own parser, which follows YAML 1.2 as
go-yaml and libyaml 0.2 do (a ``:`` inside a plain scalar of a flow collection,
``{docs: http://example.com:8080/x}``). Every object keeps a
``source`` string ("path: document N") for error messages.

Hostile input ends as an InputError, never as a crash or a hang: the C YAML composer recurses
on the C stack (a document nested 200,000 deep kills the process), so the YAML event stream
is first read for its nesting depth; aliases are expanded only up to a budget, as the API
server's YAML decoder (sigs.k8s.io/yaml, go-yaml) refuses "excessive aliasing"; JSON too deep
for the decoder, and numbers too long to convert, are refused too.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from kplan.errors import InputError
from kplan.model.raw import RawObject

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json", ".yaml.gz", ".yml.gz", ".json.gz")
#: deepest nesting of a document kplan reads; Kubernetes objects nest about 15 levels, CRD
#: schemas a few dozen, and kplan's own copies and comparisons recurse along the nesting
MAX_DEPTH = 100
#: most values a YAML document may expand to through its aliases (a "billion laughs" stays small
#: on disk and grows exponentially when walked)
MAX_EXPANDED_VALUES = 1_000_000


def _yaml_loader(pure: bool = False) -> Any:
    from ruamel.yaml import YAML

    try:
        return YAML(typ="safe", pure=pure)
    except Exception:  # pragma: no cover - the C extension is a declared dependency
        return YAML(typ="safe", pure=True)


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files as given; folders walked recursively for manifest files, in sorted order."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
        elif os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(MANIFEST_SUFFIXES):
                        found.append(os.path.join(root, f))
            if not found:
                raise InputError(f"{p}: no *.yaml, *.yml or *.json files in this folder")
            out.extend(found)
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return out


def read_text(path: str, stdin: io.TextIOBase | None = None) -> str:
    if path == "-":
        return (stdin or sys.stdin).read()
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read()
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None


def _json_documents(text: str, name: str) -> list[Any] | None:
    """A whole-file JSON value, or a '---'-separated stream of JSON objects; None otherwise."""
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "{[":
        try:
            return [_json_value(stripped, name)]
        except json.JSONDecodeError:
            pass
    if "{" not in stripped[:4096]:
        return None
    docs = []
    for chunk in _split_documents(text):
        body = chunk.strip()
        if not body:
            continue
        if body[0] != "{":
            return None
        try:
            docs.append(_json_value(body, name))
        except json.JSONDecodeError:
            return None
    return docs


def _json_value(text: str, name: str) -> Any:
    """``json.loads``, with the decoder's own limits as InputErrors: nesting beyond the
    interpreter's recursion limit, and integers longer than int() converts (4,300 digits)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{name}: not valid JSON: nested too deeply") from None
    except json.JSONDecodeError:
        raise
    except ValueError as e:
        raise InputError(f"{name}: not valid JSON: {_number_problem(e)}") from None


def _number_problem(e: ValueError) -> str:
    """The decoders' complaint about a number, in the user's terms."""
    if "integer string conversion" in str(e):
        return "a number has more than 4300 digits"
    return str(e).split(";")[0]


def _split_documents(text: str) -> Iterator[str]:
    start = 0
    for line_start, line in _lines(text):
        if line.rstrip() == "---" or line.startswith("--- "):
            yield text[start:line_start]
            start = line_start + len(line) + 1
    yield text[start:]


def _lines(text: str) -> Iterator[tuple[int, str]]:
    pos = 0
    for line in text.split("\n"):
        yield pos, line
        pos += len(line) + 1


def parse_documents(text: str, name: str) -> list[Any]:
    docs = _json_documents(text, name)
    if docs is not None:
        return docs
    from ruamel.yaml.error import MarkedYAMLError

    try:
        try:
            aliases, docs = _load_yaml(text, name, pure=False)
        except MarkedYAMLError:
            # ruamel.yaml.clib's libyaml 0.1 refuses a ':' inside a flow collection's plain scalar
            # ({a: http://h:8080/x}), which YAML 1.2, go-yaml and libyaml 0.2 accept; ruamel.yaml's
            # own parser follows 1.2 (slower: only for what the C parser refused)
            aliases, docs = _load_yaml(text, name, pure=True)
    except InputError:
        raise
    except Exception as e:  # ruamel raises many error classes; all mean "not YAML"
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(e, "problem", None) or (str(e).splitlines() or [type(e).__name__])[0]
        if isinstance(e, ValueError) and "integer string conversion" in str(e):
            problem = _number_problem(e)
        raise InputError(f"{name}: not valid YAML or JSON{where}: {problem}") from None
    if aliases:
        for i, doc in enumerate(docs, 1):
            check_nesting(doc, f"{name}: document {i}" if len(docs) > 1 else name)
    return docs


def _load_yaml(text: str, name: str, *, pure: bool) -> tuple[int, list[Any]]:
    """The number of aliases and the documents of a YAML stream, read by the C parser or the pure one."""
    aliases = _yaml_shape(text, name, pure=pure)
    return aliases, list(_yaml_loader(pure).load_all(text))


def _yaml_shape(text: str, name: str, *, pure: bool = False) -> int:
    """The number of aliases in the YAML stream, after checking its nesting depth on the
    parser's events (both parsers keep explicit stacks; only the composers recurse)."""
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent

    depth = aliases = 0
    for event in _yaml_loader(pure).parse(text):
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark is not None else 0
                raise InputError(f"{name}: not valid YAML or JSON (line {line}): nested deeper than {MAX_DEPTH} "
                                 "levels")
        elif isinstance(event, CollectionEndEvent):
            depth -= 1
        elif isinstance(event, AliasEvent):
            aliases += 1
    return aliases


def check_nesting(doc: Any, source: str) -> None:
    """Refuse a document nested deeper than MAX_DEPTH, expanding to more than
    MAX_EXPANDED_VALUES values, or holding itself (a recursive YAML alias). Shared values are
    measured once (their expanded size is remembered), so a "billion laughs" costs what it
    weighs on disk."""
    sizes: dict[int, tuple[int, int]] = {}   # id → (values, depth) of a finished container
    open_ids: set[int] = set()
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        value, done = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        key = id(value)
        children = list(value.values()) if isinstance(value, dict) else value
        if done:
            open_ids.discard(key)
            inner = [sizes.get(id(c), (1, 0)) for c in children]
            size = 1 + sum(s for s, _ in inner)
            depth = 1 + max((d for _, d in inner), default=0)
            if depth > MAX_DEPTH:
                raise InputError(f"{source}: nested deeper than {MAX_DEPTH} levels")
            if size > MAX_EXPANDED_VALUES:
                raise InputError(f"{source}: document contains excessive aliasing (it expands to more than "
                                 f"{MAX_EXPANDED_VALUES:,} values)")
            sizes[key] = (size, depth)
            continue
        if key in sizes:
            continue
        if key in open_ids:
            raise InputError(f"{source}: document contains a recursive alias (a value that holds itself)")
        open_ids.add(key)
        stack.append((value, True))
        stack.extend((c, False) for c in children if isinstance(c, (dict, list)) and id(c) not in sizes)


def flatten(doc: Any, source: str) -> Iterator[RawObject]:
    """One object per Kubernetes object: Lists (``kind: List``, ``*List``) are opened."""
    if doc is None:
        return
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a Kubernetes object, got {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc and doc["items"] is None:
        # Go marshals an empty (nil) slice as null: kubectl cluster-info dump prints every empty list so
        return
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc and not isinstance(doc["items"], list):
        raise InputError(f"{source}: {kind}: items: Invalid value: expected a list of objects, got "
                         f"{type(doc['items']).__name__}")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        item_kind = kind[: -len("List")]
        for i, item in enumerate(doc["items"]):
            if isinstance(item, dict) and not item.get("kind") and item_kind:
                item = _typed_item(item, item_kind, doc.get("apiVersion"))
            yield from flatten(item, f"{source}: items[{i}]")
        return
    if not kind:
        raise InputError(f"{source}: kind: Required value (not a Kubernetes object)")
    for field in ("kind", "apiVersion"):
        if doc.get(field) is not None and not isinstance(doc.get(field), str):
            raise InputError(f"{source}: {field}: Invalid value: {json.dumps(doc[field], default=str)[:80]}: must be "
                             "a string")
    yield RawObject(doc, source)


_WS = re.compile(r"[ \t\n\r]*")


def _skip(text: str, pos: int) -> int:
    """The position after the JSON whitespace at ``pos``."""
    m = _WS.match(text, pos)
    assert m is not None  # the pattern matches the empty string
    return m.end()
_DECODER = json.JSONDecoder()
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]  # the C string scanner json.loads uses


def _stream_list(text: str, source: str) -> Iterator[RawObject]:
    """The objects of one top-level JSON object, decoded one ``items`` entry at a time.

    A 150,000-pod snapshot decoded whole holds every pod as dicts at once; decoded item by item,
    each pod's dicts are freed as soon as it has been parsed. Items without a ``kind`` wait
    until the List's own ``kind`` is known (kubectl prints it after the items).
    """
    try:
        pos = _skip(text, 0) + 1  # the caller checked the opening brace
        header: dict[str, Any] = {}
        waiting: list[tuple[int, Any]] = []
        count = 0
        has_items = False
        pos = _skip(text, pos)
        while not text.startswith("}", pos):
            if text[pos] != '"':
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
            key, pos = _scanstring(text, pos + 1)
            pos = _skip(text, pos)
            if text[pos] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
            pos = _skip(text, pos + 1)
            if key == "items" and text.startswith("[", pos):
                has_items = True
                pos = _skip(text, pos + 1)
                while not text.startswith("]", pos):
                    item, pos = _DECODER.raw_decode(text, pos)
                    if isinstance(item, dict) and not item.get("kind") and not isinstance(header.get("kind"), str):
                        waiting.append((count, item))
                    else:
                        yield from _list_item(item, header.get("kind"), f"{source}: items[{count}]",
                                              header.get("apiVersion"))
                    count += 1
                    pos = _skip(text, pos)
                    if text.startswith(",", pos):
                        pos = _skip(text, pos + 1)
                    elif not text.startswith("]", pos):
                        raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
                pos += 1
            else:
                header[key], pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text.startswith(",", pos):
                pos = _skip(text, pos + 1)
            elif not text.startswith("}", pos):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        rest = _skip(text, pos + 1)
        if rest != len(text) and not text.startswith(("{", _LOGS_START), rest):
            raise json.JSONDecodeError("Extra data", text, pos + 1)
    except (json.JSONDecodeError, IndexError) as e:
        where = f" (line {e.lineno}, column {e.colno})" if isinstance(e, json.JSONDecodeError) else ""
        msg = e.msg if isinstance(e, json.JSONDecodeError) else "unexpected end of data"
        raise InputError(f"{source}: not valid JSON{where}: {msg}") from None
    except RecursionError:
        raise InputError(f"{source}: not valid JSON: nested too deeply") from None
    except ValueError as e:  # an integer too long to convert
        raise InputError(f"{source}: not valid JSON: {_number_problem(e)}") from None
    kind = header.get("kind")
    if count and not (isinstance(kind, str) and kind.endswith("List")):
        raise InputError(f"{source}: kind: a top-level object with items must be a List, not {kind!r}")
    if not has_items:
        yield from flatten(header, source)
    for i, item in waiting:
        yield from _list_item(item, kind, f"{source}: items[{i}]", header.get("apiVersion"))
    if rest != len(text):
        yield from _concatenated(text, rest, source)


#: how ``kubectl cluster-info dump`` (to stdout) frames the container logs between its JSON lists
_LOGS_START = "==== START logs for "
_LOGS_END = "\n==== END logs for "


def _concatenated(text: str, pos: int, source: str) -> Iterator[RawObject]:
    """The further JSON documents of a concatenated stream, as ``kubectl cluster-info dump``
    prints them (a NodeList, then each namespace's lists), skipping the logs between them."""
    n = 2
    while True:
        pos = _skip(text, pos)
        if pos >= len(text):
            return
        if text.startswith(_LOGS_START, pos):
            end = text.find(_LOGS_END, pos)
            if end < 0:
                line = text.count("\n", 0, pos) + 1
                raise InputError(f"{source}: line {line}: a container log section without its '==== END logs' line")
            eol = text.find("\n", end + 1)
            pos = len(text) if eol < 0 else eol + 1
            continue
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise InputError(f"{source}: not valid JSON (line {e.lineno}, column {e.colno}): {e.msg}") from None
        except RecursionError:
            raise InputError(f"{source}: not valid JSON: nested too deeply") from None
        except ValueError as e:
            raise InputError(f"{source}: not valid JSON: {_number_problem(e)}") from None
        yield from flatten(value, f"{source}: document {n}")
        n += 1


def _list_item(item: Any, list_kind: Any, source: str, list_version: Any = None) -> Iterator[RawObject]:
    if isinstance(item, dict) and not item.get("kind") and isinstance(list_kind, str) and list_kind.endswith("List"):
        item = _typed_item(item, list_kind[: -len("List")], list_version)
    yield from flatten(item, source)


def _typed_item(item: dict[str, Any], kind: str, list_version: Any) -> dict[str, Any]:
    """An item of a typed list (``PodList``), which a typed client prints without its own kind
    and apiVersion: they are the list's."""
    out = {**item, "kind": kind}
    if kind and not item.get("apiVersion") and isinstance(list_version, str) and list_version:
        out["apiVersion"] = list_version
    return out


def _one_json_value(text: str) -> bool:
    """Whether the text is one JSON object rather than a '---'-separated stream of them."""
    # str.find is far faster than a multi-line regex over a 400 MB snapshot; JSON strings hold
    # no raw newlines, so a line starting with '---' can only be a document separator
    return not text.startswith("---") and text.find("\n---") < 0


def iter_objects(paths: Iterable[str], stdin: io.TextIOBase | None = None, *,
                 cluster: bool = False) -> Iterator[RawObject]:
    """The objects of the files, one at a time (large JSON Lists are streamed). ``cluster``: the
    files describe a cluster, and one without any document (empty, or only comments) is an error
    naming it rather than a cluster without nodes; an empty List is a cluster file all the same
    (``kubectl get pods -A -o yaml`` of a cluster without pods)."""
    for path in expand_paths(paths):
        name = "<stdin>" if path == "-" else path
        text = read_text(path, stdin)
        if text.lstrip().startswith("{") and _one_json_value(text):
            yield from _stream_list(text, name)
            continue
        docs = parse_documents(text, name)
        if cluster and all(d is None for d in docs):
            raise InputError(f"{name}: no objects: the cluster file is empty (give a snapshot, or "
                             "'kubectl get nodes,pods -A -o yaml' output)")
        for i, doc in enumerate(docs, 1):
            yield from flatten(doc, f"{name}: document {i}" if len(docs) > 1 else name)


def load_objects(paths: Iterable[str], stdin: io.TextIOBase | None = None) -> list[RawObject]:
    """The objects of the files, as they are (a cluster's objects were accepted by its API server)."""
    return list(iter_objects(paths, stdin))


def load_manifests(paths: Iterable[str], stdin: io.TextIOBase | None = None) -> list[RawObject]:
    """The objects of manifest files, checked as ``kubectl apply`` and kube-apiserver would check
    them: each within the nesting limits (they are few, and the applier copies them; a cluster's
    many objects are bounded by the decoders alone), and valid (kplan.validation). Every refused
    file and object is one line of the error: a file that is not YAML does not hide the others'
    mistakes."""
    from kplan.validation import problems

    paths = list(paths)
    lines: list[str] = []  # in the order of the files and of their objects
    objects: list[RawObject] = []
    for given in paths:
        try:
            files = expand_paths([given])
        except InputError as e:
            lines.append(str(e))
            continue
        for path in files:
            try:
                found = list(iter_objects([path], stdin))
            except InputError as e:
                lines.append(str(e))
                continue
            for obj in found:
                try:
                    check_nesting(obj.doc, obj.source)
                except InputError as e:
                    lines.append(str(e))
                    continue
                lines += problems([obj])
            objects += found
    if paths and not objects and not lines:
        # kubectl apply's words: an empty or comment-only manifest is a mistake, not "nothing to do"
        raise InputError(f"{', '.join('<stdin>' if p == '-' else p for p in paths)}: no objects passed to apply "
                         "(the manifests hold no Kubernetes object)")
    if lines:
        raise InputError("\n".join(lines))
    return objects
