//go:build image

// Package imagetest boots the QEMU test image of edged (scripts/image.sh:
// Debian's ARM kernel and BusyBox, the gateway's overlay and init script,
// the ARM binary) on an emulated ARM machine and checks it from the host,
// as a client on the plant network would: make test-image.
package imagetest

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
)

// root is the repository, where bin/ holds the images and the host edged.
var root = filepath.Join("..", "..")

// machine is how QEMU runs one architecture's image.
type machine struct {
	arch, qemu string
	args       []string
	watchdog   bool // the kernel has the i6300ESB driver
}

var machines = map[string]machine{
	"arm64": {"arm64", "qemu-system-aarch64", []string{"-M", "virt", "-cpu", "cortex-a57"}, true},
	"armv7": {"armv7", "qemu-system-arm", []string{"-M", "virt,highmem=off", "-cpu", "cortex-a15"}, false}, // armmp has no LPAE: PCI below 4 GiB
}

// vm is one boot of the image.
type vm struct {
	cmd   *exec.Cmd
	port  int
	start time.Time
	mu    sync.Mutex
	out   bytes.Buffer
	lines []line
}

// line is a console line and when it came.
type line struct {
	at   time.Time
	text string
}

// boot starts QEMU with the image of m, the data disk and cmdline extra.
func boot(t *testing.T, m machine, disk, extra string) *vm {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := filepath.Join(root, "bin", "image-"+m.arch)
	args := append(append([]string(nil), m.args...),
		"-smp", "2", "-m", "512", "-nographic", "-no-user-config", "-nodefaults", "-serial", "stdio",
		"-kernel", filepath.Join(dir, "vmlinuz"), "-initrd", filepath.Join(dir, "initrd.gz"),
		"-append", "console=ttyAMA0 panic=1 "+extra,
		"-netdev", fmt.Sprintf("user,id=net0,hostfwd=tcp:127.0.0.1:%d-:4840", port),
		"-device", "virtio-net-pci,netdev=net0,romfile=",
		"-drive", "file="+disk+",if=none,format=raw,id=d0", "-device", "virtio-blk-pci,drive=d0")
	if m.watchdog {
		args = append(args, "-device", "i6300esb", "-watchdog-action", "reset")
	}
	v := &vm{port: port}
	v.cmd = exec.Command(m.qemu, args...)
	pr, err := v.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	v.cmd.Stderr = v.cmd.Stdout
	v.start = time.Now()
	if err := v.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", m.qemu, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			v.mu.Lock()
			v.out.WriteString(sc.Text() + "\n")
			v.lines = append(v.lines, line{time.Now(), sc.Text()})
			v.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		v.kill()
		if t.Failed() {
			t.Logf("console:\n%s", v.console())
		}
	})
	return v
}

func (v *vm) console() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.out.String()
}

// kill cuts the power.
func (v *vm) kill() {
	if v.cmd.Process != nil {
		v.cmd.Process.Kill()
		v.cmd.Wait()
	}
}

// count returns how often the console printed re.
func (v *vm) count(re *regexp.Regexp) int { return len(re.FindAllStringIndex(v.console(), -1)) }

// waitConsole waits for re on the console.
func (v *vm) waitConsole(t *testing.T, re *regexp.Regexp, n int, within time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	for v.count(re) < n {
		if time.Since(t0) > within {
			t.Fatalf("no %q (%d times) on the console within %v", re, n, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(t0)
}

// lineAt returns when the first console line matching re came.
func (v *vm) lineAt(re *regexp.Regexp) (time.Time, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, l := range v.lines {
		if re.MatchString(l.text) {
			return l.at, true
		}
	}
	return time.Time{}, false
}

// lastLineAt returns when the last console line matching re came.
func (v *vm) lastLineAt(re *regexp.Regexp) (time.Time, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := len(v.lines) - 1; i >= 0; i-- {
		if re.MatchString(v.lines[i].text) {
			return v.lines[i].at, true
		}
	}
	return time.Time{}, false
}

// url is the forwarded endpoint.
func (v *vm) url() string { return fmt.Sprintf("opc.tcp://127.0.0.1:%d", v.port) }

// start is how one boot's edged came up, by the console's lines (the
// host's time of each): exec is the init script's "starting" line,
// serving edged's "serving OPC UA clients", answered the host's first
// GetEndpoints reply, asked once that line had come.
type start struct {
	boot, exec, serving, answered time.Time
	eps                           []*gua.EndpointDescription
}

func (s start) String() string {
	return fmt.Sprintf("serving %v after exec (%v after QEMU started); the first GetEndpoints answered %v after that",
		s.serving.Sub(s.exec).Round(time.Millisecond), s.serving.Sub(s.boot).Round(10*time.Millisecond), s.answered.Sub(s.serving).Round(time.Millisecond))
}

// serving waits for edged's serving line and then for its answer to
// GetEndpoints through the forward. (A connection through QEMU's user
// network before the guest listens hangs until the client gives up, so
// the console, not polling, says when edged began to serve.)
func (v *vm) serving(t *testing.T, within time.Duration) start {
	t.Helper()
	v.waitConsole(t, servingLine, 1, within)
	s := start{boot: v.start}
	var ok bool
	if s.exec, ok = v.lastLineAt(execLine); !ok {
		t.Fatal("the init script did not start edged")
	}
	s.serving, _ = v.lastLineAt(servingLine)
	for t0 := time.Now(); time.Since(t0) < within; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		eps, err := opcua.GetEndpoints(ctx, v.url())
		cancel()
		if err == nil && len(eps) > 0 {
			s.answered, s.eps = time.Now(), eps
			return s
		}
	}
	t.Fatalf("edged says it serves, but GetEndpoints is not answered within %v", within)
	return s
}

var (
	bootBanner   = regexp.MustCompile(`Booting Linux`)
	edgedServing = regexp.MustCompile(`edged \S+: OPC UA endpoint URL (\S+)`)
	execLine     = regexp.MustCompile(`S90edged: starting: edged`)
	servingLine  = regexp.MustCompile(`(?m)^edged: serving OPC UA clients`)
)

// provision makes the data disk: a user "op" (Operator) and the test
// client's certificate trusted, in an ext4 image made from a folder.
func provision(t *testing.T, cert []byte, more ...[]byte) string {
	t.Helper()
	data := t.TempDir()
	host := filepath.Join(root, "bin", "edged")
	cmd := exec.Command(host, "user", "--data-dir", data, "add", "op", "--role", "Operator")
	cmd.Stdin = strings.NewReader("op-password\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("edged user add: %v\n%s", err, out)
	}
	os.MkdirAll(filepath.Join(data, pki.TrustedCerts), 0o700)
	os.WriteFile(filepath.Join(data, pki.TrustedCerts, "client.der"), cert, 0o644)
	for i, c := range more {
		os.WriteFile(filepath.Join(data, pki.TrustedCerts, fmt.Sprintf("client-%d.der", i)), c, 0o644)
	}
	disk := filepath.Join(t.TempDir(), "data.img")
	if out, err := exec.Command("mke2fs", "-q", "-t", "ext4", "-L", "edged-data", "-d", data, disk, "64M").CombinedOutput(); err != nil {
		t.Fatalf("mke2fs: %v\n%s", err, out)
	}
	return disk
}

// session connects as op over Basic256Sha256 SignAndEncrypt.
func session(t *testing.T, ctx context.Context, v *vm, eps []*gua.EndpointDescription, cert []byte, key *rsa.PrivateKey) *opcua.Client {
	t.Helper()
	return sessionAt(t, ctx, v.url(), eps, cert, key)
}

// sessionAt is session through url.
func sessionAt(t *testing.T, ctx context.Context, url string, eps []*gua.EndpointDescription, cert []byte, key *rsa.PrivateKey) *opcua.Client {
	t.Helper()
	ep, err := opcua.SelectEndpoint(eps, secpol.URIBasic256Sha256, gua.MessageSecurityModeSignAndEncrypt)
	if err != nil {
		t.Fatal(err)
	}
	c, err := opcua.NewClient(url, opcua.SecurityFromEndpoint(ep, gua.UserTokenTypeUserName), opcua.AuthUsername("op", "op-password"),
		opcua.Certificate(cert), opcua.PrivateKey(key), opcua.ApplicationURI("urn:edged:test:image"), opcua.AutoReconnect(false),
		opcua.RequestTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect: %v", err)
	}
	return c
}

func readValue(t *testing.T, ctx context.Context, c *opcua.Client, id string) any {
	t.Helper()
	v, err := c.Node(gua.MustParseNodeID(id)).Value(ctx)
	if err != nil {
		t.Fatalf("Read %s: %v", id, err)
	}
	return v.Value()
}

// TestImage boots the image of each architecture of IMAGE_ARCHS (default
// arm64 armv7): the gateway serves the simulator, with security, to a
// client through the forwarded port; sim.Counter advances at 200/s; a
// write reads back; the guest dials the host for reverse connect and a
// session runs over that socket; a power cut and a second boot keep the certificate,
// sim.Counter's history up to the flush interval before the cut,
// the users and the configuration version. On arm64 the second boot runs
// healthy for two minutes with the watchdog armed and is not reset; then
// its scan stalls, and the watchdog resets the machine within its
// timeout. How fast edged serves after exec is logged, not asserted.
func TestImage(t *testing.T) {
	archs := strings.Fields(os.Getenv("IMAGE_ARCHS"))
	if len(archs) == 0 {
		archs = []string{"arm64", "armv7"}
	}
	for _, a := range archs {
		m, ok := machines[a]
		if !ok {
			t.Fatalf("IMAGE_ARCHS: unknown %q", a)
		}
		t.Run(a, func(t *testing.T) { testImage(t, m) })
	}
}

// healthy is how long the watchdog boot runs with a healthy scan before
// the scan stalls.
const healthy = 2 * time.Minute

func testImage(t *testing.T, m machine) {
	cert, key, err := pki.NewCertificate(pki.Template{ApplicationURI: "urn:edged:test:image", CommonName: "image test", Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	eccCert, eccKey, err := pki.NewECCertificate(pki.Template{ApplicationURI: "urn:edged:test:image-ecc", CommonName: "image test ECC"}, secpol.EccNistP256AesGcm.Curve())
	if err != nil {
		t.Fatal(err)
	}
	disk := provision(t, cert, eccCert)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// First boot: the certificate is made; the watchdog armed the whole
	// time; edged also dials the host for reverse connect (10.0.2.2 of
	// QEMU's user network is the host's loopback).
	rln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rln.Close()
	v := boot(t, m, disk, fmt.Sprintf("edged.args=--reverse-connect,opc.tcp://10.0.2.2:%d", rln.Addr().(*net.TCPAddr).Port))
	s := v.serving(t, 3*time.Minute)
	url := edgedServing.FindStringSubmatch(v.console())
	t.Logf("%s: first boot, the certificate made: %v; edged advertises %v", m.arch, s, url)
	if url != nil && strings.Contains(url[1], "(none)") {
		t.Fatalf("edged advertises %s", url[1])
	}
	thumb := pki.ThumbprintHex(s.eps[0].ServerCertificate)
	c := session(t, ctx, v, s.eps, cert, key)
	rate := counterRate(t, ctx, c, 2*time.Second)
	t.Logf("%s: sim.Counter %.0f/s", m.arch, rate)
	if rate < 150 || rate > 250 {
		t.Errorf("sim.Counter advances %.0f/s, want about 200", rate)
	}
	resp, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{NodeID: gua.MustParseNodeID("ns=2;s=sim.Setpoint"), AttributeID: gua.AttributeIDValue,
		Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(float32(42.5))}}}})
	if err != nil || resp.Results[0] != gua.StatusOK {
		t.Fatalf("Write: %v %v", err, resp)
	}
	if got := readValue(t, ctx, c, "ns=2;s=sim.Setpoint"); got != float32(42.5) {
		t.Fatalf("sim.Setpoint reads %v after the write", got)
	}
	version := readValue(t, ctx, c, "ns=4;s=Configuration.CurrentVersion")
	if resets := v.count(bootBanner); resets != 1 {
		t.Fatalf("%d boots: the watchdog reset a healthy gateway", resets)
	}
	reverseSession(t, ctx, m, rln.(*net.TCPListener), s.eps, cert, key)
	eccSession(t, m, v, eccCert, eccKey)
	seen := watchCounter(t, ctx, c, 3*time.Second)
	c.Close(ctx)
	cut := time.Now()

	// A power cut, and the second boot on the same disk. With a watchdog
	// it serves for two minutes and then its scan stops
	// (--test-stall-scan-after, from the start of edged, which says so at
	// once): the watchdog (10 s) resets the machine, which boots again.
	v.kill()
	extra := ""
	if m.watchdog {
		extra = "edged.args=--test-stall-scan-after," + healthy.String()
	}
	v = boot(t, m, disk, extra)
	s = v.serving(t, 3*time.Minute)
	t.Logf("%s: after the power cut: %v", m.arch, s)
	if got := pki.ThumbprintHex(s.eps[0].ServerCertificate); got != thumb {
		t.Fatalf("the certificate changed across the power cut: %s, was %s", got, thumb)
	}
	c = session(t, ctx, v, s.eps, cert, key) // the user and the trust are still there
	if got := readValue(t, ctx, c, "ns=4;s=Configuration.CurrentVersion"); got != version {
		t.Fatalf("configuration version %v after the power cut, was %v", got, version)
	}
	historyAfterCut(t, ctx, c, m.arch, seen, cut)
	if !m.watchdog {
		c.Close(ctx)
		t.Logf("%s: no watchdog test: Debian's armmp kernel has no driver for QEMU's i6300ESB", m.arch)
		return
	}
	stall := regexp.MustCompile(`TEST ONLY: the scan stops`)
	warned, ok := v.lineAt(stall)
	if !ok {
		t.Fatal("edged did not say that the scan will stop")
	}
	rate = counterRate(t, ctx, c, time.Until(warned.Add(healthy-4*time.Second)))
	if resets := v.count(bootBanner); resets != 1 {
		t.Fatalf("%d boots: the watchdog reset a healthy gateway", resets)
	}
	t.Logf("%s: %v healthy with the watchdog armed, not reset; sim.Counter %.0f/s meanwhile", m.arch, time.Since(s.exec).Round(time.Second), rate)
	if rate < 150 || rate > 250 {
		t.Errorf("sim.Counter advanced %.0f/s over the healthy run, want about 200", rate)
	}
	c.Close(ctx)
	v.waitConsole(t, bootBanner, 2, healthy+time.Minute)
	reset, _ := v.lastLineAt(bootBanner)
	after := reset.Sub(warned.Add(healthy))
	t.Logf("%s: the watchdog reset the machine %v after the scan stalled (timeout 10 s)", m.arch, after.Round(100*time.Millisecond))
	// The reset shows only as the next kernel's first line, which comes
	// some time after the reset under TCG: 8.8-11.7 s after the stall in
	// our runs, with a feed every 2.5 s before it.
	if after > 13*time.Second {
		t.Errorf("the reset came %v after the stall: more than the 10 s timeout and 3 s for the next kernel's first line", after)
	}
}

// eccSession opens a session over ECC_nistP256_AesGcm SignAndEncrypt
// (edged's certificate of the guest's first start, the SecureChannel
// enhancements, AES-128-GCM) with edged's own test client
// (gopcua has no ECC policy) and reads sim.Counter: the ECC policies on
// the image's kernel and CPU.
func eccSession(t *testing.T, m machine, v *vm, cert []byte, key crypto.Signer) {
	t.Helper()
	addr := strings.TrimPrefix(v.url(), "opc.tcp://")
	p := secpol.EccNistP256AesGcm
	sc, err := uaclient.ServerCertificate(addr, p.URI(), ua.MessageSecurityModeSignAndEncrypt, 30*time.Second)
	if err != nil {
		t.Fatalf("%s: GetEndpoints for %s: %v", m.arch, p.Name(), err)
	}
	start := time.Now()
	c, err := uaclient.DialSecure(addr, "image ECC", &uaclient.Security{ECC: p, ECKey: key, Mode: ua.MessageSecurityModeSignAndEncrypt,
		Certificate: cert, ApplicationURI: "urn:edged:test:image-ecc", ServerCertificate: sc}, 60*time.Second)
	if err != nil {
		t.Fatalf("%s: a session over %s SignAndEncrypt: %v", m.arch, p.Name(), err)
	}
	took := time.Since(start)
	c.Conn().SetDeadline(time.Now().Add(30 * time.Second))
	var resp ua.ReadResponse
	err = c.Call(&ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{
		{NodeID: ua.NewStringNodeID(2, "sim.Counter"), AttributeID: uint32(ua.AttributeIDValue)}}}, &resp)
	if err != nil || len(resp.Results) != 1 || resp.Results[0].Status.IsBad() {
		t.Fatalf("%s: Read over %s: %v %+v", m.arch, p.Name(), err, resp.Results)
	}
	c.Close(10 * time.Second)
	t.Logf("%s: a session over %s SignAndEncrypt (handshake and session %v through QEMU), sim.Counter %v",
		m.arch, p.Name(), took.Round(time.Millisecond), resp.Results[0].Value.Value())
}

// reverseSession takes the connection edged opened to ln (reverse
// connect), checks its ReverseHello, and opens a session over it as op
// with Basic256Sha256 SignAndEncrypt (gopcua dials only: through a relay
// on the host's loopback), reading sim.Counter.
func reverseSession(t *testing.T, ctx context.Context, m machine, ln *net.TCPListener, eps []*gua.EndpointDescription, cert []byte, key *rsa.PrivateKey) {
	t.Helper()
	ln.SetDeadline(time.Now().Add(2 * time.Minute))
	nc, err := ln.Accept()
	if err != nil {
		t.Fatalf("edged did not connect to the host for reverse connect: %v", err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	var hdr [8]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil || string(hdr[:4]) != "RHEF" {
		t.Fatalf("reverse connect: first bytes %q (%v), want a ReverseHello", hdr, err)
	}
	body := make([]byte, binary.LittleEndian.Uint32(hdr[4:])-8)
	if _, err := io.ReadFull(nc, body); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Time{})
	var fields []string
	for b := body; len(b) >= 4; {
		n := int(binary.LittleEndian.Uint32(b))
		if n > len(b)-4 {
			break
		}
		fields, b = append(fields, string(b[4:4+n])), b[4+n:]
	}
	if len(fields) != 2 || !strings.Contains(fields[1], ":4840") {
		t.Fatalf("ReverseHello body %x: want the ServerUri and the endpoint URL", body)
	}
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	go func() {
		c, err := rl.Accept()
		if err != nil {
			return
		}
		go func() { io.Copy(nc, c); nc.Close() }()
		io.Copy(c, nc)
		c.Close()
	}()
	c := sessionAt(t, ctx, "opc.tcp://"+rl.Addr().String(), eps, cert, key)
	defer c.Close(ctx)
	a := readValue(t, ctx, c, "ns=2;s=sim.Counter")
	time.Sleep(100 * time.Millisecond)
	b := readValue(t, ctx, c, "ns=2;s=sim.Counter")
	if a == b {
		t.Fatalf("reverse connect: sim.Counter reads %v twice 100 ms apart", a)
	}
	t.Logf("%s: reverse connect from the guest: ReverseHello %q %q, a session over Basic256Sha256 SignAndEncrypt, sim.Counter %v then %v", m.arch, fields[0], fields[1], a, b)
}

// counterRead is a value of sim.Counter read live: its source time
// (the gateway's clock) and when the host had it.
type counterRead struct {
	v         uint32
	src, host time.Time
}

// watchCounter reads sim.Counter over and over for d.
func watchCounter(t *testing.T, ctx context.Context, c *opcua.Client, d time.Duration) []counterRead {
	t.Helper()
	var seen []counterRead
	for t0 := time.Now(); time.Since(t0) < d; {
		resp, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{{NodeID: gua.MustParseNodeID("ns=2;s=sim.Counter"),
			AttributeID: gua.AttributeIDValue}}, TimestampsToReturn: gua.TimestampsToReturnBoth})
		if err != nil || resp.Results[0].Status != gua.StatusOK {
			t.Fatalf("Read sim.Counter: %v %v", err, resp)
		}
		dv := resp.Results[0]
		seen = append(seen, counterRead{v: dv.Value.Value().(uint32), src: dv.SourceTimestamp, host: time.Now()})
		time.Sleep(50 * time.Millisecond)
	}
	return seen
}

// historyAfterCut reads sim.Counter's history from the first value seen
// before the power cut at cut (host time): it holds every value read
// more than kept before the cut, in time order, then the restart's gap.
// The time between the last value kept and the cut is logged.
func historyAfterCut(t *testing.T, ctx context.Context, c *opcua.Client, arch string, seen []counterRead, cut time.Time) {
	t.Helper()
	// A cut during a flush loses that flush's record too: the flush
	// interval (1 s in the image's configuration) and the flush's own
	// time, which through an emulated disk under TCG on a busy host can
	// be seconds (a CI run lost 3 s on armv7 once; 0.3-0.9 s is usual).
	// The robustness suite's TestPowerCut holds the tight bound on a real
	// host.
	const kept = 5 * time.Second
	type value struct {
		v  uint32
		at time.Time
	}
	var hist []value
	var gapAt time.Time
	var cp []byte
	for calls := 1; ; calls++ {
		resp, err := c.HistoryReadRawModified(ctx, []*gua.HistoryReadValueID{{
			NodeID: gua.MustParseNodeID("ns=2;s=sim.Counter"), DataEncoding: &gua.QualifiedName{}, ContinuationPoint: cp}},
			&gua.ReadRawModifiedDetails{StartTime: seen[0].src, EndTime: seen[len(seen)-1].src.Add(time.Hour), NumValuesPerNode: 5000})
		if err != nil {
			t.Fatalf("HistoryRead after the power cut: %v", err)
		}
		r := resp.Results[0]
		if r.StatusCode != gua.StatusOK {
			t.Fatalf("HistoryRead call %d after the power cut: %v", calls, r.StatusCode)
		}
		for _, dv := range r.HistoryData.Value.(*gua.HistoryData).DataValues {
			if !gapAt.IsZero() {
				continue
			}
			if dv.Status != gua.StatusOK {
				if dv.Status != gua.StatusBadDataLost {
					t.Fatalf("a %v value in the history at %v before the restart's gap", dv.Status, dv.SourceTimestamp)
				}
				gapAt = dv.SourceTimestamp
				continue
			}
			hist = append(hist, value{dv.Value.Value().(uint32), dv.SourceTimestamp})
		}
		if cp = r.ContinuationPoint; len(cp) == 0 {
			break
		}
	}
	if len(hist) == 0 || gapAt.IsZero() {
		t.Fatalf("history after the power cut: %d values, gap at %v: want the values before the cut, then the restart's gap", len(hist), gapAt)
	}
	at := map[time.Time]uint32{}
	for i, h := range hist {
		at[h.at] = h.v
		if i > 0 && (!h.at.After(hist[i-1].at) || h.v <= hist[i-1].v) {
			t.Fatalf("history after the power cut: %d at %v after %d at %v", h.v, h.at, hist[i-1].v, hist[i-1].at)
		}
	}
	for _, s := range seen {
		if v, ok := at[s.src]; cut.Sub(s.host) > kept && (!ok || v != s.v) {
			t.Fatalf("sim.Counter %d at %v, read %v before the power cut, is not in the history: %d values from %d at %v to %d at %v, the restart's gap at %v; the reads %d at %v to %d at %v",
				s.v, s.src, cut.Sub(s.host).Round(time.Millisecond), len(hist), hist[0].v, hist[0].at, hist[len(hist)-1].v, hist[len(hist)-1].at, gapAt,
				seen[0].v, seen[0].src, seen[len(seen)-1].v, seen[len(seen)-1].src)
		}
	}
	last := seen[len(seen)-1]
	lost := cut.Sub(last.host) + last.src.Sub(hist[len(hist)-1].at)
	t.Logf("%s: the history after the power cut: %d values, the last %v before the cut (flush interval 1 s), then the restart's gap",
		arch, len(hist), lost.Round(time.Millisecond))
}

// counterRate reads sim.Counter, again after d, and returns how fast it
// advanced.
func counterRate(t *testing.T, ctx context.Context, c *opcua.Client, d time.Duration) float64 {
	t.Helper()
	c1 := readValue(t, ctx, c, "ns=2;s=sim.Counter").(uint32)
	t0 := time.Now()
	time.Sleep(d)
	c2 := readValue(t, ctx, c, "ns=2;s=sim.Counter").(uint32)
	return float64(c2-c1) / time.Since(t0).Seconds()
}
