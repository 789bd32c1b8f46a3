package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// run binds the OPC UA listen address, runs the demo and prints its values
// every reportEvery until ctx is done. The OPC UA server is not built yet:
// the port is bound (so it is reserved and a conflict shows at start-up),
// and connections to it are closed at once.
func run(ctx context.Context, cfg config, out io.Writer, reportEvery time.Duration) error {
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on --listen %s: %w", cfg.listen, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	fmt.Fprintf(out, "edged %s: OPC UA endpoint URL %s (listening on %s)\n",
		version, endpointURL(cfg.advertiseHost, port), ln.Addr())
	fmt.Fprintf(out, "edged: note: the OPC UA server is not built yet; the port is bound but "+
		"connections are closed at once. Printing the built-in demo variables every %v.\n", reportEvery)

	var wg sync.WaitGroup
	wg.Go(func() { closeConnections(ln, out) })

	cycle := time.NewTicker(demoCycle)
	defer cycle.Stop()
	report := time.NewTicker(reportEvery)
	defer report.Stop()
	runDemo(ctx, cycle.C, report.C, out)

	ln.Close()
	wg.Wait()
	fmt.Fprintln(out, "edged: shut down cleanly")
	return nil
}

// closeConnections accepts connections on ln and closes them, until ln is
// closed. It stands in for the OPC UA server.
func closeConnections(ln net.Listener, out io.Writer) {
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil { // e.g. out of file descriptors: back off, keep going
			fmt.Fprintf(out, "edged: accept: %v\n", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		fmt.Fprintf(out, "edged: closed connection from %s: no OPC UA server yet\n", c.RemoteAddr())
		c.Close()
	}
}
