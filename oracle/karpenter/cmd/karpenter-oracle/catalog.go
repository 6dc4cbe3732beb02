package main

// The instance-type catalog: the JSON list Karpenter's KWOK cloud provider reads
// (kwok/cloudprovider/helpers.go, v1.15.0): name, architecture, operatingSystems, resources,
// offerings[] with Price, Available, Requirements (and ReservationCapacity). Each entry becomes
// a cloudprovider.InstanceType the way the KWOK provider builds it:
//   - requirements: instance-type, arch, os, zone (the offerings' zones), capacity-type (the
//     offerings' capacity types) and KWOK's four labels (instance-size: the AWS size suffix of
//     the name or else the CPU quantity; instance-family: the name up to the first '.' or '-',
//     else its first letter; instance-cpu; instance-memory);
//   - capacity: resources, with pods=110 unless given;
//   - overhead: kube-reserved cpu 100m, memory 10Mi (kplan's extension key `overhead`, with
//     kubeReserved/systemReserved/evictionThreshold, replaces it: the built-in AWS catalog has it);
//   - every offering requirement key becomes a well-known label (as KWOK does).
// One deliberate difference: KWOK marks every offering available; the oracle keeps the file's
// `Available`, so a catalog can say that an offering is not available.

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kwokv1alpha1 "sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

type catalogOffering struct {
	Price               float64                          `json:"Price"`
	Available           *bool                            `json:"Available"`
	ReservationCapacity int                              `json:"ReservationCapacity"`
	Requirements        []corev1.NodeSelectorRequirement `json:"Requirements"`
}

type catalogEntry struct {
	Name             string              `json:"name"`
	Architecture     string              `json:"architecture"`
	OperatingSystems []string            `json:"operatingSystems"`
	Resources        corev1.ResourceList `json:"resources"`
	Offerings        []catalogOffering   `json:"offerings"`
	// Overhead is kplan's extension of the format (its built-in AWS catalog carries it); KWOK
	// ignores the key and uses its fixed kube-reserved overhead.
	Overhead *struct {
		KubeReserved      corev1.ResourceList `json:"kubeReserved"`
		SystemReserved    corev1.ResourceList `json:"systemReserved"`
		EvictionThreshold corev1.ResourceList `json:"evictionThreshold"`
	} `json:"overhead"`
}

var (
	awsSize     = regexp.MustCompile(`^\w+\.(nano|micro|small|medium|large|\d*xlarge|metal)$`)
	familySplit = regexp.MustCompile(`[.-]`)
)

func readCatalog(path string) ([]*cloudprovider.InstanceType, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--instance-types %s: %v", path, err)
	}
	var entries []catalogEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, badInput("--instance-types %s: %v", path, err)
	}
	seen := map[string]bool{}
	var out []*cloudprovider.InstanceType
	for i, e := range entries {
		if e.Name == "" {
			return nil, badInput("--instance-types %s: entry %d: no name", path, i)
		}
		if seen[e.Name] {
			return nil, badInput("--instance-types %s: %s: listed twice", path, e.Name)
		}
		seen[e.Name] = true
		it, err := instanceTypeOf(e)
		if err != nil {
			return nil, badInput("--instance-types %s: %s: %v", path, e.Name, err)
		}
		out = append(out, it)
	}
	return out, nil
}

func sizeOf(name, cpu string) string {
	if m := awsSize.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return cpu
}

func familyOf(name string) string {
	parts := familySplit.Split(name, 2)
	if len(parts) < 2 {
		return name[0:1]
	}
	return parts[0]
}

// valuesOf collects the values of one key over the offerings' requirements, first-seen order.
func valuesOf(offerings []catalogOffering, key string) []string {
	var vals []string
	seen := map[string]bool{}
	for _, o := range offerings {
		for _, r := range o.Requirements {
			if r.Key != key {
				continue
			}
			for _, v := range r.Values {
				if !seen[v] {
					seen[v] = true
					vals = append(vals, v)
				}
			}
			break
		}
	}
	return vals
}

func instanceTypeOf(e catalogEntry) (*cloudprovider.InstanceType, error) {
	var cpu, memory string
	if q, ok := e.Resources[corev1.ResourceCPU]; ok {
		cpu = q.String()
	}
	if q, ok := e.Resources[corev1.ResourceMemory]; ok {
		memory = q.String()
	}
	capacity := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}
	for k, v := range e.Resources {
		capacity[k] = v
	}
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, e.Name),
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, e.Architecture),
		scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, e.OperatingSystems...),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, valuesOf(e.Offerings, corev1.LabelTopologyZone)...),
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, valuesOf(e.Offerings, karpv1.CapacityTypeLabelKey)...),
		scheduling.NewRequirement(kwokv1alpha1.InstanceSizeLabelKey, corev1.NodeSelectorOpIn, sizeOf(e.Name, cpu)),
		scheduling.NewRequirement(kwokv1alpha1.InstanceFamilyLabelKey, corev1.NodeSelectorOpIn, familyOf(e.Name)),
		scheduling.NewRequirement(kwokv1alpha1.InstanceCPULabelKey, corev1.NodeSelectorOpIn, cpu),
		scheduling.NewRequirement(kwokv1alpha1.InstanceMemoryLabelKey, corev1.NodeSelectorOpIn, memory),
	)
	var offerings cloudprovider.Offerings
	for j, o := range e.Offerings {
		var ors []*scheduling.Requirement
		for _, r := range o.Requirements {
			switch r.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
				corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			default:
				return nil, fmt.Errorf("offerings[%d]: requirement %s: unknown operator %q", j, r.Key, r.Operator)
			}
			karpv1.WellKnownLabels.Insert(r.Key)
			ors = append(ors, scheduling.NewRequirement(r.Key, r.Operator, r.Values...))
		}
		offerings = append(offerings, &cloudprovider.Offering{
			Requirements:        scheduling.NewRequirements(ors...),
			Price:               o.Price,
			Available:           o.Available == nil || *o.Available,
			ReservationCapacity: o.ReservationCapacity,
		})
	}
	overhead := &cloudprovider.InstanceTypeOverhead{
		KubeReserved: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("100m"),
			corev1.ResourceMemory: resource.MustParse("10Mi"),
		},
	}
	if e.Overhead != nil {
		overhead = &cloudprovider.InstanceTypeOverhead{
			KubeReserved:      e.Overhead.KubeReserved,
			SystemReserved:    e.Overhead.SystemReserved,
			EvictionThreshold: e.Overhead.EvictionThreshold,
		}
	}
	return &cloudprovider.InstanceType{
		Name:         e.Name,
		Requirements: reqs,
		Offerings:    offerings,
		Capacity:     capacity,
		Overhead:     overhead,
	}, nil
}
