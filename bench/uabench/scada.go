package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/plc/sim"
)

// The SCADA scenarios of bench-peer: sessions subscribed to thousands of
// variables, a tenth of which change every 100 ms (the churn bank of
// edged's simulator, plc/sim, and the same logic in the peer program's
// bulk variables), as Ignition, WinCC OA or a historian subscribe.

// scadaScenario is one SCADA load.
type scadaScenario struct {
	phase                string // its -only name: s1..s4
	sessions, items      int    // items per session, each its own variables
	sampling, publishing time.Duration
	secure               bool // Basic256Sha256 SignAndEncrypt, else None
	target               float64
}

var scadaScenarios = []scadaScenario{
	{phase: "s1", sessions: 10, items: 1000, sampling: 100 * time.Millisecond, publishing: time.Second, target: 0.35},
	{phase: "s2", sessions: 10, items: 1000, sampling: 100 * time.Millisecond, publishing: time.Second, secure: true, target: 0.35},
	{phase: "s3", sessions: 50, items: 200, sampling: 250 * time.Millisecond, publishing: 500 * time.Millisecond, secure: true, target: 0.35},
	{phase: "s4", sessions: 1, items: 10000, sampling: 5 * time.Millisecond, publishing: 5 * time.Millisecond, target: 0.3},
}

func (sc scadaScenario) String() string {
	sec := "None"
	if sc.secure {
		sec = "Basic256Sha256 SignAndEncrypt"
	}
	return fmt.Sprintf("%s: %d session(s) × %s items, sampling %v, publishing %v, %s",
		sc.phase, sc.sessions, fmtNum(float64(sc.items)), sc.sampling, sc.publishing, sec)
}

// total is the number of variables the scenario subscribes to.
func (sc scadaScenario) total() int { return sc.sessions * sc.items }

// scadaResult is what one SCADA run measured.
type scadaResult struct {
	window              time.Duration
	cpu                 time.Duration
	expected, delivered uint64
	p50, p99            time.Duration // change → receipt
	spacing             time.Duration // p50 of the intervals between a subscription's data messages
	rss                 uint64        // at the end of the window
	overruns            float64       // edged's scan overruns in the window (NaN: not known)
}

func (r scadaResult) cpuPerNote(idle float64) float64 {
	return (r.cpu.Seconds() - idle*r.window.Seconds()) * 1e6 / float64(max(r.delivered, 1))
}

// scadaWindow is the measured span of changes (a multiple of a second:
// every variable changes the same number of times in it), scadaWarmup
// the wait after the items are created (their initial values) before it.
const (
	scadaWindow = 10 * time.Second
	scadaWarmup = 3 * time.Second
)

// runScada runs sc on s: it opens the sessions, subscribes each to its
// items, keeps Publish requests out on all of them, and takes, for the
// changes of scadaWindow, which arrived, after how long, and the server's
// CPU and RSS over it from /proc.
func runScada(s *peerServer, sc scadaScenario, f peerFlags, p *proc) (scadaResult, error) {
	var res scadaResult
	var sec *uaclient.Security
	if sc.secure {
		var err error
		if sec, err = scadaSecurity(s); err != nil {
			return res, err
		}
	}
	subs := make([]*scadaSub, sc.sessions)
	defer func() {
		for _, x := range subs {
			if x != nil {
				x.c.Conn().Close()
			}
		}
	}()
	for k := range subs {
		c, err := uaclient.DialSecure(s.addr, "uabench", sec, 10*time.Second)
		if err != nil {
			return res, fmt.Errorf("%s: session %d: %w", sc.phase, k, err)
		}
		subs[k] = &scadaSub{c: c}
		if err := subs[k].create(s, sc, k); err != nil {
			return res, fmt.Errorf("%s: session %d: %w", sc.phase, k, err)
		}
	}
	diag := func() float64 { return scadaOverruns(s) }

	// The window: the changes of the steps [ka, kb).
	ka := sim.ChurnStep(time.Now().Add(scadaWarmup)) + 1
	kb := ka + int64(scadaWindow/sim.ChurnPeriod)
	at := func(k int64) time.Time { return time.Unix(0, k*int64(sim.ChurnPeriod)) }
	stop := at(kb).Add(sc.publishing + sc.sampling + 2*time.Second)
	var wg sync.WaitGroup
	for _, x := range subs {
		x.ka, x.kb, x.stop = ka, kb, stop
		x.c.Conn().SetReadDeadline(stop)
		wg.Go(x.run)
	}
	time.Sleep(time.Until(at(ka)))
	if f.profile != "" {
		// perf samples the server's threads over the window (make
		// bench-peer-scada PEER_FLAGS=-profile=DIR); its cost is in the
		// figures of such a run.
		file := filepath.Join(f.profile, strings.ReplaceAll(s.name, " ", "_")+"-"+sc.phase+".perf")
		prof := exec.Command("perf", "record", "-q", "-F", "999", "-g", "-p", strconv.Itoa(p.pid), "-o", file, "--", "sleep", strconv.Itoa(int(scadaWindow/time.Second)))
		if err := prof.Start(); err != nil {
			return res, fmt.Errorf("perf: %w", err)
		}
		defer prof.Wait()
	}
	o0 := diag()
	s0, err := p.sample()
	if err != nil {
		return res, err
	}
	time.Sleep(time.Until(at(kb)))
	s1, err := p.sample()
	if err != nil {
		return res, err
	}
	o1 := diag()
	wg.Wait()
	var lat, spacing []time.Duration
	for _, x := range subs {
		if x.err != nil {
			return res, fmt.Errorf("%s: %w", sc.phase, x.err)
		}
		res.delivered += uint64(len(x.seen))
		lat = append(lat, x.lat...)
		spacing = append(spacing, x.spacing...)
	}
	res.window = s1.at.Sub(s0.at)
	res.cpu = s1.cpu - s0.cpu
	res.rss = s1.rss
	res.expected = uint64(sc.total()) * uint64(kb-ka) / sim.ChurnClasses
	res.p50, res.p99 = kit.Percentile(lat, 50), kit.Percentile(lat, 99)
	res.spacing = kit.Percentile(spacing, 50)
	res.overruns = o1 - o0
	return res, nil
}

// scadaSecurity makes the client's certificate for s's Basic256Sha256
// SignAndEncrypt endpoint and, for edged, trusts it in -edged-trust.
func scadaSecurity(s *peerServer) (*uaclient.Security, error) {
	sec, err := clientSecurity(s.addr, secpol.Basic256Sha256, ua.MessageSecurityModeSignAndEncrypt)
	if err != nil {
		return nil, err
	}
	if s.trust != "" {
		dir := filepath.Join(s.trust, pki.TrustedCerts)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "uabench-load.der"), sec.Certificate, 0o644); err != nil {
			return nil, err
		}
	}
	return sec, nil
}

// scadaOverruns reads s's scan overruns (NaN without -edged-overruns).
func scadaOverruns(s *peerServer) float64 {
	if s.overruns.IsNull() {
		return nan
	}
	c, err := uaclient.DialSession(s.addr, "uabench diagnostics", 10*time.Second)
	if err != nil {
		return nan
	}
	defer c.Close(5 * time.Second)
	var resp ua.ReadResponse
	if err := c.Call(&ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{{NodeID: s.overruns, AttributeID: uint32(ua.AttributeIDValue)}}}, &resp); err != nil || len(resp.Results) != 1 {
		return nan
	}
	if n, ok := resp.Results[0].Value.Value().(uint64); ok {
		return float64(n)
	}
	return nan
}

// scadaSub is one session of a SCADA run with its subscription.
type scadaSub struct {
	c       *uaclient.Client
	subID   uint32
	ka, kb  int64               // the window's steps
	stop    time.Time           // receive until then
	seen    map[uint64]struct{} // (item, step) of the window's changes received
	lat     []time.Duration
	spacing []time.Duration
	err     error
}

// create makes the subscription of session k and its monitored items,
// a thousand to a request.
func (x *scadaSub) create(s *peerServer, sc scadaScenario, k int) error {
	c := x.c
	var cs ua.CreateSubscriptionResponse
	if err := c.Call(&ua.CreateSubscriptionRequest{
		RequestHeader: c.Header(), RequestedPublishingInterval: float64(sc.publishing / time.Millisecond),
		RequestedLifetimeCount: 3000, RequestedMaxKeepAliveCount: 30, PublishingEnabled: true,
	}, &cs); err != nil {
		return fmt.Errorf("CreateSubscription: %w", err)
	}
	if got := time.Duration(cs.RevisedPublishingInterval * float64(time.Millisecond)); got != sc.publishing {
		return fmt.Errorf("publishing interval revised to %v, want %v", got, sc.publishing)
	}
	x.subID = cs.SubscriptionID
	for first := 0; first < sc.items; first += 1000 {
		req := ua.CreateMonitoredItemsRequest{RequestHeader: c.Header(), SubscriptionID: x.subID, TimestampsToReturn: ua.TimestampsToReturnSource}
		for m := first; m < min(first+1000, sc.items); m++ {
			j := k*sc.items + m
			req.ItemsToCreate = append(req.ItemsToCreate, ua.MonitoredItemCreateRequest{
				ItemToMonitor:  ua.ReadValueID{NodeID: s.bulkID(j), AttributeID: uint32(ua.AttributeIDValue)},
				MonitoringMode: ua.MonitoringModeReporting,
				RequestedParameters: ua.MonitoringParameters{ClientHandle: uint32(j), SamplingInterval: float64(sc.sampling / time.Millisecond),
					QueueSize: 2, DiscardOldest: true},
			})
		}
		var cm ua.CreateMonitoredItemsResponse
		if err := c.Call(&req, &cm); err != nil {
			return fmt.Errorf("CreateMonitoredItems: %w", err)
		}
		if len(cm.Results) != len(req.ItemsToCreate) {
			return fmt.Errorf("CreateMonitoredItems: %d results for %d items", len(cm.Results), len(req.ItemsToCreate))
		}
		for i, r := range cm.Results {
			if r.StatusCode.IsBad() {
				return fmt.Errorf("CreateMonitoredItems of %v: %v", req.ItemsToCreate[i].ItemToMonitor.NodeID, r.StatusCode)
			}
		}
	}
	return nil
}

// run keeps three Publish requests out until x.stop and takes what the
// responses carry.
func (x *scadaSub) run() {
	x.seen = make(map[uint64]struct{})
	p := &publisher{c: x.c, subID: x.subID}
	for range 3 {
		if x.err = p.send(); x.err != nil {
			return
		}
	}
	var last time.Time
	for time.Now().Before(x.stop) {
		_, msg, err := x.c.ReadMessage()
		recv := time.Now()
		if errors.Is(err, os.ErrDeadlineExceeded) && !recv.Before(x.stop) {
			return // the end: no message since the last before it
		}
		if err != nil {
			x.err = fmt.Errorf("Publish: %w", err)
			return
		}
		if err := x.c.Decode(msg, &p.resp); err != nil {
			x.err = fmt.Errorf("Publish: %w", err)
			return
		}
		nm := &p.resp.NotificationMessage
		if len(nm.NotificationData) > 0 {
			p.acks = append(p.acks, ua.SubscriptionAcknowledgement{SubscriptionID: x.subID, SequenceNumber: nm.SequenceNumber})
		}
		inWindow := false
		for i := range nm.NotificationData {
			dc, ok := nm.NotificationData[i].Body.(*ua.DataChangeNotification)
			if !ok {
				continue
			}
			for j := range dc.MonitoredItems {
				it := &dc.MonitoredItems[j]
				v, ok := it.Value.Value.Value().(uint16)
				if !ok {
					x.err = fmt.Errorf("item %d: value %v (%v), want a UInt16", it.ClientHandle, it.Value.Value.Value(), it.Value.Status)
					return
				}
				changed := sim.ChurnChanged(v, recv)
				k := sim.ChurnStep(changed)
				if k < x.ka || k >= x.kb {
					continue
				}
				inWindow = true
				key := uint64(it.ClientHandle)<<32 | uint64(uint32(k))
				if _, dup := x.seen[key]; !dup {
					x.seen[key] = struct{}{}
					x.lat = append(x.lat, recv.Sub(changed))
				}
			}
		}
		if inWindow {
			if !last.IsZero() {
				x.spacing = append(x.spacing, recv.Sub(last))
			}
			last = recv
		}
		if x.err = p.send(); x.err != nil {
			return
		}
	}
}

var nan = math.NaN()

// bulkID is the NodeId of the scenario's variable j: the -bulk format
// with j's device (j / 1,000), its index there (j % 1,000) and j.
func (s *peerServer) bulkID(j int) ua.NodeID {
	id, err := ua.ParseNodeID(fmt.Sprintf(s.bulk, j/1000, j%1000, j))
	if err != nil {
		return ua.NewStringNodeID(0, "invalid -bulk format: "+err.Error())
	}
	return id
}
