// Command uabench is the end-to-end load benchmark of edged's OPC UA
// server (opcua/server), run by `make bench-e2e` (and `make bench`).
//
// It has two roles:
//
//	uabench server [-listen 127.0.0.1:0] [-cpuprofile FILE] [-cycle 0] [-max-run 10m] [-spin 0] [-secure]
//	uabench load [-server 'CMD ...'] [-scenarios 10x100x1,...,echo] [-warmup 1s] [-duration 5s] [-spin 0] [-policy None -mode SignAndEncrypt]
//
// The server role serves opcua/server on a loopback port with 120
// variables (Double, UInt32, Boolean) under Objects/Gateway, ns=1;s=Gateway.D000
// etc., and a TCP echo on a second loopback port (the "echo" scenario: the
// floor under the 1×1 round trip, see echo.go), and answers "stats" lines on stdin with its CPU time (getrusage,
// user + system) and runtime.MemStats TotalAlloc and Mallocs; it exits at
// "quit", at the end of its input, or after -max-run.
//
// The load role starts the server role as a child process (-server, by
// default this program's "server"; `make bench-e2e` wraps it in taskset to
// pin it to core 0 while the load runs on core 1) and runs each scenario
// CONNSxINFLIGHTxNODES: CONNS connections, each with an anonymous session
// and INFLIGHT Read requests of NODES nodes outstanding. It is a minimal
// client written with our codec (internal/testutil/uaclient): the Read request is encoded once, its
// sequence number and request id patched per send; the requests that
// replace the answered ones leave in one write per read, and responses are
// parsed just enough (chunk header, request id, type, ServiceResult,
// result count, first status) to match and count them. Per scenario it
// prints requests/s, latency p50/p99 (send to response; with more than one
// request in flight this includes queueing), and per request the server's
// CPU time, bytes and allocations and the load's own CPU time, measured
// over the window after the warm-up only.
//
// -spin on either side makes its reads poll the socket before they block
// (the server's sets uasc Config.ReadSpin and applies to its echo; the
// load's applies to its 1×1 scenarios): on a VM whose idle vCPU halts,
// most of a 1×1 round trip is waking the halted cores, which polling
// avoids at the cost of a busy core.
package main

import (
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/edged/edged/internal/atomicfile"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

const usage = `usage: uabench server [flags]   (uabench server -h for the flags)
       uabench handshake [flags] (uabench handshake -h for the flags)
       uabench load [flags]     (uabench load -h for the flags)
       uabench peer [flags]     (uabench peer -h for the flags)
       uabench genconfig [flags] > FILE; uabench memory [flags]
       uabench peercert APPLICATION_URI DIR
       uabench floorgen FILE    (the floor server's canned responses)`

func run(args []string, in io.Reader, out, errOut io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage)
	}
	switch args[0] {
	case "peercert":
		// The certificate and key (DER) of a peer server (make
		// bench-peer): uabench peercert URI DIR.
		if len(args) != 3 {
			return fmt.Errorf("usage: uabench peercert APPLICATION_URI DIR")
		}
		return peerCert(args[1], args[2])
	case "floorgen":
		return floorGenRole(args[1:])
	case "server":
		return serverRole(args[1:], in, out, errOut)
	case "peer":
		return peerRole(args[1:], out, errOut)
	case "genconfig":
		return genConfigRole(args[1:], out, errOut)
	case "memory":
		return memoryRole(args[1:], out, errOut)
	case "load":
		return loadRole(args[1:], out, errOut)
	case "handshake":
		return handshakeRole(args[1:], out, errOut)
	}
	return fmt.Errorf("uabench: unknown role %q\n%s", args[0], usage)
}

// serverRole runs `uabench server`.
func serverRole(args []string, in io.Reader, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("uabench server", flag.ContinueOnError)
	fs.SetOutput(errOut)
	var f serveFlags
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "loopback `address` to serve on")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the server's whole run to `file`")
	fs.DurationVar(&f.cycle, "cycle", 0, "publish a new process image every `interval` (0: one image, no writer)")
	fs.DurationVar(&f.maxRun, "max-run", 10*time.Minute, "exit after this `long` whatever happens")
	fs.DurationVar(&f.spin, "spin", 0, "before blocking in a read, poll the connection for up to `d` (uasc Config.ReadSpin and the echo; 0: never)")
	fs.BoolVar(&f.poller, "poller", false, "serve idle connections from one poller goroutine (server.Config.Poller)")
	fs.Float64Var(&f.acceptRate, "accept-rate", 0, "connections accepted per second (server.Config.AcceptRate; 0: edged's default, negative: not paced)")
	fs.BoolVar(&f.secure, "secure", false, "offer the secure endpoints too, with a certificate made at start (the load adds it with -policy)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return serve(f, in, out)
}

// genConfigRole runs `uabench genconfig`.
func genConfigRole(args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("uabench genconfig", flag.ContinueOnError)
	fs.SetOutput(errOut)
	devices := fs.Int("devices", 10, "simulated Modbus TCP `devices` besides the simulator's own")
	per := fs.Int("tags", 1000, "UInt16 `tags` per device")
	class := fs.String("class", "fast", "their scan `class`")
	churn := fs.Bool("churn", false, "the tags on the simulator's churn bank (input registers ir:0.., a tenth changing every 100 ms: make bench-peer's SCADA scenarios) instead of holding registers from hr:200")
	ticks := fs.Int("tick-alarms", 0, "add `n` tags sim.Tick0.. on the counter's lowest bit, each with an off-normal alarm: n×200 events/s (make bench-peer-events); -devices may then be 0")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return genConfig(out, *devices, *per, *class, *ticks, *churn)
}

// memoryRole runs `uabench memory`.
func memoryRole(args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("uabench memory", flag.ContinueOnError)
	fs.SetOutput(errOut)
	var f memFlags
	fs.Func("edged", "`command` line that starts edged with the configuration of uabench genconfig", func(v string) error {
		f.argv = strings.Fields(v)
		return nil
	})
	fs.StringVar(&f.addr, "addr", "", "loopback `address` edged listens on")
	ns := fs.Uint("ns", 2, "`namespace` of the tags")
	fs.IntVar(&f.devices, "devices", 10, "devices of the configuration")
	fs.IntVar(&f.perDevice, "tags", 1000, "tags per device of the configuration")
	fs.IntVar(&f.sessions, "sessions", 50, "sessions that read")
	fs.IntVar(&f.nodes, "nodes", 100, "tags each session reads, its own")
	fs.DurationVar(&f.settle, "settle", 10*time.Second, "idle time before the idle figure")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "time the sessions read before the loaded figure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(f.argv) == 0 || f.addr == "" {
		return fmt.Errorf("uabench memory: -edged and -addr are needed")
	}
	if err := checkLoopback(f.addr); err != nil {
		return err
	}
	f.ns = uint16(*ns)
	return memory(f, out)
}

// loadRole runs `uabench load`.
func loadRole(args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("uabench load", flag.ContinueOnError)
	fs.SetOutput(errOut)
	var f loadFlags
	self, _ := os.Executable()
	srvCmd := fs.String("server", self+" server", "`command` line that starts the server role")
	scs := fs.String("scenarios", "10x100x1,10x100x100,1x1x1,1x1x100,echo", "`list` of CONNSxINFLIGHTxNODES, or echo (echoNODES) for the TCP echo baseline")
	fs.DurationVar(&f.warmup, "warmup", time.Second, "warm-up per scenario, not measured")
	fs.DurationVar(&f.duration, "duration", 5*time.Second, "measured window per scenario")
	fs.DurationVar(&f.spin, "spin", 0, "in the 1×1 scenarios, poll the socket with non-blocking reads for up to `d` before each blocking read (0: never; burns this process's core)")
	ts := fs.String("timestamps", "both", "TimestampsToReturn: source, server, both or neither")
	policy := fs.String("policy", "None", "security `policy` of every connection: None, Basic256Sha256, Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss or one of the ECC policies (ECC_nistP256, ...)")
	mode := fs.String("mode", "SignAndEncrypt", "security `mode` with a -policy other than None: Sign or SignAndEncrypt")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var ok bool
	if f.timestamps, ok = map[string]ua.TimestampsToReturn{
		"source": ua.TimestampsToReturnSource, "server": ua.TimestampsToReturnServer,
		"both": ua.TimestampsToReturnBoth, "neither": ua.TimestampsToReturnNeither,
	}[*ts]; !ok {
		return fmt.Errorf("uabench: -timestamps %q: want source, server, both or neither", *ts)
	}
	if f.warmup < 0 || f.duration <= 0 || f.duration > time.Hour {
		return fmt.Errorf("uabench: -warmup %v -duration %v: want a warm-up ≥ 0 and a duration in (0, 1h]", f.warmup, f.duration)
	}
	list, err := parseScenarios(*scs)
	if err != nil {
		return fmt.Errorf("uabench: -scenarios: %w", err)
	}
	if *policy != "None" {
		f.policy = policyByName(*policy)
		f.ecc = secpol.ECCByURI("http://opcfoundation.org/UA/SecurityPolicy#" + *policy)
		if f.policy == nil && f.ecc == nil {
			return fmt.Errorf("uabench: -policy %q: want None, Basic256Sha256, Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss or one of the ECC policies (ECC_nistP256, ...)", *policy)
		}
		switch *mode {
		case "Sign":
			f.mode = ua.MessageSecurityModeSign
		case "SignAndEncrypt":
			f.mode = ua.MessageSecurityModeSignAndEncrypt
		default:
			return fmt.Errorf("uabench: -mode %q: want Sign or SignAndEncrypt", *mode)
		}
	}
	argv := strings.Fields(*srvCmd)
	if len(argv) == 0 {
		return fmt.Errorf("uabench: -server is empty")
	}
	if (f.policy != nil || f.ecc != nil) && slices.Contains(argv, "server") {
		// uabench's own server role offers the secure endpoints
		// with -secure; a peer server (bench-peer) has its own way.
		argv = append(argv, "-secure")
	}
	return load(argv, list, f, out)
}

// peerRole parses the flags of the peer role and runs it.
func peerRole(args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("uabench peer", flag.ContinueOnError)
	fs.SetOutput(errOut)
	f := peerFlags{load: loadFlags{timestamps: ua.TimestampsToReturnBoth}}
	var reads, counters [2]string
	for i, who := range []string{"edged", "peer"} {
		s := &f.servers[i]
		fs.Func(who, "`command` line that starts "+who+"'s server (e.g. taskset -c 0 bin/edged ...)", func(v string) error {
			s.argv = strings.Fields(v)
			return nil
		})
		fs.StringVar(&s.addr, who+"-addr", "", "loopback `address` the "+who+" server listens on")
		fs.StringVar(&reads[i], who+"-read", "", "comma-separated `NodeIds` of variables to Read (cycled to 100)")
		fs.StringVar(&counters[i], who+"-counter", "", "`NodeId` of a variable that changes every 5 ms, for the subscription")
		fs.StringVar(&s.bulk, who+"-bulk", "", "the SCADA scenarios' variables (s1..s4): a `format` of their NodeIds, given variable j's device j/1000, its index there j%1000 and j (e.g. ns=2;s=bulk%[1]d.T%04[2]d)")
	}
	fs.Func("floor", "`command` line that starts the floor server (bench/uabench/peer/floor_server.c), measured in the open loop and 1×1 too", func(v string) error {
		f.floor.argv = strings.Fields(v)
		return nil
	})
	fs.StringVar(&f.floor.addr, "floor-addr", "", "loopback `address` the floor server listens on")
	fs.StringVar(&f.profile, "profile", "", "record perf profiles (perf record -g) of each server over each SCADA window into `dir`")
	fs.BoolVar(&f.aa, "aa", false, "measure edged a second time in each round in the open loop and 1×1: the A/A margin of the 1×1 targets")
	fs.StringVar(&f.servers[0].trust, "edged-trust", "", "edged's data `directory`: the secure SCADA scenarios' client certificate goes into its trust list")
	overruns := fs.String("edged-overruns", "", "`NodeId` of edged's scan overruns, read before and after each SCADA scenario")
	f.servers[0].name = "edged"
	fs.StringVar(&f.servers[1].name, "peer-name", "open62541", "the peer's `name` in the table")
	fs.IntVar(&f.rounds, "rounds", 3, "rounds, each measuring edged then the peer")
	fs.DurationVar(&f.settle, "settle", 3*time.Second, "wait after a server accepts connections, before its idle window")
	fs.DurationVar(&f.idle, "idle", 10*time.Second, "idle window without clients")
	fs.DurationVar(&f.load.warmup, "warmup", time.Second, "warm-up of each load")
	fs.DurationVar(&f.load.duration, "duration", 5*time.Second, "measured window of each Read load")
	fs.DurationVar(&f.subWindow, "sub", 10*time.Second, "measured window of the subscription")
	fs.IntVar(&f.openRate, "open-rate", 5000, "open loop: Reads/s (a multiple of 1,000)")
	fs.IntVar(&f.openConns, "open-conns", 10, "open loop: connections")
	fs.IntVar(&f.pipeConns, "conns", 10, "pipelined loads: connections")
	fs.IntVar(&f.pipeFlight, "inflight", 100, "pipelined loads: Reads in flight per connection")
	only := fs.String("only", "", "comma-separated `phases` to run of idle, pipe, one, open, sub, hist, events, s1, s2, s3, s4 (default all but events, which needs servers raising events: make bench-peer-events, and the SCADA scenarios s1..s4, which need -edged-bulk and -peer-bulk)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *only != "" {
		f.only = map[string]bool{}
		for _, ph := range strings.Split(*only, ",") {
			if !slices.Contains([]string{"idle", "pipe", "one", "open", "sub", "hist", "events", "s1", "s2", "s3", "s4"}, ph) {
				return fmt.Errorf("uabench peer: -only %q: want phases of idle, pipe, one, open, sub, hist, events, s1, s2, s3, s4", *only)
			}
			f.only[ph] = true
		}
	}
	if *overruns != "" {
		id, err := ua.ParseNodeID(*overruns)
		if err != nil {
			return fmt.Errorf("uabench peer: -edged-overruns: %w", err)
		}
		f.servers[0].overruns = id
	}
	for _, ph := range scadaPhases {
		if f.only[ph] && (f.servers[0].bulk == "" || f.servers[1].bulk == "") {
			return fmt.Errorf("uabench peer: -only %s: the SCADA scenarios need -edged-bulk and -peer-bulk", ph)
		}
	}
	for i := range f.servers {
		s := &f.servers[i]
		if len(s.argv) == 0 || s.addr == "" || reads[i] == "" || counters[i] == "" {
			return fmt.Errorf("uabench peer: -%s, -%[1]s-addr, -%[1]s-read and -%[1]s-counter are needed", []string{"edged", "peer"}[i])
		}
		if err := checkLoopback(s.addr); err != nil {
			return err
		}
		var err error
		if s.read, err = parseIDs(reads[i]); err != nil {
			return fmt.Errorf("uabench peer: -read: %w", err)
		}
		if s.counter, err = ua.ParseNodeID(counters[i]); err != nil {
			return fmt.Errorf("uabench peer: -counter: %w", err)
		}
	}
	f.floor.name = "floor"
	f.floor.read = f.servers[0].read // it answers any Read alike
	if len(f.floor.argv) > 0 {
		if err := checkLoopback(f.floor.addr); err != nil {
			return err
		}
	}
	if f.rounds < 1 || f.idle <= 0 || f.load.duration <= 0 || f.subWindow <= 0 {
		return fmt.Errorf("uabench peer: -rounds, -idle, -duration and -sub must be positive")
	}
	return peer(f, out)
}

// load starts the server and runs the scenarios against it.
func load(argv []string, list []scenario, f loadFlags, out io.Writer) (err error) {
	p, err := startServer(argv)
	if err != nil {
		return err
	}
	defer func() {
		if serr := p.stop(); err == nil && serr != nil {
			err = fmt.Errorf("uabench: server: %w", serr)
		}
	}()
	if err := checkLoopback(p.addr); err != nil {
		return err
	}
	if f.policy != nil {
		if f.security, err = clientSecurity(p.addr, f.policy, f.mode); err != nil {
			return err
		}
	} else if f.ecc != nil {
		if f.security, err = handshakeSecurity(p.addr, f.ecc.Name(), f.mode); err != nil {
			return err
		}
	}
	ids := benchIDs(p.ns, maxNodes(list))
	fmt.Fprintf(out, "uabench: server %q at %s, %s\n", strings.Join(argv, " "), p.addr, securityName(f))
	var rs []result
	for _, sc := range list {
		fmt.Fprintf(out, "uabench: %v ...\n", sc)
		run := runScenario
		if sc.echo {
			run = func(addr string, ids []ua.NodeID, sc scenario, f loadFlags, srv statser) (result, error) {
				return runEcho(addr, p.echo, ids, sc, f, srv)
			}
		}
		r, err := run(p.addr, ids, sc, f, p)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	fmt.Fprintln(out)
	report(out, rs, f)
	for _, r := range rs {
		if r.errors > 0 {
			return fmt.Errorf("uabench: %v: %d bad responses", r.sc, r.errors)
		}
	}
	return nil
}

func maxNodes(list []scenario) int {
	n := 1
	for _, sc := range list {
		n = max(n, sc.nodes)
	}
	return n
}

// benchIDs returns the NodeIds of n bench variables in namespace ns, the
// ones the server role serves (see benchNodeName), cycling through them if
// n is larger than their number.
func benchIDs(ns uint16, n int) []ua.NodeID {
	ids := make([]ua.NodeID, n)
	for i := range ids {
		ids[i] = ua.NewStringNodeID(ns, server.GatewayFolderName+"."+benchNodeName(i%(3*benchVars)))
	}
	return ids
}

// peerCert writes DIR/cert.der and DIR/key.der (PKCS#8): a self-signed
// application certificate for the peer server of make bench-peer.
func peerCert(uri, dir string) error {
	tpl := pki.Template{ApplicationURI: uri, CommonName: "bench peer", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, key, err := pki.NewCertificate(tpl)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeCertKey(dir, "", der, key); err != nil {
		return err
	}
	// The ECC certificates too (PEER_NISTP256_CERT, ...), one per
	// certificate type: nistP256.der and nistP256-key.der, the same for
	// nistP384 and curve25519.
	done := map[string]bool{}
	for _, p := range secpol.AllECC {
		if done[p.CertificateType()] {
			continue
		}
		done[p.CertificateType()] = true
		der, key, err := pki.NewECCertificate(tpl, p.Curve())
		if err != nil {
			return err
		}
		if err := writeCertKey(dir, p.CertificateType(), der, key); err != nil {
			return err
		}
	}
	return nil
}

// writeCertKey writes DIR/NAME.der and DIR/NAME-key.der (cert.der and
// key.der for name "").
func writeCertKey(dir, name string, der []byte, key any) error {
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	cf, kf := name+".der", name+"-key.der"
	if name == "" {
		cf, kf = "cert.der", "key.der"
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, cf), der, 0o644); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, kf), kb, 0o600)
}
