"""--kube-version and --feature-gates through the real entry point, on every command that runs the
scheduler: the release the cluster states is used (with one warning when kplan does not model it),
an asked-for release kplan does not model exits 2 in one line, -v names the release and gates,
and ``kplan --version`` lists the releases modelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kplan.cli.app import main
from kplan.io.kube import ANNOTATION_PREFIX

ROOT = Path(__file__).resolve().parents[3]
PENDING = "tests/fixtures/planning/replica.yaml"

COMMANDS = [
    ["simulate", PENDING, "-v"],
    ["explain", "pod", "worker", "-f", PENDING],
    ["whatif", PENDING, "-v"],
    ["capacity", PENDING],
    ["sweep", PENDING, "--seeds", "1", "-v"],
]


@pytest.fixture(autouse=True)
def _project_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "120")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    code = e.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err


def _node(name: str, kubelet: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "nodeInfo": {"kubeletVersion": kubelet}}}


def _cluster(tmp_path: Path, *, server: str | None = None, kubelet: str = "v1.34.1") -> str:
    doc: dict[str, object] = {"apiVersion": "v1", "kind": "List", "items": [_node("node-a1", kubelet)]}
    if server is not None:
        doc["metadata"] = {"annotations": {ANNOTATION_PREFIX + "server-version": server}}
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    return str(path)


WARNINGS = [
    ("a snapshot of a 1.29 server", {"server": "v1.29.4"},
     "warning: the cluster runs Kubernetes 1.29; kplan models kube-scheduler 1.34, the results are 1.34's"),
    ("a snapshot of a 1.39 server", {"server": "v1.39.0", "kubelet": "v1.39.0"},
     "warning: the cluster runs Kubernetes 1.39; kplan models kube-scheduler 1.38, the results are 1.38's"),
    ("a node list whose kubelets run 1.31", {"kubelet": "v1.31.13-eks-3025e55"},
     "warning: the cluster's newest kubelet runs Kubernetes 1.31 (its control plane is that or newer); kplan "
     "models kube-scheduler 1.34, the results are 1.34's"),
    ("a 1.34 snapshot", {"server": "v1.34.1"}, None),
    ("a 1.35 snapshot", {"server": "v1.35.4"}, None),
    ("a 1.36 snapshot", {"server": "v1.36.3"}, None),
    ("an old snapshot without the version, 1.34 kubelets", {}, None),
]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
@pytest.mark.parametrize(("name", "cluster", "warning"), WARNINGS, ids=[w[0] for w in WARNINGS])
def test_the_release_the_cluster_states(capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str],
                                        name: str, cluster: dict[str, str], warning: str | None) -> None:
    code, _, err = run(capsys, *command, "-c", _cluster(tmp_path, **cluster), "-o", "json")
    assert code in (0, 1), err
    release_lines = [line for line in err.splitlines() if "Kubernetes" in line]
    assert release_lines == ([warning] if warning else [])
    if "-v" in command:
        # the release stated, or for older clusters the oldest modelled one, or 1.38 for a 1.39 server
        modelled = {"v1.39.0": "1.38", "v1.36.3": "1.36", "v1.35.4": "1.35"}.get(cluster.get("server", ""), "1.34")
        assert f"modelling kube-scheduler {modelled} (default feature gates)" in err.splitlines()


ERRORS = [
    (["--kube-version", "1.31"],
     "error: --kube-version 1.31: kplan models kube-scheduler 1.34, 1.35, 1.36, 1.37, 1.38 only"),
    (["--kube-version", "1.39"],
     "error: --kube-version 1.39: kplan models kube-scheduler 1.34, 1.35, 1.36, 1.37, 1.38 only"),
    (["--feature-gates", "NoSuchGate=true"],
     'error: invalid argument "NoSuchGate=true" for "--feature-gates" flag: unrecognized feature gate: NoSuchGate'),
    (["--feature-gates", "DRAAdminAccess=maybe"],
     'error: invalid argument "DRAAdminAccess=maybe" for "--feature-gates" flag: invalid value of '
     'DRAAdminAccess=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
@pytest.mark.parametrize(("flags", "message"), ERRORS, ids=[" ".join(e[0]) for e in ERRORS])
def test_an_asked_for_release_or_gate_kplan_cannot_model(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        command: list[str], flags: list[str], message: str) -> None:
    code, out, err = run(capsys, *[a for a in command if a != "-v"], "-c", _cluster(tmp_path, server="v1.31.0"),
                         *flags)
    assert (code, out, err.splitlines()) == (2, "", [message])


def test_gates_at_their_defaults_and_verbose(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "simulate", PENDING, "-c", _cluster(tmp_path, server="v1.29.0"), "--kube-version",
                       "1.34", "--feature-gates", "DRAAdminAccess=true,DRADeviceTaints=false", "-v", "-o", "json")
    assert code in (0, 1)
    # asked for explicitly: no warning about the cluster's 1.29
    assert [line for line in err.splitlines() if "Kubernetes" in line] == []
    assert "modelling kube-scheduler 1.34 (default feature gates)" in err.splitlines()


def test_version_lists_the_releases_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip().endswith("(models kube-scheduler v1.34.1, v1.35.4, v1.36.3, v1.37.2, "
                                                "v1.38.0-beta.0; releases modelled: 1.34, 1.35, 1.36, 1.37, 1.38)")


PATCH = [
    ("another patch of a modelled release is said once", "1.34.7",
     ["warning: --kube-version 1.34.7: kplan models 1.34 as kube-scheduler v1.34.1; the results are v1.34.1's"]),
    ("the patch modelled says nothing", "v1.34.1", []),
    ("a minor release says nothing", "1.34", []),
]


@pytest.mark.parametrize(("version", "warnings"), [c[1:] for c in PATCH], ids=[c[0] for c in PATCH])
def test_a_patch_release_not_modelled_apart_is_said(capsys: pytest.CaptureFixture[str], version: str,
                                                    warnings: list[str]) -> None:
    # issue 47 item 17: --kube-version 1.34.7 was accepted silently where v1.34.1 is modelled
    code, _, err = run(capsys, "simulate", PENDING, "-c", "tests/fixtures/planning/cluster.yaml",
                       "--kube-version", version)
    assert code == 0
    assert [line for line in err.splitlines() if "--kube-version" in line] == warnings


def test_kube_version_completes_releases_not_file_names() -> None:
    from kplan.cli.options import kube_versions
    from kplan.framework.release_tables import RELEASES

    assert kube_versions("") == [str(v) for v in RELEASES]
    assert kube_versions("1.3") == [str(v) for v in RELEASES if str(v).startswith("1.3")]
    assert kube_versions("fix") == []


def test_simulates_help_names_the_releases_and_no_option_it_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    # issue 47 item 17: "kube-scheduler v1.34" alone, and --hpa's help spoke of a --scale simulate lacks
    from kplan.framework.release_tables import RELEASES

    scheduler_versions = [r.scheduler_version for r in RELEASES.values()]
    code, out, _ = run(capsys, "simulate", "--help")
    text = " ".join(out.split())
    assert code == 0 and all(p in text for p in scheduler_versions)
    assert "--scale" not in text
