package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/plc/sim"
)

// The peer role (make bench-peer): edged and a peer server, each started
// by its command line, measured alike from outside through /proc (CPU
// time, context switches of all threads, resident memory), under the
// same loads, alternately, for a number of rounds.

// peerServer is one server of the comparison.
type peerServer struct {
	name    string
	argv    []string
	addr    string
	read    []ua.NodeID // the nodes Reads read, cycled to the count a scenario asks
	counter ua.NodeID   // a variable that changes every 5 ms, for the subscription
	// The SCADA scenarios: bulk, a format of the NodeIds of the churning
	// variables (see bulkID); trust, the data directory in whose trust
	// list the secure scenarios' client certificate goes (edged);
	// overruns, the variable of the scan's overruns (edged).
	bulk     string
	trust    string
	overruns ua.NodeID
}

// peerFlags configure the peer role.
type peerFlags struct {
	load       loadFlags
	servers    [2]peerServer
	rounds     int
	settle     time.Duration // after start, before the idle window
	idle       time.Duration
	openRate   int // open loop: Reads/s over openConns connections
	openConns  int
	subWindow  time.Duration
	pipeConns  int
	pipeFlight int
	only       map[string]bool // the phases to run (idle, pipe, one, open, sub, hist); nil: all
	// floor, when its command is set, is measured in each round too, in
	// the open loop and 1×1 (see floor.go); aa runs edged a second time
	// in each round for them, whose difference from the first is the
	// run's own margin (A/A).
	floor peerServer
	aa    bool
	// profile: a directory for perf's profiles of the SCADA windows.
	profile string
}

// floorPhases are the phases the floor and the A/A run take part in.
var floorPhases = []string{"idle", "one", "open"}

// extraRuns are the floor's runs and edged's second ones, by round.
type extraRuns struct {
	floor, aa []*serverRun
}

func (f peerFlags) runs(phase string) bool { return f.only == nil || f.only[phase] }

// proc is a server process under measurement.
type proc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   bytes.Buffer // its output, shown when it fails
	outMu sync.Mutex
	pid   int
}

func (p *proc) Write(b []byte) (int, error) {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.out.Len() < 1<<16 {
		p.out.Write(b)
	}
	return len(b), nil
}

func (p *proc) output() string {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	return p.out.String()
}

// startProc starts argv and waits until addr accepts connections. Its
// standard input stays open until stop (the peer program of bench-peer
// quits at its end). A taskset in front execs the server: same pid.
func startProc(argv []string, addr string) (*proc, error) {
	p := &proc{cmd: exec.Command(argv[0], argv[1:]...)}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("uabench: starting %q: %w", argv, err)
	}
	p.pid = p.cmd.Process.Pid
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) || p.cmd.ProcessState != nil {
			p.stop()
			return nil, fmt.Errorf("uabench: %q did not accept connections at %s within 60 s: %v\n%s", argv, addr, err, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the process: end of input, SIGTERM, SIGKILL after 10 s.
func (p *proc) stop() error {
	p.in.Close()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM {
			return nil // the peer program dies of SIGTERM
		}
		return err
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
		return errors.New("uabench: server did not stop within 10 s; killed")
	}
}

// sample is what /proc says of a process at one instant.
type sample struct {
	at     time.Time
	cpu    time.Duration // on a CPU, all threads
	cs     uint64        // voluntary + involuntary context switches, all threads
	rss    uint64        // bytes resident
	hwm    uint64        // resident high-water mark, bytes
	thread int
}

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux this runs on).
const clockTick = 10 * time.Millisecond

func (p *proc) sample() (sample, error) {
	s := sample{at: time.Now()}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return s, err
	}
	// After the command name in parentheses: state is field 3; utime
	// and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return s, fmt.Errorf("uabench: /proc/%d/stat: %q", p.pid, b)
	}
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	s.cpu = time.Duration(ut+st) * clockTick
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", p.pid))
	if err != nil {
		return s, err
	}
	// The threads' schedstat counts their time on a CPU in ns, where
	// stat counts in 10 ms ticks: 10 % of an idle window's CPU. It
	// misses the threads that ended, which neither server's do.
	var onCPU time.Duration
	schedOK := true
	s.thread = len(tasks)
	for _, t := range tasks {
		if b, err := os.ReadFile(t + "/schedstat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				n, _ := strconv.ParseUint(f[0], 10, 64)
				onCPU += time.Duration(n)
			}
		} else {
			schedOK = false
		}
		b, err := os.ReadFile(t + "/status")
		if err != nil {
			continue // a thread that ended
		}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				s.cs += n
			}
		}
	}
	if schedOK && onCPU > 0 {
		s.cpu = onCPU
	}
	b, err = os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			s.rss = kb << 10
		case "VmHWM":
			s.hwm = kb << 10
		}
	}
	return s, nil
}

// stats makes a proc a statser for runScenario (CPU time only: the
// allocations of another process are not visible from outside).
func (p *proc) stats() (procStats, error) {
	s, err := p.sample()
	return procStats{cpu: s.cpu}, err
}

// serverRun is what one run of one server measured.
type serverRun struct {
	idleCPU     float64 // fraction of a core
	idleCS      float64 // per second
	idleRSS     uint64
	threads     int
	pipe1       result // 10×100, 1 node
	pipe100     result // 10×100, 100 nodes
	one         result // 1×1, 1 node
	open        openResult
	sub         subResult
	hist        histResult
	events      subResult
	hwm         uint64
	secureRuns  []result
	secureNames []string
	scada       [len(scadaPhases)]scadaResult
}

// scadaPhases are the SCADA scenarios' -only names, in scadaScenarios'
// order.
var scadaPhases = [...]string{"s1", "s2", "s3", "s4"}

// measure runs every scenario on one server.
func measure(s *peerServer, f peerFlags, w io.Writer) (*serverRun, error) {
	p, err := startProc(s.argv, s.addr)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	fail := func(err error) (*serverRun, error) {
		p.stop()
		return nil, fmt.Errorf("%s: %w\n%s", s.name, err, p.output())
	}
	r := &serverRun{}
	time.Sleep(f.settle)
	if err := measureIdle(s, f, p, r, w); err != nil {
		return fail(err)
	}
	ids := cycleIDs(s.read, 100)
	for _, x := range []struct {
		phase string
		sc    scenario
		dst   *result
	}{
		{"pipe", scenario{conns: f.pipeConns, inflight: f.pipeFlight, nodes: 1}, &r.pipe1},
		{"pipe", scenario{conns: f.pipeConns, inflight: f.pipeFlight, nodes: 100}, &r.pipe100},
		{"one", scenario{conns: 1, inflight: 1, nodes: 1}, &r.one},
	} {
		if !f.runs(x.phase) {
			continue
		}
		res, err := runScenario(s.addr, ids, x.sc, f.load, p)
		if err != nil {
			return fail(err)
		}
		if res.errors > 0 {
			return fail(fmt.Errorf("%v: %d bad responses, e.g. %s", x.sc, res.errors, res.lastErr))
		}
		*x.dst = res
		fmt.Fprintf(w, "uabench: %s %v: %.0f Reads/s, server CPU %.2f µs/Read, p50 %.1f µs, p99 %.1f µs\n",
			s.name, x.sc, float64(res.requests)/res.window.Seconds(), res.perReq(res.srvCPU), us(res.p50), us(res.p99))
	}
	var err2 error
	if f.runs("open") {
		if r.open, err2 = runOpenLoop(s.addr, ids[:1], f, p); err2 != nil {
			return fail(err2)
		}
		fmt.Fprintf(w, "uabench: %s open loop %d Reads/s over %d connections: %.0f Reads/s, server CPU %.2f µs/Read, %.3f context switches/Read, p50 %.1f µs, p99 %.1f µs\n",
			s.name, f.openRate, f.openConns, r.open.rate(), r.open.cpuPerRead(0), r.open.csPerRead(0), us(r.open.p50), us(r.open.p99))
	}
	if f.runs("sub") {
		if r.sub, err2 = runSubscription(s.addr, s.counter, f, p); err2 != nil {
			return fail(err2)
		}
		fmt.Fprintf(w, "uabench: %s subscription: %d notifications, latency p50 %.2f ms, p99 %.2f ms, server CPU %.1f µs/notification\n",
			s.name, r.sub.n, ms(r.sub.p50), ms(r.sub.p99), r.sub.cpuPerNote(0))
	}
	if f.only["events"] { // only when asked: the servers must raise events
		if r.events, err2 = runEvents(s.addr, f, p); err2 != nil {
			return fail(err2)
		}
		fmt.Fprintf(w, "uabench: %s events: %d notifications, latency p50 %.2f ms, p99 %.2f ms, server CPU %.1f µs/notification\n",
			s.name, r.events.n, ms(r.events.p50), ms(r.events.p99), r.events.cpuPerNote(0))
	}
	if f.runs("hist") {
		if r.hist, err2 = runHistory(s.addr, s.counter, started, f, p); err2 != nil {
			return fail(err2)
		}
		fmt.Fprintf(w, "uabench: %s history: %d raw reads of %v of the counter, %.0f values each, p50 %.2f ms, p99 %.2f ms, server CPU %.1f ns/value\n",
			s.name, r.hist.calls, histSpan-time.Second, float64(r.hist.values)/float64(max(r.hist.calls, 1)), ms(r.hist.p50), ms(r.hist.p99), r.hist.cpuPerValue(0))
	}
	for i, sc := range scadaScenarios {
		if !f.only[sc.phase] { // only when asked: the servers must serve the bulk variables
			continue
		}
		if r.scada[i], err2 = runScada(s, sc, f, p); err2 != nil {
			return fail(err2)
		}
		x := r.scada[i]
		fmt.Fprintf(w, "uabench: %s %s: %d of %d notifications, latency p50 %.0f ms, p99 %.0f ms, spacing p50 %.1f ms, server CPU %.2f µs/notification, RSS %.1f MiB, overruns %v\n",
			s.name, sc.phase, x.delivered, x.expected, ms(x.p50), ms(x.p99), ms(x.spacing), x.cpuPerNote(0), mib(x.rss), x.overruns)
	}
	end, err := p.sample()
	if err != nil {
		return fail(err)
	}
	r.hwm = end.hwm
	if err := p.stop(); err != nil {
		return nil, fmt.Errorf("%s: stopping: %w\n%s", s.name, err, p.output())
	}
	return r, nil
}

// measureIdle measures s idle, without clients, over f.idle.
func measureIdle(s *peerServer, f peerFlags, p *proc, r *serverRun, w io.Writer) error {
	if !f.runs("idle") {
		return nil
	}
	s0, err := p.sample()
	if err != nil {
		return err
	}
	time.Sleep(f.idle)
	s1, err := p.sample()
	if err != nil {
		return err
	}
	el := s1.at.Sub(s0.at).Seconds()
	r.idleCPU = (s1.cpu - s0.cpu).Seconds() / el
	r.idleCS = float64(s1.cs-s0.cs) / el
	r.idleRSS, r.threads = s1.rss, s1.thread
	fmt.Fprintf(w, "uabench: %s idle: %.2f %% of a core, %.0f context switches/s, RSS %.1f MiB, %d threads\n",
		s.name, 100*r.idleCPU, r.idleCS, mib(r.idleRSS), r.threads)
	return nil
}

func cycleIDs(ids []ua.NodeID, n int) []ua.NodeID {
	out := make([]ua.NodeID, n)
	for i := range out {
		out[i] = ids[i%len(ids)]
	}
	return out
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mib(b uint64) float64       { return float64(b) / (1 << 20) }

// openResult is what the open-loop run measured.
type openResult struct {
	window   time.Duration
	reads    uint64
	cpu      time.Duration
	cs       uint64
	p50, p99 time.Duration
}

func (o openResult) rate() float64 { return float64(o.reads) / o.window.Seconds() }

// cpuPerRead is the server's CPU per Read in µs, less idle (a fraction of
// a core) over the window.
func (o openResult) cpuPerRead(idle float64) float64 {
	net := o.cpu.Seconds() - idle*o.window.Seconds()
	return net * 1e6 / float64(max(o.reads, 1))
}

// csPerRead is the server's context switches per Read, less idle (per
// second) over the window.
func (o openResult) csPerRead(idle float64) float64 {
	return (float64(o.cs) - idle*o.window.Seconds()) / float64(max(o.reads, 1))
}

// runOpenLoop loads the server at f.openRate Reads/s spread over
// f.openConns connections, sent on a 1 ms schedule: each millisecond,
// rate/1000 of the connections (in turn) send one 1-node Read, each on
// a socket that has been idle since its last response. A connection
// waits for its response before its next send, which comes well after
// it (a Read is answered in tens of µs, the next send of the connection
// is milliseconds later); the schedule is absolute, so a late response
// delays one send, not the rate.
func runOpenLoop(addr string, ids []ua.NodeID, f peerFlags, srv *proc) (openResult, error) {
	var res openResult
	perMs := f.openRate / 1000
	if perMs < 1 || f.openConns%perMs != 0 {
		return res, fmt.Errorf("uabench: open loop: %d Reads/s over %d connections: want a multiple of 1,000 Reads/s whose per-ms count divides the connections", f.openRate, f.openConns)
	}
	every := time.Duration(f.openConns/perMs) * time.Millisecond // per connection
	cs, err := dialOpenLoop(addr, ids[0], f)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.r.c.Conn().Close()
			}
		}
	}()
	if err != nil {
		return res, err
	}
	var phase atomic.Int32
	var wg sync.WaitGroup
	t0 := time.Now().Add(10 * time.Millisecond).Truncate(time.Millisecond)
	for i, c := range cs {
		offset := time.Duration(i/perMs) * time.Millisecond
		wg.Go(func() { c.run(t0, offset, every, &phase) })
	}
	bound := time.AfterFunc(f.load.warmup+f.load.duration+30*time.Second, func() {
		for _, c := range cs {
			c.r.c.Conn().Close()
		}
	})
	defer bound.Stop()
	time.Sleep(time.Until(t0) + f.load.warmup)
	s0, err := srv.sample()
	if err != nil {
		phase.Store(phaseStop)
		wg.Wait()
		return res, err
	}
	phase.Store(phaseMeasure)
	time.Sleep(f.load.duration)
	phase.Store(phaseWarmup) // count no more
	s1, err := srv.sample()
	phase.Store(phaseStop)
	wg.Wait()
	if err != nil {
		return res, err
	}
	var h histogram
	for _, c := range cs {
		if c.err != nil {
			return res, c.err
		}
		res.reads += c.n.Load()
		h.merge(&c.hist)
	}
	for i, c := range cs {
		if err := c.r.c.Close(5 * time.Second); err != nil {
			return res, fmt.Errorf("uabench: open loop: closing: %w", err)
		}
		cs[i] = nil
	}
	res.window = s1.at.Sub(s0.at)
	res.cpu, res.cs = s1.cpu-s0.cpu, s1.cs-s0.cs
	res.p50, res.p99 = h.quantile(0.50), h.quantile(0.99)
	return res, nil
}

// openConn is one connection of the open loop.
type openConn struct {
	r    *reader
	hist histogram
	n    atomic.Uint64
	err  error
}

// dialOpenLoop opens the open loop's connections, each reading id; on an
// error the ones opened are returned for closing.
func dialOpenLoop(addr string, id ua.NodeID, f peerFlags) ([]*openConn, error) {
	cs := make([]*openConn, f.openConns)
	for i := range cs {
		c, err := uaclient.DialSecure(addr, "uabench", f.load.security, 10*time.Second)
		if err != nil {
			return cs, err
		}
		req := &ua.ReadRequest{TimestampsToReturn: f.load.timestamps, NodesToRead: []ua.ReadValueID{{NodeID: id, AttributeID: uint32(ua.AttributeIDValue)}}}
		r, err := newReader(c, req, 1, false)
		if err != nil {
			c.Conn().Close()
			return cs, err
		}
		cs[i] = &openConn{r: r}
	}
	return cs, nil
}

// run sends a Read every every, from t0 + offset, and waits for its
// answer each time, until phase says stop; it counts the answers of the
// measured phase.
func (c *openConn) run(t0 time.Time, offset, every time.Duration, phase *atomic.Int32) {
	r := c.r
	r.base = t0
	for k := 0; ; k++ {
		if phase.Load() == phaseStop {
			return
		}
		at := t0.Add(offset + time.Duration(k)*every)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		s := r.free[0]
		r.free = r.free[:0]
		r.enqueue(s)
		if c.err = r.flush(); c.err != nil {
			return
		}
		for len(r.free) == 0 {
			if c.err = c.await(s, t0, phase); c.err != nil {
				return
			}
		}
	}
}

// await reads what the connection has and takes the answer of slot s.
func (c *openConn) await(s int, t0 time.Time, phase *atomic.Int32) error {
	r := c.r
	if err := r.c.Fill(); err != nil {
		return err
	}
	for {
		chunk, ok, err := r.c.NextChunk()
		if err != nil || !ok {
			return err
		}
		id, complete, good := r.response(chunk)
		if !complete {
			continue
		}
		if id != r.slotID[s] || !good {
			return fmt.Errorf("uabench: open loop: response %#x (good %v), want %#x; %v", id, good, r.slotID[s], r.lastEr.Load())
		}
		r.free = append(r.free, s)
		if phase.Load() == phaseMeasure {
			c.hist.add(uint64(max(int64(time.Since(t0))-r.slotSent[s], 0)))
			c.n.Add(1)
		}
	}
}

// subResult is what the subscription run measured.
type subResult struct {
	window   time.Duration
	n        uint64 // data changes received in the window
	cpu      time.Duration
	p50, p99 time.Duration
}

func (s subResult) cpuPerNote(idle float64) float64 {
	return (s.cpu.Seconds() - idle*s.window.Seconds()) * 1e6 / float64(max(s.n, 1))
}

// runSubscription subscribes to counter with 5 ms publishing and
// sampling, keeps three Publish requests in flight and measures, for
// each data change received in the window, the time from the value's
// SourceTimestamp (when the server saw the change) to its receipt.
func runSubscription(addr string, counter ua.NodeID, f peerFlags, srv *proc) (subResult, error) {
	return runPublish(addr, f, srv, func(c *uaclient.Client) (uint32, error) { return subscribeCounter(c, counter) })
}

// runEvents subscribes to the Server object's events with 5 ms
// publishing (EventType, SourceName, Time, Message, Severity selected)
// and measures, for each event received in the window, the time from its
// Time field to its receipt, and the server's CPU.
func runEvents(addr string, f peerFlags, srv *proc) (subResult, error) {
	return runPublish(addr, f, srv, subscribeEvents)
}

// runPublish makes the subscription subscribe makes, keeps three Publish
// requests in flight and measures the latency of each notification in
// the window after the warm-up, and the server's CPU over it.
func runPublish(addr string, f peerFlags, srv *proc, subscribe func(*uaclient.Client) (uint32, error)) (subResult, error) {
	var res subResult
	c, err := uaclient.DialSecure(addr, "uabench", f.load.security, 10*time.Second)
	if err != nil {
		return res, err
	}
	defer c.Conn().Close()
	subID, err := subscribe(c)
	if err != nil {
		return res, err
	}
	p := &publisher{c: c, subID: subID}
	for range 3 {
		if err := p.send(); err != nil {
			return res, err
		}
	}
	var s0, s1 sample
	warm := time.Now().Add(f.load.warmup)
	end := warm.Add(f.subWindow)
	measuring := false
	for {
		now := time.Now()
		if !measuring && !now.Before(warm) {
			if s0, err = srv.sample(); err != nil {
				return res, err
			}
			measuring = true
		}
		if measuring && !now.Before(end) {
			break
		}
		if err := p.receive(measuring); err != nil {
			return res, err
		}
		if err := p.send(); err != nil {
			return res, err
		}
	}
	if s1, err = srv.sample(); err != nil {
		return res, err
	}
	c.Conn().SetReadDeadline(time.Time{})
	res.window = s1.at.Sub(s0.at)
	res.cpu = s1.cpu - s0.cpu
	res.n = uint64(len(p.lat))
	res.p50, res.p99 = kit.Percentile(p.lat, 50), kit.Percentile(p.lat, 99)
	if res.n == 0 {
		return res, fmt.Errorf("no notification in %v", f.subWindow)
	}
	return res, nil
}

// subscribeEvents creates a subscription publishing every 5 ms with an
// event item on the Server object, and returns its id.
func subscribeEvents(c *uaclient.Client) (uint32, error) {
	var filter ua.EventFilter
	for _, name := range []string{"EventType", "SourceName", "Time", "Message", "Severity"} {
		filter.SelectClauses = append(filter.SelectClauses, ua.SimpleAttributeOperand{TypeDefinitionID: ua.NewNumericNodeID(0, 2041), // BaseEventType
			BrowsePath: []ua.QualifiedName{{Name: name}}, AttributeID: uint32(ua.AttributeIDValue)})
	}
	return subscribe5ms(c, ua.MonitoredItemCreateRequest{
		ItemToMonitor:       ua.ReadValueID{NodeID: ua.NewNumericNodeID(0, 2253), AttributeID: uint32(ua.AttributeIDEventNotifier)},
		MonitoringMode:      ua.MonitoringModeReporting,
		RequestedParameters: ua.MonitoringParameters{ClientHandle: 1, QueueSize: 100, DiscardOldest: true, Filter: ua.ExtensionObject{Body: &filter}},
	}, "the Server's events", func(*ua.MonitoredItemCreateResult) bool { return true })
}

// subscribeCounter creates a subscription publishing every 5 ms with one
// item on counter sampled every 5 ms, and returns its id.
func subscribeCounter(c *uaclient.Client, counter ua.NodeID) (uint32, error) {
	return subscribe5ms(c, ua.MonitoredItemCreateRequest{
		ItemToMonitor:       ua.ReadValueID{NodeID: counter, AttributeID: uint32(ua.AttributeIDValue)},
		MonitoringMode:      ua.MonitoringModeReporting,
		RequestedParameters: ua.MonitoringParameters{ClientHandle: 1, SamplingInterval: 5, QueueSize: 10, DiscardOldest: true},
	}, counter.String()+" sampled every 5 ms", func(r *ua.MonitoredItemCreateResult) bool { return r.RevisedSamplingInterval == 5 })
}

// subscribe5ms creates a subscription publishing every 5 ms with item,
// which must be good and pass ok, and returns its id; what names the item
// in an error.
func subscribe5ms(c *uaclient.Client, item ua.MonitoredItemCreateRequest, what string, ok func(*ua.MonitoredItemCreateResult) bool) (uint32, error) {
	var cs ua.CreateSubscriptionResponse
	if err := c.Call(&ua.CreateSubscriptionRequest{
		RequestHeader: c.Header(), RequestedPublishingInterval: 5,
		RequestedLifetimeCount: 6000, RequestedMaxKeepAliveCount: 200, PublishingEnabled: true,
	}, &cs); err != nil {
		return 0, fmt.Errorf("CreateSubscription: %w", err)
	}
	if cs.RevisedPublishingInterval != 5 {
		return 0, fmt.Errorf("publishing interval revised to %v ms, want 5", cs.RevisedPublishingInterval)
	}
	var cm ua.CreateMonitoredItemsResponse
	if err := c.Call(&ua.CreateMonitoredItemsRequest{
		RequestHeader: c.Header(), SubscriptionID: cs.SubscriptionID, TimestampsToReturn: ua.TimestampsToReturnBoth,
		ItemsToCreate: []ua.MonitoredItemCreateRequest{item},
	}, &cm); err != nil {
		return 0, fmt.Errorf("CreateMonitoredItems: %w", err)
	}
	if len(cm.Results) != 1 || cm.Results[0].StatusCode.IsBad() || !ok(&cm.Results[0]) {
		return 0, fmt.Errorf("CreateMonitoredItems of %s: %+v", what, cm.Results)
	}
	return cs.SubscriptionID, nil
}

// publisher keeps Publish requests out for one subscription and takes
// the latency of each data change: its arrival less its SourceTimestamp.
type publisher struct {
	c     *uaclient.Client
	subID uint32
	pub   ua.PublishRequest
	resp  ua.PublishResponse
	acks  []ua.SubscriptionAcknowledgement
	lat   []time.Duration
}

// send sends a Publish request with the acknowledgements due.
func (p *publisher) send() error {
	p.pub.RequestHeader = p.c.Header()
	p.pub.RequestHeader.TimeoutHint = 10000
	p.pub.SubscriptionAcknowledgements = p.acks
	if _, err := p.c.Send(&p.pub); err != nil {
		return err
	}
	p.acks = p.acks[:0]
	return nil
}

// receive reads one Publish response; while measuring it takes the
// latencies of its data changes.
func (p *publisher) receive(measuring bool) error {
	p.c.Conn().SetReadDeadline(time.Now().Add(5 * time.Second))
	_, msg, err := p.c.ReadMessage()
	recv := time.Now()
	if err != nil {
		return fmt.Errorf("Publish: %w", err)
	}
	if err := p.c.Decode(msg, &p.resp); err != nil {
		return fmt.Errorf("Publish: %w", err)
	}
	nm := &p.resp.NotificationMessage
	if len(nm.NotificationData) > 0 {
		p.acks = append(p.acks, ua.SubscriptionAcknowledgement{SubscriptionID: p.subID, SequenceNumber: nm.SequenceNumber})
	}
	for i := range nm.NotificationData {
		if el, ok := nm.NotificationData[i].Body.(*ua.EventNotificationList); ok {
			for j := range el.Events {
				f := el.Events[j].EventFields
				if len(f) != 5 || !measuring {
					continue
				}
				if t, ok := f[2].Value().(time.Time); ok { // Time
					p.lat = append(p.lat, recv.Sub(t))
				}
			}
			continue
		}
		dc, ok := nm.NotificationData[i].Body.(*ua.DataChangeNotification)
		if !ok {
			continue
		}
		for j := range dc.MonitoredItems {
			v := &dc.MonitoredItems[j].Value
			if measuring && !v.SourceTimestamp.IsZero() {
				p.lat = append(p.lat, recv.Sub(v.SourceTimestamp))
			}
		}
	}
	return nil
}

// peer runs the rounds and prints the table.
func peer(f peerFlags, w io.Writer) error {
	runs := [2][]*serverRun{}
	var extra extraRuns
	fmt.Fprintf(w, "uabench: %d rounds, alternating; idle %v after %v; scenarios %v warm-up, %v measured; load average %s\n",
		f.rounds, f.idle, f.settle, f.load.warmup, f.load.duration, kit.LoadAvg())
	for round := range f.rounds {
		for i := range f.servers {
			s := &f.servers[i]
			fmt.Fprintf(w, "== round %d: %s\n", round+1, s.name)
			r, err := measure(s, f, w)
			if err != nil {
				return err
			}
			runs[i] = append(runs[i], r)
		}
		// The floor and edged again, in the phases they share.
		g := f
		g.only = map[string]bool{}
		for _, ph := range floorPhases {
			g.only[ph] = f.runs(ph)
		}
		if !g.only["one"] && !g.only["open"] {
			continue
		}
		if len(f.floor.argv) > 0 {
			fmt.Fprintf(w, "== round %d: %s\n", round+1, f.floor.name)
			r, err := measure(&f.floor, g, w)
			if err != nil {
				return err
			}
			extra.floor = append(extra.floor, r)
		}
		if f.aa {
			a := f.servers[0]
			a.name += " (A/A)"
			fmt.Fprintf(w, "== round %d: %s\n", round+1, a.name)
			r, err := measure(&a, g, w)
			if err != nil {
				return err
			}
			extra.aa = append(extra.aa, r)
		}
	}
	return peerReport(w, f, runs, extra)
}

// A row of the table: a figure of each server's runs, and its target.
type peerRow struct {
	phase string // the phase that measures it ("": always there)
	name  string
	unit  string
	get   func(r *serverRun, i int) float64 // i: the server's index
	// target: the ratio edged/peer must be at most this (0: none);
	// abs: edged's own figure must be at most this (0: none); zero:
	// edged's figure must be 0; near: edged's figure must be within 2 %
	// of it (0: none); plus: edged's figure must be at most the peer's
	// plus it (0: none).
	target, abs float64
	zero        bool
	near, plus  float64
	// aa: with an A/A run, the ratio must be at most 1 + the A/A margin
	// of the same figure (see aaMargin) instead of target.
	aa bool
	// shipped: the target holds for the servers as bench-peer starts
	// them, not with the SCADA scenarios' 10,000 polled tags.
	shipped bool
}

// scadaRows are the rows of the SCADA scenarios.
func scadaRows(idleCPU func(int) float64) []peerRow {
	var rows []peerRow
	for i, sc := range scadaScenarios {
		get := func(g func(x scadaResult, srv int) float64) func(r *serverRun, srv int) float64 {
			return func(r *serverRun, srv int) float64 { return g(r.scada[i], srv) }
		}
		pub, samp := ms(sc.publishing), ms(sc.sampling)
		// A message carries data only when some changed: at most every
		// publishing interval, at least every 100 ms (the churn).
		spacing := max(pub, ms(sim.ChurnPeriod))
		rows = append(rows,
			peerRow{phase: sc.phase, name: sc.String() + ": server CPU per notification net of idle", unit: "µs",
				get: get(func(x scadaResult, srv int) float64 { return x.cpuPerNote(idleCPU(srv)) }), target: sc.target},
			peerRow{phase: sc.phase, name: "same, notifications delivered per second", unit: "/s",
				get: get(func(x scadaResult, srv int) float64 { return float64(x.delivered) / scadaWindow.Seconds() })},
			peerRow{phase: sc.phase, name: "same, notifications lost (expected less delivered)", unit: "",
				get: get(func(x scadaResult, srv int) float64 { return float64(x.expected) - float64(x.delivered) }), zero: true},
			peerRow{phase: sc.phase, name: "same, change → client p50", unit: "ms",
				get: get(func(x scadaResult, srv int) float64 { return ms(x.p50) })},
			peerRow{phase: sc.phase, name: "same, change → client p99", unit: "ms",
				get: get(func(x scadaResult, srv int) float64 { return ms(x.p99) }), abs: pub + samp},
			peerRow{phase: sc.phase, name: "same, spacing of a subscription's messages p50", unit: "ms",
				get: get(func(x scadaResult, srv int) float64 { return ms(x.spacing) }), near: spacing},
			peerRow{phase: sc.phase, name: "same, RSS at the end of the window", unit: "MiB",
				get: get(func(x scadaResult, srv int) float64 { return mib(x.rss) }), plus: 8},
			peerRow{phase: sc.phase, name: "same, scan overruns in the window", unit: "",
				get: get(func(x scadaResult, srv int) float64 { return x.overruns }), zero: true},
		)
	}
	return rows
}

func peerReport(w io.Writer, f peerFlags, runs [2][]*serverRun, extra extraRuns) error {
	idleCPU := func(i int) float64 { return median(runs[i], func(r *serverRun) float64 { return r.idleCPU }) }
	idleCS := func(i int) float64 { return median(runs[i], func(r *serverRun) float64 { return r.idleCS }) }
	// Net figures take each server's own median idle.
	rows := []peerRow{
		{phase: "idle", name: "idle, no client: CPU", unit: "% of a core", get: func(r *serverRun, i int) float64 { return 100 * r.idleCPU }, abs: 2, shipped: true},
		{phase: "idle", name: "idle, no client: context switches", unit: "/s", get: func(r *serverRun, i int) float64 { return r.idleCS }, abs: 1000, shipped: true},
		{phase: "idle", name: "idle RSS", unit: "MiB", get: func(r *serverRun, i int) float64 { return mib(r.idleRSS) }, target: 1.5, shipped: true},
		{phase: "pipe", name: fmt.Sprintf("%d×%d, 1-node Read: server CPU per Read", f.pipeConns, f.pipeFlight), unit: "µs", get: func(r *serverRun, i int) float64 { return r.pipe1.perReq(r.pipe1.srvCPU) }, target: 0.2},
		{phase: "pipe", name: "same, Reads/s", unit: "/s", get: func(r *serverRun, i int) float64 { return float64(r.pipe1.requests) / r.pipe1.window.Seconds() }},
		{phase: "pipe", name: fmt.Sprintf("%d×%d, 100-node Read: server CPU per Read", f.pipeConns, f.pipeFlight), unit: "µs", get: func(r *serverRun, i int) float64 { return r.pipe100.perReq(r.pipe100.srvCPU) }, target: 0.5},
		{phase: "one", name: "1×1 Read round trip p50", unit: "µs", get: func(r *serverRun, i int) float64 { return us(r.one.p50) }, target: 1, aa: true},
		{phase: "one", name: "1×1 Read round trip p99", unit: "µs", get: func(r *serverRun, i int) float64 { return us(r.one.p99) }, target: 1, aa: true},
		{phase: "open", name: fmt.Sprintf("open loop, %d Reads/s over %d connections, every 1 ms: server CPU per Read", f.openRate, f.openConns), unit: "µs", get: func(r *serverRun, i int) float64 { return r.open.cpuPerRead(0) }},
		{phase: "open", name: "same, net of the server's idle CPU", unit: "µs", get: func(r *serverRun, i int) float64 { return r.open.cpuPerRead(idleCPU(i)) }, target: 1},
		// Reported, not targeted: both servers switch once a wake-up, and
		// "net of idle" counts the scan's own 5 ms timer against edged.
		{phase: "open", name: "same, context switches per Read net of idle", unit: "", get: func(r *serverRun, i int) float64 { return r.open.csPerRead(idleCS(i)) }},
		{phase: "open", name: "same, round trip p50", unit: "µs", get: func(r *serverRun, i int) float64 { return us(r.open.p50) }},
		{phase: "open", name: "same, round trip p99", unit: "µs", get: func(r *serverRun, i int) float64 { return us(r.open.p99) }},
		{phase: "sub", name: "subscription, 5 ms publishing and sampling: change → client p50", unit: "ms", get: func(r *serverRun, i int) float64 { return ms(r.sub.p50) }},
		{phase: "sub", name: "same, p99", unit: "ms", get: func(r *serverRun, i int) float64 { return ms(r.sub.p99) }},
		{phase: "sub", name: "same, server CPU per notification net of idle", unit: "µs", get: func(r *serverRun, i int) float64 { return r.sub.cpuPerNote(idleCPU(i)) }},
		{phase: "hist", name: fmt.Sprintf("history: raw HistoryRead of the counter's last %v (5 ms values), one after another: server CPU per value returned, net of idle", histSpan-time.Second), unit: "ns",
			get: func(r *serverRun, i int) float64 { return r.hist.cpuPerValue(idleCPU(i)) }, target: 0.5},
		{phase: "hist", name: "same, values per read", unit: "", get: func(r *serverRun, i int) float64 { return float64(r.hist.values) / float64(max(r.hist.calls, 1)) }},
		{phase: "hist", name: "same, round trip p50", unit: "ms", get: func(r *serverRun, i int) float64 { return ms(r.hist.p50) }},
		{phase: "events", name: "events raised every 5 ms, 5 ms publishing: event → client p50", unit: "ms", get: func(r *serverRun, i int) float64 { return ms(r.events.p50) }},
		{phase: "events", name: "same, p99", unit: "ms", get: func(r *serverRun, i int) float64 { return ms(r.events.p99) }},
		{phase: "events", name: "same, events received per second", unit: "/s", get: func(r *serverRun, i int) float64 { return float64(r.events.n) / r.events.window.Seconds() }},
		{phase: "events", name: "same, server CPU per event notification (raising included)", unit: "µs", get: func(r *serverRun, i int) float64 { return r.events.cpuPerNote(0) }, target: 0.5},
		{phase: "events", name: "same, net of the server's idle CPU (raising events with no one subscribed)", unit: "µs", get: func(r *serverRun, i int) float64 { return r.events.cpuPerNote(idleCPU(i)) }},
	}
	rows = append(rows, scadaRows(idleCPU)...)
	rows = append(rows, peerRow{phase: "", name: "RSS high-water mark (whole run)", unit: "MiB", get: func(r *serverRun, i int) float64 { return mib(r.hwm) }})
	scada := slices.ContainsFunc(scadaPhases[:], func(ph string) bool { return f.only[ph] })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\n| scenario\t| %s\t| %s\t| %s / %s\t| target\t|\n", f.servers[0].name, f.servers[1].name, f.servers[0].name, f.servers[1].name)
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t|")
	unmet := 0
	for _, row := range rows {
		if row.phase != "" && !f.runs(row.phase) || (row.phase == "events" || slices.Contains(scadaPhases[:], row.phase)) && !f.only[row.phase] {
			continue
		}
		var med [2]float64
		var span [2]string
		for i := range runs {
			vs := make([]float64, len(runs[i]))
			for k, r := range runs[i] {
				vs[k] = row.get(r, i)
			}
			med[i] = medianOf(vs)
			span[i] = spanOf(vs, row.unit)
		}
		ratio := med[0] / med[1]
		target, ok := row.judge(f, med, ratio, scada, func() float64 { return aaMargin(runs[0], extra.aa, row.get) }, len(extra.aa) > 0)
		if !ok {
			unmet++
		}
		rs := fmt.Sprintf("%.2f", ratio)
		if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
			rs = "–"
		}
		fmt.Fprintf(tw, "| %s\t| %s\t| %s\t| %s\t| %s\t|\n", row.name, span[0], span[1], rs, target)
	}
	tw.Flush()
	floorReport(w, f, runs, extra)
	fmt.Fprintf(w, "\nMedians of %d rounds (the range of the rounds in brackets); the ratio is of the medians.\n", len(runs[0]))
	fmt.Fprintln(w, "CPU, context switches (all threads, voluntary and not) and memory of each server process from /proc.")
	fmt.Fprintln(w, "Net of idle: less the server's own median idle CPU (or context switches) over the same window.")
	if unmet > 0 {
		fmt.Fprintf(w, "%d targets not met.\n", unmet)
	} else {
		fmt.Fprintln(w, "Every target met.")
	}
	return nil
}

// judge returns the row's target with its verdict, and false when it is
// not met: med are the medians of edged and the peer, ratio theirs, scada
// whether the SCADA scenarios ran, margin the A/A margin of the row's
// figure when hasAA.
func (row peerRow) judge(f peerFlags, med [2]float64, ratio float64, scada bool, margin func() float64, hasAA bool) (string, bool) {
	edged, peer := f.servers[0].name, f.servers[1].name
	switch {
	case row.shipped && scada:
		return "(10,000 tags polled)", true
	case row.zero:
		ok := med[0] == 0 && !math.IsNaN(med[0])
		return fmt.Sprintf("%s = 0: %s", edged, met(ok)), ok
	case row.near > 0:
		ok := math.Abs(med[0]-row.near) <= 0.02*row.near
		return fmt.Sprintf("%s within 2 %% of %s: %s", edged, fmtNum(row.near), met(ok)), ok
	case row.plus > 0:
		ok := med[0] <= med[1]+row.plus
		return fmt.Sprintf("≤ %s + %s: %s", peer, fmtNum(row.plus), met(ok)), ok
	case row.abs > 0:
		ok := med[0] <= row.abs
		return fmt.Sprintf("%s ≤ %s: %s", edged, fmtNum(row.abs), met(ok)), ok
	case row.aa && hasAA:
		m := margin()
		ok := ratio <= 1+m
		return fmt.Sprintf("≤ 1 + A/A margin %.2f: %s", m, met(ok)), ok
	case row.target > 0:
		ok := ratio <= row.target
		return fmt.Sprintf("≤ %.2f: %s", row.target, met(ok)), ok
	}
	return "", true
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func median(rs []*serverRun, get func(*serverRun) float64) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = get(r)
	}
	return medianOf(vs)
}

func medianOf(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func spanOf(vs []float64, unit string) string {
	if !slices.ContainsFunc(vs, func(v float64) bool { return !math.IsNaN(v) }) {
		return "–" // not known
	}
	m := medianOf(vs)
	lo, hi := slices.Min(vs), slices.Max(vs)
	u := unit
	if u != "" && u != "/s" {
		u = " " + u
	}
	if len(vs) == 1 {
		return fmtNum(m) + u
	}
	return fmt.Sprintf("%s%s (%s–%s)", fmtNum(m), u, fmtNum(lo), fmtNum(hi))
}

// fmtNum prints with three significant figures, thousands grouped.
func fmtNum(v float64) string {
	switch a := max(v, -v); {
	case a >= 1000:
		s := strconv.FormatFloat(v, 'f', 0, 64)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		if neg {
			return "-" + b.String()
		}
		return b.String()
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// parseIDs parses a comma-separated list of NodeIds.
func parseIDs(s string) ([]ua.NodeID, error) {
	var out []ua.NodeID
	for _, f := range strings.Split(s, ",") {
		id, err := ua.ParseNodeID(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		out = append(out, id)
	}
	return out, nil
}
