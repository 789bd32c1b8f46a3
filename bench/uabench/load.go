package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
)

// scenario is one load: conns connections, each keeping inflight Read
// requests of nodes nodes outstanding.
type scenario struct {
	conns, inflight, nodes int
	// echo: not OPC UA but the echo baseline (see echo.go), one frame in
	// flight of the sizes of a nodes-node Read request and response.
	echo bool
}

func (s scenario) String() string {
	if s.echo {
		return fmt.Sprintf("%d×%d, echo of a %d-node Read", s.conns, s.inflight, s.nodes)
	}
	return fmt.Sprintf("%d×%d, %d-node Read", s.conns, s.inflight, s.nodes)
}

// parseScenarios parses "10x100x1,1x1x1": conns×inflight×nodes; "echo"
// (or "echoNODES", e.g. echo100) is the echo baseline, 1×1 with the bytes
// of a 1-node (NODES-node) Read.
func parseScenarios(s string) ([]scenario, error) {
	var out []scenario
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if rest, ok := strings.CutPrefix(f, "echo"); ok {
			n := 1
			if rest != "" {
				var err error
				if n, err = strconv.Atoi(rest); err != nil || n < 1 {
					return nil, fmt.Errorf("scenario %q: want echo or echoNODES, e.g. echo100", f)
				}
			}
			out = append(out, scenario{conns: 1, inflight: 1, nodes: n, echo: true})
			continue
		}
		p := strings.Split(f, "x")
		if len(p) != 3 {
			return nil, fmt.Errorf("scenario %q: want CONNSxINFLIGHTxNODES, e.g. 10x100x1", f)
		}
		var v [3]int
		for i := range p {
			n, err := strconv.Atoi(p[i])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("scenario %q: %q is not a positive number", f, p[i])
			}
			v[i] = n
		}
		out = append(out, scenario{conns: v[0], inflight: v[1], nodes: v[2]})
	}
	return out, nil
}

// result is what one scenario measured over its window.
type result struct {
	sc       scenario
	window   time.Duration
	requests uint64 // responses received in the window
	errors   uint64 // bad responses in the window
	lastErr  string
	p50, p99 time.Duration
	srvCPU   time.Duration
	srvBytes uint64
	srvAlloc uint64
	loadCPU  time.Duration
	minConn  uint64 // fewest and most responses of one connection in the window
	maxConn  uint64

	echoReq, echoResp int // echo scenario: the frame sizes
}

func (r *result) perReq(d time.Duration) float64 {
	return float64(d) / float64(time.Microsecond) / float64(max(r.requests, 1))
}

// statser gives the server's process statistics.
type statser interface {
	stats() (procStats, error)
}

// loadFlags configure the load role.
type loadFlags struct {
	warmup, duration time.Duration
	timestamps       ua.TimestampsToReturn
	// spin: in the 1×1 scenarios, before each blocking read, non-blocking
	// reads for up to this long (0: none); see spinConn.
	spin time.Duration
	// policy and mode, when policy is set, secure every connection
	// (-policy, -mode) with security, made by load.
	policy   *secpol.Policy
	ecc      *secpol.ECC // instead of policy
	mode     ua.MessageSecurityMode
	security *uaclient.Security
}

func policyByName(name string) *secpol.Policy {
	for _, p := range secpol.All {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

func securityName(f loadFlags) string {
	switch {
	case f.ecc != nil:
		return f.ecc.Name() + " " + f.mode.String()
	case f.policy == nil:
		return "SecurityPolicy None"
	}
	return f.policy.Name() + " " + f.mode.String()
}

// clientSecurity makes the load's certificate and fetches the server's.
func clientSecurity(addr string, p *secpol.Policy, mode ua.MessageSecurityMode) (*uaclient.Security, error) {
	const uri = "urn:edged:uabench:load"
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: uri, CommonName: "uabench load"})
	if err != nil {
		return nil, err
	}
	sc, err := uaclient.ServerCertificate(addr, p.URI(), mode, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &uaclient.Security{Policy: p, Mode: mode, Certificate: der, Key: key, ApplicationURI: uri, ServerCertificate: sc}, nil
}

// runScenario opens sc.conns sessions to addr, loads them for the warm-up
// and the measured window, and closes them. The server's statistics are
// taken from srv at both ends of the window. It is bounded: a run that
// does not end duration + 30 s after its start is cut off.
func runScenario(addr string, ids []ua.NodeID, sc scenario, f loadFlags, srv statser) (result, error) {
	res := result{sc: sc}
	if sc.echo {
		return res, errors.New("uabench: an echo scenario needs runEcho")
	}
	closed := false
	readers, err := dialReaders(addr, ids, sc, f)
	defer func() {
		if !closed {
			for _, r := range readers {
				r.c.Conn().Close()
			}
		}
	}()
	if err != nil {
		return res, err
	}

	var phase atomic.Int32
	var wg sync.WaitGroup
	errs := make([]error, len(readers))
	for i, r := range readers {
		wg.Go(func() { errs[i] = r.run(&phase, 0) })
	}
	bound := time.AfterFunc(f.warmup+f.duration+30*time.Second, func() {
		for _, r := range readers {
			r.c.Conn().Close()
		}
	})
	defer bound.Stop()
	stop := func() {
		phase.Store(phaseStop)
		wg.Wait()
	}

	time.Sleep(f.warmup)
	s0, err := srv.stats()
	if err != nil {
		stop()
		return res, err
	}
	done0, errs0 := counts(readers)
	per0 := perConn(readers)
	cpu0, t0 := kit.CPUTime(), time.Now()
	phase.Store(phaseMeasure)

	time.Sleep(f.duration)
	s1, err := srv.stats()
	if err != nil {
		stop()
		return res, err
	}
	done1, errs1 := counts(readers)
	per1 := perConn(readers)
	cpu1, t1 := kit.CPUTime(), time.Now()
	stop()
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("uabench: %v: %w", sc, err)
	}
	for _, r := range readers {
		if err := r.c.Close(5 * time.Second); err != nil {
			return res, fmt.Errorf("uabench: %v: closing: %w", sc, err)
		}
	}
	closed = true

	res.merge(readers, per0, per1)
	res.window = t1.Sub(t0)
	res.requests = done1 - done0
	res.errors = errs1 - errs0
	res.srvCPU = s1.cpu - s0.cpu
	res.srvBytes = s1.totalAlloc - s0.totalAlloc
	res.srvAlloc = s1.mallocs - s0.mallocs
	res.loadCPU = cpu1 - cpu0
	return res, nil
}

// dialReaders opens the scenario's connections, each with its reader of
// the first sc.nodes of ids; on an error the ones opened are returned for
// closing.
func dialReaders(addr string, ids []ua.NodeID, sc scenario, f loadFlags) ([]*reader, error) {
	readers := make([]*reader, 0, sc.conns)
	for range sc.conns {
		c, err := uaclient.DialSecure(addr, "uabench", f.security, 10*time.Second)
		if err != nil {
			return readers, err
		}
		req := &ua.ReadRequest{TimestampsToReturn: f.timestamps}
		for _, id := range ids[:sc.nodes] {
			req.NodesToRead = append(req.NodesToRead, ua.ReadValueID{NodeID: id, AttributeID: uint32(ua.AttributeIDValue)})
		}
		r, err := newReader(c, req, sc.inflight, false)
		if err != nil {
			c.Conn().Close()
			return readers, err
		}
		if sc.conns == 1 && sc.inflight == 1 {
			c.SetReader(newSpinConn(c.Conn(), f.spin)) // -spin is for the latency runs only
		}
		readers = append(readers, r)
	}
	return readers, nil
}

// merge takes the readers' latencies, last error and per-connection
// counts (per0 at the window's start, per1 at its end) into res.
func (res *result) merge(readers []*reader, per0, per1 []uint64) {
	var h histogram
	for _, r := range readers {
		h.merge(&r.hist)
		if e := r.lastEr.Load(); e != nil {
			res.lastErr = *e
		}
	}
	for i := range per1 {
		n := per1[i] - per0[i]
		if i == 0 || n < res.minConn {
			res.minConn = n
		}
		res.maxConn = max(res.maxConn, n)
	}
	res.p50, res.p99 = h.quantile(0.50), h.quantile(0.99)
}

func counts(rs []*reader) (done, errs uint64) {
	for _, r := range rs {
		done += r.done.Load()
		errs += r.errs.Load()
	}
	return done, errs
}

func perConn(rs []*reader) []uint64 {
	n := make([]uint64, len(rs))
	for i, r := range rs {
		n[i] = r.done.Load()
	}
	return n
}

// serverProc is the server role in a child process, spoken to over its
// stdin and stdout.
type serverProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr string
	ns   uint16
	echo string // address of the echo baseline's server
}

// startServer starts the server role with the command line argv (e.g.
// taskset -c 0 uabench server) and waits for it to be ready.
func startServer(argv []string) (*serverProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("uabench: starting the server %q: %w", argv, err)
	}
	p := &serverProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := p.line(10 * time.Second)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("uabench: server did not get ready: %w", err)
	}
	kv := fields(line, "ready")
	if kv == nil || kv["addr"] == "" {
		p.stop()
		return nil, fmt.Errorf("uabench: server said %q, want ready addr=... ns=...", line)
	}
	ns, err := strconv.ParseUint(kv["ns"], 10, 16)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("uabench: server said %q: bad ns", line)
	}
	p.addr, p.ns, p.echo = kv["addr"], uint16(ns), kv["echo"]
	return p, nil
}

// line reads one line from the server within timeout.
func (p *serverProc) line(timeout time.Duration) (string, error) {
	type lineErr struct {
		s   string
		err error
	}
	c := make(chan lineErr, 1)
	go func() {
		s, err := p.out.ReadString('\n')
		c <- lineErr{strings.TrimSpace(s), err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case le := <-c:
		return le.s, le.err
	case <-t.C:
		return "", fmt.Errorf("no answer within %v", timeout)
	}
}

func (p *serverProc) stats() (procStats, error) {
	if _, err := io.WriteString(p.in, "stats\n"); err != nil {
		return procStats{}, err
	}
	line, err := p.line(10 * time.Second)
	if err != nil {
		return procStats{}, fmt.Errorf("uabench: server stats: %w", err)
	}
	kv := fields(line, "stats")
	var st procStats
	var perr error
	num := func(k string) uint64 {
		v, err := strconv.ParseUint(kv[k], 10, 64)
		if err != nil && perr == nil {
			perr = fmt.Errorf("uabench: server said %q: bad %s", line, k)
		}
		return v
	}
	st.cpu = time.Duration(num("cpu_ns"))
	st.totalAlloc = num("total_alloc")
	st.mallocs = num("mallocs")
	return st, perr
}

// stop asks the server to quit and waits for it, killing it after 10 s.
func (p *serverProc) stop() error {
	io.WriteString(p.in, "quit\n")
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
		return errors.New("uabench: server did not quit within 10 s; killed")
	}
}

// fields parses "word k=v k=v" with the given first word.
func fields(line, word string) map[string]string {
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != word {
		return nil
	}
	kv := make(map[string]string)
	for _, s := range f[1:] {
		if k, v, ok := strings.Cut(s, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// checkLoopback refuses an address that is not a loopback one: the bench
// must not load a network.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("uabench: %s is not a loopback address", addr)
	}
	return nil
}

// report prints the results as a table.
func report(w io.Writer, rs []result, f loadFlags) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\treq/s\tp50 µs\tp99 µs\tserver CPU µs/req\tserver B/req\tserver allocs/req\tload CPU µs/req\tserver CPU %\tload CPU %\terrors\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.1f\t%.2f\t%.1f\t%.3f\t%.2f\t%.0f\t%.0f\t%d\t\n",
			r.sc, float64(r.requests)/r.window.Seconds(),
			float64(r.p50)/float64(time.Microsecond), float64(r.p99)/float64(time.Microsecond),
			r.perReq(r.srvCPU), float64(r.srvBytes)/float64(max(r.requests, 1)),
			float64(r.srvAlloc)/float64(max(r.requests, 1)), r.perReq(r.loadCPU),
			100*r.srvCPU.Seconds()/r.window.Seconds(), 100*r.loadCPU.Seconds()/r.window.Seconds(), r.errors)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nEach scenario: %v warm-up, then %v measured; TimestampsToReturn %v.\n", f.warmup, f.duration, f.timestamps)
	fmt.Fprintln(w, "Latency is from the write that sent a request to the read that returned its response.")
	fmt.Fprintln(w, "With more than one request in flight per connection it includes the time spent queued")
	fmt.Fprintln(w, "behind the others (queueing latency), not the service time of one request.")
	fmt.Fprintln(w, "Server figures are the server process's deltas (getrusage user+sys, MemStats TotalAlloc and")
	fmt.Fprintln(w, "Mallocs) over the window divided by the responses received in it; load CPU is this process's.")
	fmt.Fprintln(w, "CPU % is CPU time over the window, 100 = one core busy all the time.")
	if f.spin > 0 {
		fmt.Fprintf(w, "In the 1×1 scenarios the load polls (non-blocking reads) for up to %v before each blocking read: its CPU includes the polling.\n", f.spin)
	}
	for _, r := range rs {
		if r.sc.echo {
			fmt.Fprintf(w, "%v: no OPC UA, a TCP echo in the server process: %d bytes out, %d back, one at a time;\n"+
				"  the floor under the 1×1 round trip with this pinning.\n", r.sc, r.echoReq, r.echoResp)
		}
		if r.sc.conns > 1 {
			fmt.Fprintf(w, "%v: responses per connection in the window: %d to %d\n", r.sc, r.minConn, r.maxConn)
		}
		if r.errors > 0 {
			fmt.Fprintf(w, "%v: %d bad responses, e.g. %s\n", r.sc, r.errors, r.lastErr)
		}
		if r.loadCPU*2 > r.srvCPU {
			fmt.Fprintf(w, "%v: the load used more than half the server's CPU per request: "+
				"throughput and latency may measure the client as much as the server.\n", r.sc)
		}
	}
}
