"""Every relative link of the documentation resolves: in README.md, docs/*.md and
benchmarks/README.md, a link to a file or folder names one that exists, and a link with a
``#fragment`` names a heading (or an explicit ``<a id>``) of the page it points at, spelt as
GitHub spells heading anchors."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def prose(text: str) -> list[tuple[int, str]]:
    """(1-based line number, line) of the lines outside fenced code blocks."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link targets dropped, lower case, punctuation removed (letters,
    digits, ``_``, ``-`` and spaces kept), spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose(page.read_text()):
        out.update(_HTML_ANCHOR.findall(line))
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(page: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in prose(page.read_text()):
        for target in _LINK.findall(_CODE_SPAN.sub("", line)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, …
                continue
            out.append((n, target))
    return out


def broken(page: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for n, target in links(page):
        path, _, fragment = target.partition("#")
        dest = (page.parent / unquote(path)).resolve() if path else page
        where = f"{page.relative_to(root)}:{n}: {target}"
        if not dest.exists():
            problems.append(f"{where}: no such file or folder")
        elif fragment and (dest.suffix != ".md" or unquote(fragment) not in anchors(dest)):
            problems.append(f"{where}: no heading #{fragment} in {dest.relative_to(root)}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_pages_link_to_each_other() -> None:
    """Each page of docs/ is reachable from the README or from the docs index."""
    linked = {(page.parent / t.partition("#")[0]).resolve()
              for page in (ROOT / "README.md", ROOT / "docs" / "README.md") for _, t in links(page)}
    assert [p.name for p in PAGES[1:-1] if p.resolve() not in linked] == []


SLUGS = [
    ("words", "Fresh machine", "fresh-machine"),
    ("punctuation dropped", "kplan snapshot: live clusters, read-only", "kplan-snapshot-live-clusters-read-only"),
    ("code and a dash", "`bench_simulate.py` — `kplan simulate` on a large cluster",
     "bench_simulatepy--kplan-simulate-on-a-large-cluster"),
    ("a link keeps its text", "See [the docs](docs/README.md)", "see-the-docs"),
    ("quotes and guillemets", "Pods that fit nowhere (issue «preemption», item 3)",
     "pods-that-fit-nowhere-issue-preemption-item-3"),
]


@pytest.mark.parametrize(("heading", "anchor"), [c[1:] for c in SLUGS], ids=[c[0] for c in SLUGS])
def test_slug(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A part\n\n## A part\n")
    page.write_text("[ok](other.md#a-part-1) [file](missing.md) [anchor](other.md#nowhere) [self](#other)\n"
                    "```\n[in code](missing-too.md)\n```\n`[span](missing-three.md)`\n")
    assert broken(page, tmp_path) == ["page.md:1: missing.md: no such file or folder",
                                      "page.md:1: other.md#nowhere: no heading #nowhere in other.md",
                                      "page.md:1: #other: no heading #other in page.md"]
