package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/configsvc"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// With -applies N, the measured window also has N configuration changes,
// evenly spread, applied through the configuration service as a client's
// Apply is (parse, validate, drivers, engine, address space, the version
// stored with fsync). They alternate between the bench configuration
// with a device "sim" that polls the simulator's Counter (+1 every 5 ms),
// and the same with one more device of 10 tags, one more tag on "sim" and
// sim.Ramp in another scan class. The devices the load reads (d1..d4)
// and sim.Counter do not change. A gopcua subscription samples
// sim.Counter at the engine's rate; the values the engine published for
// it in the window, against those the subscription delivered, are the
// notifications lost on an unchanged tag.

// withCounter adds device "sim" to c: Counter and Ramp of the
// simulator's unit 1; with more, also the changed parts.
func withCounter(c config.Config, addr string, more bool) config.Config {
	ramp := "fast"
	tcp := config.DefaultModbusTCP(addr)
	d := config.Device{Name: "sim", Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000, ModbusTCP: tcp, Tags: []config.Tag{
		{Name: "Counter", Type: config.UInt32, Address: "hr:0", ScanClass: "fast", Access: config.Read},
	}}
	if more {
		ramp = "slow"
		d.Tags = append(d.Tags, config.Tag{Name: "Word", Type: config.UInt16, Address: "hr:8", ScanClass: "fast", Access: config.Read})
	}
	d.Tags = append(d.Tags, config.Tag{Name: "Ramp", Type: config.Float32, Address: "hr:6", ScanClass: ramp, Access: config.Read})
	c.Devices = append(slices.Clone(c.Devices), d)
	if more {
		x := config.Device{Name: "extra", Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000, ModbusTCP: config.DefaultModbusTCP(addr)}
		for i := range 10 {
			x.Tags = append(x.Tags, config.Tag{Name: fmt.Sprintf("X%d", i), Type: config.UInt16, Address: fmt.Sprintf("hr:%d", 3000+i), ScanClass: "fast", Access: config.Read})
		}
		c.Devices = append(c.Devices, x)
	}
	return c
}

// applier runs the changes of the window and the Counter watch.
type applier struct {
	svc     *configsvc.Service
	dir     string // of the versions
	docs    [2][]byte
	counter plc.Handle

	mu        sync.Mutex
	published []uint32 // the engine's Counter values, in order
	received  []uint32 // the subscription's
	took      []time.Duration
	problems  []string
	stop      func()
}

// newVersions makes the versions' store of the applies, in a folder of
// its own, with the bench configuration as its first version.
func newVersions() (*applier, *configsvc.Store, error) {
	dir, err := os.MkdirTemp("", "scanbench-config")
	if err != nil {
		return nil, nil, err
	}
	store, err := configsvc.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	a := &applier{dir: dir}
	for i := range a.docs {
		c := withCounter(benchConfig(config.SimulatorAddress), config.SimulatorAddress, i == 1)
		if a.docs[i], err = json.Marshal(&c); err != nil {
			return nil, nil, err
		}
	}
	if _, err := store.Add(configsvc.Meta{User: "scanbench"}, a.docs[0]); err != nil {
		return nil, nil, err
	}
	return a, store, nil
}

// start takes the configuration service of st (made with the versions of
// newVersions) and subscribes to sim.Counter, in the engine and over OPC
// UA.
func (a *applier) start(st *stack.Stack) error {
	a.svc = st.Config
	h, ok := st.Engine.Lookup("sim", "Counter")
	if !ok {
		return fmt.Errorf("no sim.Counter")
	}
	a.counter = h
	cancel := st.Engine.Subscribe(func(im *plc.Image) {
		if slices.Contains(im.Changed(), h) && im.Status(h) == status.Good {
			v := uint32(im.Value(h).Uint64())
			a.mu.Lock()
			if n := len(a.published); n == 0 || a.published[n-1] != v {
				a.published = append(a.published, v)
			}
			a.mu.Unlock()
		}
	})
	ctx := context.Background()
	c, err := opcua.NewClient(st.URL, opcua.SecurityPolicy("None"), opcua.SecurityMode(gua.MessageSecurityModeNone), opcua.AuthAnonymous(), opcua.AutoReconnect(false))
	if err != nil {
		return err
	}
	if err := c.Connect(ctx); err != nil {
		return err
	}
	notes := make(chan *opcua.PublishNotificationData, 256)
	sub, err := c.Subscribe(ctx, &opcua.SubscriptionParameters{Interval: 10 * time.Millisecond}, notes)
	if err != nil {
		return err
	}
	req := opcua.NewMonitoredItemCreateRequestWithDefaults(gua.NewStringNodeID(st.Binding.Namespace(), "sim.Counter"), gua.AttributeIDValue, 1)
	req.RequestedParameters.SamplingInterval = 0
	req.RequestedParameters.QueueSize = 1000
	if _, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, req); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := range notes {
			dc, ok := n.Value.(*gua.DataChangeNotification)
			if !ok {
				continue
			}
			a.mu.Lock()
			for _, it := range dc.MonitoredItems {
				if v, ok := it.Value.Value.Value().(uint32); ok && it.Value.Status == gua.StatusOK {
					a.received = append(a.received, v)
				}
			}
			a.mu.Unlock()
		}
	}()
	a.stop = func() {
		cancel()
		sub.Cancel(ctx)
		c.Close(ctx)
		close(notes)
		<-done
		os.RemoveAll(a.dir)
	}
	return nil
}

// run applies n changes evenly over d.
func (a *applier) run(n int, d time.Duration) {
	every := d / time.Duration(n+1)
	for i := range n {
		time.Sleep(every)
		t0 := time.Now()
		_, p := a.svc.Apply(context.Background(), "scanbench", a.docs[(i+1)%2], 0, 0, "")
		took := time.Since(t0)
		a.mu.Lock()
		a.took = append(a.took, took)
		a.problems = append(a.problems, p...)
		a.mu.Unlock()
	}
}

// report prints the applies and the Counter's lost notifications: the
// values the engine published between the first and the last value the
// subscription got that the subscription did not get.
func (a *applier) report(out io.Writer) {
	time.Sleep(100 * time.Millisecond) // the last notifications
	a.mu.Lock()
	defer a.mu.Unlock()
	took := slices.Clone(a.took)
	slices.Sort(took)
	if len(took) == 0 {
		return
	}
	got := map[uint32]bool{}
	for _, v := range a.received {
		got[v] = true
	}
	lost, considered := 0, 0
	if len(a.received) > 0 {
		lo, hi := a.received[0], a.received[len(a.received)-1]
		for _, v := range a.published {
			if v < lo || v > hi {
				continue
			}
			considered++
			if !got[v] {
				lost++
			}
		}
	}
	fmt.Fprintf(out, "  applies %d: took p50 %v, max %v; %d problems\n", len(took), took[len(took)/2].Round(time.Microsecond), took[len(took)-1].Round(time.Microsecond), len(a.problems))
	for _, p := range a.problems[:min(len(a.problems), 3)] {
		fmt.Fprintf(out, "    %s\n", p)
	}
	fmt.Fprintf(out, "  sim.Counter (unchanged by the applies): %d values published by the engine, %d received by the subscription, %d lost\n",
		considered, len(a.received), lost)
}
