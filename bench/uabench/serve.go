package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/uasc"
)

// The server role: opcua/server on a loopback port with benchVars
// variables under Objects/Gateway, served from a process image as the scan
// engine will serve them, and a line protocol on stdin/stdout for the load
// role:
//
//	→ (at start)  ready addr=127.0.0.1:PORT ns=1
//	← stats
//	→ stats cpu_ns=N total_alloc=N mallocs=N
//	← quit (or end of input): shut down and exit

// benchVars is the number of variables per type (Double, UInt32, Boolean).
const benchVars = 40

// benchNodeName returns the name of the i-th variable in the order the
// Read requests use: Double, UInt32 and Boolean in turn.
func benchNodeName(i int) string {
	return fmt.Sprintf("%c%03d", "DUB"[i%3], i/3)
}

// benchImage is the one process image of the bench variables. It is
// immutable; with -cycle a new one is published per cycle.
type benchImage struct {
	tick uint32
	at   time.Time
}

// Value implements addrspace.Snapshot without allocating.
func (m *benchImage) Value(h uint32, dv *ua.DataValue) {
	dv.SourceTimestamp = m.at
	v := m.tick + h
	switch h % 3 {
	case 0:
		dv.Value.SetFloat64(float64(v) * 0.5)
	case 1:
		dv.Value.SetUint32(v)
	default:
		dv.Value.SetBool(v%2 == 1)
	}
}

type benchSource struct{ cur atomic.Pointer[benchImage] }

func (s *benchSource) Snapshot() addrspace.Snapshot { return s.cur.Load() }

// newBenchServer creates the server for ln with the bench variables and
// returns it with the source of their values.
func newBenchServer(ln net.Listener, spin time.Duration, secure, poller bool, acceptRate float64) (*server.Server, *benchSource, error) {
	cfg := server.Config{
		EndpointURL: "opc.tcp://" + ln.Addr().String(),
		Channel:     &uasc.Config{ReadSpin: spin},
		Poller:      poller,
		AcceptRate:  acceptRate,
	}
	if secure {
		// The secure endpoints too, for the load's -policy: a certificate
		// made now, and every client certificate accepted (loopback only).
		der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: server.DefaultApplicationURI, CommonName: "uabench",
			IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
		if err != nil {
			return nil, nil, err
		}
		own, err := uasc.NewCredentials(der, key)
		if err != nil {
			return nil, nil, err
		}
		eccs := map[string]*uasc.Credentials{}
		for _, p := range secpol.AllECC {
			if eccs[p.CertificateType()] != nil {
				continue
			}
			der, key, err := pki.NewECCertificate(pki.Template{ApplicationURI: server.DefaultApplicationURI, CommonName: "uabench",
				IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}, p.Curve())
			if err != nil {
				return nil, nil, err
			}
			if eccs[p.CertificateType()], err = uasc.NewECCredentials(der, key); err != nil {
				return nil, nil, err
			}
		}
		cfg.Security = &server.Security{
			Credentials:      func() *uasc.Credentials { return own },
			ECCCredentials:   func(t string) *uasc.Credentials { return eccs[t] },
			CheckCertificate: func(*x509.Certificate, []*x509.Certificate) error { return nil },
			AllowInsecure:    true,
		}
	}
	srv, err := server.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	src := &benchSource{}
	src.cur.Store(&benchImage{at: time.Now()})
	types := [3]uint32{id.Double, id.UInt32, id.Boolean}
	for i := range 3 * benchVars {
		err := srv.AddVariable(server.GatewayVariable{
			Name: benchNodeName(i), DataType: types[i%3], Source: src, Handle: uint32(i),
			Description: "uabench variable",
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return srv, src, nil
}

type serveFlags struct {
	listen     string
	cpuprofile string
	cycle      time.Duration
	maxRun     time.Duration
	spin       time.Duration
	poller     bool
	secure     bool
	acceptRate float64
}

// serve runs the server role until "quit", the end of in, or maxRun.
func serve(f serveFlags, in io.Reader, out io.Writer) error {
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("uabench: -listen %s: the bench serves on loopback only", f.listen)
	}
	ln, err := server.Listen(f.listen)
	if err != nil {
		return err
	}
	srv, src, err := newBenchServer(ln, f.spin, f.secure, f.poller, f.acceptRate)
	if err != nil {
		ln.Close()
		return err
	}
	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			ln.Close()
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			ln.Close()
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			pf.Close()
		}()
	}
	eln, err := server.Listen(net.JoinHostPort(host, "0"))
	if err != nil {
		ln.Close()
		return err
	}
	defer eln.Close()
	go echoServe(eln, f.spin)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	ctx, cancel := context.WithTimeout(context.Background(), f.maxRun)
	defer cancel()
	if f.cycle > 0 {
		go publishImages(ctx, srv, src, f.cycle)
	}
	ns := srv.GatewayNodeID("").Namespace
	fmt.Fprintf(out, "ready addr=%s ns=%d echo=%s\n", ln.Addr(), ns, eln.Addr())
	runErr := answerCommands(ctx, in, out, serveErr, f.maxRun)
	if errors.Is(runErr, errServed) {
		return <-serveErr
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	srv.Shutdown(sctx)
	<-serveErr
	return runErr
}

// procStats are a process's CPU time (user and system, all threads) and
// its allocations so far.
type procStats struct {
	cpu        time.Duration
	totalAlloc uint64
	mallocs    uint64
}

func readProcStats() procStats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return procStats{cpu: kit.CPUTime(), totalAlloc: ms.TotalAlloc, mallocs: ms.Mallocs}
}

// publishImages publishes an image every cycle in which every variable
// changed; monitored items hear of it as edged's binding tells them of
// the engine's images.
func publishImages(ctx context.Context, srv *server.Server, src *benchSource, cycle time.Duration) {
	id := srv.AddressSpace().AddSource(src) // the id AddVariable registered
	all := make([]uint32, 3*benchVars)
	for i := range all {
		all[i] = uint32(i)
	}
	t := time.NewTicker(cycle)
	defer t.Stop()
	for tick := uint32(1); ; tick++ {
		select {
		case <-ctx.Done():
			return
		case at := <-t.C:
			src.cur.Store(&benchImage{tick: tick, at: at})
			srv.SourceChanged(id, all)
		}
	}
}

// errServed is answerCommands's error when the server stopped serving.
var errServed = errors.New("uabench: the server stopped serving")

// answerCommands answers the load's commands on in (stats, quit) until
// quit, the end of in, -max-run or the server's end (errServed; its error
// stays in serveErr).
func answerCommands(ctx context.Context, in io.Reader, out io.Writer, serveErr chan error, maxRun time.Duration) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("uabench: server role ran for -max-run %v; stopping", maxRun)
		case err := <-serveErr:
			serveErr <- err
			return errServed
		case l, ok := <-lines:
			if !ok || l == "quit" {
				return nil
			}
			if l == "stats" {
				st := readProcStats()
				fmt.Fprintf(out, "stats cpu_ns=%d total_alloc=%d mallocs=%d\n", st.cpu, st.totalAlloc, st.mallocs)
			} else {
				fmt.Fprintf(out, "error unknown command %q\n", l)
			}
		}
	}
}
