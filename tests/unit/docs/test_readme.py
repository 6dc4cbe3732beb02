"""The documentation's examples are real: every ``console`` block right after a ``<!-- readme-test -->``
line, in README.md and in docs/*.md, is run, and what it shows must be what kplan prints.

In such a block a line starting with ``$ `` is a command (a trailing backslash continues it on the
next line); the lines up to the next command are its expected stdout. A line that is exactly
``...`` stands for any number of lines, so a long output can be shown in part. Commands run with
``sh`` from the project root, with ``kplan`` being this checkout (``python -m kplan``) and stdout a
pipe (no colour); stderr is not compared unless the command redirects it. Wall-clock figures
(``loadSeconds``, ``scheduleSeconds``, JUnit ``time``) are masked on both sides.

After an intended change of output, rewrite the blocks without ``...`` with
``KPLAN_UPDATE_GOLDEN=1 python -m pytest tests/unit/docs/test_readme.py`` and review the diff.
``-k docs/whatif.md`` runs the examples of one page.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
#: the pages whose examples are tested: the README and every page of docs/
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"
MARKER = "<!-- readme-test -->"
ELLIPSIS = "..."
_VOLATILE = (
    (re.compile(r'("?(?:loadSeconds|scheduleSeconds)"?:\s*)[0-9.eE+-]+'), r"\1<seconds>"),
    (re.compile(r'( time=)"[0-9.]+"'), r'\1"<seconds>"'),
)


def mask(text: str) -> str:
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


@dataclass
class Step:
    command: str
    expected: list[str]
    #: 0-based line (of its page) of the command's last line (its output starts on the next one)
    last: int = -1


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    steps: list[Step]
    page: Path = README

    @property
    def name(self) -> str:
        return self.page.relative_to(ROOT).as_posix()

    @property
    def title(self) -> str:
        return f"{self.name} line {self.line}: {self.steps[0].command[:60]}"


def parse_steps(lines: list[str], offset: int = 0) -> list[Step]:
    """The commands and outputs of a block's ``lines``, the first of which is the page's line ``offset``."""
    steps: list[Step] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if not steps:
                raise ValueError(f"output before the first command: {line!r}")
            steps[-1].expected.append(line)
            i += 1
            continue
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1].rstrip() + " " + lines[i].strip()
        steps.append(Step(command, [], offset + i))
        i += 1
    return steps


def blocks(text: str, page: Path = README) -> list[Block]:
    lines = text.splitlines()
    out = []
    for n, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        fence = n + 1
        if fence >= len(lines) or lines[fence].strip() != "```console":
            raise ValueError(f"{page.name}:{n + 1}: {MARKER} must be followed by a ```console block")
        end = next(i for i in range(fence + 1, len(lines)) if lines[i].strip() == "```")
        out.append(Block(fence + 1, parse_steps(lines[fence + 1:end], fence + 1), page))
    return out


def matches(expected: list[str], got: list[str]) -> bool:
    """``...`` lines match any run of lines; everything else line by line, in order."""
    parts: list[list[str]] = [[]]
    for line in expected:
        if line == ELLIPSIS:
            parts.append([])
        else:
            parts[-1].append(line)
    if len(parts) == 1:
        return got == parts[0]
    first, *middle, last = parts
    if got[:len(first)] != first or (last and got[-len(last):] != last) or len(got) < len(first) + len(last):
        return False
    pos, end = len(first), len(got) - len(last)
    for part in middle:
        while pos + len(part) <= end and got[pos:pos + len(part)] != part:
            pos += 1
        if pos + len(part) > end:
            return False
        pos += len(part)
    return True


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a ``kplan`` that runs this checkout, for the front of PATH."""
    folder = tmp_path_factory.mktemp("bin")
    exe = folder / "kplan"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kplan "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return folder


def run(command: str, shim: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "KPLAN_UPDATE_GOLDEN")}
    env.update(PATH=f"{shim}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT), COLUMNS="100")
    proc = subprocess.run(["sh", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, timeout=300)
    return proc.stdout.splitlines()


BLOCKS = [block for page in PAGES for block in blocks(page.read_text(), page)]


def test_the_documentation_has_tested_examples() -> None:
    """The README shows one tested example per main command; the pages of docs/ carry the others
    (21 in all when the README was split into docs/)."""
    assert len([b for b in BLOCKS if b.page == README]) >= 6
    assert len(BLOCKS) >= 21


@pytest.mark.parametrize("block", BLOCKS, ids=[b.title for b in BLOCKS])
def test_the_readme_shows_what_kplan_prints(block: Block, shim: Path) -> None:
    outputs = [run(step.command, shim) for step in block.steps]
    if UPDATE and not any(ELLIPSIS in step.expected for step in block.steps):
        _rewrite(block, outputs)
        return
    for step, out in zip(block.steps, outputs, strict=True):
        got = [mask(line).rstrip() for line in out]
        want = [mask(line).rstrip() for line in step.expected]
        assert matches(want, got), (f"{block.name} block at line {block.line}, command {step.command!r} prints:\n"
                                    + "\n".join(got))


def _rewrite(old: Block, outputs: list[list[str]]) -> None:
    """Replace the outputs of the tested block ``old`` by ``outputs``. Its page is parsed again (an
    earlier rewrite may have moved the block), and the commands are rewritten from the last up so
    that their line numbers hold."""
    text = old.page.read_text()
    index = [b for b in BLOCKS if b.page == old.page].index(old)
    block = blocks(text, old.page)[index]
    lines = text.splitlines()
    for step, out in reversed(list(zip(block.steps, outputs, strict=True))):
        end = step.last + 1
        while not lines[end].startswith("$ ") and lines[end].strip() != "```":
            end += 1
        lines[step.last + 1:end] = [line.rstrip() for line in out]
    old.page.write_text("\n".join(lines) + "\n")


PARSING = [
    ("a command and its output", ["$ kplan x", "a", "b"], [Step("kplan x", ["a", "b"], 0)]),
    ("a continued command", ["$ kplan x \\", "    --y", "a"], [Step("kplan x --y", ["a"], 1)]),
    ("two commands", ["$ a", "1", "$ b"], [Step("a", ["1"], 0), Step("b", [], 2)]),
]


@pytest.mark.parametrize(("lines", "steps"), [c[1:] for c in PARSING], ids=[c[0] for c in PARSING])
def test_parsing(lines: list[str], steps: list[Step]) -> None:
    assert parse_steps(lines) == steps


MATCHING = [
    ("equal lines", ["a", "b"], ["a", "b"], True),
    ("a missing line", ["a", "b"], ["a"], False),
    ("an ellipsis in the middle", ["a", "...", "z"], ["a", "b", "c", "z"], True),
    ("an ellipsis at the end", ["a", "..."], ["a", "b"], True),
    ("an ellipsis does not excuse a wrong end", ["a", "...", "z"], ["a", "b", "y"], False),
    ("lines between ellipses are found in order", ["a", "...", "c", "...", "e"], ["a", "b", "c", "d", "e"], True),
    ("lines between ellipses must exist", ["a", "...", "x", "...", "e"], ["a", "b", "c", "d", "e"], False),
]


@pytest.mark.parametrize(("want", "got", "ok"), [c[1:] for c in MATCHING], ids=[c[0] for c in MATCHING])
def test_matching(want: list[str], got: list[str], ok: bool) -> None:
    assert matches(want, got) == ok
