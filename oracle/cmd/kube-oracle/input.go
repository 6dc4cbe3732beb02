package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"sigs.k8s.io/yaml"
)

var (
	runningStartBase = time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC)
	bindStartBase    = time.Date(2025, 1, 11, 0, 0, 0, 0, time.UTC)
	queueClockStart  = time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
)

// inputs is the scenario: objects that exist before the scheduler starts, and pending pods in
// creation order.
type inputs struct {
	objects []runtime.Object // everything but the pending pods (running pods included)
	pending []*corev1.Pod
	pvcUIDs int
}

func loadInputs(files []string) *inputs {
	var objs []runtime.Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fail("%s: %v", f, err)
		}
		objs = append(objs, decodeAll(f, data)...)
	}
	in := &inputs{}
	podUID, claimUID, pvcUID := 0, 0, 0
	var running []*corev1.Pod
	var classes []*schedulingv1.PriorityClass
	for _, o := range objs {
		if err := defaultObject(o); err != nil {
			fail("defaulting: %v", err)
		}
		switch t := o.(type) {
		case *corev1.Pod:
			if t.Namespace == "" {
				t.Namespace = metav1.NamespaceDefault
			}
			podUID++
			if t.UID == "" {
				t.UID = types.UID(fmt.Sprintf("oracle-uid-%06d", podUID))
			}
			if t.Spec.NodeName != "" {
				running = append(running, t)
				in.objects = append(in.objects, t)
			} else {
				in.pending = append(in.pending, t)
			}
			continue
		case *corev1.PersistentVolumeClaim:
			if t.Namespace == "" {
				t.Namespace = metav1.NamespaceDefault
			}
			if t.UID == "" {
				pvcUID++
				t.UID = types.UID(fmt.Sprintf("oracle-pvc-uid-%06d", pvcUID))
			}
		case *resourcev1.ResourceClaim:
			if t.Namespace == "" {
				t.Namespace = metav1.NamespaceDefault
			}
			if t.UID == "" {
				claimUID++
				t.UID = types.UID(fmt.Sprintf("oracle-claim-uid-%06d", claimUID))
			}
		case *resourcev1.ResourceClaimTemplate:
			if t.Namespace == "" {
				t.Namespace = metav1.NamespaceDefault
			}
		case *schedulingv1.PriorityClass:
			classes = append(classes, t)
		}
		in.objects = append(in.objects, o)
	}
	in.pvcUIDs = pvcUID
	claimUIDCounter = claimUID
	pvcUIDCounter = pvcUID
	// The API server's two system priority classes.
	for _, sys := range []struct {
		name  string
		value int32
	}{{"system-node-critical", 2000001000}, {"system-cluster-critical", 2000000000}} {
		found := false
		for _, c := range classes {
			found = found || c.Name == sys.name
		}
		if !found {
			pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: sys.name}, Value: sys.value}
			_ = defaultObject(pc)
			classes = append(classes, pc)
			in.objects = append(in.objects, pc)
		}
	}
	for i, p := range running {
		admitPriority(p, classes)
		if p.Status.StartTime == nil {
			t := runningStartBase.Add(time.Duration(i) * time.Second)
			if !p.CreationTimestamp.IsZero() {
				t = p.CreationTimestamp.Time
			}
			p.Status.StartTime = &metav1.Time{Time: t}
		}
	}
	for _, p := range in.pending {
		admitPriority(p, classes)
	}
	linkPodOwnedRefs(in)
	return in
}

// admitPriority is the Priority admission plugin: spec.priority and preemptionPolicy from the
// pod's class or the globalDefault class.
func admitPriority(p *corev1.Pod, classes []*schedulingv1.PriorityClass) {
	var pc *schedulingv1.PriorityClass
	if p.Spec.PriorityClassName == "" {
		for _, c := range classes {
			if c.GlobalDefault && (pc == nil || c.Value > pc.Value) {
				pc = c
			}
		}
		if pc == nil {
			zero := int32(0)
			if p.Spec.Priority == nil {
				p.Spec.Priority = &zero
			}
			return
		}
		p.Spec.PriorityClassName = pc.Name
	} else {
		for _, c := range classes {
			if c.Name == p.Spec.PriorityClassName {
				pc = c
			}
		}
		if pc == nil {
			fmt.Fprintf(os.Stderr, "kube-oracle: warning: pod %s/%s: no PriorityClass %q; priority 0\n", p.Namespace, p.Name, p.Spec.PriorityClassName)
			zero := int32(0)
			p.Spec.Priority = &zero
			return
		}
	}
	v := pc.Value
	p.Spec.Priority = &v
	if pc.PreemptionPolicy != nil {
		pp := *pc.PreemptionPolicy
		p.Spec.PreemptionPolicy = &pp
	}
}

// defaultObject applies the API server's defaulting (the generated defaulters of pkg/apis).
func defaultObject(o runtime.Object) error {
	legacyscheme.Scheme.Default(o)
	return nil
}

func decodeAll(file string, data []byte) []runtime.Object {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []runtime.Object
	for i := 0; ; i++ {
		var raw map[string]any
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail("%s: document %d: %v", file, i+1, firstLine(err.Error()))
		}
		if len(raw) == 0 {
			continue
		}
		out = append(out, decodeObject(file, i+1, raw)...)
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func decodeObject(file string, doc int, raw map[string]any) []runtime.Object {
	u := &unstructured.Unstructured{Object: raw}
	kind := u.GetKind()
	if kind == "" || u.GetAPIVersion() == "" {
		fail("%s: document %d: no apiVersion/kind", file, doc)
	}
	if strings.HasSuffix(kind, "List") {
		if items, ok := raw["items"]; ok || kind == "List" {
			var out []runtime.Object
			list, _ := items.([]any)
			if items != nil && list == nil {
				fail("%s: document %d: %s items is not a list", file, doc, kind)
			}
			for _, it := range list {
				m, ok := it.(map[string]any)
				if !ok {
					fail("%s: document %d: a %s item is not an object", file, doc, kind)
				}
				if _, ok := m["kind"]; !ok {
					m["kind"] = strings.TrimSuffix(kind, "List")
				}
				if _, ok := m["apiVersion"]; !ok {
					m["apiVersion"] = u.GetAPIVersion()
				}
				out = append(out, decodeObject(file, doc, m)...)
			}
			return out
		}
	}
	js, err := yaml.Marshal(raw)
	if err == nil {
		js, err = yaml.YAMLToJSON(js)
	}
	if err != nil {
		fail("%s: document %d: %v", file, doc, err)
	}
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			fmt.Fprintf(os.Stderr, "kube-oracle: warning: %s: document %d: kind %s %s is not known; skipped\n", file, doc, u.GetAPIVersion(), kind)
			return nil
		}
		fail("%s: document %d (%s %s): %v", file, doc, kind, u.GetName(), firstLine(err.Error()))
	}
	acc, err := metaAccessor(obj)
	if err != nil || acc.GetName() == "" {
		fail("%s: document %d: %s without metadata.name", file, doc, gvk.Kind)
	}
	return []runtime.Object{obj}
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return m, nil
}

// sortedNames is a helper for deterministic iteration.
func sortedNames[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var _ = storagev1.StorageClass{}
