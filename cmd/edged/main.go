// Command edged is the gateway firmware: it polls PLCs over Modbus and GPIO
// and serves their values over OPC UA. Until the scan engine lands it
// serves a built-in demo (see demo.go) under Objects/Gateway.
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
	"time"
)

// version is stamped at build time: -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain runs edged and returns its exit code: 0 after a clean shutdown
// (SIGINT/SIGTERM), --help or --version; 2 for a bad command line; 1 when
// edged cannot run.
func realMain(args []string, stdout, stderr io.Writer) int {
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, stdout, time.Second); err != nil {
		fmt.Fprintf(stderr, "edged: %v\n", err)
		return 1
	}
	return 0
}
