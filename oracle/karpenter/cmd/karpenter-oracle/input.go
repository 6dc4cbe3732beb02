package main

// Reading the scenario files: multi-document YAML or JSON, `*List` kinds, the object kinds
// kplan reads for Karpenter (Nodes, Pods, DaemonSets, PodDisruptionBudgets, NodePools,
// NodeClaims). Other kinds are ignored with a warning on stderr, as kplan ignores them.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// inputError is a user mistake: one line on stderr, exit status 2.
type inputError struct{ msg string }

func (e inputError) Error() string { return e.msg }

func badInput(format string, args ...any) error { return inputError{fmt.Sprintf(format, args...)} }

// world is everything read from the input files, in file order.
type world struct {
	nodes      []*corev1.Node
	pods       []*corev1.Pod
	daemonSets []*appsv1.DaemonSet
	pdbs       []*policyv1.PodDisruptionBudget
	nodePools  []*karpv1.NodePool
	nodeClaims []*karpv1.NodeClaim
}

type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

func readInputs(files []string) (*world, error) {
	w := &world{}
	for _, f := range files {
		var r io.Reader
		if f == "-" {
			r = os.Stdin
		} else {
			fh, err := os.Open(f)
			if err != nil {
				return nil, badInput("%s: %v", f, err)
			}
			defer fh.Close()
			r = fh
		}
		dec := utilyaml.NewYAMLReader(bufio.NewReader(r))
		for i := 0; ; i++ {
			doc, err := dec.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, badInput("%s: document %d: %v", f, i+1, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			raw, err := utilyaml.ToJSON(doc)
			if err != nil {
				return nil, badInput("%s: document %d: %v", f, i+1, err)
			}
			if string(bytes.TrimSpace(raw)) == "null" {
				continue
			}
			if err := w.add(f, raw); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

func (w *world) add(file string, raw []byte) error {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return badInput("%s: %v", file, err)
	}
	if strings.HasSuffix(tm.Kind, "List") {
		for _, item := range tm.Items {
			if err := w.add(file, item); err != nil {
				return err
			}
		}
		return nil
	}
	where := fmt.Sprintf("%s: %s %q", file, tm.Kind, tm.Metadata.Name)
	strict := func(into any) error {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(into); err != nil {
			return badInput("%s: %v", where, err)
		}
		return nil
	}
	switch {
	case tm.Kind == "Node" && tm.APIVersion == "v1":
		o := &corev1.Node{}
		if err := strict(o); err != nil {
			return err
		}
		w.nodes = append(w.nodes, o)
	case tm.Kind == "Pod" && tm.APIVersion == "v1":
		o := &corev1.Pod{}
		if err := strict(o); err != nil {
			return err
		}
		w.pods = append(w.pods, o)
	case tm.Kind == "DaemonSet" && tm.APIVersion == "apps/v1":
		o := &appsv1.DaemonSet{}
		if err := strict(o); err != nil {
			return err
		}
		w.daemonSets = append(w.daemonSets, o)
	case tm.Kind == "PodDisruptionBudget" && tm.APIVersion == "policy/v1":
		o := &policyv1.PodDisruptionBudget{}
		if err := strict(o); err != nil {
			return err
		}
		w.pdbs = append(w.pdbs, o)
	case tm.Kind == "NodePool" && tm.APIVersion == "karpenter.sh/v1":
		defaulted, err := defaultNodePoolDurations(raw)
		if err != nil {
			return badInput("%s: %v", where, err)
		}
		raw = defaulted
		o := &karpv1.NodePool{}
		if err := strict(o); err != nil {
			return err
		}
		w.nodePools = append(w.nodePools, o)
	case tm.Kind == "NodeClaim" && tm.APIVersion == "karpenter.sh/v1":
		o := &karpv1.NodeClaim{}
		if err := strict(o); err != nil {
			return err
		}
		w.nodeClaims = append(w.nodeClaims, o)
	case tm.Kind == "":
		return badInput("%s: an object without kind", file)
	default:
		fmt.Fprintf(os.Stderr, "karpenter-oracle: %s: ignoring %s %s\n", file, tm.APIVersion, tm.Kind)
	}
	if tm.Metadata.Name == "" {
		return badInput("%s: %s without metadata.name", file, tm.Kind)
	}
	return nil
}

// defaultNodePoolDurations applies the CRD's defaults of spec.disruption.consolidateAfter ("0s")
// and spec.template.spec.expireAfter ("720h") to the JSON, where the API server applies them: a
// field that is absent. After decoding, "Never" and absent are the same value (NillableDuration
// keeps neither a duration nor its text for "Never"), so defaulting the typed object would turn
// Never into the default.
func defaultNodePoolDurations(raw []byte) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	child := func(m map[string]any, key string) map[string]any {
		c, ok := m[key].(map[string]any)
		if !ok {
			c = map[string]any{}
			m[key] = c
		}
		return c
	}
	spec := child(obj, "spec")
	if d := child(spec, "disruption"); d["consolidateAfter"] == nil {
		d["consolidateAfter"] = "0s"
	}
	tspec := child(child(spec, "template"), "spec")
	if tspec["expireAfter"] == nil {
		tspec["expireAfter"] = "720h"
	}
	return json.Marshal(obj)
}
