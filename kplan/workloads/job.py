"""Job and CronJob (pkg/controller/job/job_controller.go, pkg/controller/cronjob/utils.go,
pkg/registry/batch/job/strategy.go, v1.34).

On create the API server labels a Job's template (``generateSelector`` unless
``spec.manualSelector``): ``job-name`` and ``batch.kubernetes.io/job-name`` = the Job's name,
``controller-uid`` and ``batch.kubernetes.io/controller-uid`` = its uid (labels the user set are
kept). The Job controller then starts ``parallelism`` pods (default 1), or
``min(parallelism, completions)`` when ``completions`` is set; none while ``suspend`` is true.
Pods are ``generateName: <job>-`` with the Job as controller and the
``batch.kubernetes.io/job-tracking`` finalizer; for ``completionMode: Indexed`` pod i carries
the ``batch.kubernetes.io/job-completion-index`` annotation and label, hostname ``<job>-<i>``
(unless set) and ``generateName: <job>-<i>-``.

A CronJob creates one Job from ``spec.jobTemplate`` (``getJobFromTemplate2``): named
``<cronjob>-<scheduled time in minutes since the epoch>``, the template's labels and
annotations plus ``batch.kubernetes.io/cronjob-scheduled-timestamp``, owned by the CronJob.
kplan takes the scheduled time to be the simulation's start, 2025-01-11T00:00:00Z; a suspended
CronJob creates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.model.json_tree import copy_tree
from kplan.workloads.common import Obj, Reader, controller_ref, create_pod, pod_from_template
from kplan.workloads.expansion import Expansion
from kplan.workloads.names import MAX_GENERATE_NAME_PREFIX, NameGenerator

SCHEDULED_TIME = 1736553600  # 2025-01-11T00:00:00Z
SCHEDULED_TIMESTAMP = "2025-01-11T00:00:00Z"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"


def _indexed_prefix(job: str, index: int) -> str:
    """podGenerateNameWithIndex: the index survives when the name is cut to fit."""
    append = f"-{index}-"
    prefix = job + append
    if len(prefix) > MAX_GENERATE_NAME_PREFIX:
        prefix = prefix[:MAX_GENERATE_NAME_PREFIX - len(append)] + append
    return prefix


def _job_pods(r: Reader, uid: str, names: NameGenerator) -> list[Obj]:
    spec = r.spec()
    template = r.template()
    if spec.get("suspend"):
        return []
    md = template.setdefault("metadata", {})
    labels = md.setdefault("labels", {})
    if not spec.get("manualSelector"):
        for key in ("job-name", "batch.kubernetes.io/job-name"):
            labels.setdefault(key, r.name)
        for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
            labels.setdefault(key, uid)
    parallelism = r.count(spec.get("parallelism"), "spec.parallelism")
    completions = r.int(spec.get("completions"), "spec.completions", None)
    active = parallelism if completions is None else min(parallelism, completions)
    indexed = spec.get("completionMode") == "Indexed"
    if indexed and completions is None:
        raise r.fail("spec.completions", "Required value: when completion mode is Indexed")
    owner = controller_ref("batch/v1", "Job", r.name, uid)
    pods = []
    for i in range(active):
        pod = pod_from_template(template, r.namespace, owner)
        pod["metadata"]["finalizers"] = list(pod["metadata"].get("finalizers") or []) + [TRACKING_FINALIZER]
        if indexed:
            pod["metadata"].setdefault("annotations", {})[INDEX_KEY] = str(i)
            pod["metadata"].setdefault("labels", {})[INDEX_KEY] = str(i)
            if not pod["spec"].get("hostname"):
                pod["spec"]["hostname"] = f"{r.name}-{i}"
            pods.append(create_pod(pod, names, generate_name=_indexed_prefix(r.name, i)))
        else:
            pods.append(create_pod(pod, names, generate_name=f"{r.name}-"))
    return pods


def expand_job(obj: Mapping[str, Any], source: str, names: NameGenerator, *,
               existing: Mapping[str, Any] | None = None) -> Expansion:
    r = Reader(obj, source)
    meta_uid = r.meta.get("uid") or ((existing or {}).get("metadata") or {}).get("uid")
    uid = str(meta_uid or names.uid())
    out = Expansion("Job", r.namespace, r.name, uid)
    out.pods = _job_pods(r, uid, names)
    return out


def expand_cronjob(obj: Mapping[str, Any], source: str, names: NameGenerator, *,
                   existing: Mapping[str, Any] | None = None) -> Expansion:
    r = Reader(obj, source)
    spec = r.spec()
    meta_uid = r.meta.get("uid") or ((existing or {}).get("metadata") or {}).get("uid")
    uid = str(meta_uid or names.uid())
    out = Expansion("CronJob", r.namespace, r.name, uid)
    if spec.get("suspend"):
        out.warnings.append(f"{source}: CronJob {r.namespace}/{r.name} is suspended: it creates no Job")
        return out
    job_template = r.map(spec.get("jobTemplate"), "spec.jobTemplate")
    if not job_template:
        raise r.fail("spec.jobTemplate", "Required value")
    tmeta = r.map(job_template.get("metadata"), "spec.jobTemplate.metadata")
    job_name = f"{r.name}-{SCHEDULED_TIME // 60}"
    annotations = dict(tmeta.get("annotations") or {})
    annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] = SCHEDULED_TIMESTAMP
    job_uid = names.uid()
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name,
            "namespace": r.namespace,
            "uid": job_uid,
            "labels": dict(tmeta.get("labels") or {}),
            "annotations": annotations,
            "ownerReferences": [controller_ref("batch/v1", "CronJob", r.name, uid)],
        },
        "spec": copy_tree(dict(r.map(job_template.get("spec"), "spec.jobTemplate.spec"))),
    }
    out.created.append(job)
    out.pods = _job_pods(Reader(job, f"{source}: CronJob {r.namespace}/{r.name}"), job_uid, names)
    return out
