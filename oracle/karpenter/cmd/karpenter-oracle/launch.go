package main

// The offering a launch would take, computed the way the AWS provider's Create does
// (github.com/aws/karpenter-provider-aws v1.15.2, pkg/providers/instance/instance.go and
// filter/filter.go), on the NodeClaim Karpenter would create:
//  1. instance types: the NodeClaim's options that are compatible with its requirements, whose
//     allocatable fits its requests and that have a launchable compatible offering; then, unless
//     a requirement has minValues, "exotic" types (size containing "metal", or GPU/accelerator
//     capacity) are dropped when other types remain; then, when the NodeClaim allows both spot
//     and on-demand and both kinds of offerings exist (and no minValues), spot offerings dearer
//     than the cheapest on-demand offering are dropped (types left without offerings go); then
//     the 60 cheapest (InstanceTypes.Truncate);
//  2. capacity type: reserved, else spot, else on-demand — the first the NodeClaim allows that has
//     a launchable compatible offering;
//  3. the fleet request's options: each (instance type, zone) with a launchable offering
//     compatible with the requirements narrowed to that capacity type;
//  4. the choice: on-demand and reserved use EC2 Fleet's lowest-price strategy, so the launch takes
//     the cheapest option (equal prices: the first in Karpenter's order of instance types, then the
//     catalog's order of offerings — EC2 does not say which it takes); spot uses
//     price-capacity-optimized, so EC2 picks among the options by its own capacity data: the
//     oracle reports the cheapest as `instanceType`/`zone`/`price` and `ec2Chooses: true`.

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

const awsMaxInstanceTypes = 60

// The AWS provider's label for the instance size, read by its exotic-instance filter.
const awsInstanceSizeLabel = "karpenter.k8s.aws/instance-size"

var acceleratorResources = []corev1.ResourceName{
	"aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "amd.com/gpu", "nvidia.com/gpu", "habana.ai/gaudi",
}

type launchOptionJSON struct {
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	Price        float64 `json:"price"`
}

type launchJSON struct {
	CapacityType string             `json:"capacityType"`
	InstanceType string             `json:"instanceType"`
	Zone         string             `json:"zone"`
	Price        float64            `json:"price"`
	EC2Chooses   bool               `json:"ec2Chooses"`
	Options      []launchOptionJSON `json:"options"`
	Error        string             `json:"error,omitempty"`
}

type candidate struct {
	it        *cloudprovider.InstanceType
	offerings cloudprovider.Offerings
}

func isExotic(it *cloudprovider.InstanceType) bool {
	if it.Requirements.Has(awsInstanceSizeLabel) {
		for _, size := range it.Requirements.Get(awsInstanceSizeLabel).Values() {
			if strings.Contains(size, "metal") {
				return true
			}
		}
	}
	for _, r := range acceleratorResources {
		if q, ok := it.Capacity[r]; ok && !q.IsZero() {
			return true
		}
	}
	return false
}

func launchFor(ctx context.Context, options []*cloudprovider.InstanceType, reqs karpscheduling.Requirements, requests corev1.ResourceList) *launchJSON {
	var cands []candidate
	for _, it := range options {
		if !reqs.IsCompatible(it.Requirements, karpscheduling.AllowUndefinedWellKnownLabels) {
			continue
		}
		fits := false
		for _, group := range it.AllocatableOfferingsList() {
			if resources.Fits(requests, group.Allocatable) && group.Offerings.Launchable().HasCompatible(reqs) {
				fits = true
				break
			}
		}
		if fits {
			cands = append(cands, candidate{it: it, offerings: it.Offerings})
		}
	}
	if len(cands) == 0 {
		return &launchJSON{Error: "all requested instance types were unavailable during launch", Options: []launchOptionJSON{}}
	}
	if !reqs.HasMinValues() {
		var generic []candidate
		for _, c := range cands {
			if !isExotic(c.it) {
				generic = append(generic, c)
			}
		}
		if len(generic) > 0 {
			cands = generic
		}
		ct := reqs.Get(karpv1.CapacityTypeLabelKey)
		if ct.Has(karpv1.CapacityTypeOnDemand) && ct.Has(karpv1.CapacityTypeSpot) {
			cheapestOD, hasOD, hasSpot := -1.0, false, false
			for _, c := range cands {
				for _, o := range c.offerings.Compatible(reqs).Available() {
					switch o.Requirements.Get(karpv1.CapacityTypeLabelKey).Any() {
					case karpv1.CapacityTypeOnDemand:
						hasOD = true
						if cheapestOD < 0 || o.Price < cheapestOD {
							cheapestOD = o.Price
						}
					case karpv1.CapacityTypeSpot:
						hasSpot = true
					}
				}
			}
			if hasOD && hasSpot {
				var kept []candidate
				for _, c := range cands {
					var ofs cloudprovider.Offerings
					for _, o := range c.offerings {
						if !(o.CapacityType() == karpv1.CapacityTypeSpot && o.Price > cheapestOD) {
							ofs = append(ofs, o)
						}
					}
					if len(ofs) > 0 {
						kept = append(kept, candidate{it: c.it, offerings: ofs})
					}
				}
				cands = kept
			}
		}
	}
	// Truncate: the 60 cheapest by their cheapest launchable compatible offering (a stable sort
	// here; upstream's sort.Slice may order equal prices otherwise, which only matters at the cut).
	price := func(c candidate) float64 {
		best := -1.0
		for _, o := range c.offerings {
			if o.Launchable() && reqs.IsCompatible(o.Requirements, karpscheduling.AllowUndefinedWellKnownLabels) && (best < 0 || o.Price < best) {
				best = o.Price
			}
		}
		return best
	}
	sort.SliceStable(cands, func(i, j int) bool { return price(cands[i]) < price(cands[j]) })
	if len(cands) > awsMaxInstanceTypes {
		cands = cands[:awsMaxInstanceTypes]
	}
	capacityType := karpv1.CapacityTypeOnDemand
	for _, ct := range []string{karpv1.CapacityTypeReserved, karpv1.CapacityTypeSpot} {
		if !reqs.Get(karpv1.CapacityTypeLabelKey).Has(ct) {
			continue
		}
		narrowed := narrow(reqs, ct)
		found := false
		for _, c := range cands {
			if len(c.offerings.Compatible(narrowed).Launchable()) != 0 {
				found = true
				break
			}
		}
		if found {
			capacityType = ct
			break
		}
	}
	narrowed := narrow(reqs, capacityType)
	out := &launchJSON{CapacityType: capacityType, EC2Chooses: capacityType == karpv1.CapacityTypeSpot, Options: []launchOptionJSON{}}
	seen := map[string]bool{}
	for _, c := range cands {
		for _, o := range c.offerings.Compatible(narrowed).Launchable() {
			key := c.it.Name + "/" + o.Zone()
			if seen[key] {
				continue
			}
			seen[key] = true
			out.Options = append(out.Options, launchOptionJSON{InstanceType: c.it.Name, Zone: o.Zone(), Price: o.Price})
		}
	}
	sort.SliceStable(out.Options, func(i, j int) bool { return out.Options[i].Price < out.Options[j].Price })
	if len(out.Options) == 0 {
		out.Error = "no launchable offering for the capacity type " + capacityType
		return out
	}
	out.InstanceType, out.Zone, out.Price = out.Options[0].InstanceType, out.Options[0].Zone, out.Options[0].Price
	_ = ctx
	return out
}

func narrow(reqs karpscheduling.Requirements, capacityType string) karpscheduling.Requirements {
	n := karpscheduling.NewRequirements(reqs.Values()...)
	n[karpv1.CapacityTypeLabelKey] = karpscheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType)
	return n
}
