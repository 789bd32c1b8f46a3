package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
)

// inProcess runs the server role in this process, publishing a new
// image every 5 ms, and returns its address and namespace.
func inProcess(t *testing.T) (string, uint16) {
	t.Helper()
	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- serve(serveFlags{listen: "127.0.0.1:0", maxRun: time.Minute, cycle: 5 * time.Millisecond, poller: true}, pr, &out)
	}()
	t.Cleanup(func() {
		pw.Write([]byte("quit\n"))
		pw.Close()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "\n") {
		if time.Now().After(deadline) {
			t.Fatal("server role not ready")
		}
		time.Sleep(time.Millisecond)
	}
	kv := fields(strings.TrimSpace(out.String()), "ready")
	return kv["addr"], 1
}

// The peer role's measurements, on a server in this process: /proc
// samples of this process, the open loop and the subscription.
func TestPeerMeasures(t *testing.T) {
	addr, ns := inProcess(t)
	self := &proc{pid: os.Getpid()}
	s0, err := self.sample()
	if err != nil {
		t.Fatal(err)
	}
	f := peerFlags{
		load:     loadFlags{warmup: 50 * time.Millisecond, duration: 300 * time.Millisecond, timestamps: ua.TimestampsToReturnBoth},
		openRate: 1000, openConns: 2, subWindow: 300 * time.Millisecond,
	}
	ids := benchIDs(ns, 1)
	o, err := runOpenLoop(addr, ids, f, self)
	if err != nil {
		t.Fatal(err)
	}
	if o.reads == 0 || o.p50 <= 0 || o.p99 < o.p50 || o.window <= 0 {
		t.Errorf("open loop: %+v", o)
	}
	sub, err := runSubscription(addr, ids[0], f, self)
	if err != nil {
		t.Fatal(err)
	}
	if sub.n == 0 || sub.p99 < sub.p50 {
		t.Errorf("subscription: %+v", sub)
	}
	s1, err := self.sample()
	if err != nil {
		t.Fatal(err)
	}
	if s1.cpu <= s0.cpu || s1.cs < s0.cs || s1.rss == 0 || s1.hwm < s1.rss || s1.thread < 1 {
		t.Errorf("samples of this process: %+v then %+v", s0, s1)
	}
	if _, err := (&proc{pid: -1}).sample(); err == nil {
		t.Error("a sample of no process: no error")
	}
}

// The report: medians, ratios, targets met and not met.
func TestPeerReport(t *testing.T) {
	run := func(idle float64, p50 time.Duration) *serverRun {
		return &serverRun{idleCPU: idle, idleCS: 100, idleRSS: 10 << 20, one: result{p50: p50, p99: 2 * p50, requests: 1, window: time.Second},
			pipe1: result{requests: 1, window: time.Second}, pipe100: result{requests: 1, window: time.Second}}
	}
	f := peerFlags{pipeConns: 10, pipeFlight: 100, openRate: 5000, openConns: 10}
	f.servers[0].name, f.servers[1].name = "edged", "peer"
	var w bytes.Buffer
	err := peerReport(&w, f, [2][]*serverRun{
		{run(0.01, 20*time.Microsecond), run(0.03, 30*time.Microsecond), run(0.015, 25*time.Microsecond)},
		{run(0.01, 25*time.Microsecond), run(0.01, 25*time.Microsecond), run(0.01, 25*time.Microsecond)},
	}, extraRuns{})
	if err != nil {
		t.Fatal(err)
	}
	out := w.String()
	for _, want := range []string{
		`\| idle, no client: CPU +\| 1\.50 % of a core \(1\.00–3\.00\) +\| 1\.00 % of a core \(1\.00–1\.00\) +\| 1\.50 +\| edged ≤ 2\.00: met`,
		`\| 1×1 Read round trip p50 +\| 25\.0 µs \(20\.0–30\.0\) +\| 25\.0 µs \(25\.0–25\.0\) +\| 1\.00 +\| ≤ 1\.00: met`,
		`\| idle RSS +\| 10\.0 MiB .*\| ≤ 1\.50: met`,
		`\d+ targets not met\.`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func (b *syncBuffer) lock() {
	if b.mu == nil {
		b.mu = make(chan struct{}, 1)
	}
	b.mu <- struct{}{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.lock()
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.lock()
	defer func() { <-b.mu }()
	return b.buf.String()
}

// The SCADA rows and the floor's table: lost notifications and overruns
// must be 0, the spacing within 2 % of the publishing interval, RSS at
// most the peer's + 8 MiB; a figure the peer lacks prints as –; the 1×1
// targets take the A/A margin when edged ran twice.
func TestPeerReportScada(t *testing.T) {
	run := func(delivered uint64, spacing time.Duration, rss uint64, overruns float64, p50 time.Duration) *serverRun {
		r := &serverRun{idleCPU: 0.01, one: result{p50: p50, p99: 2 * p50, requests: 1, window: time.Second},
			open: openResult{window: time.Second, reads: 5000, cpu: 60 * time.Millisecond}}
		r.scada[0] = scadaResult{window: 10 * time.Second, cpu: time.Second, expected: 100000, delivered: delivered,
			p50: 500 * time.Millisecond, p99: time.Second, spacing: spacing, rss: rss, overruns: overruns}
		return r
	}
	f := peerFlags{pipeConns: 10, pipeFlight: 100, openRate: 5000, openConns: 10, aa: true,
		only: map[string]bool{"one": true, "open": true, "s1": true}}
	f.servers[0].name, f.servers[1].name, f.floor.name = "edged", "peer", "floor"
	edged := func() *serverRun { return run(100000, 1010*time.Millisecond, 30<<20, 0, 26*time.Microsecond) }
	peerRun := func() *serverRun { return run(99990, 1000*time.Millisecond, 20<<20, nan, 25*time.Microsecond) }
	var w bytes.Buffer
	err := peerReport(&w, f, [2][]*serverRun{{edged(), edged(), edged()}, {peerRun(), peerRun(), peerRun()}},
		extraRuns{aa: []*serverRun{
			run(0, 0, 0, 0, 25*time.Microsecond), run(0, 0, 0, 0, 25*time.Microsecond), run(0, 0, 0, 0, 25*time.Microsecond)},
			floor: []*serverRun{run(0, 0, 0, 0, 20*time.Microsecond)}})
	if err != nil {
		t.Fatal(err)
	}
	out := w.String()
	for _, want := range []string{
		`\| s1: 10 session\(s\) × 1,000 items, sampling 100ms, publishing 1s, None: server CPU per notification net of idle +\| 9\.00 µs .*\| ≤ 0\.35: NOT MET`,
		`\| same, notifications lost \(expected less delivered\) +\| 0\.000 .*\| 10\.0 .*\| edged = 0: met`,
		`\| same, spacing of a subscription's messages p50 +\| 1,010 ms .*\| edged within 2 % of 1,000: met`,
		`\| same, RSS at the end of the window +\| 30\.0 MiB .*\| ≤ peer \+ 8\.00: NOT MET`,
		`\| same, scan overruns in the window +\| 0\.000 .*\| – +\| – +\| edged = 0: met`,
		`\| same, change → client p99 +\| 1,000 ms .*\| edged ≤ 1,100: met`,
		`\| 1×1 Read round trip p50 +\| 26\.0 µs .*\| 1\.04 +\| ≤ 1 \+ A/A margin 0\.04: met`,
		`\| Read loads, with the floor +\| edged +\| edged \(A/A\) +\| peer +\| floor +\|`,
		`Open loop: edged spends 0\.000 µs of CPU per Read above the floor.s 10\.00 \(1\.00× the floor\)`,
		`1×1 p50: A/A margin \(edged's two runs\) 0\.04\.`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
}
