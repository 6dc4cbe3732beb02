package main

import (
	"os"

	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// loadSchedulerConfig loads, defaults and validates a KubeSchedulerConfiguration with
// kube-scheduler's own code: the decoding of cmd/kube-scheduler/app/options' loadConfig (the
// scheduler config scheme's UniversalDecoder, which defaults and converts to the internal
// type; importing options itself would pull the whole generic API server into the build),
// and apis/config/validation. Without a file, the v1 defaults.
func loadSchedulerConfig(path string) *schedulerapi.KubeSchedulerConfiguration {
	var cfg *schedulerapi.KubeSchedulerConfiguration
	if path == "" {
		var err error
		if cfg, err = latest.Default(); err != nil {
			fail("default scheduler configuration: %v", err)
		}
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			fail("scheduler configuration: %v", err)
		}
		obj, gvk, err := schedulerscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			fail("scheduler configuration %s: %v", path, firstLine(err.Error()))
		}
		c, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
		if !ok {
			fail("scheduler configuration %s: not a KubeSchedulerConfiguration but %s", path, gvk)
		}
		c.TypeMeta.APIVersion = gvk.GroupVersion().String()
		cfg = c
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		fail("scheduler configuration %s: %v", path, firstLine(err.Error()))
	}
	return cfg
}
