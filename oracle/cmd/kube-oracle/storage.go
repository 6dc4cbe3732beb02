package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

const (
	annSelectedNode       = "volume.kubernetes.io/selected-node"
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProv    = "volume.beta.kubernetes.io/storage-provisioner"
	annBindCompleted      = "pv.kubernetes.io/bind-completed"
	annBoundByController  = "pv.kubernetes.io/bound-by-controller"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
	annDefaultClass       = "storageclass.kubernetes.io/is-default-class"
	noProvisioner         = "kubernetes.io/no-provisioner"
)

var (
	pvsGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcsGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	vaGVR   = storagev1.SchemeGroupVersion.WithResource("volumeattachments")
	scGVR   = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	csiNGVR = storagev1.SchemeGroupVersion.WithResource("csinodes")
	csiDGVR = storagev1.SchemeGroupVersion.WithResource("csidrivers")
	nodeGVR = corev1.SchemeGroupVersion.WithResource("nodes")
)

func (c *controllers) install() {
	c.installDRA()
	c.api.afterWrite = append(c.api.afterWrite, c.storageAfterWrite)
}

// storageAfterWrite runs the PV controller, the external provisioner and the attach/detach
// controller synchronously inside the write that triggers them (the fake's lock is held, so
// they write straight to the tracker through the apiServer's internal calls).
func (c *controllers) storageAfterWrite(verb string, gvr schema.GroupVersionResource, old, obj runtime.Object) {
	switch {
	case gvr == pvsGVR && verb == "update":
		pv := obj.(*corev1.PersistentVolume)
		oldPV := old.(*corev1.PersistentVolume)
		if pv.Spec.ClaimRef != nil && (oldPV.Spec.ClaimRef == nil || oldPV.Spec.ClaimRef.UID != pv.Spec.ClaimRef.UID) &&
			pv.Status.Phase != corev1.VolumeBound {
			c.bindStatic(pv)
		}
	case gvr == pvcsGVR && verb == "update":
		pvc := obj.(*corev1.PersistentVolumeClaim)
		oldPVC := old.(*corev1.PersistentVolumeClaim)
		node := pvc.Annotations[annSelectedNode]
		if node != "" && oldPVC.Annotations[annSelectedNode] != node && pvc.Spec.VolumeName == "" {
			c.provision(pvc, node)
		}
	case gvr == podsGVR && verb == "update" && c.env.storageAttach:
		pod := obj.(*corev1.Pod)
		oldPod := old.(*corev1.Pod)
		if pod.Spec.NodeName != "" && oldPod.Spec.NodeName == "" {
			c.attach(pod)
		}
	case gvr == podsGVR && verb == "delete" && c.env.storageAttach:
		c.detach(old.(*corev1.Pod))
	}
}

func (c *controllers) get(gvr schema.GroupVersionResource, ns, name string) runtime.Object {
	o, err := c.api.tracker.Get(gvr, ns, name)
	if err != nil {
		return nil
	}
	return o
}

func (c *controllers) write(gvr schema.GroupVersionResource, obj runtime.Object) {
	if err := c.api.update(gvr, "", obj, true); err != nil {
		fmt.Fprintf(os.Stderr, "kube-oracle: warning: controller update of %s: %v\n", gvr.Resource, err)
	}
}

// bindStatic: the PV controller's bind() once the scheduler set a PV's claimRef: PV status
// Bound; the claim's volumeName and annotations; the claim's status Bound.
func (c *controllers) bindStatic(pv *corev1.PersistentVolume) {
	ref := pv.Spec.ClaimRef
	o := c.get(pvcsGVR, ref.Namespace, ref.Name)
	if o == nil {
		return
	}
	pvc := o.(*corev1.PersistentVolumeClaim).DeepCopy()
	if ref.UID != "" && pvc.UID != ref.UID {
		return
	}
	pv = pv.DeepCopy()
	pv.Status.Phase = corev1.VolumeBound
	c.write(pvsGVR, pv)
	if pvc.Annotations == nil {
		pvc.Annotations = map[string]string{}
	}
	if pvc.Spec.VolumeName == "" {
		pvc.Spec.VolumeName = pv.Name
		pvc.Annotations[annBoundByController] = "yes"
	}
	pvc.Annotations[annBindCompleted] = "yes"
	c.write(pvcsGVR, pvc)
	o = c.get(pvcsGVR, pvc.Namespace, pvc.Name)
	pvc = o.(*corev1.PersistentVolumeClaim).DeepCopy()
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.AccessModes = append([]corev1.PersistentVolumeAccessMode{}, pv.Spec.AccessModes...)
	pvc.Status.Capacity = pv.Spec.Capacity.DeepCopy()
	c.write(pvcsGVR, pvc)
}

// provision: the external CSI provisioner for a claim the scheduler gave a selected node.
func (c *controllers) provision(pvc *corev1.PersistentVolumeClaim, node string) {
	if pvc.Spec.StorageClassName == nil {
		return
	}
	o := c.get(scGVR, "", *pvc.Spec.StorageClassName)
	if o == nil {
		return
	}
	sc := o.(*storagev1.StorageClass)
	if sc.Provisioner == noProvisioner || sc.Provisioner == "" {
		return
	}
	pvc = pvc.DeepCopy()
	if pvc.Annotations == nil {
		pvc.Annotations = map[string]string{}
	}
	pvc.Annotations[annStorageProvisioner] = sc.Provisioner
	pvc.Annotations[annBetaStorageProv] = sc.Provisioner
	c.write(pvcsGVR, pvc)

	name := "pvc-" + string(pvc.UID)
	capacity := corev1.ResourceList{}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		capacity[corev1.ResourceStorage] = q.DeepCopy()
	} else {
		capacity[corev1.ResourceStorage] = resource.MustParse("0")
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: sc.Provisioner},
			UID: types.UID("oracle-pv-uid-" + string(pvc.UID))},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               capacity,
			AccessModes:            append([]corev1.PersistentVolumeAccessMode{}, pvc.Spec.AccessModes...),
			VolumeMode:             pvc.Spec.VolumeMode,
			StorageClassName:       sc.Name,
			MountOptions:           append([]string{}, sc.MountOptions...),
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: sc.Provisioner, VolumeHandle: "vol-" + string(pvc.UID)}},
			ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion},
		},
	}
	if sc.ReclaimPolicy != nil {
		pv.Spec.PersistentVolumeReclaimPolicy = *sc.ReclaimPolicy
	}
	if terms := c.topologyTerms(sc, node); terms != nil {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}}
	}
	_ = defaultObject(pv)
	if err := c.api.create(pvsGVR, "", pv); err != nil {
		fmt.Fprintf(os.Stderr, "kube-oracle: warning: provisioning %s: %v\n", name, err)
		return
	}
	c.bindStatic(pv)
}

// topologyTerms: In [<node's value>] for the topology keys the driver reports on the node's
// CSINode, else the keys of the class's allowedTopologies; none if neither.
func (c *controllers) topologyTerms(sc *storagev1.StorageClass, nodeName string) []corev1.NodeSelectorTerm {
	o := c.get(nodeGVR, "", nodeName)
	if o == nil {
		return nil
	}
	node := o.(*corev1.Node)
	var keys []string
	if cn := c.get(csiNGVR, "", nodeName); cn != nil {
		for _, d := range cn.(*storagev1.CSINode).Spec.Drivers {
			if d.Name == sc.Provisioner {
				keys = append(keys, d.TopologyKeys...)
			}
		}
	}
	if len(keys) == 0 {
		seen := map[string]bool{}
		for _, t := range sc.AllowedTopologies {
			for _, e := range t.MatchLabelExpressions {
				if !seen[e.Key] {
					seen[e.Key] = true
					keys = append(keys, e.Key)
				}
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	var reqs []corev1.NodeSelectorRequirement
	for _, k := range keys {
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{node.Labels[k]}})
	}
	return []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}
}

// podPVs: the bound PVs of a pod's claims (persistentVolumeClaim and ephemeral volumes).
func (c *controllers) podPVs(pod *corev1.Pod) []*corev1.PersistentVolume {
	var out []*corev1.PersistentVolume
	for _, v := range pod.Spec.Volumes {
		claim := ""
		switch {
		case v.PersistentVolumeClaim != nil:
			claim = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			claim = pod.Name + "-" + v.Name
		default:
			continue
		}
		o := c.get(pvcsGVR, pod.Namespace, claim)
		if o == nil {
			continue
		}
		pvc := o.(*corev1.PersistentVolumeClaim)
		if pvc.Spec.VolumeName == "" {
			continue
		}
		if pv := c.get(pvsGVR, "", pvc.Spec.VolumeName); pv != nil {
			out = append(out, pv.(*corev1.PersistentVolume))
		}
	}
	return out
}

func (c *controllers) attachRequired(driver string) bool {
	o := c.get(csiDGVR, "", driver)
	if o == nil {
		return true
	}
	d := o.(*storagev1.CSIDriver)
	return d.Spec.AttachRequired == nil || *d.Spec.AttachRequired
}

func (c *controllers) attachments() []*storagev1.VolumeAttachment {
	list, err := c.api.tracker.List(vaGVR, storagev1.SchemeGroupVersion.WithKind("VolumeAttachment"), "")
	if err != nil {
		return nil
	}
	var out []*storagev1.VolumeAttachment
	for i := range list.(*storagev1.VolumeAttachmentList).Items {
		out = append(out, &list.(*storagev1.VolumeAttachmentList).Items[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// attach: the attach/detach controller when a pod is bound.
func (c *controllers) attach(pod *corev1.Pod) {
	for _, pv := range c.podPVs(pod) {
		if pv.Spec.CSI == nil || !c.attachRequired(pv.Spec.CSI.Driver) {
			continue
		}
		exists := false
		for _, va := range c.attachments() {
			if va.Spec.NodeName == pod.Spec.NodeName && va.Spec.Source.PersistentVolumeName != nil && *va.Spec.Source.PersistentVolumeName == pv.Name {
				exists = true
			}
		}
		if exists {
			continue
		}
		pvName := pv.Name
		va := &storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{Name: "csi-" + pv.Name + "-" + pod.Spec.NodeName},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: pv.Spec.CSI.Driver, NodeName: pod.Spec.NodeName,
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true},
		}
		if err := c.api.create(vaGVR, "", va); err != nil {
			fmt.Fprintf(os.Stderr, "kube-oracle: warning: attaching %s: %v\n", va.Name, err)
		}
	}
}

// detach: when a pod is deleted, its PVs' attachments on its node go unless another pod
// there uses the PV.
func (c *controllers) detach(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	pvs := c.podPVs(pod)
	if len(pvs) == 0 {
		return
	}
	list, err := c.api.tracker.List(podsGVR, corev1.SchemeGroupVersion.WithKind("Pod"), "")
	if err != nil {
		return
	}
	used := map[string]bool{}
	for i := range list.(*corev1.PodList).Items {
		other := &list.(*corev1.PodList).Items[i]
		if other.Spec.NodeName != pod.Spec.NodeName || other.UID == pod.UID {
			continue
		}
		for _, pv := range c.podPVs(other) {
			used[pv.Name] = true
		}
	}
	for _, pv := range pvs {
		if used[pv.Name] {
			continue
		}
		for _, va := range c.attachments() {
			if va.Spec.NodeName == pod.Spec.NodeName && va.Spec.Source.PersistentVolumeName != nil && *va.Spec.Source.PersistentVolumeName == pv.Name {
				_ = c.api.delete(vaGVR, "", va.Name, false)
			}
		}
	}
}

// createEphemeralClaims: the ephemeral-volume controller, right after a pending pod is created.
func (c *controllers) createEphemeralClaims(p *corev1.Pod) {
	for _, v := range p.Spec.Volumes {
		if v.Ephemeral == nil || v.Ephemeral.VolumeClaimTemplate == nil {
			continue
		}
		name := p.Name + "-" + v.Name
		if _, err := c.api.cs.CoreV1().PersistentVolumeClaims(p.Namespace).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			continue
		}
		t := v.Ephemeral.VolumeClaimTemplate
		yes := true
		pvcUIDCounter++
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace,
				UID:    types.UID(fmt.Sprintf("oracle-pvc-uid-%06d", pvcUIDCounter)),
				Labels: copyMap(t.Labels), Annotations: copyMap(t.Annotations),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
					Controller: &yes, BlockOwnerDeletion: &yes}}},
			Spec: *t.Spec.DeepCopy(),
		}
		if pvc.Spec.StorageClassName == nil {
			if def := c.defaultStorageClass(); def != "" {
				pvc.Spec.StorageClassName = &def
			}
		}
		_ = defaultObject(pvc)
		if _, err := c.api.cs.CoreV1().PersistentVolumeClaims(p.Namespace).Create(context.Background(), pvc, metav1.CreateOptions{}); err != nil {
			fmt.Fprintf(os.Stderr, "kube-oracle: warning: ephemeral claim %s/%s: %v\n", p.Namespace, name, err)
		}
	}
}

// defaultStorageClass: the DefaultStorageClass admission (the newest default class, then name).
func (c *controllers) defaultStorageClass() string {
	var best *storagev1.StorageClass
	for _, o := range c.in.objects {
		sc, ok := o.(*storagev1.StorageClass)
		if !ok || sc.Annotations[annDefaultClass] != "true" {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name) {
			best = sc
		}
	}
	if best == nil {
		return ""
	}
	return best.Name
}

// waitForDelivery waits until our watchers handed every event to the informers.
func (c *controllers) waitForDelivery() {
	for c.api.pending.Load() > 0 {
		sleepBriefly()
	}
}

type dumpPV struct {
	Name         string                       `json:"name"`
	Phase        corev1.PersistentVolumePhase `json:"phase"`
	ClaimRef     *string                      `json:"claimRef"`
	NodeAffinity *corev1.VolumeNodeAffinity   `json:"nodeAffinity"`
}

type dumpPVC struct {
	Namespace    string                            `json:"namespace"`
	Name         string                            `json:"name"`
	Phase        corev1.PersistentVolumeClaimPhase `json:"phase"`
	VolumeName   string                            `json:"volumeName"`
	SelectedNode string                            `json:"selectedNode"`
}

// writeStorageDump: ORACLE_STORAGE_DUMP.
func writeStorageDump(api *apiServer, file string) {
	out := struct {
		PVs  []dumpPV  `json:"pvs"`
		PVCs []dumpPVC `json:"pvcs"`
	}{PVs: []dumpPV{}, PVCs: []dumpPVC{}}
	if l, err := api.tracker.List(pvsGVR, corev1.SchemeGroupVersion.WithKind("PersistentVolume"), ""); err == nil {
		sortList(l)
		for _, pv := range l.(*corev1.PersistentVolumeList).Items {
			d := dumpPV{Name: pv.Name, Phase: pv.Status.Phase, NodeAffinity: pv.Spec.NodeAffinity}
			if pv.Spec.ClaimRef != nil {
				r := pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
				d.ClaimRef = &r
			}
			out.PVs = append(out.PVs, d)
		}
	}
	if l, err := api.tracker.List(pvcsGVR, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), ""); err == nil {
		sortList(l)
		for _, pvc := range l.(*corev1.PersistentVolumeClaimList).Items {
			out.PVCs = append(out.PVCs, dumpPVC{Namespace: pvc.Namespace, Name: pvc.Name, Phase: pvc.Status.Phase,
				VolumeName: pvc.Spec.VolumeName, SelectedNode: pvc.Annotations[annSelectedNode]})
		}
	}
	data, _ := json.MarshalIndent(out, "", " ")
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "kube-oracle: ORACLE_STORAGE_DUMP: %v\n", err)
	}
}
