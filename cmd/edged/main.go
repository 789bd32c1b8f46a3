// Command edged is the gateway firmware: it polls PLCs over Modbus and GPIO
// every cycle into the scan engine's process image (plc) and serves it over
// OPC UA (opcua/server, through binding). Without --config it runs the
// built-in simulated PLC (plc/sim) and polls it through the real driver.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
)

// version is stamped at build time: -ldflags "-X main.version=...".
var version = "dev"

// defaultMemoryLimit is the Go runtime's soft memory limit when the
// environment sets no GOMEMLIMIT: the garbage collector works harder as
// the heap nears it, so that a flood of large requests (bounded by the
// server's RequestMemory) stays well below a small gateway's memory.
const defaultMemoryLimit = 96 << 20

// gcHeadroom is how far the heap may grow beyond what is live before a
// collection, when the environment sets no GOGC: 15 % of the live heap,
// at least minGCHeadroom, at most what Go's default (GOGC 100) allows,
// which lets it double (1 MiB and less live). edged allocates little once
// running (nothing per Read or notification; with 10,000 Modbus tags
// about 1.3 MB/s, a collection a second); the start runs with GOGC
// gcHeadroom too, so that the heap it builds stays dense. See
// docs/performance.md, Memory.
const (
	gcHeadroom    = 15 // percent of the live heap
	minGCHeadroom = 1 << 20
)

// tuneGC sets GOGC from the live heap (gcHeadroom), unless the
// environment sets it; edged calls it after a collection (the start's,
// a configuration change's).
func tuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(gcPercent(s[0].Value.Uint64()))
}

// gcPercent is the GOGC that gives a live heap of live bytes its
// headroom: gcHeadroom, at least minGCHeadroom, at most Go's default.
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(100, max(gcHeadroom, minGCHeadroom*100/live)))
}

// stdin is where `edged user` reads a password that does not come from a
// terminal; tests replace it.
var stdin io.Reader = os.Stdin

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcHeadroom) // until tuneGC, after the start
	}
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain runs edged and returns its exit code: 0 after a clean shutdown
// (SIGINT/SIGTERM), --help, --version or a valid --check-config; 2 for a bad
// command line or configuration; 1 when edged cannot run.
func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "pki":
			return pkiMain(args[1:], stdout, stderr)
		case "user":
			return userMain(args[1:], stdin, stdout, stderr)
		case "config":
			return configMain(args[1:], stdout, stderr)
		}
	}
	cfg, err := parseFlags(args, os.Hostname, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "edged: %v\n", err)
		return 2
	case cfg.showVersion:
		fmt.Fprintf(stdout, "edged %s\n", version)
		return 0
	}

	if cfg.checkConfig {
		conf, err := loadConfig(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "edged: %v\n", err)
			return 2
		}
		n := 0
		for _, d := range conf.Devices {
			n += len(d.Tags)
		}
		fmt.Fprintf(stdout, "edged: configuration OK: %d devices, %d tags\n", len(conf.Devices), n)
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The command line's configuration is read by run only when it is
	// needed: once the data folder holds a version, that runs instead.
	if err := run(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "edged: %v\n", err)
		if _, ok := errors.AsType[*configError](err); ok {
			return 2
		}
		return 1
	}
	return 0
}
