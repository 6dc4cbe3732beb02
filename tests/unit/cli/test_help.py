"""Every command and option says what it does, and the global options exist on every command."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main

from kplan.cli.app import app


# typer builds click commands (its own vendored copy in recent releases): a group is a command
# with subcommands, so the test relies on that shape instead of importing click
def is_group(cmd: Any) -> bool:
    return hasattr(cmd, "commands")


def commands(group: Any, path: str = "kplan") -> Iterator[tuple[str, Any]]:
    yield path, group
    if is_group(group):
        for name, cmd in group.commands.items():
            yield from commands(cmd, f"{path} {name}")


ALL = list(commands(typer.main.get_command(app)))  # type: ignore[arg-type]
LEAVES = [(p, c) for p, c in ALL if not is_group(c)]


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[p for p, _ in ALL])
def test_every_command_and_parameter_has_help(path: str, cmd: Any) -> None:
    assert (cmd.help or "").strip(), f"{path} has no help"
    for param in cmd.params:
        assert (getattr(param, "help", None) or "").strip(), f"{path} {param.name} has no help text"


@pytest.mark.parametrize(("path", "cmd"), [(p, c) for p, c in LEAVES if not p.endswith("completion")],
                         ids=[p for p, c in LEAVES if not p.endswith("completion")])
def test_quiet_and_no_color_on_every_command(path: str, cmd: Any) -> None:
    options = {o for param in cmd.params for o in getattr(param, "opts", [])}
    assert {"--quiet", "-q", "--no-color"} <= options, path


def test_help_does_not_load_the_engine() -> None:
    # `kplan --help` and completion run often; numpy, the scheduler and Dask (kplan sweep's) load only
    # when a command runs
    import subprocess
    import sys

    code = ("import sys; from kplan.cli.app import app; "
            "print(' '.join(m for m in ('numpy', 'kplan.scheduler.simulate', 'kplan.scenario.build', 'kubernetes', "
            "'dask', 'distributed') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


SHARED = ["--filename", "--cluster", "--kubeconfig", "--context", "--namespace", "--keep-existing",
          "--scheduler-config", "--seed", "--tie-break", "--output", "--fail-on", "--verbose", "--quiet",
          "--no-color"]


@pytest.mark.parametrize("flag", SHARED)
def test_a_shared_option_is_the_same_on_every_command(flag: str) -> None:
    # kplan.cli.options defines them once: the same short name, default and metavar everywhere
    # (the help text may say what the option means to the command)
    seen: dict[str, tuple[Any, ...]] = {}
    for path, cmd in LEAVES:
        for param in cmd.params:
            if flag in getattr(param, "opts", []):
                seen[path] = (tuple(sorted(param.opts)), repr(param.default), param.metavar, param.multiple)
    assert seen, flag
    if flag == "--output":  # snapshot writes a file format, not a document: no default
        seen.pop("kplan snapshot", None)
    assert len(set(seen.values())) == 1, seen


@pytest.mark.parametrize(("path", "cmd"), LEAVES, ids=[p for p, _ in LEAVES])
def test_every_option_value_has_a_metavar_that_says_what_it_is(path: str, cmd: Any) -> None:
    # click's defaults (<str>, <int range>, <float range>) say the type, not what to give
    from typer.testing import CliRunner

    out = CliRunner().invoke(app, [*path.split()[1:], "--help"], env={"COLUMNS": "80"}).stdout
    assert not re.search(r"<(str|int|float|int range|float range|path|text)>", out), out


@pytest.mark.parametrize(("path", "cmd"), LEAVES, ids=[p for p, _ in LEAVES])
def test_arguments_are_named_in_capitals_without_their_type(path: str, cmd: Any) -> None:
    # 'Usage: kplan simulate [OPTIONS] [MANIFESTS]...', not '[manifests]...' or '{shell}:<bash|zsh|fish>'
    from typer.testing import CliRunner

    out = CliRunner().invoke(app, [*path.split()[1:], "--help"], env={"COLUMNS": "80"}).stdout
    usage = out.splitlines()[0]
    arguments = usage.split("[OPTIONS]")[1].replace("[", " ").replace("]", " ").replace("{", " ").replace("}", " ")
    assert all(w.isupper() for w in arguments.replace("...", " ").split()), usage


def test_the_command_list_is_not_cut() -> None:
    from typer.testing import CliRunner

    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "80"}).stdout
    commands_part = out.split("Commands:")[1]
    assert "..." not in commands_part and max(len(line) for line in commands_part.splitlines()) <= 80, out


def test_one_node_is_one_node(tmp_path: Any) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    root = Path(__file__).resolve().parents[3]
    (tmp_path / "node.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: solo}\n"
                                        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n")
    out = CliRunner().invoke(app, ["simulate", str(root / "tests/fixtures/planning/replica.yaml"), "-c",
                                   str(tmp_path / "node.yaml")]).stdout
    assert "1 pending pod: 1 scheduled, 0 unschedulable (1 node)." in out, out


@pytest.mark.parametrize(("command", "headings"), [
    ("whatif", ["Arguments", "Inputs", "Changes", "Scheduler", "Finding the nodes to add (--until-fit)",
                "Finding the nodes to remove (--shrink, as cluster-autoscaler's scale-down)", "Node autoscaler",
                "Output", "Help"]),
    ("sweep", ["Arguments", "Inputs", "Changes", "Scheduler", "Fit and cost", "Node autoscaler", "Workers", "Output", "Help"]),
], ids=["whatif lists its options under the headings a reader looks for",
        "sweep groups its options the same way"])
def test_a_command_s_help_groups_its_options_under_headings(command: str, headings: list[str]) -> None:
    from typer.testing import CliRunner

    out = CliRunner().invoke(app, [command, "--help"], terminal_width=100).output
    found = [line[:-1] for line in out.splitlines() if line.endswith(":") and line[:1].isupper()
             and not line.startswith("Usage")]
    assert found == headings
    # every option but --help sits under a heading of its own kind, none under the catch-all
    assert out.split("\nHelp:\n")[1].split() == ["-h,", "--help", "Show", "this", "message", "and", "exit."]


@pytest.mark.parametrize("flag", ["--add-node", "--remove-node", "--cordon", "--drain", "--scale", "--price"])
def test_whatif_and_sweep_take_the_change_options_from_one_module(flag: str) -> None:
    # kplan.cli.change_options defines them once: the same name, metavar kind and multiplicity
    found = {path: param for path, cmd in LEAVES for param in cmd.params if flag in getattr(param, "opts", [])}
    assert set(found) == {"kplan whatif", "kplan sweep"}, flag
    assert {(tuple(p.opts), p.multiple, repr(p.default)) for p in found.values()} == {((flag,), True, "[]")}
