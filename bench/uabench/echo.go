package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
)

// The echo baseline: the floor under the 1×1 round trip. The server role
// also serves a minimal TCP echo on a second loopback port, in the same
// process, so under the same pinning; the "echo" scenario sends it, one
// at a time, a frame of the size of the 1-node Read request and gets back
// one of the size of its response (both measured on the OPC UA server
// first), timed like the Read requests. What the OPC UA round trip adds
// above it is the server's and the client's OPC UA work; the rest is TCP
// over loopback, the system calls and the wake-ups.
//
// An echo frame: bytes 0–3 its length, 4–7 the length of the frame
// wanted back (both little-endian, 8 to maxEcho), then filler.
const maxEcho = 1 << 16

// echoServe answers echo frames on every connection ln accepts until ln
// is closed. spin is the server role's -spin (see spinRead).
func echoServe(ln net.Listener, spin time.Duration) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return err
		}
		go echoConn(nc, spin)
	}
}

func echoConn(nc net.Conn, spin time.Duration) {
	defer nc.Close()
	e := newSpinConn(nc, spin)
	buf := make([]byte, 2*maxEcho)
	out := make([]byte, maxEcho)
	var r, w int
	for {
		for w-r < 8 || w-r < int(binary.LittleEndian.Uint32(buf[r:])) {
			if w-r >= 4 && binary.LittleEndian.Uint32(buf[r:]) > maxEcho {
				return
			}
			if r > 0 {
				w = copy(buf, buf[r:w])
				r = 0
			}
			n, err := e.Read(buf[w:])
			if err != nil {
				return
			}
			w += n
		}
		size := int(binary.LittleEndian.Uint32(buf[r:]))
		want := binary.LittleEndian.Uint32(buf[r+4:])
		if size < 8 || want < 8 || want > maxEcho {
			return
		}
		r += size
		binary.LittleEndian.PutUint32(out, want)
		if _, err := nc.Write(out[:want]); err != nil {
			return
		}
	}
}

// spinConn reads a connection, first with non-blocking reads for up to
// spin (0: none) and then, if nothing came, with a blocking one: the same
// polling as uasc's Config.ReadSpin. Its read function is made once, so
// polling does not allocate.
type spinConn struct {
	nc   net.Conn
	rc   syscall.RawConn // nil: no spinning
	spin time.Duration
	buf  []byte
	n    int
	err  error
	fn   func(fd uintptr) bool
}

func newSpinConn(nc net.Conn, spin time.Duration) *spinConn {
	s := &spinConn{nc: nc, spin: spin}
	if sc, ok := nc.(syscall.Conn); ok && spin > 0 {
		s.rc, _ = sc.SyscallConn()
	}
	s.fn = func(fd uintptr) bool {
		s.n, s.err = syscall.Read(int(fd), s.buf)
		return true // never park: we poll
	}
	return s
}

func (s *spinConn) Read(b []byte) (int, error) {
	if s.rc != nil {
		if n, err := s.spinRead(b); n > 0 || err != nil {
			return n, err
		}
	}
	return s.nc.Read(b)
}

// spinRead tries non-blocking reads for up to s.spin. It returns what the
// first successful read got, or 0 and no error when nothing came within
// the budget. It burns the CPU it runs on while it waits: a latency
// choice, whose cost the CPU columns of the report show.
func (s *spinConn) spinRead(b []byte) (int, error) {
	s.buf = b
	defer func() { s.buf = nil }()
	start := time.Now()
	for {
		if err := s.rc.Read(s.fn); err != nil {
			return 0, err
		}
		switch {
		case s.err == nil && s.n > 0:
			return s.n, nil
		case s.err == nil:
			return 0, io.EOF
		case s.err != syscall.EAGAIN && s.err != syscall.EINTR:
			return 0, s.err
		}
		if time.Since(start) >= s.spin {
			return 0, nil
		}
	}
}

// echoSizes measures the sizes of the request and response chunks of a
// Read on the OPC UA server, sending one request with r.
func echoSizes(r *reader) (req, resp int, err error) {
	var phase atomic.Int32
	phase.Store(phaseWarmup)
	if err := r.run(&phase, 1); err != nil {
		return 0, 0, err
	}
	if r.minResp == 0 {
		return 0, 0, errors.New("uabench: no response to size the echo")
	}
	return len(r.template), r.minResp, nil
}

// echoer is the state of an echo run on one connection, shaped like a
// reader with one request in flight.
type echoer struct {
	nc        net.Conn
	sc        *spinConn
	req       []byte
	wantBytes int
	buf       []byte
	hist      histogram
	done      atomic.Uint64
	errs      atomic.Uint64
}

func newEchoer(addr string, reqSize, respSize int, spin time.Duration) (*echoer, error) {
	if reqSize < 8 || respSize < 8 || reqSize > maxEcho || respSize > maxEcho {
		return nil, fmt.Errorf("uabench: echo of %d and %d bytes: want 8 to %d", reqSize, respSize, maxEcho)
	}
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	req := make([]byte, reqSize)
	binary.LittleEndian.PutUint32(req, uint32(reqSize))
	binary.LittleEndian.PutUint32(req[4:], uint32(respSize))
	return &echoer{nc: nc, sc: newSpinConn(nc, spin), req: req, wantBytes: respSize, buf: make([]byte, maxEcho)}, nil
}

// run sends a frame, waits for the whole answer and does it again until
// phase says stop.
func (e *echoer) run(phase *atomic.Int32) error {
	base := time.Now()
	for {
		p := phase.Load()
		if p == phaseStop {
			return nil
		}
		t0 := time.Since(base)
		if _, err := e.nc.Write(e.req); err != nil {
			return err
		}
		got := 0
		for got < e.wantBytes {
			n, err := e.sc.Read(e.buf[got:])
			if err != nil {
				return err
			}
			got += n
		}
		if got != e.wantBytes || int(binary.LittleEndian.Uint32(e.buf)) != e.wantBytes {
			e.errs.Add(1)
		}
		if p == phaseMeasure {
			e.hist.add(uint64(max(time.Since(base)-t0, 0)))
		}
		e.done.Add(1)
	}
}

// runEcho runs the echo scenario sc against the server process srv: it
// sizes the frames on the OPC UA server at addr, then times the echo like
// runScenario times Reads (warm-up, measured window, the server process's
// statistics at both ends of it).
func runEcho(addr, echoAddr string, ids []ua.NodeID, sc scenario, f loadFlags, srv statser) (result, error) {
	res := result{sc: sc}
	if echoAddr == "" {
		return res, errors.New("uabench: the server role offers no echo (ready line without echo=)")
	}
	c, err := uaclient.DialSession(addr, "uabench", 10*time.Second)
	if err != nil {
		return res, err
	}
	req := &ua.ReadRequest{TimestampsToReturn: f.timestamps}
	for _, id := range ids[:sc.nodes] {
		req.NodesToRead = append(req.NodesToRead, ua.ReadValueID{NodeID: id, AttributeID: uint32(ua.AttributeIDValue)})
	}
	r, err := newReader(c, req, 1, true)
	if err != nil {
		c.Conn().Close()
		return res, err
	}
	reqSize, respSize, err := echoSizes(r)
	if err != nil {
		c.Conn().Close()
		return res, err
	}
	if err := c.Close(5 * time.Second); err != nil {
		return res, err
	}
	res.echoReq, res.echoResp = reqSize, respSize

	e, err := newEchoer(echoAddr, reqSize, respSize, f.spin)
	if err != nil {
		return res, err
	}
	defer e.nc.Close()
	var phase atomic.Int32
	errc := make(chan error, 1)
	go func() { errc <- e.run(&phase) }()
	bound := time.AfterFunc(f.warmup+f.duration+30*time.Second, func() { e.nc.Close() })
	defer bound.Stop()
	stop := func() error {
		phase.Store(phaseStop)
		return <-errc
	}

	time.Sleep(f.warmup)
	s0, err := srv.stats()
	if err != nil {
		stop()
		return res, err
	}
	done0, errs0 := e.done.Load(), e.errs.Load()
	cpu0, t0 := kit.CPUTime(), time.Now()
	phase.Store(phaseMeasure)
	time.Sleep(f.duration)
	s1, err := srv.stats()
	if err != nil {
		stop()
		return res, err
	}
	done1, errs1 := e.done.Load(), e.errs.Load()
	cpu1, t1 := kit.CPUTime(), time.Now()
	if err := stop(); err != nil {
		return res, fmt.Errorf("uabench: %v: %w", sc, err)
	}
	res.window = t1.Sub(t0)
	res.requests = done1 - done0
	res.errors = errs1 - errs0
	if res.errors > 0 {
		res.lastErr = "echo frame of the wrong size"
	}
	res.p50, res.p99 = e.hist.quantile(0.50), e.hist.quantile(0.99)
	res.srvCPU = s1.cpu - s0.cpu
	res.srvBytes = s1.totalAlloc - s0.totalAlloc
	res.srvAlloc = s1.mallocs - s0.mallocs
	res.loadCPU = cpu1 - cpu0
	res.minConn, res.maxConn = res.requests, res.requests
	return res, nil
}
