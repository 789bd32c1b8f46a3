package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
)

// handshakeRole runs `uabench handshake`: one client opening secure
// channels one after the other (TCP connect, Hello, OpenSecureChannel,
// CloseSecureChannel), for each policy, against the server the -server
// command starts; the server's CPU per handshake from its own account
// (the stats line), the client's time per handshake.
func handshakeRole(args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("uabench handshake", flag.ContinueOnError)
	fs.SetOutput(errOut)
	self, _ := os.Executable()
	srvCmd := fs.String("server", self+" server -secure -accept-rate -1", "`command` line that starts edged's server role (its accept pacing off: handshakes back to back)")
	peerCmd := fs.String("peer", "", "`command` line that starts a peer server measured alike, alternately (bench-peer-handshake: open62541)")
	pols := fs.String("policies", "Basic256Sha256,ECC_nistP256,ECC_nistP384,ECC_curve25519,ECC_nistP256_AesGcm,ECC_nistP256_ChaChaPoly", "comma-separated security `policies`")
	mode := fs.String("mode", "SignAndEncrypt", "security `mode`: Sign or SignAndEncrypt")
	n := fs.Int("n", 300, "measured handshakes per policy and run")
	warm := fs.Int("warmup", 30, "handshakes per run before the measured ones")
	rounds := fs.Int("rounds", 1, "runs of each server per policy, alternately")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m := ua.MessageSecurityModeSignAndEncrypt
	if *mode == "Sign" {
		m = ua.MessageSecurityModeSign
	} else if *mode != "SignAndEncrypt" {
		return fmt.Errorf("uabench: -mode %q: want Sign or SignAndEncrypt", *mode)
	}
	if *n <= 0 || *warm < 0 || *rounds <= 0 {
		return fmt.Errorf("uabench: -n %d -warmup %d -rounds %d: want n > 0, warmup ≥ 0, rounds > 0", *n, *warm, *rounds)
	}
	servers := []struct{ name, cmd string }{{"edged", *srvCmd}, {"open62541", *peerCmd}}
	if *peerCmd == "" {
		servers = servers[:1]
	}
	for _, name := range strings.Split(*pols, ",") {
		cpus := make([][]float64, len(servers))
		for range *rounds {
			for i, sv := range servers {
				r, err := measureHandshakes(strings.Fields(sv.cmd), name, m, *n, *warm)
				if err != nil {
					return fmt.Errorf("uabench: %s, %s: %w", sv.name, name, err)
				}
				cpus[i] = append(cpus[i], r.cpu)
				fmt.Fprintf(out, "  handshake %-10s %-24s %-14s n=%d  server CPU %.0f µs/handshake  client p50 %.2f ms  p99 %.2f ms\n",
					sv.name, name, *mode, *n, r.cpu, r.p50, r.p99)
			}
		}
		if len(servers) == 2 {
			e, o := medianOf(cpus[0]), medianOf(cpus[1])
			verdict := "met"
			if e > o {
				verdict = "NOT MET"
			}
			fmt.Fprintf(out, "  handshake ratio %-24s %-14s edged/open62541 server CPU %.2f× (medians %.0f / %.0f µs; target ≤ 1.0×: %s)\n",
				name, *mode, e/o, e, o, verdict)
		}
	}
	return nil
}

type handshakeResult struct{ cpu, p50, p99 float64 } // µs; ms; ms

// measureHandshakes starts the server of argv and runs warm and then n
// measured handshakes of the policy against it.
func measureHandshakes(argv []string, name string, m ua.MessageSecurityMode, n, warm int) (handshakeResult, error) {
	if len(argv) == 0 {
		return handshakeResult{}, fmt.Errorf("the server command is empty")
	}
	srv, err := startServer(argv)
	if err != nil {
		return handshakeResult{}, err
	}
	defer srv.stop()
	if err := checkLoopback(srv.addr); err != nil {
		return handshakeResult{}, err
	}
	sec, err := handshakeSecurity(srv.addr, name, m)
	if err != nil {
		return handshakeResult{}, err
	}
	for range warm {
		if err := handshake(srv.addr, sec); err != nil {
			return handshakeResult{}, err
		}
	}
	s0, err := srv.stats()
	if err != nil {
		return handshakeResult{}, err
	}
	times := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := handshake(srv.addr, sec); err != nil {
			return handshakeResult{}, err
		}
		times = append(times, time.Since(t0))
	}
	s1, err := srv.stats()
	if err != nil {
		return handshakeResult{}, err
	}
	slices.Sort(times)
	return handshakeResult{
		cpu: float64((s1.cpu - s0.cpu).Microseconds()) / float64(n),
		p50: float64(times[len(times)/2].Microseconds()) / 1000,
		p99: float64(times[len(times)*99/100].Microseconds()) / 1000,
	}, nil
}

// handshakeSecurity makes the client's certificate of the policy and
// fetches the server's.
func handshakeSecurity(addr, name string, mode ua.MessageSecurityMode) (*uaclient.Security, error) {
	const uri = "urn:edged:uabench:handshake"
	tpl := pki.Template{ApplicationURI: uri, CommonName: "uabench handshake", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}
	if p := secpol.ECCByURI("http://opcfoundation.org/UA/SecurityPolicy#" + name); p != nil {
		der, key, err := pki.NewECCertificate(tpl, p.Curve())
		if err != nil {
			return nil, err
		}
		sc, err := uaclient.ServerCertificate(addr, p.URI(), mode, 10*time.Second)
		if err != nil {
			return nil, err
		}
		return &uaclient.Security{ECC: p, ECKey: key, Mode: mode, Certificate: der, ApplicationURI: uri, ServerCertificate: sc}, nil
	}
	p := policyByName(name)
	if p == nil {
		return nil, fmt.Errorf("uabench: -policies: %q is not a policy", name)
	}
	return clientSecurity(addr, p, mode)
}

// handshake opens a secure channel on a new connection and closes it.
func handshake(addr string, sec *uaclient.Security) error {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	c := uaclient.New(nc, "opc.tcp://"+addr)
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := c.SetSecurity(sec); err != nil {
		nc.Close()
		return err
	}
	if err := c.Hello(); err != nil {
		nc.Close()
		return err
	}
	if err := c.OpenSecureChannel(); err != nil {
		nc.Close()
		return err
	}
	return c.CloseChannel()
}
