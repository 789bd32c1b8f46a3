package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/edged/edged/opcua/server"
)

// shutdownTimeout bounds how long run waits for connections to close.
const shutdownTimeout = 5 * time.Second

// run binds the OPC UA listen address, starts the OPC UA server with the
// demo variables under Objects/Gateway, runs the demo and prints its
// values every reportEvery until ctx is done, then shuts the server down.
func run(ctx context.Context, cfg config, out io.Writer, reportEvery time.Duration) error {
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on --listen %s: %w", cfg.listen, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	url := endpointURL(cfg.advertiseHost, port)
	srv, err := newServer(cfg, url, out)
	if err != nil {
		ln.Close()
		return err
	}
	demo := &demoSource{}
	demo.publish(demoValuesAt(0), time.Now())
	for _, v := range demoVariables {
		v.Source = demo
		if err := srv.AddVariable(v); err != nil {
			ln.Close()
			return err
		}
	}

	fmt.Fprintf(out, "edged %s: OPC UA endpoint URL %s (listening on %s)\n", version, url, ln.Addr())
	fmt.Fprintf(out, "edged: serving the demo variables as Objects/Gateway/{Counter,Sine,Toggle} "+
		"(SecurityPolicy None, anonymous); printing them every %v.\n", reportEvery)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	cycle := time.NewTicker(demoCycle)
	defer cycle.Stop()
	report := time.NewTicker(reportEvery)
	defer report.Stop()
	dctx, stopDemo := context.WithCancel(ctx)
	defer stopDemo()
	demoDone := make(chan struct{})
	go func() {
		runDemo(dctx, cycle.C, report.C, out, demo)
		close(demoDone)
	}()

	select {
	case <-ctx.Done():
	case err := <-serveErr: // the listener failed
		stopDemo()
		<-demoDone
		return fmt.Errorf("OPC UA server: %w", err)
	}
	<-demoDone
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(out, "edged: shutdown: %v\n", err)
	}
	if err := <-serveErr; !errors.Is(err, server.ErrServerClosed) {
		fmt.Fprintf(out, "edged: OPC UA server: %v\n", err)
	}
	fmt.Fprintln(out, "edged: shut down cleanly")
	return nil
}

// newServer configures the OPC UA server from the command line.
func newServer(cfg config, url string, out io.Writer) (*server.Server, error) {
	return server.New(server.Config{
		EndpointURL:     url,
		SoftwareVersion: version,
		MaxSessions:     cfg.maxSessions,
		MaxConnections:  cfg.maxConnections,
		DataEfficient:   cfg.dataEfficient,
		Logger:          slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}
