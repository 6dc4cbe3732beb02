package main

// `provision`: Karpenter's provisioning decision for the pending pods, computed by
// Provisioner.Schedule itself (pkg/controllers/provisioning/provisioner.go): pending pods
// (GetPendingPods: provisionable, validated), nodes marked for deletion, NodePools that are
// ready, by weight, instance types per NodePool, volume topology, DaemonSet pods, topology,
// NewScheduler, Solve, TruncateInstanceTypes. The oracle stops where Karpenter would create
// the NodeClaims and reports them (and the offering a launch would take) as JSON.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/events"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	podutils "sigs.k8s.io/karpenter/pkg/utils/pod"
)

type requirementJSON struct {
	Key       string   `json:"key"`
	Operator  string   `json:"operator"`
	Values    []string `json:"values,omitempty"`
	MinValues *int     `json:"minValues,omitempty"`
}

type instanceTypeJSON struct {
	Name  string  `json:"name"`
	Price float64 `json:"price"`
}

type nodeClaimJSON struct {
	NodePool      string             `json:"nodePool"`
	Pods          []string           `json:"pods"`
	InstanceTypes []instanceTypeJSON `json:"instanceTypes"`
	Requirements  []requirementJSON  `json:"requirements"`
	Requests      map[string]string  `json:"requests"`
	Launch        *launchJSON        `json:"launch"`
}

type existingNodeJSON struct {
	Node      string   `json:"node"`
	NodeClaim string   `json:"nodeClaim,omitempty"`
	Pods      []string `json:"pods"`
}

type podErrorJSON struct {
	Pod   string `json:"pod"`
	Error string `json:"error"`
}

type provisionResult struct {
	Karpenter     string             `json:"karpenter"`
	NewNodeClaims []nodeClaimJSON    `json:"newNodeClaims"`
	ExistingNodes []existingNodeJSON `json:"existingNodes"`
	PodErrors     []podErrorJSON     `json:"podErrors"`
	Ignored       []podErrorJSON     `json:"ignored"`
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

func podKeys(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, podKey(p))
	}
	return out
}

// requirementsJSON: keys in name order, values sorted (upstream keeps them in sets, whose
// iteration order is random).
func requirementsJSON(reqs []karpv1.NodeSelectorRequirementWithMinValues) []requirementJSON {
	out := make([]requirementJSON, 0, len(reqs))
	for _, r := range reqs {
		vals := append([]string(nil), r.Values...)
		sort.Strings(vals)
		out = append(out, requirementJSON{Key: r.Key, Operator: string(r.Operator), Values: vals, MinValues: r.MinValues})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Operator < out[j].Operator
	})
	return out
}

// cheapestLaunchable is the price OrderByPrice sorts an instance type by.
func cheapestLaunchable(it *cloudprovider.InstanceType, reqs karpscheduling.Requirements) float64 {
	best := -1.0
	for _, of := range it.Offerings {
		if of.Launchable() && reqs.IsCompatible(of.Requirements, karpscheduling.AllowUndefinedWellKnownLabels) && (best < 0 || of.Price < best) {
			best = of.Price
		}
	}
	return best
}

func ignoredReason(ctx context.Context, prov *provisioning.Provisioner, p *corev1.Pod) string {
	switch {
	case !podutils.FailedToSchedule(p):
		return "not marked unschedulable by kube-scheduler (PodScheduled condition without reason Unschedulable)"
	case podutils.IsPreempting(p):
		return "preempting (status.nominatedNodeName is set)"
	case podutils.IsOwnedByDaemonSet(p):
		return "owned by a DaemonSet"
	case podutils.IsOwnedByNode(p):
		return "owned by a Node (static pod)"
	}
	if err := prov.Validate(ctx, p); err != nil {
		return "ignoring pod, " + err.Error()
	}
	return ""
}

func provision(ctx context.Context, kw *karpWorld) (*provisionResult, error) {
	recorder := events.NewRecorder(&record.FakeRecorder{})
	prov := provisioning.NewProvisioner(kw.client, recorder, kw.provider, kw.cluster, kw.clock, nil, nil)
	res := &provisionResult{Karpenter: karpenterVersion, NewNodeClaims: []nodeClaimJSON{}, ExistingNodes: []existingNodeJSON{}, PodErrors: []podErrorJSON{}, Ignored: []podErrorJSON{}}

	// Pending pods Karpenter leaves alone (GetPendingPods filters them out), with the reason.
	for _, p := range kw.pending {
		if why := ignoredReason(ctx, prov, p); why != "" {
			res.Ignored = append(res.Ignored, podErrorJSON{Pod: podKey(p), Error: why})
		}
	}

	results, err := prov.Schedule(ctx)
	if err != nil {
		return nil, fmt.Errorf("Provisioner.Schedule: %w", err)
	}
	if len(results.NewNodeClaims) == 0 && len(results.ExistingNodes) == 0 && len(results.PodErrors) == 0 {
		// Schedule returns empty results both when there is nothing to do and when no NodePool
		// is usable; upstream marks every pod "no dynamic nodepools found" in the latter case.
		if err := noNodePoolErrors(ctx, kw, prov, res); err != nil {
			return nil, err
		}
	}
	for _, nc := range results.NewNodeClaims {
		// The NodeClaim Karpenter would create: ToNodeClaim orders the options by price
		// (InstanceTypes.OrderByPrice, a sort.Slice) and keeps the first MaxInstanceTypes.
		obj := nc.ToNodeClaim()
		reqs := karpscheduling.NewNodeSelectorRequirementsWithMinValues(obj.Spec.Requirements...)
		ordered := nc.InstanceTypeOptions
		if len(ordered) > scheduling.MaxInstanceTypes {
			ordered = ordered[:scheduling.MaxInstanceTypes]
		}
		its := make([]instanceTypeJSON, 0, len(ordered))
		for _, it := range ordered {
			its = append(its, instanceTypeJSON{Name: it.Name, Price: cheapestLaunchable(it, reqs)})
		}
		requests := map[string]string{}
		for name, q := range obj.Spec.Resources.Requests {
			requests[string(name)] = q.String()
		}
		res.NewNodeClaims = append(res.NewNodeClaims, nodeClaimJSON{
			NodePool:      nc.NodePoolName,
			Pods:          podKeys(nc.Pods),
			InstanceTypes: its,
			Requirements:  requirementsJSON(obj.Spec.Requirements),
			Requests:      requests,
			Launch:        launchFor(ctx, ordered, reqs, obj.Spec.Resources.Requests),
		})
	}
	for _, en := range results.ExistingNodes {
		if len(en.Pods) == 0 {
			continue
		}
		e := existingNodeJSON{Node: en.Name(), Pods: podKeys(en.Pods)}
		if en.NodeClaim != nil {
			e.NodeClaim = en.NodeClaim.Name
		}
		res.ExistingNodes = append(res.ExistingNodes, e)
	}
	for p, err := range results.PodErrors {
		res.PodErrors = append(res.PodErrors, podErrorJSON{Pod: podKey(p), Error: err.Error()})
	}
	sort.Slice(res.PodErrors, func(i, j int) bool { return res.PodErrors[i].Pod < res.PodErrors[j].Pod })
	return res, nil
}

// noNodePoolErrors reproduces the one case where Schedule answers for the pods itself: no
// NodePool left after ListManaged and the readiness filter (ErrNodePoolsNotFound), reported to
// cluster state as "no dynamic nodepools found" for each pod.
func noNodePoolErrors(ctx context.Context, kw *karpWorld, prov *provisioning.Provisioner, res *provisionResult) error {
	pods, err := prov.GetPendingPods(ctx)
	if err != nil || len(pods) == 0 {
		return err
	}
	var list karpv1.NodePoolList
	if err := kw.client.List(ctx, &list, &client.ListOptions{}); err != nil {
		return err
	}
	usable := 0
	for i := range list.Items {
		np := &list.Items[i]
		if np.Spec.Replicas == nil && np.DeletionTimestamp.IsZero() {
			usable++
		}
	}
	if usable > 0 {
		return nil
	}
	for _, p := range pods {
		res.PodErrors = append(res.PodErrors, podErrorJSON{Pod: podKey(p), Error: "no dynamic nodepools found"})
	}
	return nil
}

var _ = strings.TrimSpace
