"""Generate kplan's built-in AWS instance-type catalog (``--instance-types aws``).

    python tools/gen_aws_catalog.py            # writes kplan/io/catalogs/aws_instance_types.json.gz

Sources, read from the Go module cache (``go mod download`` fetches a module that is missing):
- sigs.k8s.io/karpenter@v1.15.0 kwok/examples/aws_instance_types.json: the EC2 instance types with
  their vCPUs, memory and us-west-2 spot and on-demand prices per zone (one entry per architecture
  and operating system; kplan keeps one per name, EC2's ``x86_64`` named ``amd64``, ``i386``-only
  entries dropped);
- github.com/aws/karpenter-provider-aws@v1.15.2 pkg/providers/instancetype/zz_generated.vpclimits.go:
  the ENIs and IPv4 addresses per ENI behind the ENI-limited max pods, and types.go's formulas:
  memory less 64Mi on Graviton and less the VM overhead (7.5%, rounded up to a MiB), pods
  ``ENIs * (IPv4 per ENI - 1) + 2`` (no reserved ENIs), ephemeral storage 20Gi (the AL2023 root
  volume), kube-reserved (cpu by the Bottlerocket ranges, memory ``11 * pods + 255`` Mi, 1Gi of
  storage) and the eviction threshold (100Mi memory, 10% of storage).
The output is the KWOK format (so the KWOK provider reads it too) with kplan's ``overhead`` key.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

KARPENTER = ("sigs.k8s.io/karpenter", "v1.15.0")
AWS_PROVIDER = ("github.com/aws/karpenter-provider-aws", "v1.15.2")
VM_MEMORY_OVERHEAD_PERCENT = 0.075
ROOT_VOLUME_GI = 20
OUT = Path(__file__).resolve().parent.parent / "kplan" / "io" / "catalogs" / "aws_instance_types.json.gz"
MI = 2**20


def module_dir(path: str, version: str) -> Path:
    """The module's directory in the module cache, downloading it when missing."""
    # karpenter v1.15.0 declares go 1.26.9, newer than the machine's Go: the go command fetches go1.27.3 for it
    env = {**os.environ, "GOTOOLCHAIN": os.environ.get("GOTOOLCHAIN", "go1.27.3")}
    out = subprocess.run(["go", "mod", "download", "-json", f"{path}@{version}"], capture_output=True, text=True,
                         check=True, env=env, cwd=Path(__file__).resolve().parent)
    info = json.loads(out.stdout)
    if "Dir" not in info:
        raise SystemExit(f"go mod download {path}@{version}: {info.get('Error', out.stderr)}")
    return Path(info["Dir"])


def vpc_limits(text: str) -> dict[str, tuple[int, int]]:
    """name → (ENIs of the default network card, IPv4 addresses per ENI)."""
    out = {}
    for m in re.finditer(r'^\t"([^"]+)": \{\n(.*?)^\t\},', text, re.S | re.M):
        body = m.group(2)
        ipv4 = int(re.search(r"IPv4PerInterface:\s+(\d+)", body).group(1))  # type: ignore[union-attr]
        default = int(re.search(r"DefaultNetworkCardIndex:\s+(\d+)", body).group(1))  # type: ignore[union-attr]
        cards = {int(i): int(n) for n, i in re.findall(
            r"MaximumNetworkInterfaces:\s+(\d+),\s+NetworkCardIndex:\s+(\d+)", body)}
        out[m.group(1)] = (cards[default], ipv4)
    return out


def mib(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    for suffix, size in units.items():
        if quantity.endswith(suffix):
            return int(float(quantity[: -len(suffix)]) * size) // MI
    return int(quantity) // MI


def kube_reserved_cpu_milli(cpu_milli: int) -> int:
    """kubeReservedResources' cpu: 6% of the first core, 1% of the second, 0.5% of cores 3-4,
    0.25% of the rest (each range truncated to whole millicores)."""
    total = 0
    for start, end, pct in ((0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, 1 << 31, 0.0025)):
        if cpu_milli >= start:
            span = (end - start) if cpu_milli >= end else (cpu_milli - start)
            total += int(span * pct)
    return total


def entry(name: str, variants: list[dict[str, Any]], limits: dict[str, tuple[int, int]]) -> dict[str, Any] | None:
    archs = {v["architecture"] for v in variants}
    arch = "amd64" if "x86_64" in archs else "arm64" if "arm64" in archs else None
    if arch is None:
        return None
    linux = next((v for v in variants if "linux" in v["operatingSystems"]), variants[0])
    res = linux["resources"]
    cpu_milli = int(float(res["cpu"]) * 1000)
    memory_mi = mib(str(res["memory"]))
    if arch == "arm64":
        memory_mi -= 64
    memory_mi -= math.ceil(memory_mi * MI * VM_MEMORY_OVERHEAD_PERCENT / 1024 / 1024)
    if memory_mi <= 0:
        return None
    if name in limits:
        enis, ipv4 = limits[name]
        pods = enis * (ipv4 - 1) + 2
    else:
        pods = int(res["pods"])
    storage = ROOT_VOLUME_GI * 2**30
    return {
        "name": name,
        "architecture": arch,
        "operatingSystems": sorted({os for v in variants for os in v["operatingSystems"]}),
        "resources": {"cpu": res["cpu"], "memory": f"{memory_mi}Mi", "ephemeral-storage": f"{ROOT_VOLUME_GI}Gi",
                      "pods": str(pods)},
        "offerings": linux["offerings"],
        "overhead": {
            "kubeReserved": {"cpu": f"{kube_reserved_cpu_milli(cpu_milli)}m", "memory": f"{11 * pods + 255}Mi",
                             "ephemeral-storage": "1Gi"},
            "evictionThreshold": {"memory": "100Mi", "ephemeral-storage": str(math.ceil(storage / 100 * 10))},
        },
    }


def main() -> int:
    karpenter = module_dir(*KARPENTER)
    provider = module_dir(*AWS_PROVIDER)
    types = json.loads((karpenter / "kwok" / "examples" / "aws_instance_types.json").read_text())
    limits = vpc_limits((provider / "pkg" / "providers" / "instancetype" / "zz_generated.vpclimits.go").read_text())
    by_name: dict[str, list[dict[str, Any]]] = {}
    for t in types:
        by_name.setdefault(t["name"], []).append(t)
    out = [e for name in sorted(by_name) if (e := entry(name, by_name[name], limits)) is not None]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(out, separators=(",", ":"), sort_keys=True).encode()
    OUT.write_bytes(gzip.compress(data, mtime=0))
    print(f"{OUT}: {len(out)} instance types ({len(data)} bytes of JSON)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
