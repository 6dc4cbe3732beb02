package main

// Building Karpenter's world from the input: the objects an API server would hold (after the
// defaulting and the controllers that matter here), a controller-runtime fake client with the
// field indexes Karpenter's operator registers (pkg/operator/operator.go), and a state.Cluster
// fed the way its informer controllers feed it (NodeClaims, Nodes, Pods, DaemonSets).

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
)

// oracleNow is the fake clock's time: every timestamp the oracle gives is before it.
var oracleNow = time.Date(2025, 1, 11, 0, 0, 0, 0, time.UTC)

// inputTimestamp is the creationTimestamp of objects given without one.
var inputTimestamp = metav1.NewTime(time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC))

type karpWorld struct {
	client   client.Client
	cluster  *state.Cluster
	clock    *clocktesting.FakeClock
	provider *catalogProvider
	input    *world
	pending  []*corev1.Pod // unbound pods, input order
}

// defaultPod applies what the API server (defaulting: requests from limits) and the
// kube-scheduler (PodScheduled=False/Unschedulable on pods it could not place) would have done.
func defaultPod(p *corev1.Pod, i int) {
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	if p.UID == "" {
		// Karpenter's queue breaks ties of equal cpu and memory by creationTimestamp, then by
		// UID: numbered UIDs make that the input order.
		p.UID = types.UID(fmt.Sprintf("oracle-uid-%06d", i))
	}
	if p.CreationTimestamp.IsZero() {
		p.CreationTimestamp = inputTimestamp
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for j := range cs {
			c := &cs[j]
			for name, q := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					if c.Resources.Requests == nil {
						c.Resources.Requests = corev1.ResourceList{}
					}
					c.Resources.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	if p.Spec.NodeName != "" {
		if p.Status.Phase == "" {
			p.Status.Phase = corev1.PodRunning
		}
		return
	}
	if p.Status.Phase == "" {
		p.Status.Phase = corev1.PodPending
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
		Type:   corev1.PodScheduled,
		Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable,
	})
}

// pointAtNodeClass: the input's node class reference, or KWOK's KWOKNodeClass "default" when
// there is none (or it names no kind).
func pointAtNodeClass(ref *karpv1.NodeClassReference) *karpv1.NodeClassReference {
	if ref != nil && ref.Kind != "" {
		c := *ref
		return &c
	}
	name := "default"
	if ref != nil && ref.Name != "" {
		name = ref.Name
	}
	return &karpv1.NodeClassReference{Group: nodeClassGroup, Kind: nodeClassKind, Name: name}
}

// defaultNodePool: the CRD's defaults that matter offline, a node class if none is named, and the
// status conditions the NodePool controllers set when its node class is ready.
func defaultNodePool(np *karpv1.NodePool) {
	np.Spec.Template.Spec.NodeClassRef = pointAtNodeClass(np.Spec.Template.Spec.NodeClassRef)
	if np.UID == "" {
		np.UID = types.UID("oracle-nodepool-uid-" + np.Name)
	}
	if np.CreationTimestamp.IsZero() {
		np.CreationTimestamp = inputTimestamp
	}
	if np.Spec.Disruption.ConsolidationPolicy == "" {
		np.Spec.Disruption.ConsolidationPolicy = karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	}
	if len(np.Spec.Disruption.Budgets) == 0 {
		np.Spec.Disruption.Budgets = []karpv1.Budget{{Nodes: "10%"}}
	}
	np.StatusConditions().SetTrue(karpv1.ConditionTypeValidationSucceeded)
	np.StatusConditions().SetTrue(karpv1.ConditionTypeNodeClassReady)
	np.StatusConditions().SetTrue(karpv1.ConditionTypeNodeRegistrationHealthy)
	np.StatusConditions().SetTrue(status.ConditionReady)
}

func isManagedNode(n *corev1.Node) bool { return n.Labels[karpv1.NodePoolLabelKey] != "" }

// linkNodesAndClaims gives every Karpenter-managed Node (karpenter.sh/nodepool label) a
// providerID and a NodeClaim: the input's NodeClaim of that providerID or status.nodeName, or
// else one made from the Node (launched, registered, initialized), as the NodeClaim that
// exists in a real cluster beside each Karpenter node. A managed Node in the input is a
// registered, initialized node unless it says otherwise (labels karpenter.sh/registered and
// karpenter.sh/initialized are added when absent).
func linkNodesAndClaims(w *world) {
	for _, nc := range w.nodeClaims {
		nc.Spec.NodeClassRef = pointAtNodeClass(nc.Spec.NodeClassRef)
		if nc.CreationTimestamp.IsZero() {
			nc.CreationTimestamp = inputTimestamp
		}
		if nc.UID == "" {
			nc.UID = types.UID("oracle-nodeclaim-uid-" + nc.Name)
		}
	}
	for _, n := range w.nodes {
		if n.CreationTimestamp.IsZero() {
			n.CreationTimestamp = inputTimestamp
		}
		if len(n.Status.Allocatable) == 0 && len(n.Status.Capacity) != 0 {
			n.Status.Allocatable = n.Status.Capacity.DeepCopy()
		}
		if !isManagedNode(n) {
			continue
		}
		var claim *karpv1.NodeClaim
		for _, nc := range w.nodeClaims {
			if (n.Spec.ProviderID != "" && nc.Status.ProviderID == n.Spec.ProviderID) || nc.Status.NodeName == n.Name {
				claim = nc
				break
			}
		}
		if n.Spec.ProviderID == "" {
			if claim != nil && claim.Status.ProviderID != "" {
				n.Spec.ProviderID = claim.Status.ProviderID
			} else {
				n.Spec.ProviderID = "kplan://" + n.Name
			}
		}
		for _, key := range []string{karpv1.NodeRegisteredLabelKey, karpv1.NodeInitializedLabelKey} {
			if _, ok := n.Labels[key]; !ok {
				n.Labels[key] = "true"
			}
		}
		if claim == nil {
			claim = claimForNode(n, poolClass(w, n.Labels[karpv1.NodePoolLabelKey]))
			w.nodeClaims = append(w.nodeClaims, claim)
		}
		if claim.Status.ProviderID == "" {
			claim.Status.ProviderID = n.Spec.ProviderID
		}
		if claim.Status.NodeName == "" {
			claim.Status.NodeName = n.Name
		}
	}
}

// poolClass is the node class reference of the NodePool named `pool` (nil if none is given).
func poolClass(w *world, pool string) *karpv1.NodeClassReference {
	for _, np := range w.nodePools {
		if np.Name == pool {
			return np.Spec.Template.Spec.NodeClassRef
		}
	}
	return nil
}

func claimForNode(n *corev1.Node, class *karpv1.NodeClassReference) *karpv1.NodeClaim {
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	var reqs []karpv1.NodeSelectorRequirementWithMinValues
	for _, key := range []string{corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, karpv1.CapacityTypeLabelKey, corev1.LabelArchStable, corev1.LabelOSStable} {
		if v, ok := n.Labels[key]; ok {
			reqs = append(reqs, karpv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{v}})
		}
	}
	nc := &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:              n.Name,
			UID:               types.UID("oracle-nodeclaim-uid-" + n.Name),
			CreationTimestamp: n.CreationTimestamp,
			Labels:            labels,
			Annotations:       map[string]string{},
		},
		Spec: karpv1.NodeClaimSpec{
			Requirements: reqs,
			NodeClassRef: pointAtNodeClass(class),
			Taints:       n.Spec.Taints,
		},
		Status: karpv1.NodeClaimStatus{
			ProviderID:  n.Spec.ProviderID,
			NodeName:    n.Name,
			Capacity:    n.Status.Capacity.DeepCopy(),
			Allocatable: n.Status.Allocatable.DeepCopy(),
		},
	}
	nc.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	nc.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
	nc.StatusConditions().SetTrue(karpv1.ConditionTypeInitialized)
	return nc
}

// stampConditions gives the conditions without a lastTransitionTime in the input, and those the
// oracle set (SetTrue stamps them with the wall clock: at or after `since`), the object's
// creationTimestamp, so that nothing depends on when the oracle runs (consolidateAfter reads the
// Initialized condition's time).
func stampConditions(conds []status.Condition, created metav1.Time, since time.Time) {
	for i := range conds {
		if conds[i].LastTransitionTime.IsZero() || !conds[i].LastTransitionTime.Time.Before(since) {
			conds[i].LastTransitionTime = created
		}
	}
}

// indexes are the field indexes Karpenter's operator registers on its cache.
func withIndexes(b *fake.ClientBuilder) *fake.ClientBuilder {
	return b.
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}).
		WithIndex(&corev1.Node{}, "spec.providerID", func(o client.Object) []string {
			return []string{o.(*corev1.Node).Spec.ProviderID}
		}).
		WithIndex(&storagev1.VolumeAttachment{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}
		}).
		WithIndex(&karpv1.NodeClaim{}, "status.providerID", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Status.ProviderID}
		}).
		WithIndex(&karpv1.NodeClaim{}, "spec.nodeClassRef.group", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Group}
		}).
		WithIndex(&karpv1.NodeClaim{}, "spec.nodeClassRef.kind", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Kind}
		}).
		WithIndex(&karpv1.NodeClaim{}, "spec.nodeClassRef.name", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Name}
		}).
		WithIndex(&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.group", func(o client.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Group}
		}).
		WithIndex(&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.kind", func(o client.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Kind}
		}).
		WithIndex(&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.name", func(o client.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Name}
		})
}

func buildWorld(ctx context.Context, w *world, instanceTypes []*cloudprovider.InstanceType) (*karpWorld, error) {
	started := time.Now().Add(-time.Second)
	seen := map[string]string{}
	check := func(kind, key string) error {
		if prev, ok := seen[kind+"/"+key]; ok {
			return badInput("%s %s is given twice%s", kind, key, prev)
		}
		seen[kind+"/"+key] = ""
		return nil
	}
	for i, p := range w.pods {
		defaultPod(p, i+1)
		if err := check("Pod", p.Namespace+"/"+p.Name); err != nil {
			return nil, err
		}
	}
	for _, np := range w.nodePools {
		defaultNodePool(np)
		if err := check("NodePool", np.Name); err != nil {
			return nil, err
		}
	}
	for _, ds := range w.daemonSets {
		if ds.Namespace == "" {
			ds.Namespace = "default"
		}
		if ds.UID == "" {
			ds.UID = types.UID("oracle-ds-uid-" + ds.Namespace + "-" + ds.Name)
		}
	}
	for _, pdb := range w.pdbs {
		if pdb.Namespace == "" {
			pdb.Namespace = "default"
		}
	}
	for _, n := range w.nodes {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		if err := check("Node", n.Name); err != nil {
			return nil, err
		}
	}
	linkNodesAndClaims(w)
	for _, nc := range w.nodeClaims {
		stampConditions(nc.Status.Conditions, nc.CreationTimestamp, started)
	}
	for _, np := range w.nodePools {
		stampConditions(np.Status.Conditions, np.CreationTimestamp, started)
	}
	for _, nc := range w.nodeClaims {
		if err := check("NodeClaim", nc.Name); err != nil {
			return nil, err
		}
	}
	var objs []client.Object
	for _, o := range w.nodePools {
		objs = append(objs, o)
	}
	for _, o := range w.nodeClaims {
		objs = append(objs, o)
	}
	for _, o := range w.nodes {
		objs = append(objs, o)
	}
	for _, o := range w.pods {
		objs = append(objs, o)
	}
	for _, o := range w.daemonSets {
		objs = append(objs, o)
	}
	for _, o := range w.pdbs {
		objs = append(objs, o)
	}
	kube := withIndexes(fake.NewClientBuilder().WithScheme(scheme.Scheme)).WithObjects(objs...).Build()
	clk := clocktesting.NewFakeClock(oracleNow)
	var refs []*karpv1.NodeClassReference
	for _, np := range w.nodePools {
		refs = append(refs, np.Spec.Template.Spec.NodeClassRef)
	}
	for _, nc := range w.nodeClaims {
		refs = append(refs, nc.Spec.NodeClassRef)
	}
	provider, err := newCatalogProvider(instanceTypes, refs)
	if err != nil {
		return nil, err
	}
	cluster := state.NewCluster(clk, kube, provider)
	// As the informer controllers would: NodeClaims, then Nodes, then Pods, then DaemonSets
	// (each in name order, as a list from the API server comes).
	claims := append([]*karpv1.NodeClaim(nil), w.nodeClaims...)
	sort.Slice(claims, func(i, j int) bool { return claims[i].Name < claims[j].Name })
	for _, nc := range claims {
		cluster.UpdateNodeClaim(nc)
	}
	nodes := append([]*corev1.Node(nil), w.nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		if err := cluster.UpdateNode(ctx, n.DeepCopy()); err != nil {
			return nil, fmt.Errorf("cluster state: node %s: %w", n.Name, err)
		}
	}
	for _, p := range w.pods {
		if err := cluster.UpdatePod(ctx, p.DeepCopy()); err != nil {
			return nil, fmt.Errorf("cluster state: pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	for _, ds := range w.daemonSets {
		if err := cluster.UpdateDaemonSet(ctx, ds.DeepCopy()); err != nil {
			return nil, fmt.Errorf("cluster state: daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
		}
	}
	cluster.SetSynced(true)
	kw := &karpWorld{client: kube, cluster: cluster, clock: clk, provider: provider, input: w}
	for _, p := range w.pods {
		if p.Spec.NodeName == "" {
			kw.pending = append(kw.pending, p)
		}
	}
	return kw, nil
}
