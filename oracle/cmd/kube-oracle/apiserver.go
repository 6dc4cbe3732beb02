package main

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
)

// apiServer is the fake API server: client-go's fake clientset and object tracker, with
// reactors that give every write what a real API server gives (resourceVersion, UID, a
// binding subresource, watch events in write order) and run the emulated controllers.
// Watches are served by our own unbounded watchers (the tracker's fake watchers panic when
// 100 events are not yet read), so the tracker's own watch fan-out is never used.
type apiServer struct {
	cs      *fake.Clientset
	tracker clienttesting.ObjectTracker
	env     oracleEnv

	rv        int64
	bindCount int
	// pods deleted by someone other than our own controllers (preemption victims)
	preempted []string
	// node of each pod at its (last) bind
	boundNode map[string]string
	// lastActivity is the wall time of the last write or delivered watch event (UnixNano).
	lastActivity atomic.Int64

	wmu      sync.Mutex
	watchers map[schema.GroupVersionResource][]*watcher
	pending  atomic.Int64 // events queued in watchers, not yet taken by the reflector

	// controller emulation, run inside the write that triggers it (fake's lock held)
	afterWrite []func(verb string, gvr schema.GroupVersionResource, old, obj runtime.Object)

	tracked atomic.Int64 // our own goroutines in flight (settled in serial mode)
	// externalDelete: the delete being reacted to came through the clientset
	externalDelete bool
	// generated: names given so far per resource, namespace and generateName
	generated map[string]int
}

var (
	podsGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	claimsGVR = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
)

func newAPIServer(env oracleEnv) *apiServer {
	cs := fake.NewSimpleClientset()
	s := &apiServer{cs: cs, tracker: cs.Tracker(), env: env, boundNode: map[string]string{},
		watchers: map[schema.GroupVersionResource][]*watcher{}}
	s.touch()
	cs.PrependReactor("*", "*", s.react)
	cs.PrependWatchReactor("*", s.watch)
	return s
}

func (s *apiServer) touch() { s.lastActivity.Store(time.Now().UnixNano()) }

func (s *apiServer) nextRV() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

func gvrOf(obj runtime.Object) schema.GroupVersionResource {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		panic(fmt.Sprintf("no kind for %T", obj))
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
	return gvr
}

// seed adds an input object before the scheduler starts (no watcher exists yet).
func (s *apiServer) seed(obj runtime.Object) {
	gvr := gvrOf(obj)
	if s.env.patchRV || gvr == claimsGVR || gvr.Resource == "persistentvolumes" || gvr.Resource == "persistentvolumeclaims" {
		acc, _ := meta.Accessor(obj)
		if acc.GetResourceVersion() == "" || s.env.patchRV {
			acc.SetResourceVersion(s.nextRV())
		}
	}
	acc, _ := meta.Accessor(obj)
	if err := s.tracker.Create(gvr, obj, acc.GetNamespace()); err != nil {
		fail("input: %s %s/%s: %v", gvr.Resource, acc.GetNamespace(), acc.GetName(), err)
	}
}

// bumpsRV: a write gives the object a new resourceVersion.
func (s *apiServer) bumpsRV(gvr schema.GroupVersionResource) bool {
	return s.env.patchRV || gvr == claimsGVR
}

func (s *apiServer) react(action clienttesting.Action) (bool, runtime.Object, error) {
	gvr := action.GetResource()
	ns := action.GetNamespace()
	switch a := action.(type) {
	case clienttesting.ListActionImpl:
		obj, err := s.tracker.List(gvr, a.GetKind(), ns, a.ListOptions)
		if err == nil {
			sortList(obj)
		}
		return true, obj, err
	case clienttesting.CreateActionImpl:
		if gvr == podsGVR && a.GetSubresource() == "binding" {
			return true, nil, s.bind(a)
		}
		if a.GetSubresource() != "" {
			return false, nil, nil
		}
		obj := a.GetObject().DeepCopyObject()
		return true, obj, s.create(gvr, ns, obj)
	case clienttesting.UpdateActionImpl:
		obj := a.GetObject().DeepCopyObject()
		err := s.update(gvr, ns, obj, s.bumpsRV(gvr))
		return true, obj, err
	case clienttesting.PatchActionImpl:
		acc := a
		old, err := s.tracker.Get(gvr, ns, acc.GetName())
		if err != nil {
			return true, nil, err
		}
		handled, obj, err := clienttesting.ObjectReaction(s.tracker)(action)
		if err != nil || !handled {
			return handled, obj, err
		}
		if s.bumpsRV(gvr) {
			m, _ := meta.Accessor(obj)
			m.SetResourceVersion(s.nextRV())
			if err := s.tracker.Update(gvr, obj, ns); err != nil {
				return true, nil, err
			}
		}
		s.emit(gvr, watch.Modified, obj)
		s.runAfterWrite("update", gvr, old, obj)
		return true, obj.DeepCopyObject(), nil
	case clienttesting.DeleteActionImpl:
		err := s.delete(gvr, ns, a.GetName(), true)
		return true, nil, err
	}
	return false, nil, nil
}

func (s *apiServer) create(gvr schema.GroupVersionResource, ns string, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(ns)
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(s.generateName(gvr, m.GetNamespace(), m.GetGenerateName()))
	}
	if s.bumpsRV(gvr) || m.GetResourceVersion() == "" {
		m.SetResourceVersion(s.nextRV())
	}
	if err := s.tracker.Create(gvr, obj, m.GetNamespace()); err != nil {
		return err
	}
	s.emit(gvr, watch.Added, obj)
	s.runAfterWrite("create", gvr, nil, obj)
	return nil
}

// generateName gives an object created with an empty name and a generateName (e.g. the
// claim kube-scheduler 1.36+'s DynamicResources plugin creates at PreBind for DRA-served
// extended resources, "<pod>-extended-resources-") its name as a real API server does:
// generateName (cut to 58 characters) plus 5 characters of the name alphabet. A real server
// picks them at random; here they come from an FNV-1a-64 hash of generateName and a counter
// per resource, namespace and generateName, so runs stay byte-identical. A name already
// taken is skipped (the API server retries a generated name that collides).
func (s *apiServer) generateName(gvr schema.GroupVersionResource, ns, prefix string) string {
	if s.generated == nil {
		s.generated = map[string]int{}
	}
	if len(prefix) > 58 {
		prefix = prefix[:58]
	}
	key := gvr.String() + "\x00" + ns + "\x00" + prefix
	for {
		n := s.generated[key]
		s.generated[key] = n + 1
		h := fnv.New64a()
		h.Write([]byte(prefix))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(n)))
		v := h.Sum64()
		suffix := make([]byte, 5)
		for i := range suffix {
			suffix[i] = nameAlphabet[v%uint64(len(nameAlphabet))]
			v /= uint64(len(nameAlphabet))
		}
		name := prefix + string(suffix)
		if _, err := s.tracker.Get(gvr, ns, name); err != nil {
			return name
		}
	}
}

func (s *apiServer) update(gvr schema.GroupVersionResource, ns string, obj runtime.Object, bump bool) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	old, err := s.tracker.Get(gvr, m.GetNamespace(), m.GetName())
	if err != nil {
		return err
	}
	if bump {
		m.SetResourceVersion(s.nextRV())
	}
	if err := s.tracker.Update(gvr, obj, m.GetNamespace()); err != nil {
		return err
	}
	s.emit(gvr, watch.Modified, obj)
	s.runAfterWrite("update", gvr, old, obj)
	return nil
}

func (s *apiServer) delete(gvr schema.GroupVersionResource, ns, name string, external bool) error {
	old, err := s.tracker.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	if err := s.tracker.Delete(gvr, ns, name); err != nil {
		return err
	}
	if gvr == podsGVR && external {
		s.preempted = append(s.preempted, ns+"/"+name)
	}
	s.emit(gvr, watch.Deleted, old)
	s.externalDelete = external
	s.runAfterWrite("delete", gvr, old, nil)
	s.externalDelete = false
	return nil
}

func (s *apiServer) runAfterWrite(verb string, gvr schema.GroupVersionResource, old, obj runtime.Object) {
	for _, f := range s.afterWrite {
		f(verb, gvr, old, obj)
	}
}

// bind is the pods/binding subresource: spec.nodeName, and what the kubelet would write at
// once: status.startTime (the k-th bind: 2025-01-11T00:00:00Z + k s) and PodScheduled=True.
// The write always gives a new resourceVersion.
func (s *apiServer) bind(a clienttesting.CreateActionImpl) error {
	b, ok := a.GetObject().(*corev1.Binding)
	if !ok {
		return fmt.Errorf("binding: unexpected %T", a.GetObject())
	}
	ns := a.GetNamespace()
	if ns == "" {
		ns = b.Namespace
	}
	cur, err := s.tracker.Get(podsGVR, ns, b.Name)
	if err != nil {
		return err
	}
	pod := cur.(*corev1.Pod).DeepCopy()
	if pod.Spec.NodeName != "" {
		return fmt.Errorf("pod %s/%s is already assigned to node %q", ns, b.Name, pod.Spec.NodeName)
	}
	s.bindCount++
	pod.Spec.NodeName = b.Target.Name
	pod.Status.StartTime = &metav1.Time{Time: bindStartBase.Add(time.Duration(s.bindCount) * time.Second)}
	setCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.Time{Time: pod.Status.StartTime.Time}})
	s.boundNode[ns+"/"+b.Name] = b.Target.Name
	return s.update(podsGVR, ns, pod, true)
}

func setCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// sortList orders a list's items by namespace and name (the tracker keeps a map).
func sortList(obj runtime.Object) {
	items, err := meta.ExtractList(obj)
	if err != nil {
		return
	}
	key := func(o runtime.Object) string {
		m, _ := meta.Accessor(o)
		return m.GetNamespace() + "/" + m.GetName()
	}
	sort.SliceStable(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	_ = meta.SetList(obj, items)
}

// ---- watches ----

type watcher struct {
	s      *apiServer
	gvr    schema.GroupVersionResource
	ns     string
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []watch.Event
	ch     chan watch.Event
	closed bool
}

func (s *apiServer) watch(action clienttesting.Action) (bool, watch.Interface, error) {
	w := &watcher{s: s, gvr: action.GetResource(), ns: action.GetNamespace(), ch: make(chan watch.Event)}
	w.cond = sync.NewCond(&w.mu)
	s.wmu.Lock()
	s.watchers[w.gvr] = append(s.watchers[w.gvr], w)
	s.wmu.Unlock()
	go w.run()
	return true, w, nil
}

func (s *apiServer) emit(gvr schema.GroupVersionResource, t watch.EventType, obj runtime.Object) {
	s.touch()
	m, _ := meta.Accessor(obj)
	s.wmu.Lock()
	ws := s.watchers[gvr]
	s.wmu.Unlock()
	for _, w := range ws {
		if w.ns != "" && w.ns != m.GetNamespace() {
			continue
		}
		w.mu.Lock()
		if !w.closed {
			s.pending.Add(1)
			w.queue = append(w.queue, watch.Event{Type: t, Object: obj.DeepCopyObject()})
			w.cond.Signal()
		}
		w.mu.Unlock()
	}
}

func (w *watcher) run() {
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed {
			w.cond.Wait()
		}
		if w.closed {
			w.s.pending.Add(-int64(len(w.queue)))
			w.queue = nil
			w.mu.Unlock()
			close(w.ch)
			return
		}
		ev := w.queue[0]
		w.queue = w.queue[1:]
		w.mu.Unlock()
		w.ch <- ev
		w.s.touch()
		w.s.pending.Add(-1)
	}
}

func (w *watcher) Stop() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		w.cond.Broadcast()
	}
	w.mu.Unlock()
	// drain a send in progress
	go func() {
		for range w.ch {
		}
	}()
	w.s.wmu.Lock()
	ws := w.s.watchers[w.gvr]
	for i := range ws {
		if ws[i] == w {
			w.s.watchers[w.gvr] = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	w.s.wmu.Unlock()
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.ch }
