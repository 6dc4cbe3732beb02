"""A table of malformed and hostile inputs: each row names what is wrong, the manifest (or
option) that carries it, the exit code and the words of the one ``error:`` line. kplan never
answers them with a traceback (70), a hang, or a schedule as if the input were valid.

Run through the real entry point (``kplan.cli.app.main``) in-process, against a small cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from kplan.cli.app import main

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = str(ROOT / "tests/fixtures/planning/cluster.yaml")


def pod(spec: str = "containers: [{name: c, image: app}]", name: str = "web", extra: str = "") -> str:
    """A pending pod in YAML flow style, with ``spec`` (and ``extra`` top-level fields) spliced in."""
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec: {{{spec}}}\n{extra}"


def container(fields: str) -> str:
    return f"containers: [{{name: c, image: app, {fields}}}]"


class Row(NamedTuple):
    manifest: str | bytes
    #: the words the one error line must contain (after ``error: ``)
    message: str
    code: int = 2
    #: extra command-line arguments (before the manifest path)
    args: tuple[str, ...] = ()
    command: str = "simulate"
    suffix: str = ".yaml"
    #: error lines: one per invalid object
    lines: int = 1


def claim_template(request: str, extra: str = "") -> str:
    """A ResourceClaimTemplate (resource.k8s.io/v1) with one request, in YAML flow style."""
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu, namespace: default}\n"
            f"spec: {{spec: {{devices: {{requests: [{request}]{extra}}}}}}}\n")


ROWS: dict[str, Row] = {
    # --- documents that are not well-formed, or too large to expand
    "a JSON array nested 200,000 deep": Row("[" * 200_000 + "]" * 200_000, "not valid JSON: nested too deeply",
                                              suffix=".json"),
    "a YAML flow sequence nested 200,000 deep": Row("a: " + "[" * 200_000 + "]" * 200_000,
                                                    "nested deeper than 100 levels"),
    "a YAML flow sequence nested 200,000 deep after a URL only YAML 1.2's rules read": Row(
        "a: [http://example.com:8080/x, " + "[" * 200_000 + "]" * 200_000 + "]", "nested deeper than 100 levels"),
    "a YAML block mapping nested 3,000 deep": Row("\n".join(" " * i + "a:" for i in range(3000)) + " 1\n",
                                                  "nested deeper than 100 levels"),
    "a pod nested 500 deep in JSON": Row('{"kind":"Pod","metadata":{"name":"a"},"spec":' + "[" * 500 + "]" * 500 + "}",
                                         "nested deeper than 100 levels", suffix=".json"),
    "a billion laughs of YAML aliases": Row(
        "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(9))
        + "kind: Pod\n", "excessive aliasing"),
    "a YAML alias that holds itself": Row("kind: Pod\nmetadata: &a {name: x, self: *a}\n", "recursive alias"),
    "a JSON integer of 5,000 digits": Row('{"kind":"Pod","metadata":{"name":"a"},"spec":{"priority":' + "9" * 5000 + "}}",
                                          "a number has more than 4300 digits", suffix=".json"),
    "a YAML integer of 5,000 digits": Row("kind: Pod\nmetadata: {name: a}\nspec: {priority: " + "9" * 5000 + "}\n",
                                          "a number has more than 4300 digits"),
    "a YAML syntax error": Row("kind: Pod\nmetadata: {name: a\n", "not valid YAML or JSON"),
    "JSON cut short": Row('{"kind": "Pod", "metadata": {"name": "a"}', "not valid JSON", suffix=".json"),
    "a document that is a plain string": Row("just words\n", "expected a Kubernetes object, got str"),
    "an object without a kind": Row("apiVersion: v1\nmetadata: {name: a}\n", "kind: Required value"),
    # --- quantities beyond what kube-scheduler's int64 counters hold
    "a cpu request of 1e400": Row(pod(container('resources: {requests: {cpu: "1e400"}}')),
                                  'spec.containers[0].resources.requests[cpu]: Invalid value: "1e400": must be '
                                  "less than 2^63 millicores"),
    "a memory limit of 1e30Ei": Row(pod(container('resources: {limits: {memory: "100000000000Ei"}}')),
                                    "spec.containers[0].resources.limits[memory]: Invalid value"),
    "a cpu request with an exponent of a trillion": Row(pod(container('resources: {requests: {cpu: "1e999999999999"}}')),
                                                        "must be less than 2^63 millicores"),
    "a cpu request of 5,000 digits": Row(pod(container(f'resources: {{requests: {{cpu: "{"9" * 5000}"}}}}')),
                                         "unable to parse numeric part of quantity"),
    "a quantity that is not one": Row(pod(container('resources: {requests: {cpu: "lots"}}')),
                                      "quantities must match the regular expression"),
    # --- resource.k8s.io objects, validated as the API server validates them
    "a device request whose name is not a DNS label": Row(
        claim_template("{name: GPU, exactly: {deviceClassName: gpu}}"),
        'ResourceClaimTemplate default/gpu: spec.spec.devices.requests[0].name: Invalid value: "GPU": a lowercase '
        "RFC 1123 label must consist of"),
    "a device request for zero devices": Row(
        claim_template("{name: gpu, exactly: {deviceClassName: gpu, count: 0}}"),
        "spec.spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"),
    "a device request with an unknown allocation mode": Row(
        claim_template("{name: gpu, exactly: {deviceClassName: gpu, allocationMode: Some}}"),
        'spec.spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
        '"ExactCount"'),
    "an exact device request without a device class": Row(
        claim_template("{name: gpu, exactly: {count: 1}}"),
        "spec.spec.devices.requests[0].exactly.deviceClassName: Required value"),
    "a device request that is neither exactly nor firstAvailable": Row(
        claim_template("{name: gpu}"),
        "spec.spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"),
    "two device requests of one name": Row(
        claim_template("{name: gpu, exactly: {deviceClassName: gpu}}, {name: gpu, exactly: {deviceClassName: gpu}}"),
        'spec.spec.devices.requests[1]: Duplicate value: "gpu"'),
    "a v1beta1 request without a device class, named as the API server names it": Row(
        claim_template("{name: gpu, count: 2}").replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1"),
        "spec.spec.devices.requests[0].exactly.deviceClassName: Required value"),
    "a constraint naming no request of the claim": Row(
        claim_template("{name: gpu, exactly: {deviceClassName: gpu}}",
                       ", constraints: [{requests: [nic], matchAttribute: gpu.example.com/numa}]"),
        'spec.spec.devices.constraints[0].requests[0]: Invalid value: "nic": must be the name of a request in the '
        "claim or the name of a request and a subrequest separated by '/'"),
    "a matchAttribute without a domain": Row(
        claim_template("{name: gpu, exactly: {deviceClassName: gpu}}", ", constraints: [{matchAttribute: numa}]"),
        'spec.spec.devices.constraints[0].matchAttribute: Invalid value: "numa": must include a domain'),
    "a CEL selector that does not compile": Row(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
        "spec: {selectors: [{cel: {expression: 'device.driver =='}}]}\n",
        'DeviceClass gpu: spec.selectors[0].cel.expression: Invalid value: "device.driver ==": compilation failed: '
        "ERROR: <input>:"),
    "a ResourceSlice for one node and for all nodes": Row(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, nodeName: n1, allNodes: true, pool: {name: p, resourceSliceCount: 1}}\n",
        'ResourceSlice s: spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, '
        "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"),
    "a device version attribute that is not semver": Row(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}, "
        "devices: [{name: gpu-0, attributes: {driverVersion: {version: '570.86'}}}]}\n",
        'spec.devices[0].attributes[driverVersion].version: Invalid value: "570.86": must be a string compatible with '
        "semver.org spec 2.0.0"),
    "a CEL selector naming a field the device does not have": Row(
        claim_template("{name: gpu, exactly: {deviceClassName: gpu, selectors: "
                       "[{cel: {expression: 'device.atributes[\"gpu.example.com\"].model == \"a\"'}}]}}"),
        "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "
        '"device.atributes[\\"gpu.example.com\\"].model == \\"a\\"": compilation failed: '
        "ERROR: <input>:1:7: undefined field 'atributes'"),
    "a CEL selector comparing the driver with a number": Row(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
        "spec: {selectors: [{cel: {expression: 'device.driver == 1'}}]}\n",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'"),
    "a CEL selector with an undeclared variable": Row(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
        "spec: {selectors: [{cel: {expression: 'gpu.model == \"a\"'}}]}\n",
        "ERROR: <input>:1:1: undeclared reference to 'gpu' (in container '')"),
    "a CEL selector whose result is a string": Row(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
        "spec: {selectors: [{cel: {expression: 'device.driver'}}]}\n",
        'spec.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool or the unknown '
        "type, not string"),
    "a device attribute key that is not a C identifier": Row(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}, "
        "devices: [{name: gpu-0, attributes: {gpu-model: {string: a100}}}]}\n",
        'spec.devices[0].attributes: Invalid value: "gpu-model": a valid C identifier must start with alphabetic '
        "character or '_'"),
    "a device attribute key with a bad domain": Row(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}, "
        "devices: [{name: gpu-0, attributes: {'gpu_example/model': {string: a100}}}]}\n",
        'spec.devices[0].attributes: Invalid value: "gpu_example": a lowercase RFC 1123 subdomain'),
    "a device capacity that is not a quantity": Row(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}, "
        "devices: [{name: gpu-0, capacity: {memory: {value: 80 gigs}}}]}\n",
        'spec.devices[0].capacity[memory].value: Invalid value: "80 gigs": quantities must match the regular '
        "expression"),
    "a device string attribute over 64 bytes": Row(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}, "
        f"devices: [{{name: gpu-0, attributes: {{serial: {{string: {'x' * 65}}}}}}}]}}\n",
        "spec.devices[0].attributes[serial].string: Too long: may not be more than 64 bytes"),
    "a device with 33 attributes and capacities": Row(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}, "
        "devices: [{name: gpu-0, attributes: {"
        + ", ".join(f"a{i}: {{int: {i}}}" for i in range(30)) + "}, capacity: {c0: {value: 1}, c1: {value: 1}, "
        "c2: {value: 1}}}]}\n",
        "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"),
    "a constraint naming a list for a request": Row(
        claim_template("{name: gpu, exactly: {deviceClassName: gpu}}",
                       ", constraints: [{requests: [[gpu]], matchAttribute: gpu.example.com/numa}]"),
        'spec.spec.devices.constraints[0].requests[0]: Invalid value: ["gpu"]: must be a string'),
    "a Deployment selector whose matchLabels is a string": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1, selector: "
        "{matchLabels: app}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: a}]}}}\n",
        'Deployment web: spec.selector.matchLabels: Invalid value: "app": must be an object of strings'),
    "a resource.k8s.io kind in a version no longer served": Row(
        "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n",
        'no matches for kind "DeviceClass" in version "resource.k8s.io/v1alpha3"'),
    # --- counts kplan would spend for ever on
    "a Deployment of two billion replicas": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2000000000\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: app}]}\n", "kplan simulates at most 100,000 pods of one workload"),
    "whatif adding 99,999,999,999 nodes like one": Row(pod(), "COUNT must be at most 5000",
                                                       args=("--add-node", "like=node-a1:99999999999"),
                                                       command="whatif"),
    "whatif adding a negative count of nodes": Row(pod(), "COUNT must be a whole number of at least 1",
                                                   args=("--add-node", "like=node-a1:-3"), command="whatif"),
    "whatif scaling to a trillion replicas": Row(pod(), "REPLICAS must be at most 100000",
                                                 args=("--scale", "deployment/web=1000000000000"), command="whatif"),
    "whatif until-fit like a node that does not exist": Row(pod(), "--until-fit like=ghost: no node named 'ghost'",
                                                            args=("--until-fit", "like=ghost"), command="whatif"),

    # --- what kube-apiserver v1.34 refuses (pkg/apis/core/validation and the others)
    "a negative cpu request": Row(pod(container('resources: {requests: {cpu: "-1"}}')),
                                  'Pod default/web: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
                                  "must be greater than or equal to 0"),
    "a negative memory limit": Row(pod(container("resources: {limits: {memory: -64Mi}}")),
                                   'spec.containers[0].resources.limits[memory]: Invalid value: "-64Mi": must be '
                                   "greater than or equal to 0"),
    "a request above its limit": Row(pod(container('resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}')),
                                     'requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1'),
    "an extended resource request without a limit": Row(pod(container("resources: {requests: {example.com/gpu: 1}}")),
                                                        "spec.containers[0].resources.limits: Required value: Limit "
                                                        "must be set for non overcommitable resources"),
    "a fractional extended resource": Row(pod(container("resources: {requests: {example.com/gpu: 500m}, "
                                                        "limits: {example.com/gpu: 500m}}")),
                                          'requests[example.com/gpu]: Invalid value: "500m": must be an integer'),
    "a resource name with a space": Row(pod(container('resources: {requests: {"my resource": 1}}')),
                                        'requests[my resource]: Invalid value: "my resource"'),
    "a container port that is a word": Row(pod(container("ports: [{containerPort: eighty}]")),
                                           'ports[0].containerPort: Invalid value: "eighty": must be an integer (int32)'),
    "a container port of zero": Row(pod(container("ports: [{containerPort: 0}]")),
                                    "ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive"),
    "a host port of 70000": Row(pod(container("ports: [{containerPort: 80, hostPort: 70000}]")),
                                "ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
    "a port without its containerPort": Row(pod(container("ports: [{hostPort: 80}]")),
                                            "ports[0].containerPort: Required value"),
    "a port protocol that does not exist": Row(pod(container("ports: [{containerPort: 80, protocol: HTTP}]")),
                                               'ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", '
                                               '"TCP", "UDP"'),
    "a port name too long": Row(pod(container("ports: [{containerPort: 80, name: a-very-long-port-name}]")),
                                "must be no more than 15 characters"),
    "two ports of one name": Row(pod(container("ports: [{containerPort: 80, name: web}, {containerPort: 81, name: web}]")),
                                 'ports[1].name: Duplicate value: "web"'),
    "an upper-case pod name": Row(pod(name="Web"), 'metadata.name: Invalid value: "Web": a lowercase RFC 1123 '
                                  "subdomain must consist of lower case alphanumeric characters"),
    "a pod name of 300 characters": Row(pod(name="a" * 300), "must be no more than 253 characters"),
    "a pod without a name": Row("apiVersion: v1\nkind: Pod\nmetadata: {namespace: default}\n"
                                "spec: {containers: [{name: c, image: app}]}\n",
                                "metadata.name: Required value: name or generateName is required"),
    "an upper-case namespace": Row(pod().replace("namespace: default", "namespace: Prod"),
                                   'metadata.namespace: Invalid value: "Prod": a lowercase RFC 1123 label'),
    "a pod without containers": Row(pod("containers: []"), "Pod default/web: spec.containers: Required value"),
    "a pod without a spec": Row("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n", "spec: Required value"),
    "a container without a name": Row(pod("containers: [{image: app}]"), "spec.containers[0].name: Required value"),
    "a container without an image": Row(pod("containers: [{name: c}]"), "spec.containers[0].image: Required value"),
    "two containers of one name": Row(pod("containers: [{name: c, image: a}, {name: c, image: b}]"),
                                      'spec.containers[1].name: Duplicate value: "c"'),
    "a container name with an underscore": Row(pod("containers: [{name: my_app, image: a}]"),
                                               'spec.containers[0].name: Invalid value: "my_app": a lowercase RFC 1123 '
                                               "label"),
    "a label key with two slashes": Row(pod(extra="").replace("namespace: default}", "namespace: default, labels: "
                                                              "{a/b/c: x}}"),
                                        'metadata.labels: Invalid value: "a/b/c": a qualified name must consist of'),
    "a label value with a space": Row(pod().replace("namespace: default}", 'namespace: default, labels: {app: "my app"}}'),
                                      'metadata.labels[app]: Invalid value: "my app": a valid label must be an empty '
                                      "string"),
    "a label value that is a number": Row(pod().replace("namespace: default}", "namespace: default, labels: {tier: 3}}"),
                                          "metadata.labels[tier]: Invalid value: 3: must be a string"),
    "a node selector with a bad key": Row(pod('containers: [{name: c, image: a}], nodeSelector: {"-disk": ssd}'),
                                          'spec.nodeSelector: Invalid value: "-disk": name part must consist of'),
    "a toleration operator Equals": Row(pod("containers: [{name: c, image: a}], tolerations: [{key: k, operator: "
                                            "Equals, value: v}]"),
                                        'spec.tolerations[0].operator: Unsupported value: "Equals": supported values: '
                                        '"Equal", "Exists"'),
    "a toleration effect NoScheduleX": Row(pod("containers: [{name: c, image: a}], tolerations: [{key: k, operator: "
                                               "Exists, effect: NoScheduleX}]"),
                                           'spec.tolerations[0].effect: Unsupported value: "NoScheduleX": supported '
                                           'values: "NoSchedule", "PreferNoSchedule", "NoExecute"'),
    "a toleration with Exists and a value": Row(pod("containers: [{name: c, image: a}], tolerations: [{key: k, "
                                                    "operator: Exists, value: v}]"),
                                                "value must be empty when `operator` is 'Exists'"),
    "a toleration without a key that is not Exists": Row(pod("containers: [{name: c, image: a}], tolerations: "
                                                             "[{operator: Equal, value: v}]"),
                                                         "operator must be Exists when `key` is empty"),
    "tolerationSeconds on a NoSchedule toleration": Row(pod("containers: [{name: c, image: a}], tolerations: [{key: k, "
                                                            "operator: Exists, effect: NoSchedule, tolerationSeconds: "
                                                            "30}]"),
                                                        "effect must be 'NoExecute' when `tolerationSeconds` is set"),
    "a preferred node affinity of weight 1000": Row(pod("containers: [{name: c, image: a}], affinity: {nodeAffinity: "
                                                        "{preferredDuringSchedulingIgnoredDuringExecution: [{weight: "
                                                        "1000, preference: {matchExpressions: [{key: k, operator: "
                                                        "Exists}]}}]}}"),
                                                    "preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid "
                                                    "value: 1000: must be in the range 1-100"),
    "a preferred pod anti-affinity of weight 0": Row(pod("containers: [{name: c, image: a}], affinity: {podAntiAffinity: "
                                                         "{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, "
                                                         "podAffinityTerm: {topologyKey: zone}}]}}"),
                                                     "weight: Invalid value: 0: must be in the range 1-100"),
    "a node affinity with no terms": Row(pod("containers: [{name: c, image: a}], affinity: {nodeAffinity: "
                                             "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                                             "[]}}}"), "must have at least one node selector term"),
    "an In requirement without values": Row(pod("containers: [{name: c, image: a}], affinity: {nodeAffinity: "
                                                "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                                                "[{matchExpressions: [{key: k, operator: In}]}]}}}"),
                                            "values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
    "a Gt requirement with two values": Row(pod("containers: [{name: c, image: a}], affinity: {nodeAffinity: "
                                                "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                                                "[{matchExpressions: [{key: k, operator: Gt, values: ['1', '2']}]}]}}}"),
                                            "must be specified single value when `operator` is 'Lt' or 'Gt'"),
    "a required node affinity value that is no label value (v1.33)": Row(
        pod("containers: [{name: c, image: a}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: k, operator: In, values: ['a b']}]}]}}}"),
        'nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "a b": a valid label must be an empty string'),
    "a PersistentVolume node affinity without its required selector": Row(
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec: {capacity: {storage: 1Gi}, accessModes: "
        "[ReadWriteOnce], nodeAffinity: {}}\n",
        "spec.nodeAffinity.required: Required value: must specify required node constraints"),
    "a PersistentVolume node affinity without terms": Row(
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec: {capacity: {storage: 1Gi}, accessModes: "
        "[ReadWriteOnce], nodeAffinity: {required: {nodeSelectorTerms: []}}}\n",
        "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term"),
    "a selector operator Equals": Row(pod("containers: [{name: c, image: a}], affinity: {nodeAffinity: "
                                          "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                                          "[{matchExpressions: [{key: k, operator: Equals, values: [a]}]}]}}}"),
                                      'operator: Invalid value: "Equals": not a valid selector operator'),
    "a field selector on spec.nodeName": Row(pod("containers: [{name: c, image: a}], affinity: {nodeAffinity: "
                                                 "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                                                 "[{matchFields: [{key: spec.nodeName, operator: In, values: [n]}]}]}}}"),
                                             'matchFields[0].key: Invalid value: "spec.nodeName": not a valid field '
                                             "selector key"),
    "a pod affinity term without a topology key": Row(pod("containers: [{name: c, image: a}], affinity: {podAffinity: "
                                                          "{requiredDuringSchedulingIgnoredDuringExecution: "
                                                          "[{labelSelector: {matchLabels: {app: x}}}]}}"),
                                                      "topologyKey: Required value: can not be empty"),
    # --- matchLabelKeys / mismatchLabelKeys (ValidateMatchLabelKeysAndMismatchLabelKeys, v1.34)
    "matchLabelKeys without a labelSelector": Row(
        pod("containers: [{name: c, image: a}], affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "[{topologyKey: zone, matchLabelKeys: [app]}]}}"),
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys: Forbidden: must "
        "not be specified when labelSelector is not set"),
    "a mismatchLabelKeys key that is no label name": Row(
        pod("containers: [{name: c, image: a}], affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
            "[{weight: 1, podAffinityTerm: {topologyKey: zone, labelSelector: {}, mismatchLabelKeys: ['-team']}}]}}"),
        "podAffinityTerm.mismatchLabelKeys[0]: Invalid value: \"-team\": name part must consist of alphanumeric"),
    "a key in both matchLabelKeys and mismatchLabelKeys": Row(
        pod("containers: [{name: c, image: a}], affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "[{topologyKey: zone, labelSelector: {}, matchLabelKeys: [app], mismatchLabelKeys: [app]}]}}"),
        "[0].matchLabelKeys[0]: Invalid value: \"app\": exists in both matchLabelKeys and mismatchLabelKeys"),
    "a pod's matchLabelKeys key that its labelSelector has already": Row(
        pod("containers: [{name: c, image: a}], affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "[{topologyKey: zone, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app]}]}}",
            name="web, labels: {app: web}"),
        "[0].matchLabelKeys[0]: Invalid value: \"app\": exists in both matchLabelKeys and labelSelector"),
    "a spread constraint's matchLabelKeys key that its labelSelector has already": Row(
        pod("containers: [{name: c, image: a}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
            "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchExpressions: [{key: app, operator: Exists}]}, "
            "matchLabelKeys: [app]}]", name="web, labels: {app: web}"),
        "spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: \"app\": exists in both matchLabelKeys "
        "and labelSelector"),
    "a spread constraint's matchLabelKeys without a labelSelector": Row(
        pod("containers: [{name: c, image: a}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
            "whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app]}]"),
        "spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is "
        "not set"),
    # --- pod-level resources (PodLevelResources, beta and on in v1.34)
    "a pod-level request of an extended resource": Row(
        pod("containers: [{name: c, image: a}], resources: {requests: {example.com/gpu: '1'}, limits: "
            "{example.com/gpu: '1'}}"),
        'spec.resources.requests[example.com/gpu]: Unsupported value: "example.com/gpu": supported values: "cpu", '
        '"hugepages-", "memory"', lines=1),
    "a pod-level cpu request below its containers' together": Row(
        pod("containers: [{name: a, image: a, resources: {requests: {cpu: '1'}}}, {name: b, image: a, resources: "
            "{limits: {cpu: 500m}}}], initContainers: [{name: s, image: a, restartPolicy: Always, resources: "
            "{requests: {cpu: 500m}}}], resources: {requests: {cpu: '1'}}"),
        'spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container '
        "requests of 2"),
    "a spread constraint with maxSkew 0": Row(pod("containers: [{name: c, image: a}], topologySpreadConstraints: "
                                                  "[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]"),
                                              "maxSkew: Invalid value: 0: must be greater than zero"),
    "a spread constraint that is unsatisfiable Sometimes": Row(
        pod("containers: [{name: c, image: a}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
            "whenUnsatisfiable: Sometimes}]"),
        'whenUnsatisfiable: Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"'),
    "minDomains with ScheduleAnyway": Row(pod("containers: [{name: c, image: a}], topologySpreadConstraints: [{maxSkew: "
                                              "1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}]"),
                                          "can only use minDomains if whenUnsatisfiable=DoNotSchedule"),
    "a restart policy Sometimes": Row(pod("containers: [{name: c, image: a}], restartPolicy: Sometimes"),
                                      'spec.restartPolicy: Unsupported value: "Sometimes"'),
    "a preemption policy Always": Row(pod("containers: [{name: c, image: a}], preemptionPolicy: Always"),
                                      'spec.preemptionPolicy: Unsupported value: "Always"'),
    "a priority beyond int32": Row(pod("containers: [{name: c, image: a}], priority: 99999999999"),
                                   "spec.priority: Invalid value: 99999999999: must be an int32"),
    "two scheduling gates of one name": Row(pod("containers: [{name: c, image: a}], schedulingGates: [{name: g}, "
                                                "{name: g}]"), 'schedulingGates[1].name: Duplicate value: "g"'),
    # --- volume sources (ValidateVolumeSource)
    "a volume with no source": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v}]"),
                                   "spec.volumes[0]: Required value: must specify a volume type"),
    "a volume with two sources": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, emptyDir: {}, "
                                         "persistentVolumeClaim: {claimName: data}}]"),
                                     "spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 "
                                     "volume type"),
    "a claim volume without claimName": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, "
                                                "persistentVolumeClaim: {readOnly: true}}]"),
                                            "spec.volumes[0].persistentVolumeClaim.claimName: Required value"),
    "an ephemeral volume without a claim template": Row(
        pod("containers: [{name: c, image: a}], volumes: [{name: v, ephemeral: {}}]"),
        "spec.volumes[0].ephemeral.volumeClaimTemplate: Required value"),
    "an ephemeral claim template without access modes": Row(
        pod("containers: [{name: c, image: a}], volumes: [{name: v, ephemeral: {volumeClaimTemplate: {spec: "
            "{resources: {requests: {storage: 1Gi}}}}}}]"),
        "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value"),
    "an ephemeral volume whose claim name is too long": Row(
        pod("containers: [{name: c, image: a}], volumes: [{name: " + "v" * 63 + ", ephemeral: {volumeClaimTemplate: "
            "{spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]", name="w" * 200),
        'PVC name "' + "w" * 200 + "-" + "v" * 63 + '": must be no more than 253 characters'),
    "a GCE disk without pdName": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, "
                                         "gcePersistentDisk: {fsType: ext4}}]"),
                                     "spec.volumes[0].persistentDisk.pdName: Required value"),
    "an EBS volume with partition 300": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, "
                                                "awsElasticBlockStore: {volumeID: vol-1, partition: 300}}]"),
                                            "spec.volumes[0].awsElasticBlockStore.partition: Invalid value: 300: "
                                            "must be between 1 and 255, inclusive"),
    "an RBD volume without monitors": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, "
                                              "rbd: {image: img}}]"),
                                          "spec.volumes[0].rbd.monitors: Required value"),
    "an iSCSI volume with a bad iqn": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, "
                                              "iscsi: {targetPortal: '10.0.0.1:3260', iqn: disk-1, lun: 0}}]"),
                                          'spec.volumes[0].iscsi.iqn: Invalid value: "disk-1": must be valid format '
                                          "starting with iqn, eui, or naa"),
    "an Azure disk without diskURI": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, "
                                             "azureDisk: {diskName: d}}]"),
                                         "spec.volumes[0].azureDisk.diskURI: Required value"),
    "a Deployment template volume with no source": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: app}], volumes: [{name: v}]}\n",
        "spec.template.spec.volumes[0]: Required value: must specify a volume type"),
    "two volumes of one name": Row(pod("containers: [{name: c, image: a}], volumes: [{name: v, emptyDir: {}}, "
                                       "{name: v, emptyDir: {}}]"), 'spec.volumes[1].name: Duplicate value: "v"'),
    "a Deployment of -3 replicas": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: -3\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: app}]}\n",
        "Deployment web: spec.replicas: Invalid value: -3: must be greater than or equal to 0"),
    "a Deployment whose selector misses its template": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: api}}\n"
        "    spec: {containers: [{name: c, image: app}]}\n",
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"api"}: `selector` does not match '
        "template `labels`"),
    "a Deployment without a selector": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n"
        "    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: app}]}\n",
        "spec.selector: Required value"),
    "a Deployment whose pods restart Never": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"
        "  template:\n    metadata: {labels: {app: web}}\n    spec: {restartPolicy: Never, containers: [{name: c, "
        "image: app}]}\n", 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'),
    "a StatefulSet with an unknown pod management policy": Row(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  podManagementPolicy: Whenever\n"
        "  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n"
        "    spec: {containers: [{name: c, image: app}]}\n", 'spec.podManagementPolicy: Unsupported value: "Whenever"'),
    "a Job whose pods restart Always": Row(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n"
        "    spec: {restartPolicy: Always, containers: [{name: c, image: app}]}\n",
        'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'),
    "a Job of negative parallelism": Row(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: -1\n  template:\n"
        "    spec: {restartPolicy: Never, containers: [{name: c, image: app}]}\n",
        "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
    "a CronJob without a schedule": Row(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: cj}\nspec:\n  jobTemplate:\n    spec:\n      template:\n"
        "        spec: {restartPolicy: Never, containers: [{name: c, image: app}]}\n", "spec.schedule: Required value"),
    "a budget with minAvailable and maxUnavailable": Row(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 1, "
        "maxUnavailable: 1, selector: {matchLabels: {app: x}}}\n", "minAvailable and maxUnavailable cannot be both set"),
    "a budget of minAvailable 150%": Row(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 150%, "
        "selector: {matchLabels: {app: x}}}\n", 'spec.minAvailable: Invalid value: "150%": must not be greater than 100%'),
    "a PriorityClass above one billion": Row(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: top}\nvalue: 2000000000\n",
        "value: Invalid value: 2000000000: maximum allowed value of a user defined priority is 1000000000"),
    "a PriorityClass named system-anything": Row(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-mine}\nvalue: 10\n",
        "priority class names with 'system-' prefix are reserved"),
    "a LimitRange default of 1.2.3": Row(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec: {limits: [{type: Container, default: "
        "{cpu: 1.2.3}}]}\n", 'spec.limits[0].default[cpu]: Invalid value: "1.2.3": quantities must match the regular '
        "expression"),
    "a LimitRange of type Node": Row(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec: {limits: [{type: Node, max: {cpu: 1}}]}\n",
        'spec.limits[0].type: Unsupported value: "Node"'),
    "a claim of zero bytes": Row(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], "
        "resources: {requests: {storage: 0}}}\n", "spec.resources[storage]: Invalid value: 0: must be greater than zero"),
    "a claim with an unknown access mode": Row(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteSometimes], "
        "resources: {requests: {storage: 1Gi}}}\n", 'spec.accessModes: Unsupported value: "ReadWriteSometimes"'),
    "a kind: List whose items is a map": Row("apiVersion: v1\nkind: List\nitems: {a: b}\n",
                                             "List: items: Invalid value: expected a list of objects, got dict"),
    "every invalid object, one line each": Row(pod(name="A") + "---\n" + pod(name="B"), "Pod default/A: metadata.name",
                                                 lines=2),
    # --- removed API versions of known kinds
    "a batch/v1beta1 CronJob": Row(
        "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: cj}\nspec: {schedule: '* * * * *'}\n",
        'CronJob cj: no matches for kind "CronJob" in version "batch/v1beta1": kube-apiserver v1.34 serves '
        "CronJob as apiVersion: batch/v1"),
    "an extensions/v1beta1 Deployment": Row(
        "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d}\n",
        'no matches for kind "Deployment" in version "extensions/v1beta1"'),
    "a policy/v1beta1 PodDisruptionBudget": Row(
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n",
        "serves PodDisruptionBudget as apiVersion: policy/v1"),
    "a Pod without an apiVersion": Row("kind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: a}]}\n",
                                       "apiVersion: Required value: Pod is served as apiVersion: v1"),

    "an empty manifest file": Row("", "no objects passed to apply"),
    "a manifest of comments only": Row("# nothing here\n---\n# nor here\n", "no objects passed to apply"),
    "a kind that is a list": Row('{"kind": ["Pod"], "metadata": {"name": "a"}}', 'kind: Invalid value: ["Pod"]: '
                                 "must be a string", suffix=".json"),
}


def run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    code = e.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_malformed_input_is_one_error_line(row: Row, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    path = tmp_path / f"input{row.suffix}"
    if isinstance(row.manifest, bytes):
        path.write_bytes(row.manifest)
    else:
        path.write_text(row.manifest)
    code, out, err = run(capsys, [row.command, *row.args, str(path), "--cluster", CLUSTER, "--tie-break",
                                  "lowest-name"])
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert (code, len(errors)) == (row.code, row.lines), err
    assert row.message in errors[0], err
    assert "Traceback" not in err
    assert out == ""


def deployment(replicas: int) -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n"
            "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
            "    spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}\n")


def test_a_workload_defined_twice_is_configured_by_the_later_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "a.yaml").write_text(deployment(2))
    (tmp_path / "b.yaml").write_text(deployment(3))
    code, out, err = run(capsys, ["simulate", str(tmp_path), "--cluster", CLUSTER, "-o", "json"])
    assert code == 0, err
    assert f"warning: {tmp_path}/b.yaml: Deployment default/web is also defined in {tmp_path}/a.yaml" in err
    assert out.count('"name": "web-') == 3  # the later definition's replicas


def test_two_pending_pods_of_one_name_are_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "a.yaml").write_text(pod())
    (tmp_path / "b.yaml").write_text(pod())
    code, out, err = run(capsys, ["simulate", str(tmp_path), "--cluster", CLUSTER])
    assert (code, out) == (2, "")
    assert err == (f'error: {tmp_path}/b.yaml: Pod default/web: metadata.name: Duplicate value: "web": the pod is '
                   f"also defined in {tmp_path}/a.yaml (a second create of a pod fails: AlreadyExists)\n")


NO_NODES = {
    "a kind configuration": ("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes: [{role: control-plane}]\n",
                             "1 Cluster"),
    "a kubeconfig": ("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n", "1 Config"),
    "an empty List": ("apiVersion: v1\nkind: List\nitems: []\n", "no objects"),
    "pods without their nodes": ("kind: Pod\napiVersion: v1\nmetadata: {name: p, namespace: default}\n"
                                 "spec: {nodeName: n1, containers: [{name: c, image: x}]}\n", "1 Pod"),
}


@pytest.mark.parametrize(("text", "held"), NO_NODES.values(), ids=NO_NODES.keys())
def test_cluster_files_without_a_node_are_an_error_naming_them(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch, text: str,
                                                               held: str) -> None:
    # issue 47 item 4: before, "skipped 1 object", a run on 0 nodes and exit 1, which CI reads as
    # "the pods do not fit"
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pod.yaml").write_text(pod())
    (tmp_path / "cluster.yaml").write_text(text)
    code, out, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "--cluster", str(tmp_path / "cluster.yaml")])
    assert (code, out) == (2, "")
    assert err == (f"error: no Nodes in the cluster inputs ({tmp_path}/cluster.yaml: {held}): --cluster takes a "
                   "description of the cluster's nodes and pods (a 'kplan snapshot' file, or 'kubectl get "
                   "nodes,pods -A -o yaml' output)\n")


def test_the_error_of_no_nodes_names_every_cluster_file_and_comes_before_the_manifests_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pod.yaml").write_text(pod(spec="containers: [{name: c, image: a}], "
                                           "priorityClassName: defined-in-the-cluster"))
    (tmp_path / "kind.yaml").write_text(NO_NODES["a kind configuration"][0])
    (tmp_path / "kubeconfig.yaml").write_text(NO_NODES["a kubeconfig"][0])
    code, out, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "-c", str(tmp_path / "kind.yaml"),
                                  "-c", str(tmp_path / "kubeconfig.yaml")])
    assert (code, out) == (2, "")
    assert err.startswith(f"error: no Nodes in the cluster inputs ({tmp_path}/kind.yaml, {tmp_path}/kubeconfig.yaml: "
                          "1 Cluster, 1 Config): ") and err.count("\n") == 1


def test_a_node_defined_twice_is_an_error_naming_both_places(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 47 item 7: before, "Node n1: metadata.name: Duplicate value: the node is defined twice"
    monkeypatch.setenv("NO_COLOR", "1")
    node = "kind: Node\napiVersion: v1\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', pods: '110'}}\n"
    (tmp_path / "pod.yaml").write_text(pod())
    (tmp_path / "a.yaml").write_text(node)
    (tmp_path / "b.yaml").write_text("kind: Namespace\napiVersion: v1\nmetadata: {name: default}\n---\n" + node)
    code, out, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "-c", str(tmp_path / "a.yaml"),
                                  "-c", str(tmp_path / "b.yaml")])
    assert (code, out) == (2, "")
    assert err == (f'error: {tmp_path}/b.yaml: document 2: Node n1: metadata.name: Duplicate value: "n1": the node is '
                   f"also defined in {tmp_path}/a.yaml (a cluster holds one Node of a name)\n")


def test_every_refused_file_of_a_folder_is_one_line_in_the_files_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 47 item 6: a file that is not YAML stopped the reading, hiding the other files' mistakes
    monkeypatch.setenv("NO_COLOR", "1")
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "a.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: old}\n"
                                   "spec: {template: {spec: {containers: [{name: c, image: x}]}}}\n")
    (folder / "b.yaml").write_text("kind: Pod\nmetadata: {name: a\n")
    (folder / "c.yaml").write_text(pod())
    (folder / "d.yaml").write_text("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}\n"
                                   "spec: {minAvailable: 1}\n")
    code, out, err = run(capsys, ["simulate", str(folder), str(tmp_path / "gone.yaml"), "--cluster", CLUSTER])
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f'error: {folder}/a.yaml: Deployment old: no matches for kind "Deployment" in version "extensions/v1beta1": '
        "kube-apiserver v1.34 serves Deployment as apiVersion: apps/v1",
        f"error: {folder}/b.yaml: not valid YAML or JSON (line 3, column 1): expected ',' or '}}', but got "
        "'<stream end>'",
        f'error: {folder}/d.yaml: PodDisruptionBudget pdb: no matches for kind "PodDisruptionBudget" in version '
        '"policy/v1beta1": kube-apiserver v1.34 serves PodDisruptionBudget as apiVersion: policy/v1',
        f"error: {tmp_path}/gone.yaml: no such file or folder"]


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n---\n"], ids=["empty", "a comment", "separators"])
def test_a_cluster_file_without_objects_is_an_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pod.yaml").write_text(pod())
    (tmp_path / "cluster.yaml").write_text(text)
    code, out, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "--cluster", CLUSTER,
                                  "--cluster", str(tmp_path / "cluster.yaml")])
    assert (code, out) == (2, "")
    assert err == (f"error: {tmp_path}/cluster.yaml: no objects: the cluster file is empty (give a snapshot, or "
                   "'kubectl get nodes,pods -A -o yaml' output)\n")


def test_a_gt_value_that_is_no_integer_is_a_warning_and_matches_no_node(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # kube-apiserver v1.34 accepts it (one value is all it checks); kube-scheduler cannot build the
    # selector, so the required term matches no node and the preferred one scores none
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pod.yaml").write_text(pod(
        "containers: [{name: c, image: app}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchExpressions: [{key: cores, operator: Gt, values: [many]}]}, {matchExpressions: "
        "[{key: cores, operator: Lt, values: ['7']}]}]}, preferredDuringSchedulingIgnoredDuringExecution: "
        "[{weight: 5, preference: {matchExpressions: [{key: cores, operator: Lt, values: ['1.5']}]}}]}}"))
    code, _, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "--cluster", CLUSTER])
    assert code == 1, err
    na = "spec.affinity.nodeAffinity"
    assert [line for line in err.splitlines() if line.startswith("warning:")] == [
        f"warning: {tmp_path}/pod.yaml: Pod default/web: {na}.requiredDuringSchedulingIgnoredDuringExecution."
        'nodeSelectorTerms[0].matchExpressions[0].values[0]: "many" is not an integer, which Gt compares: '
        "kube-scheduler cannot evaluate it, so this term matches no node",
        f"warning: {tmp_path}/pod.yaml: Pod default/web: {na}.preferredDuringSchedulingIgnoredDuringExecution[0]."
        'preference.matchExpressions[0].values[0]: "1.5" is not an integer, which Lt compares: kube-scheduler '
        "cannot evaluate it, so this preference adds to no node's score"]


def test_an_unknown_field_is_a_warning_as_kubectl_apply_gives_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pod.yaml").write_text(pod("containers: [{name: c, image: app, imagePullPolcy: Always}], "
                                           "nodeSelecter: {disk: ssd}"))
    code, _, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "--cluster", CLUSTER])
    assert code == 0, err
    assert err.splitlines() == [
        f'warning: {tmp_path}/pod.yaml: Pod default/web: unknown field "spec.nodeSelecter"',
        f'warning: {tmp_path}/pod.yaml: Pod default/web: unknown field "spec.containers[0].imagePullPolcy"']


def test_a_cluster_node_no_api_server_would_accept_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # a hand-written cluster file: its nodes, classes, budgets and storage are validated too (without
    # judging the API version, which exports omit); its pods, as many as 150,000, are not
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pod.yaml").write_text(pod())
    (tmp_path / "cluster.yaml").write_text(
        "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '-4', memory: 8Gi, pods: '110'}}\n---\n"
        "kind: Node\nmetadata: {name: n2}\nspec: {taints: [{key: k, effect: Sometimes}]}\n"
        "status: {allocatable: {cpu: '4'}}\n")
    code, out, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "--cluster", str(tmp_path / "cluster.yaml")])
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f'error: {tmp_path}/cluster.yaml: document 1: Node n1: status.allocatable.cpu: Invalid value: "-4": must be '
        "greater than or equal to 0",
        f'error: {tmp_path}/cluster.yaml: document 2: Node n2: spec.taints[0].effect: Unsupported value: "Sometimes": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"']


def test_a_cluster_pod_with_a_list_for_a_toleration_key_is_one_error_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Cluster files are parsed, not validated: a running pod's malformed field is still one line."""
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pod.yaml").write_text(pod())
    (tmp_path / "cluster.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '4', pods: '110'}}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: running, namespace: default}, spec: {nodeName: n1, "
        "containers: [{name: c, image: x}], tolerations: [{key: [a], operator: Exists}]}}\n")
    code, out, err = run(capsys, ["simulate", str(tmp_path / "pod.yaml"), "--cluster", str(tmp_path / "cluster.yaml")])
    assert (code, out) == (2, "")
    assert err == (f"error: {tmp_path}/cluster.yaml: items[1]: Pod default/running: spec.tolerations[0].key: "
                   "expected a string, got list\n")


ACCEPTED = {
    # what kube-apiserver v1.34 accepts must load: no false rejections
    "matchLabelKeys naming a label the pod does not have (nothing is merged)":
        pod("containers: [{name: c, image: a}], affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "[{topologyKey: zone, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app]}]}}"),
    "a mismatchLabelKeys key that the labelSelector has too":
        pod("containers: [{name: c, image: a}], affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "[{topologyKey: zone, labelSelector: {matchLabels: {app: web}}, mismatchLabelKeys: [app]}]}}",
            name="web, labels: {app: web}"),
    "matchLabelKeys of a key the selector does not name":
        pod("containers: [{name: c, image: a}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
            "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: "
            "[pod-template-hash]}]", name="web, labels: {app: web, pod-template-hash: abc}"),
    "a workload template whose selector names a matchLabelKeys key (merged only into its pods)":
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 1, "
        "selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, "
        "image: a}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, "
        "labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app]}]}}}\n",
    "pod-level cpu and memory at least the containers' together, and hugepages":
        pod("containers: [{name: a, image: a, resources: {requests: {cpu: 500m, memory: 1Gi}}}], resources: "
            "{requests: {cpu: '1', memory: 1Gi, hugepages-2Mi: 2Mi}, limits: {cpu: '2', memory: 2Gi, hugepages-2Mi: 2Mi}}"),
    "a URL with a port in a flow mapping (go-yaml and libyaml 0.2 read it; libyaml 0.1 did not)":
        pod(name="web, annotations: {docs: http://example.com:8080/x}"),
    "a colon inside a plain scalar of a flow sequence":
        pod("containers: [{name: c, image: registry.example.com:5000/app:1.2, args: [--listen=0.0.0.0:8080]}]"),
    "a pod-level limit alone":
        pod("containers: [{name: a, image: a, resources: {requests: {cpu: 500m}}}], resources: {limits: {cpu: '1'}}"),
}


def test_a_colon_in_a_flow_scalar_is_read_as_yaml_1_2_reads_it() -> None:
    from kplan.io.manifests import parse_documents

    docs = parse_documents("metadata: {name: flow, annotations: {docs: http://example.com:8080/x}}\n"
                           "args: [a:b, 'c']\n---\nkind: Pod\n", "flow.yaml")
    assert docs == [{"metadata": {"name": "flow", "annotations": {"docs": "http://example.com:8080/x"}},
                     "args": ["a:b", "c"]}, {"kind": "Pod"}]


@pytest.mark.parametrize("manifest", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_what_the_api_server_accepts_loads(manifest: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    path = tmp_path / "input.yaml"
    path.write_text(manifest)
    code, out, err = run(capsys, ["simulate", str(path), "--cluster", CLUSTER, "--tie-break", "lowest-name"])
    assert code in (0, 1) and "error:" not in err, err
    assert "pending pod" in out
