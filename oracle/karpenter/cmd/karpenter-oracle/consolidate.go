package main

// `consolidate`: what Karpenter's disruption controller does to the cluster of the input files,
// pass after pass, computed by its own code (sigs.k8s.io/karpenter pkg/controllers/disruption):
// each pass runs the NodeClaim disruption controller (Drifted, Consolidatable) on every
// NodeClaim, then the methods in controller.go's order (emptiness, drift, multi-node, single-node
// consolidation): candidates (GetCandidatesWithTotals with the method's ShouldDisrupt), the
// budgets (BuildDisruptionBudgetMapping), ComputeCommands. The first command is carried out
// offline at once — candidates, their Nodes, NodeClaims and pods gone, each replacement launched
// as the provisioning command's launch picks it (a Node and NodeClaim initialized now), each moved
// pod bound where the simulation put it (its node's lastPodEventTime now) — and the next pass runs,
// until no method acts. The fake clock stays at --now.
//
// Where upstream leaves an order to Go's map iteration, the oracle fixes it as kplan does: the
// candidates enter each method in node-name order, and single-node consolidation's NodePool
// interleave takes the NodePools by name (the oracle asks it one candidate at a time, in that
// order, with a fresh method each time). Command validation (a second look after 15 s) is
// replaced by a validator that accepts the command: nothing changes offline in between.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	nodeclaimdisruption "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/state/cost"
)

func init() {
	commands["consolidate"] = runConsolidate
}

type replacementJSON struct {
	Name          string   `json:"name"`
	NodePool      string   `json:"nodePool"`
	InstanceTypes []string `json:"instanceTypes"`
	InstanceType  string   `json:"instanceType"`
	CapacityType  string   `json:"capacityType"`
	Zone          string   `json:"zone"`
	Price         float64  `json:"price"`
	Pods          []string `json:"pods"`
}

type commandJSON struct {
	Round        int               `json:"round"`
	Method       string            `json:"method"`
	Reason       string            `json:"reason"`
	Decision     string            `json:"decision"`
	Candidates   []string          `json:"candidates"`
	Replacements []replacementJSON `json:"replacements"`
	Savings      float64           `json:"savings"`
}

type nodeVerdictJSON struct {
	Name       string   `json:"name"`
	Verdict    string   `json:"verdict"`
	Reason     string   `json:"reason"`
	Method     string   `json:"method,omitempty"`
	Round      int      `json:"round,omitempty"`
	ReplacedBy []string `json:"replacedBy"`
	// Events: the Blocked/Unconsolidatable messages Karpenter published for the node in the
	// last pass, in order
	Events []string `json:"events"`
}

type consolidateResult struct {
	Karpenter string            `json:"karpenter"`
	Now       string            `json:"now"`
	Commands  []commandJSON     `json:"commands"`
	Nodes     []nodeVerdictJSON `json:"nodes"`
}

// capture is the events.Recorder: it keeps the messages published about each Node.
type capture struct{ byNode map[string][]string }

func (c *capture) Publish(evts ...events.Event) {
	for _, e := range evts {
		if n, ok := e.InvolvedObject.(*corev1.Node); ok {
			c.byNode[n.Name] = append(c.byNode[n.Name], e.Message)
		}
	}
}

// accept is the validator that takes the command as it is.
type accept struct{}

func (accept) Validate(_ context.Context, cmd disruption.Command, _ time.Duration) (disruption.Command, error) {
	return cmd, nil
}

func runConsolidate(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("consolidate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c commonFlags
	c.register(fs)
	now := fs.String("now", "", "the time of the answer (RFC 3339; the fake clock's time)")
	spotToSpot := fs.Bool("spot-to-spot", false, "the SpotToSpotConsolidation feature gate")
	maxRounds := fs.Int("max-rounds", 1000, "stop after this many passes")
	if err := fs.Parse(args); err != nil {
		return badInput("consolidate: %v", err)
	}
	if fs.NArg() > 0 {
		return badInput("consolidate: unexpected argument %q", fs.Arg(0))
	}
	at := oracleNow
	if *now != "" {
		t, err := time.Parse(time.RFC3339, *now)
		if err != nil {
			return badInput("--now %s: %v", *now, err)
		}
		at = t
	}
	ctx, err := c.context()
	if err != nil {
		return err
	}
	options.FromContext(ctx).FeatureGates.SpotToSpotConsolidation = *spotToSpot
	kw, err := c.load(ctx)
	if err != nil {
		return err
	}
	res, err := consolidate(ctx, kw, at, *maxRounds)
	if err != nil {
		return err
	}
	return writeJSON(stdout, res, c.compact)
}

type oracleRun struct {
	ctx   context.Context
	kw    *karpWorld
	rec   *capture
	prov  *provisioning.Provisioner
	queue *disruption.Queue
	now   time.Time
}

func consolidate(ctx context.Context, kw *karpWorld, now time.Time, maxRounds int) (*consolidateResult, error) {
	kw.clock.SetTime(now)
	r := &oracleRun{ctx: ctx, kw: kw, rec: &capture{byNode: map[string][]string{}}, now: now}
	r.prov = provisioning.NewProvisioner(kw.client, r.rec, kw.provider, kw.cluster, kw.clock, nil, nil)
	r.queue = disruption.NewQueue(kw.client, r.rec, kw.cluster, kw.clock, r.prov)
	var inputNodes []string
	for _, n := range kw.input.nodes {
		inputNodes = append(inputNodes, n.Name)
	}
	res := &consolidateResult{Karpenter: karpenterVersion, Now: now.UTC().Format(time.RFC3339), Commands: []commandJSON{}}
	taken := map[string]*commandJSON{}
	for round := 1; round <= maxRounds; round++ {
		r.rec.byNode = map[string][]string{}
		cmd, method, err := r.pass()
		if err != nil {
			return nil, err
		}
		if cmd == nil {
			break
		}
		out, err := r.apply(round, method, cmd)
		if err != nil {
			return nil, err
		}
		res.Commands = append(res.Commands, *out)
		for _, name := range out.Candidates {
			taken[name] = &res.Commands[len(res.Commands)-1]
		}
	}
	for _, name := range inputNodes {
		v := nodeVerdictJSON{Name: name, ReplacedBy: []string{}, Events: lo.Ternary(r.rec.byNode[name] != nil, r.rec.byNode[name], []string{})}
		if cmd, ok := taken[name]; ok {
			v.Verdict, v.Reason, v.Method, v.Round = "deleted", cmd.Reason, cmd.Method, cmd.Round
			if len(cmd.Replacements) > 0 {
				v.Verdict = "replaced"
				for _, rep := range cmd.Replacements {
					v.ReplacedBy = append(v.ReplacedBy, rep.Name)
				}
			}
			v.Events = []string{}
		} else {
			v.Verdict = "kept"
			if len(v.Events) > 0 {
				v.Reason = v.Events[len(v.Events)-1]
			}
		}
		res.Nodes = append(res.Nodes, v)
	}
	return res, nil
}

// markClaims runs the NodeClaim disruption controller (drift, consolidatable) on every NodeClaim.
func (r *oracleRun) markClaims() error {
	ctrl := nodeclaimdisruption.NewController(r.kw.clock, r.kw.client, r.kw.provider)
	var list karpv1.NodeClaimList
	if err := r.kw.client.List(r.ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		nc := &list.Items[i]
		if _, err := ctrl.Reconcile(r.ctx, nc); err != nil {
			return fmt.Errorf("nodeclaim disruption %s: %w", nc.Name, err)
		}
		// Reconcile patches the status subresource, which the oracle's fake client does not
		// register (a NotFound that Reconcile ignores): the conditions it set are written here.
		if err := r.kw.client.Update(r.ctx, nc); err != nil {
			return fmt.Errorf("nodeclaim disruption %s: %w", nc.Name, err)
		}
		stored := &karpv1.NodeClaim{}
		if err := r.kw.client.Get(r.ctx, types.NamespacedName{Name: nc.Name}, stored); err != nil {
			return err
		}
		r.kw.cluster.UpdateNodeClaim(stored)
	}
	// A NodeClaim update leaves the state node without its pods' disruption costs
	// (newStateFromNodeClaim does not carry them; Balanced's totals read them); the next update of
	// the Node rebuilds them from its pods. The Nodes are fed again, as their informer would.
	var nodes corev1.NodeList
	if err := r.kw.client.List(r.ctx, &nodes); err != nil {
		return err
	}
	for i := range nodes.Items {
		if err := r.kw.cluster.UpdateNode(r.ctx, nodes.Items[i].DeepCopy()); err != nil {
			return fmt.Errorf("cluster state: node %s: %w", nodes.Items[i].Name, err)
		}
	}
	return nil
}

type namedMethod struct {
	name string
	m    disruption.Method
	make func() disruption.Method
}

func (r *oracleRun) methods() []namedMethod {
	v := disruption.WithValidator(accept{})
	k := r.kw
	single := func() disruption.Method {
		return disruption.NewSingleNodeConsolidation(disruption.MakeConsolidation(k.clock, k.cluster, k.client, r.prov, k.provider, r.rec, r.queue), v)
	}
	return []namedMethod{
		{name: "emptiness", m: disruption.NewEmptiness(disruption.MakeConsolidation(k.clock, k.cluster, k.client, r.prov, k.provider, r.rec, r.queue), v)},
		{name: "drift", m: disruption.NewDrift(k.client, k.cluster, r.prov, r.rec, k.clock)},
		{name: "multi-node consolidation", m: disruption.NewMultiNodeConsolidation(disruption.MakeConsolidation(k.clock, k.cluster, k.client, r.prov, k.provider, r.rec, r.queue), v)},
		{name: "single-node consolidation", m: single(), make: single},
	}
}

// pass is one reconcile of the disruption controller: the first method's command, or nil.
func (r *oracleRun) pass() (*disruption.Command, string, error) {
	if err := r.markClaims(); err != nil {
		return nil, "", err
	}
	// the cluster's cost per NodePool, as the operator's ClusterCost tracks it (Balanced's totals)
	clusterCost := cost.NewClusterCost(r.ctx, r.kw.provider, r.kw.client)
	var claims karpv1.NodeClaimList
	if err := r.kw.client.List(r.ctx, &claims); err != nil {
		return nil, "", err
	}
	for i := range claims.Items {
		if err := clusterCost.UpdateNodeClaim(r.ctx, &claims.Items[i]); err != nil {
			return nil, "", err
		}
	}
	for _, nm := range r.methods() {
		r.kw.cluster.MarkUnconsolidated()
		candidates, totals, err := disruption.GetCandidatesWithTotals(r.ctx, r.kw.cluster, r.kw.client, r.rec, r.kw.clock,
			r.kw.provider, nm.m.ShouldDisrupt, nm.m.Class(), r.queue, clusterCost)
		if err != nil {
			return nil, "", fmt.Errorf("%s: candidates: %w", nm.name, err)
		}
		if len(candidates) == 0 {
			continue
		}
		sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].Name() < candidates[j].Name() })
		budgets, err := disruption.BuildDisruptionBudgetMapping(r.ctx, r.kw.cluster, r.kw.clock, r.kw.client, r.kw.provider, r.rec, nm.m.Reason())
		if err != nil {
			return nil, "", fmt.Errorf("%s: budgets: %w", nm.name, err)
		}
		var cmds []disruption.Command
		if nm.make == nil {
			if s, ok := nm.m.(disruption.NodePoolTotalsSetter); ok {
				s.SetNodePoolTotals(totals)
			}
			cmds, err = nm.m.ComputeCommands(r.ctx, budgets, candidates...)
		} else {
			cmds, err = r.singleNode(nm, budgets, totals, candidates)
		}
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", nm.name, err)
		}
		for i := range cmds {
			if cmds[i].Decision() != disruption.NoOpDecision {
				return &cmds[i], nm.name + "\x00" + string(nm.m.Reason()), nil
			}
		}
	}
	return nil, "", nil
}

// singleNode asks single-node consolidation about one candidate at a time, in its order with the
// NodePools interleaved by name (upstream interleaves them in map order).
func (r *oracleRun) singleNode(nm namedMethod, budgets map[string]int, totals map[string]disruption.NodePoolTotals,
	candidates []*disruption.Candidate) ([]disruption.Command, error) {
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].SavingsRatio() > candidates[j].SavingsRatio() })
	byPool := map[string][]*disruption.Candidate{}
	var pools []string
	for _, c := range candidates {
		if _, ok := byPool[c.NodePool.Name]; !ok {
			pools = append(pools, c.NodePool.Name)
		}
		byPool[c.NodePool.Name] = append(byPool[c.NodePool.Name], c)
	}
	sort.Strings(pools)
	longest := 0
	for _, p := range pools {
		longest = max(longest, len(byPool[p]))
	}
	for i := 0; i < longest; i++ {
		for _, p := range pools {
			if i >= len(byPool[p]) {
				continue
			}
			m := nm.make()
			if s, ok := m.(disruption.NodePoolTotalsSetter); ok {
				s.SetNodePoolTotals(totals)
			}
			cmds, err := m.ComputeCommands(r.ctx, budgets, byPool[p][i])
			if err != nil {
				return nil, err
			}
			if len(cmds) > 0 {
				return cmds, nil
			}
		}
	}
	return nil, nil
}

// apply carries the command out at once.
func (r *oracleRun) apply(round int, methodAndReason string, cmd *disruption.Command) (*commandJSON, error) {
	method, reason, _ := strings.Cut(methodAndReason, "\x00")
	out := &commandJSON{Round: round, Method: method, Reason: reason, Decision: string(cmd.Decision()),
		Candidates: cmd.SourceNodeNames(), Replacements: []replacementJSON{}, Savings: cmd.EstimatedSavings()}
	target := map[string]string{}
	for _, en := range cmd.Results.ExistingNodes {
		for _, p := range en.Pods {
			target[podKey(p)] = en.Name()
		}
	}
	for i, rep := range cmd.Replacements {
		name := fmt.Sprintf("%s-r%d-%d", rep.NodePoolName, round, i+1)
		j, err := r.launch(name, rep.NodeClaim)
		if err != nil {
			return nil, err
		}
		out.Replacements = append(out.Replacements, *j)
		for _, p := range rep.Pods {
			target[podKey(p)] = name
		}
	}
	moving := map[string]*corev1.Pod{}
	for _, c := range cmd.Candidates {
		var pods corev1.PodList
		if err := r.kw.client.List(r.ctx, &pods, client.MatchingFields{"spec.nodeName": c.Name()}); err != nil {
			return nil, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if _, ok := target[podKey(p)]; ok {
				moving[podKey(p)] = p.DeepCopy()
			}
			if err := r.kw.client.Delete(r.ctx, p); err != nil {
				return nil, err
			}
			r.kw.cluster.DeletePod(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
		if c.NodeClaim != nil {
			if err := r.kw.client.Delete(r.ctx, c.NodeClaim.DeepCopy()); err != nil {
				return nil, err
			}
			r.kw.cluster.DeleteNodeClaim(c.NodeClaim.Name)
		}
		if err := r.kw.client.Delete(r.ctx, c.Node.DeepCopy()); err != nil {
			return nil, err
		}
		r.kw.cluster.DeleteNode(c.Node.Name)
	}
	keys := lo.Keys(moving)
	sort.Strings(keys)
	touched := map[string]bool{}
	for _, key := range keys {
		p := moving[key]
		p.ResourceVersion = ""
		p.Spec.NodeName = target[key]
		if err := r.kw.client.Create(r.ctx, p); err != nil {
			return nil, err
		}
		if err := r.kw.cluster.UpdatePod(r.ctx, p); err != nil {
			return nil, err
		}
		touched[target[key]] = true
	}
	for node := range touched {
		if err := r.podEvent(node); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// podEvent sets the lastPodEventTime of the node's NodeClaim to now, as the pod events
// controller does when a pod binds.
func (r *oracleRun) podEvent(node string) error {
	var list karpv1.NodeClaimList
	if err := r.kw.client.List(r.ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		nc := &list.Items[i]
		if nc.Status.NodeName != node {
			continue
		}
		nc.Status.LastPodEventTime = metav1.NewTime(r.now)
		if err := r.kw.client.Update(r.ctx, nc); err != nil {
			return err
		}
		r.kw.cluster.UpdateNodeClaim(nc)
	}
	return nil
}

// launch creates the replacement's NodeClaim and Node: the offering the provisioning command's
// launch picks, the labels the KWOK provider gives (the claim's, the single-valued requirements
// of the claim, the instance type and the offering, the hostname), ready and initialized now.
func (r *oracleRun) launch(name string, nc *scheduling.NodeClaim) (*replacementJSON, error) {
	obj := nc.ToNodeClaim()
	reqs := karpscheduling.NewNodeSelectorRequirementsWithMinValues(obj.Spec.Requirements...)
	l := launchFor(r.ctx, nc.InstanceTypeOptions, reqs, obj.Spec.Resources.Requests)
	if l.Error != "" {
		return nil, fmt.Errorf("launching %s: %s", name, l.Error)
	}
	var it *cloudprovider.InstanceType
	for _, t := range nc.InstanceTypeOptions {
		if t.Name == l.InstanceType {
			it = t
		}
	}
	labels := map[string]string{}
	for k, v := range obj.Labels {
		labels[k] = v
	}
	for _, req := range obj.Spec.Requirements {
		if len(req.Values) == 1 && req.Operator == corev1.NodeSelectorOpIn {
			labels[req.Key] = req.Values[0]
		}
	}
	labels[corev1.LabelInstanceTypeStable] = it.Name
	singles := func(reqs karpscheduling.Requirements) {
		for _, req := range reqs {
			if req.Len() == 1 && req.Operator() == corev1.NodeSelectorOpIn {
				labels[req.Key] = req.Values()[0]
			}
		}
	}
	singles(it.Requirements)
	for _, o := range it.Offerings {
		if o.Zone() == l.Zone && o.CapacityType() == l.CapacityType {
			singles(o.Requirements)
			break
		}
	}
	labels[corev1.LabelTopologyZone] = l.Zone
	labels[karpv1.CapacityTypeLabelKey] = l.CapacityType
	labels[corev1.LabelHostname] = name
	labels[karpv1.NodePoolLabelKey] = nc.NodePoolName
	labels[karpv1.NodeRegisteredLabelKey] = "true"
	labels[karpv1.NodeInitializedLabelKey] = "true"
	stamp := metav1.NewTime(r.now)
	capacity := it.Capacity.DeepCopy()
	allocatable := it.Allocatable().DeepCopy()
	providerID := "kplan://" + name
	claim := &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("oracle-nodeclaim-uid-" + name), CreationTimestamp: stamp,
			Labels: labels, Annotations: map[string]string{}},
		Spec: obj.Spec,
	}
	claim.Spec.NodeClassRef = pointAtNodeClass(claim.Spec.NodeClassRef)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: stamp, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: providerID, Taints: obj.Spec.Taints},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: stamp}}},
	}
	if err := r.kw.client.Create(r.ctx, claim); err != nil {
		return nil, err
	}
	claim.Status = karpv1.NodeClaimStatus{ProviderID: providerID, NodeName: name, Capacity: capacity, Allocatable: allocatable,
		LastPodEventTime: stamp}
	for _, cond := range []string{karpv1.ConditionTypeLaunched, karpv1.ConditionTypeRegistered, karpv1.ConditionTypeInitialized} {
		claim.StatusConditions().SetTrue(cond)
	}
	for i := range claim.Status.Conditions {
		claim.Status.Conditions[i].LastTransitionTime = stamp
	}
	if err := r.kw.client.Update(r.ctx, claim); err != nil {
		return nil, err
	}
	if err := r.kw.client.Create(r.ctx, node); err != nil {
		return nil, err
	}
	r.kw.cluster.UpdateNodeClaim(claim)
	if err := r.kw.cluster.UpdateNode(r.ctx, node.DeepCopy()); err != nil {
		return nil, err
	}
	var names []string
	for _, t := range nc.InstanceTypeOptions {
		names = append(names, t.Name)
	}
	_ = resource.Quantity{}
	return &replacementJSON{Name: name, NodePool: nc.NodePoolName, InstanceTypes: names, InstanceType: it.Name,
		CapacityType: l.CapacityType, Zone: l.Zone, Price: l.Price, Pods: podKeys(nc.Pods)}, nil
}
