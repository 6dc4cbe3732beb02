package main

// catalogProvider is the oracle's cloudprovider.CloudProvider: every NodePool gets the whole
// catalog (as the KWOK provider's GetInstanceTypes does), and nothing is ever launched — the
// provisioning command stops where Karpenter would call Create, and reports the offering a
// launch would take itself (launch.go). Karpenter only schedules for NodePools whose node class
// kind the provider supports: the provider supports KWOK's KWOKNodeClass and every node class
// kind the input's NodePools and NodeClaims name (EC2NodeClass...), each registered in the
// scheme under its group and kind (nodeClassFor); offline every node class counts as ready.

import (
	"context"
	"fmt"
	"sort"

	"github.com/awslabs/operatorpkg/status"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	kwokv1alpha1 "sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

const (
	nodeClassGroup = "karpenter.kwok.sh"
	nodeClassKind  = "KWOKNodeClass"
)

type catalogProvider struct {
	instanceTypes []*cloudprovider.InstanceType
	// nodeClasses: KWOKNodeClass, then the input's other node class kinds by group and kind
	nodeClasses []status.Object
}

// nodeClassSlot is a Go type that stands for one node class kind of the input: the scheme maps a
// Go type to its group and kind, so each kind needs a type of its own.
type nodeClassSlot[T any] struct {
	kwokv1alpha1.KWOKNodeClass
}

func (n *nodeClassSlot[T]) DeepCopyObject() runtime.Object {
	c := *n
	c.KWOKNodeClass = *n.KWOKNodeClass.DeepCopy()
	return &c
}

type (
	slot0 struct{}
	slot1 struct{}
	slot2 struct{}
	slot3 struct{}
	slot4 struct{}
	slot5 struct{}
	slot6 struct{}
	slot7 struct{}
)

var nodeClassSlots = []func() status.Object{
	func() status.Object { return &nodeClassSlot[slot0]{} }, func() status.Object { return &nodeClassSlot[slot1]{} },
	func() status.Object { return &nodeClassSlot[slot2]{} }, func() status.Object { return &nodeClassSlot[slot3]{} },
	func() status.Object { return &nodeClassSlot[slot4]{} }, func() status.Object { return &nodeClassSlot[slot5]{} },
	func() status.Object { return &nodeClassSlot[slot6]{} }, func() status.Object { return &nodeClassSlot[slot7]{} },
}

// newCatalogProvider supports KWOKNodeClass and the node class kinds of `refs` (at most
// len(nodeClassSlots) others).
func newCatalogProvider(instanceTypes []*cloudprovider.InstanceType, refs []*karpv1.NodeClassReference) (*catalogProvider, error) {
	kinds := map[schema.GroupKind]bool{}
	for _, r := range refs {
		if r == nil {
			continue
		}
		gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
		if gk != (schema.GroupKind{Group: nodeClassGroup, Kind: nodeClassKind}) {
			kinds[gk] = true
		}
	}
	sorted := make([]schema.GroupKind, 0, len(kinds))
	for gk := range kinds {
		sorted = append(sorted, gk)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	if len(sorted) > len(nodeClassSlots) {
		return nil, badInput("the input names %d node class kinds; the oracle supports %d", len(sorted), len(nodeClassSlots))
	}
	c := &catalogProvider{instanceTypes: instanceTypes, nodeClasses: []status.Object{&kwokv1alpha1.KWOKNodeClass{}}}
	for i, gk := range sorted {
		obj := nodeClassSlots[i]()
		scheme.Scheme.AddKnownTypeWithName(gk.WithVersion("v1"), obj)
		c.nodeClasses = append(c.nodeClasses, obj)
	}
	return c, nil
}

var _ cloudprovider.CloudProvider = (*catalogProvider)(nil)

var errOffline = fmt.Errorf("the karpenter oracle does not launch or delete instances")

func (c *catalogProvider) Create(context.Context, *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	return nil, errOffline
}

func (c *catalogProvider) Delete(context.Context, *karpv1.NodeClaim) error { return errOffline }

func (c *catalogProvider) Get(_ context.Context, providerID string) (*karpv1.NodeClaim, error) {
	return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("no instance %s offline", providerID))
}

func (c *catalogProvider) List(context.Context) ([]*karpv1.NodeClaim, error) { return nil, nil }

func (c *catalogProvider) GetInstanceTypes(context.Context, *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return c.instanceTypes, nil
}

func (c *catalogProvider) IsDrifted(context.Context, *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	return "", nil
}

func (c *catalogProvider) Reboot(context.Context, *karpv1.NodeClaim, string) error {
	return cloudprovider.NewNodeRebootNotImplementedError()
}

func (c *catalogProvider) RepairPolicies() []cloudprovider.RepairPolicy { return nil }

func (c *catalogProvider) Name() string { return "kplan-catalog" }

func (c *catalogProvider) GetSupportedNodeClasses() []status.Object {
	return c.nodeClasses
}
