package main

// catalogProvider is the oracle's cloudprovider.CloudProvider: every NodePool gets the whole
// catalog (as the KWOK provider's GetInstanceTypes does), and nothing is ever launched — the
// provisioning command stops where Karpenter would call Create, and reports the offering a
// launch would take itself (launch.go). Its node class is KWOK's KWOKNodeClass: the oracle
// points every NodePool's and NodeClaim's nodeClassRef at that kind (keeping the name), because
// Karpenter only schedules for NodePools whose node class kind the provider supports, and
// offline every node class counts as ready.

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/status"
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
	return []status.Object{&kwokv1alpha1.KWOKNodeClass{}}
}
