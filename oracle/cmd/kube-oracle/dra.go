package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

const (
	annPodClaimName        = "resource.kubernetes.io/pod-claim-name"
	finalizerDeleteProtect = "resource.kubernetes.io/delete-protection"
	// the API server's generateName alphabet (k8s.io/apimachinery/pkg/util/rand)
	nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"
)

var claimUIDCounter, pvcUIDCounter int

func nextClaimUID() types.UID {
	claimUIDCounter++
	return types.UID(fmt.Sprintf("oracle-claim-uid-%06d", claimUIDCounter))
}

// generatedClaimName is the resourceclaim controller's generateName (<pod>-<claim>-, both
// parts shortened in proportion above 57 characters) plus 5 characters of the name alphabet
// from an FNV-1a-64 hash of pod name and claim name (stable across runs).
func generatedClaimName(podName, claimName string) string {
	base := podName + "-" + claimName + "-"
	const maxBaseLen = 57
	if len(base) > maxBaseLen {
		base = podName[0:len(podName)*maxBaseLen/len(base)] + "-" + claimName[0:len(claimName)*maxBaseLen/len(base)]
	}
	if len(base) > 58 {
		base = base[:58]
	}
	h := fnv.New64a()
	h.Write([]byte(podName))
	h.Write([]byte{0})
	h.Write([]byte(claimName))
	v := h.Sum64()
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = nameAlphabet[v%uint64(len(nameAlphabet))]
		v /= uint64(len(nameAlphabet))
	}
	return base + string(suffix)
}

func hasClaimStatus(p *corev1.Pod, name string) bool {
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == name {
			return true
		}
	}
	return false
}

func (c *controllers) template(ns, name string) *resourcev1.ResourceClaimTemplate {
	for _, o := range c.in.objects {
		if t, ok := o.(*resourcev1.ResourceClaimTemplate); ok && t.Namespace == ns && t.Name == name {
			return t
		}
	}
	return nil
}

func claimFromTemplate(p *corev1.Pod, podClaim string, t *resourcev1.ResourceClaimTemplate) *resourcev1.ResourceClaim {
	yes := true
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        generatedClaimName(p.Name, podClaim),
			Namespace:   p.Namespace,
			UID:         nextClaimUID(),
			Labels:      copyMap(t.Spec.Labels),
			Annotations: copyMap(t.Spec.Annotations),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
				Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: *t.Spec.Spec.DeepCopy(),
	}
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[annPodClaimName] = podClaim
	return claim
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// createClaimsFromTemplates is the resourceclaim controller for a pending pod: each template
// claim without a status entry is created, and the pod will be created with the entry set.
func (c *controllers) createClaimsFromTemplates(p *corev1.Pod) bool {
	wrote := false
	for _, rc := range p.Spec.ResourceClaims {
		if rc.ResourceClaimTemplateName == nil || hasClaimStatus(p, rc.Name) {
			continue
		}
		t := c.template(p.Namespace, *rc.ResourceClaimTemplateName)
		if t == nil {
			fmt.Fprintf(os.Stderr, "kube-oracle: warning: pod %s/%s: no ResourceClaimTemplate %q; no claim\n",
				p.Namespace, p.Name, *rc.ResourceClaimTemplateName)
			continue
		}
		claim := claimFromTemplate(p, rc.Name, t)
		if _, err := c.api.cs.ResourceV1().ResourceClaims(p.Namespace).Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
			fail("creating claim %s for pod %s/%s: %v", claim.Name, p.Namespace, p.Name, err)
		}
		name := claim.Name
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses,
			corev1.PodResourceClaimStatus{Name: rc.Name, ResourceClaimName: &name})
		wrote = true
	}
	return wrote
}

// linkPodOwnedRefs: input claims' Pod owner references and reservedFor entries without a UID
// get the UID of the pod of that name; running pods' template claims are linked to the input
// claim annotated with that pod claim name and controlled by the pod, or generated.
func linkPodOwnedRefs(in *inputs) {
	uids := map[string]types.UID{}
	var running []*corev1.Pod
	for _, o := range in.objects {
		if p, ok := o.(*corev1.Pod); ok {
			uids[p.Namespace+"/"+p.Name] = p.UID
			running = append(running, p)
		}
	}
	for _, p := range in.pending {
		uids[p.Namespace+"/"+p.Name] = p.UID
	}
	var claims []*resourcev1.ResourceClaim
	for _, o := range in.objects {
		cl, ok := o.(*resourcev1.ResourceClaim)
		if !ok {
			continue
		}
		claims = append(claims, cl)
		for i := range cl.OwnerReferences {
			r := &cl.OwnerReferences[i]
			if r.Kind == "Pod" && r.UID == "" {
				r.UID = uids[cl.Namespace+"/"+r.Name]
			}
		}
		for i := range cl.Status.ReservedFor {
			r := &cl.Status.ReservedFor[i]
			if r.Resource == "pods" && r.UID == "" {
				r.UID = uids[cl.Namespace+"/"+r.Name]
			}
		}
	}
	for _, p := range running {
		for _, rc := range p.Spec.ResourceClaims {
			if rc.ResourceClaimTemplateName == nil || hasClaimStatus(p, rc.Name) {
				continue
			}
			var found *resourcev1.ResourceClaim
			for _, cl := range claims {
				if cl.Namespace != p.Namespace || cl.Annotations[annPodClaimName] != rc.Name {
					continue
				}
				for _, r := range cl.OwnerReferences {
					if r.Kind == "Pod" && r.Name == p.Name && r.Controller != nil && *r.Controller {
						found = cl
					}
				}
			}
			if found == nil {
				var t *resourcev1.ResourceClaimTemplate
				for _, o := range in.objects {
					if tt, ok := o.(*resourcev1.ResourceClaimTemplate); ok && tt.Namespace == p.Namespace && tt.Name == *rc.ResourceClaimTemplateName {
						t = tt
					}
				}
				if t == nil {
					fmt.Fprintf(os.Stderr, "kube-oracle: warning: running pod %s/%s: no ResourceClaimTemplate %q\n", p.Namespace, p.Name, *rc.ResourceClaimTemplateName)
					continue
				}
				found = claimFromTemplate(p, rc.Name, t)
				in.objects = append(in.objects, found)
				claims = append(claims, found)
			}
			name := found.Name
			p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses,
				corev1.PodResourceClaimStatus{Name: rc.Name, ResourceClaimName: &name})
		}
	}
}

// claimsAfterPodDelete is the resourceclaim controller's syncClaim and the garbage collector
// after a pod was deleted (a preemption victim). It runs in a tracked goroutine.
func (c *controllers) claimsAfterPodDelete(pod *corev1.Pod) {
	ctx := context.Background()
	list, err := c.api.cs.ResourceV1().ResourceClaims(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for i := range items {
		cl := &items[i]
		idx := -1
		for j, r := range cl.Status.ReservedFor {
			if r.Resource == "pods" && r.UID == pod.UID {
				idx = j
			}
		}
		if idx < 0 {
			continue
		}
		cl.Status.ReservedFor = append(cl.Status.ReservedFor[:idx:idx], cl.Status.ReservedFor[idx+1:]...)
		dealloc := len(cl.Status.ReservedFor) == 0 && hasString(cl.Finalizers, finalizerDeleteProtect)
		if dealloc {
			cl.Status.Allocation = nil
			cl.Status.ReservedFor = nil
		}
		updated, err := c.api.cs.ResourceV1().ResourceClaims(cl.Namespace).UpdateStatus(ctx, cl, metav1.UpdateOptions{})
		if err != nil {
			continue
		}
		if dealloc {
			updated.Finalizers = removeString(updated.Finalizers, finalizerDeleteProtect)
			_, _ = c.api.cs.ResourceV1().ResourceClaims(cl.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
		}
	}
	list, err = c.api.cs.ResourceV1().ResourceClaims(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	items = list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for _, cl := range items {
		if len(cl.Finalizers) > 0 {
			continue
		}
		for _, r := range cl.OwnerReferences {
			if r.Kind == "Pod" && r.UID == pod.UID {
				_ = c.api.cs.ResourceV1().ResourceClaims(cl.Namespace).Delete(ctx, cl.Name, metav1.DeleteOptions{})
				break
			}
		}
	}
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func removeString(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// goTracked runs f in a goroutine that serial mode's settle waits for.
func (s *apiServer) goTracked(f func()) {
	s.tracked.Add(1)
	go func() {
		defer s.tracked.Add(-1)
		f()
	}()
}

func (c *controllers) installDRA() {
	c.api.afterWrite = append(c.api.afterWrite, func(verb string, gvr schema.GroupVersionResource, old, obj runtime.Object) {
		if verb != "delete" || gvr != podsGVR {
			return
		}
		pod := old.(*corev1.Pod)
		if !c.api.externalDelete {
			return
		}
		c.api.goTracked(func() { c.claimsAfterPodDelete(pod) })
	})
}
