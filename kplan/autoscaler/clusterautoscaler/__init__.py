"""The cluster-autoscaler's scale-up (kubernetes/autoscaler, cluster-autoscaler/): which node group
grows and by how many nodes. Modules are named after the upstream files they mirror: the binpacking
estimator (estimator/binpacking_estimator.go) with its limiter and pod orderer, the expanders
(expander/*), and the predicate checker the estimator asks (simulator/predicatechecker), here
kplan's own kube-scheduler filters."""
