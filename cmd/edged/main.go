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
	"syscall"

	"github.com/edged/edged/internal/stack"
)

// version is stamped at build time: -ldflags "-X main.version=...".
var version = "dev"

// stdin is where `edged user` reads a password that does not come from a
// terminal; tests replace it.
var stdin io.Reader = os.Stdin

func main() {
	stack.ProcessStart() // edged's runtime policy: internal/stack/policy.go
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
