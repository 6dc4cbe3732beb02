package main

import (
	"flag"
	"os"
	"strconv"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
)

type oracleEnv struct {
	lowestName    bool    // ORACLE_TIE_BREAK=lowest-name
	patchRV       bool    // ORACLE_PATCH_RV=1
	realBackoff   bool    // ORACLE_REAL_BACKOFF=1
	verbose       bool    // ORACLE_VERBOSE=1
	klogV         int     // ORACLE_KLOG_V
	storageDump   string  // ORACLE_STORAGE_DUMP
	storageAttach bool    // ORACLE_STORAGE_ATTACH (default on)
	settleTimeout float64 // ORACLE_SETTLE_TIMEOUT seconds (default 120)
}

func readEnv() oracleEnv {
	e := oracleEnv{
		lowestName:    os.Getenv("ORACLE_TIE_BREAK") == "lowest-name",
		patchRV:       os.Getenv("ORACLE_PATCH_RV") == "1",
		realBackoff:   os.Getenv("ORACLE_REAL_BACKOFF") == "1",
		verbose:       os.Getenv("ORACLE_VERBOSE") == "1",
		storageDump:   os.Getenv("ORACLE_STORAGE_DUMP"),
		storageAttach: os.Getenv("ORACLE_STORAGE_ATTACH") != "0",
	}
	if t := os.Getenv("ORACLE_TIE_BREAK"); t != "" && t != "lowest-name" && t != "random" {
		fail("ORACLE_TIE_BREAK: want lowest-name, got %q", t)
	}
	if v := os.Getenv("ORACLE_KLOG_V"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fail("ORACLE_KLOG_V: not a verbosity: %q", v)
		}
		e.klogV = n
	}
	e.settleTimeout = 120
	if v := os.Getenv("ORACLE_SETTLE_TIMEOUT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			fail("ORACLE_SETTLE_TIMEOUT: not a positive number of seconds: %q", v)
		}
		e.settleTimeout = f
	}
	if g := os.Getenv("ORACLE_FEATURE_GATES"); g != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(g); err != nil {
			fail("ORACLE_FEATURE_GATES: %v", err)
		}
	}
	return e
}

// setupLogging keeps klog quiet unless ORACLE_VERBOSE=1 (then at ORACLE_KLOG_V, default 2).
func setupLogging(e oracleEnv) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if !e.verbose {
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		_ = fs.Set("v", "0")
		klog.SetOutput(discard{})
		klog.LogToStderr(false)
		return
	}
	v := e.klogV
	if v == 0 {
		v = 2
	}
	_ = fs.Set("v", strconv.Itoa(v))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
