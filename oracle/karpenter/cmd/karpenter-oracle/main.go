// Command karpenter-oracle runs Karpenter's own provisioning scheduler (sigs.k8s.io/karpenter,
// the version in go.mod) offline on Kubernetes object files and an instance-type catalog, and
// prints its decision as JSON. See oracle/karpenter/README.md for the command line and the JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/karpenter/pkg/operator/options"
)

var karpenterVersion = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "sigs.k8s.io/karpenter" {
				// the build replaces the module by its patched view (a directory): the version
				// is the one go.mod requires
				return d.Version
			}
		}
	}
	return "unknown"
}()

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

const usage = `usage:
  karpenter-oracle provision --cluster FILE [--cluster FILE ...] --instance-types FILE
                             [--preference-policy Respect|Ignore] [--min-values-policy Strict|BestEffort]
                             [--compact]
  karpenter-oracle consolidate --cluster FILE [--cluster FILE ...] --instance-types FILE
                               [--now RFC3339] [--spot-to-spot] [--max-rounds N] [--compact]
  karpenter-oracle version
`

// commands maps a command name to its runner; other commands (consolidate) register here
// from their own files.
var commands = map[string]func(args []string, stdout io.Writer) error{
	"provision": runProvision,
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if os.Args[1] == "version" {
		fmt.Printf("karpenter-oracle (sigs.k8s.io/karpenter %s)\n", karpenterVersion)
		return
	}
	run, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "karpenter-oracle: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	quiet()
	if err := run(os.Args[2:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "karpenter-oracle: %v\n", err)
		var ie inputError
		if errors.As(err, &ie) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// quiet silences Karpenter's logs unless ORACLE_VERBOSE=1.
func quiet() {
	if os.Getenv("ORACLE_VERBOSE") == "1" {
		return
	}
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
}

// commonFlags are the inputs every command reads.
type commonFlags struct {
	clusters         stringList
	instanceTypes    string
	preferencePolicy string
	minValuesPolicy  string
	compact          bool
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.Var(&c.clusters, "cluster", "a YAML/JSON file of Kubernetes objects (repeatable; - for stdin)")
	fs.StringVar(&c.instanceTypes, "instance-types", "", "the instance-type catalog (KWOK's JSON format)")
	fs.StringVar(&c.preferencePolicy, "preference-policy", "Respect", "Karpenter's --preference-policy: Respect or Ignore")
	fs.StringVar(&c.minValuesPolicy, "min-values-policy", "Strict", "Karpenter's --min-values-policy: Strict or BestEffort")
	fs.BoolVar(&c.compact, "compact", false, "print the JSON on one line")
}

// context builds Karpenter's options (its defaults, then the two policies) into a context.
// Flags are given explicitly so that no KARPENTER environment variable changes the run.
func (c *commonFlags) context() (context.Context, error) {
	opts := &options.Options{}
	fs := &options.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	fs.SetOutput(io.Discard)
	opts.AddFlags(fs)
	if err := opts.Parse(fs,
		"--preference-policy="+c.preferencePolicy,
		"--min-values-policy="+c.minValuesPolicy,
		"--cpu-requests=1000",
		"--ignore-dra-requests=true",
		"--feature-gates=",
		"--scheduler-config=",
		"--log-level=info",
	); err != nil {
		return nil, badInput("%v", err)
	}
	return options.ToContext(context.Background(), opts), nil
}

func (c *commonFlags) load(ctx context.Context) (*karpWorld, error) {
	if len(c.clusters) == 0 {
		return nil, badInput("--cluster FILE is required")
	}
	if c.instanceTypes == "" {
		return nil, badInput("--instance-types FILE is required")
	}
	its, err := readCatalog(c.instanceTypes)
	if err != nil {
		return nil, err
	}
	w, err := readInputs(c.clusters)
	if err != nil {
		return nil, err
	}
	return buildWorld(ctx, w, its)
}

func writeJSON(stdout io.Writer, v any, compact bool) error {
	enc := json.NewEncoder(stdout)
	if !compact {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

func runProvision(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("provision", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c commonFlags
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return badInput("provision: %v", err)
	}
	if fs.NArg() > 0 {
		return badInput("provision: unexpected argument %q", fs.Arg(0))
	}
	ctx, err := c.context()
	if err != nil {
		return err
	}
	kw, err := c.load(ctx)
	if err != nil {
		return err
	}
	res, err := provision(ctx, kw)
	if err != nil {
		return err
	}
	return writeJSON(stdout, res, c.compact)
}
