// kube-oracle runs the upstream kube-scheduler in-process on a fake API server and reports
// where each pending pod went. See oracle/README.md and shared/oracle-contract.md.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// usageError is a bad command line or a bad scenario file: one line on stderr, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func fail(format string, args ...any) {
	panic(usageError{fmt.Sprintf(format, args...)})
}

type cliOptions struct {
	serial       bool
	quietSeconds float64
	timeout      float64 // real time: the whole run's limit in seconds
	noPods       bool
	compact      bool
	clusters     []string
	config       string
}

const usage = "usage: kube-oracle replay [--serial] [--quiet-seconds S] [--timeout S] [--no-pods] --cluster FILE [--cluster FILE ...] [--config KubeSchedulerConfiguration.yaml] [--compact] | kube-oracle version"

// version is the release the binary was built for and the k8s.io/kubernetes module it runs.
func version() string {
	module := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				module = d.Version
			}
		}
	}
	return fmt.Sprintf("kube-scheduler-oracle %s (k8s.io/kubernetes %s)", releaseName, module)
}

func parseArgs(args []string) cliOptions {
	if len(args) == 1 && (args[0] == "version" || args[0] == "--version") {
		fmt.Println(version())
		os.Exit(0)
	}
	if len(args) == 0 || args[0] != "replay" {
		fail("%s", usage)
	}
	o := cliOptions{quietSeconds: 3, timeout: 600}
	timeoutSet := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		next := func() string {
			if hasValue {
				return value
			}
			i++
			if i >= len(args) {
				fail("%s needs a value", name)
			}
			return args[i]
		}
		switch name {
		case "--serial":
			o.serial = true
		case "--no-pods":
			o.noPods = true
		case "--compact":
			o.compact = true
		case "--quiet-seconds":
			v, err := strconv.ParseFloat(next(), 64)
			if err != nil || v <= 0 {
				fail("--quiet-seconds: not a positive number")
			}
			o.quietSeconds = v
		case "--timeout":
			v, err := strconv.ParseFloat(next(), 64)
			if err != nil || v <= 0 {
				fail("--timeout: not a positive number")
			}
			o.timeout = v
			timeoutSet = true
		case "--cluster":
			o.clusters = append(o.clusters, next())
		case "--config":
			o.config = next()
		case "-h", "--help":
			fmt.Println(usage)
			os.Exit(0)
		default:
			fail("unknown argument %q; %s", a, usage)
		}
	}
	if len(o.clusters) == 0 {
		fail("no --cluster file; %s", usage)
	}
	if timeoutSet && o.serial {
		fail("--timeout is for real-time runs; a serial run's limit is ORACLE_SETTLE_TIMEOUT, per settle")
	}
	return o
}

func main() {
	defer func() {
		if r := recover(); r != nil {
			if ue, ok := r.(usageError); ok {
				fmt.Fprintln(os.Stderr, "kube-oracle: "+strings.ReplaceAll(ue.msg, "\n", " "))
				os.Exit(2)
			}
			panic(r)
		}
	}()
	opts := parseArgs(os.Args[1:])
	env := readEnv()
	setupLogging(env)
	in := loadInputs(opts.clusters)
	cfg := loadSchedulerConfig(opts.config)
	var res *result
	if opts.serial {
		res = runSerial(in, cfg, env)
	} else {
		res = runRealTime(in, cfg, env, opts.quietSeconds, opts.timeout)
	}
	if env.storageDump != "" {
		writeStorageDump(res.api, env.storageDump)
	}
	out := res.output(!opts.noPods)
	var data []byte
	var err error
	if opts.compact {
		data, err = json.Marshal(out)
	} else {
		data, err = json.MarshalIndent(out, "", " ")
	}
	if err != nil {
		fail("encoding the result: %v", err)
	}
	os.Stdout.Write(append(data, '\n'))
}
