package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// loadMain is the load role: it connects the clients, prints "ready", and
// has them read until its input ends. A "mark" line on its input starts the
// count; at the end it prints "reads=N errors=N reads/s=R" since the mark.
func loadMain(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("scanbench load", flag.ContinueOnError)
	url := fs.String("url", "", "endpoint URL")
	ns := fs.Int("ns", 2, "namespace index of the tags")
	clients := fs.Int("clients", 10, "clients")
	nodes := fs.Int("nodes", 100, "tags per Read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cs []*opcua.Client
	defer func() {
		for _, c := range cs {
			c.Close(context.Background())
		}
	}()
	reqs := make([]*gua.ReadRequest, *clients)
	for i := range *clients {
		c, err := opcua.NewClient(*url, opcua.SecurityPolicy("None"), opcua.SecurityMode(gua.MessageSecurityModeNone),
			opcua.AuthAnonymous(), opcua.AutoReconnect(false))
		if err != nil {
			return err
		}
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		err = c.Connect(cctx)
		ccancel()
		if err != nil {
			return fmt.Errorf("load: connect to %s: %w", *url, err)
		}
		cs = append(cs, c)
		req := &gua.ReadRequest{TimestampsToReturn: gua.TimestampsToReturnBoth}
		for k := range *nodes {
			g := i**nodes + k
			tag, _, _ := tagName(g % tagsPerDev)
			req.NodesToRead = append(req.NodesToRead, &gua.ReadValueID{
				NodeID: gua.NewStringNodeID(uint16(*ns), deviceName(g/tagsPerDev)+"."+tag), AttributeID: gua.AttributeIDValue})
		}
		reqs[i] = req
	}

	var reads, errs atomic.Uint64
	var lastErr atomic.Value
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			for ctx.Err() == nil {
				r, err := c.Read(ctx, reqs[i])
				if err != nil {
					if ctx.Err() == nil {
						errs.Add(1)
						lastErr.Store(err.Error())
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				bad := false
				for _, res := range r.Results {
					if res.Status != gua.StatusOK {
						bad = true
					}
				}
				if bad {
					errs.Add(1)
					lastErr.Store(fmt.Sprintf("a result not Good: %v", r.Results[0].Status))
				}
				reads.Add(1)
			}
		})
	}
	fmt.Fprintln(out, "ready")

	sc := bufio.NewScanner(in)
	var r0, e0 uint64
	t0 := time.Now()
	for sc.Scan() {
		if sc.Text() == "mark" {
			r0, e0, t0 = reads.Load(), errs.Load(), time.Now()
		}
	}
	r1, e1, t1 := reads.Load(), errs.Load(), time.Now()
	cancel()
	wg.Wait()
	msg := ""
	if e := lastErr.Load(); e != nil {
		msg = " last_error=" + fmt.Sprintf("%q", e)
	}
	fmt.Fprintf(out, "reads=%d errors=%d reads/s=%.0f%s\n", r1-r0, e1-e0, float64(r1-r0)/t1.Sub(t0).Seconds(), msg)
	return nil
}
