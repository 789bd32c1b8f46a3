package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/drivers/modbus/slave"
	"github.com/edged/edged/internal/testutil/mosquitto"
	"github.com/edged/edged/internal/testutil/peer"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/tsdb"

	gua "github.com/gopcua/opcua/ua"
)

// The Sparkplug B tests run edged with the simulator against Debian's
// mosquitto (started by each test on its own loopback ports) and check
// what an independent consumer saw: testdata/sparkplug/consumer.js, on
// Eclipse Tahu's sparkplug-payload and MQTT.js (pinned in its
// package.json, installed by scripts/deps.sh). The consumer checks every
// message against the specification's rules (births carry every metric,
// aliases consistent, seq continuous, NDEATH's bdSeq that of the NBIRTH)
// and prints what it saw; the assertions are here.

var sparkplugDir = filepath.Join("testdata", "sparkplug")

// spLine is one line of consumer.js.
type spLine struct {
	Ev     string     `json:"ev"`
	Broker int        `json:"broker"`
	Type   string     `json:"type"`
	Node   string     `json:"node"`
	Device string     `json:"device"`
	Seq    *int       `json:"seq"`
	BdSeq  int        `json:"bdSeq"`
	Msg    string     `json:"msg"`
	Ms     []spMetric `json:"metrics"`
	at     time.Time
}

type spMetric struct {
	Name    string  `json:"name"`
	Type    string  `json:"type"`
	Value   any     `json:"value"`
	Ts      int64   `json:"ts"`
	Hist    bool    `json:"hist"`
	Null    bool    `json:"null"`
	Quality *int    `json:"quality"`
	Alias   *uint64 `json:"alias"`
}

// consumer is a running consumer.js.
type consumer struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []spLine
	done  chan struct{}
}

// startConsumer starts consumer.js on the brokers at urls; with host it
// is the primary host of that name (it publishes its STATE).
func startConsumer(t *testing.T, host string, urls ...string) *consumer {
	t.Helper()
	node := peer.Command(t, "node", "nodejs")
	if _, err := os.Stat(filepath.Join(sparkplugDir, "node_modules", "sparkplug-payload", "package.json")); err != nil {
		peer.Missing(t, "Sparkplug interop: Tahu's sparkplug-payload is not installed (scripts/deps.sh runs npm ci in %s): %v", sparkplugDir, err)
	}
	args := []string{"consumer.js"}
	if host != "" {
		args = append(args, "--host", host)
	}
	cmd := exec.Command(node, append(args, urls...)...)
	cmd.Dir = sparkplugDir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &consumer{t: t, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var l spLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l = spLine{Ev: "violation", Msg: "unreadable line: " + sc.Text()}
			}
			l.at = time.Now()
			c.mu.Lock()
			c.lines = append(c.lines, l)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	c.wait(0, func(l spLine) bool { return l.Ev == "ready" }, "subscribed")
	return c
}

// wait returns the index of the first line from index from on that
// matches, failing the test if none comes (the deadline only stops a hung
// test; no duration is asserted).
func (c *consumer) wait(from int, match func(spLine) bool, what string) int {
	c.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c.mu.Lock()
		for i := from; i < len(c.lines); i++ {
			if match(c.lines[i]) {
				c.mu.Unlock()
				return i
			}
		}
		n := len(c.lines)
		c.mu.Unlock()
		if time.Now().After(deadline) {
			c.t.Fatalf("the consumer saw no %s in %d lines", what, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *consumer) line(i int) spLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines[i]
}

func (c *consumer) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// send sends a command to the consumer.
func (c *consumer) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// stop ends the consumer and returns its lines.
func (c *consumer) stop() []spLine {
	c.send(map[string]any{"cmd": "exit"})
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines
}

// violations fails the test with every rule the consumer saw broken.
func violations(t *testing.T, lines []spLine) {
	t.Helper()
	n := 0
	for _, l := range lines {
		if l.Ev == "violation" {
			if n++; n <= 20 {
				t.Errorf("consumer: %s", l.Msg)
			}
		}
	}
	if n > 20 {
		t.Errorf("... %d violations in all", n)
	}
}

// sparkplugConfig writes the simulator's configuration with the
// northbound s, and returns its file.
func sparkplugConfig(t *testing.T, s *pconfig.Sparkplug) string {
	t.Helper()
	c := pconfig.Simulator()
	c.Northbound = &pconfig.Northbound{Sparkplug: s}
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "edged.json")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func isMsg(typ, device string) func(spLine) bool {
	return func(l spLine) bool { return l.Ev == "msg" && l.Type == typ && l.Device == device }
}

// metric returns the metric name of l, nil if none.
func (l *spLine) metric(name string) *spMetric {
	for i := range l.Ms {
		if l.Ms[i].Name == name {
			return &l.Ms[i]
		}
	}
	return nil
}

// counterTs is the time of sim.Counter in line i (a DBIRTH).
func (c *consumer) counterTs(i int) int64 {
	l := c.line(i)
	return l.metric("Counter").Ts
}

// counterAt reports whether l carries a sim.Counter sample (live or
// historical) at or after ts (ms).
func counterAt(ts int64, hist bool) func(spLine) bool {
	return func(l spLine) bool {
		if l.Ev != "msg" || l.Device != "sim" || l.Type != "DDATA" && l.Type != "DBIRTH" {
			return false
		}
		for _, m := range l.Ms {
			if m.Name == "Counter" && m.Hist == hist && m.Ts >= ts {
				return true
			}
		}
		return false
	}
}

// TestSparkplugOutage: the broker stops for 30 s and starts again, then
// the primary host goes offline and back; the consumer has every value of
// sim.Counter that edged recorded, exactly once, live or historical, the
// historical ones in time order.
func TestSparkplugOutage(t *testing.T) {
	t.Parallel()
	b := mosquitto.Start(t)
	cons := startConsumer(t, "scada", b.URL(0))
	conf := sparkplugConfig(t, &pconfig.Sparkplug{Brokers: []string{b.URL(0)}, GroupID: "plant", EdgeNodeID: "gw01",
		KeepAliveS: 5, PrimaryHost: "scada", ReplayRate: 10000})
	dir := t.TempDir()
	_, out, stop := startEdged(t, dir, true, "--config", conf)
	defer func() {
		if t.Failed() {
			t.Logf("edged's output:\n%s", out.String())
		}
	}()
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	birth := cons.wait(0, isMsg("DBIRTH", "sim"), "DBIRTH of sim")
	cons.wait(birth, counterAt(cons.counterTs(birth)+1000, false), "a second of live data")

	// The broker stops for 30 s; edged keeps the samples.
	b.Stop()
	outage := time.Now()
	time.Sleep(30 * time.Second)
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("broker stopped for %v", time.Since(outage).Round(time.Millisecond))
	birth2 := cons.wait(birth+1, isMsg("DBIRTH", "sim"), "DBIRTH of sim after the outage")
	bt := cons.counterTs(birth2)
	cons.wait(birth2, counterAt(bt-20, true), "the forwarded samples up to the rebirth")

	// The primary host goes offline: NDEATH; edged waits, keeps the
	// samples, and forwards them when the host is back.
	mark := cons.len()
	cons.send(map[string]any{"cmd": "state", "online": false})
	cons.wait(mark, isMsg("NDEATH", ""), "NDEATH when the primary host went offline")
	time.Sleep(3 * time.Second)
	cons.send(map[string]any{"cmd": "state", "online": true})
	birth3 := cons.wait(mark, isMsg("DBIRTH", "sim"), "DBIRTH of sim after the host came back")
	bt3 := cons.counterTs(birth3)
	cons.wait(birth3, counterAt(bt3-20, true), "the forwarded samples of the host's absence")
	cons.wait(birth3, counterAt(bt3+500, false), "live data after the forwarding")

	stop()
	stopped = true
	lines := cons.stop()
	violations(t, lines)

	// What the consumer has of sim.Counter.
	type got struct {
		ts    int64
		hist  bool
		birth bool
	}
	seen := map[uint32][]got{}
	var first, last int64 = math.MaxInt64, 0
	live, hist := 0, 0
	for _, l := range lines {
		if l.Ev != "msg" || l.Device != "sim" || (l.Type != "DDATA" && l.Type != "DBIRTH") {
			continue
		}
		for _, m := range l.Ms {
			if m.Name != "Counter" || m.Null {
				continue
			}
			v := uint32(m.Value.(float64))
			seen[v] = append(seen[v], got{m.Ts, m.Hist, l.Type == "DBIRTH"})
			first, last = min(first, m.Ts), max(last, m.Ts)
			if m.Hist {
				hist++
			} else {
				live++
			}
		}
	}

	// What edged recorded of it, between the consumer's first and last.
	db, err := tsdb.Open(filepath.Join(dir, HistoryDirName), tsdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.Series("sim.Counter", tsdb.Int)
	if err != nil {
		t.Fatal(err)
	}
	// The values that may come twice: the last ones the consumer got live
	// before the broker stopped, within what one mark covers (the
	// northbound marks what it published with a PINGREQ every 20 ms;
	// mosquitto reads one packet per loop and resets the connection on
	// SIGTERM, so it may have passed on the last DDATA without answering
	// the PINGREQ after them). Unconfirmed, edged forwards them again, with
	// their timestamps and is_historical. An intentional NDEATH (the host
	// offline) waits for the confirmation, so nothing comes twice there.
	var liveBefore []uint32
	for _, l := range lines[:birth2] { // what came before the rebirth after the outage
		if l.Ev == "msg" && l.Device == "sim" && l.Type == "DDATA" {
			if m := l.metric("Counter"); m != nil && !m.Null && !m.Hist {
				liveBefore = append(liveBefore, uint32(m.Value.(float64)))
			}
		}
	}
	mayRepeat := map[uint32]bool{}
	for _, v := range liveBefore[max(0, len(liveBefore)-5):] {
		mayRepeat[v] = true
	}
	expected, lost, dup := 0, 0, 0
	db.Scan(id, first*1e6, last*1e6+999_999, false, 0, func(s *tsdb.Sample) bool {
		if s.NoValue {
			return true
		}
		expected++
		switch n := len(seen[uint32(s.Value)]); {
		case n == 0:
			if lost++; lost <= 10 {
				t.Errorf("sim.Counter %d (at %v) never reached the consumer", s.Value, time.Unix(0, s.Time).UTC().Format("15:04:05.000"))
			}
		case n > 1:
			dup++
			g := seen[uint32(s.Value)]
			// A birth carries the current value, read again since it
			// was stored: the stored sample (forwarded) and the birth's
			// may hold one value at two times.
			rebirth := n == 2 && g[0].hist != g[1].hist && (g[0].birth && g[0].ts >= g[1].ts || g[1].birth && g[1].ts >= g[0].ts)
			if !rebirth && (n != 2 || !mayRepeat[uint32(s.Value)] || g[0].hist || !g[1].hist || g[0].ts != g[1].ts) {
				t.Errorf("sim.Counter %d reached the consumer %d times: %v", s.Value, n, g)
			}
		}
		delete(seen, uint32(s.Value))
		return true
	})
	// A birth carries the current value, which edged recorded when it
	// changed, before the birth and so before the consumer's first
	// timestamp (under qemu the first birth can come many cycles after
	// the change): such a value was recorded in the seconds before.
	db.Scan(id, first*1e6-2e9, first*1e6-1, false, 0, func(s *tsdb.Sample) bool {
		if g := seen[uint32(s.Value)]; !s.NoValue && len(g) == 1 && g[0].birth {
			delete(seen, uint32(s.Value))
		}
		return true
	})
	for v, g := range seen {
		t.Errorf("the consumer has sim.Counter %d (%v), which edged did not record", v, g)
		break
	}
	t.Logf("sim.Counter: %d values recorded, %d received live, %d historical, %d lost, %d duplicated (of the last live values before the broker stopped)",
		expected, live, hist, lost, dup)
	if hist == 0 {
		t.Error("nothing was forwarded as historical")
	}
	checkHistoricalOrder(t, lines)
}

// checkHistoricalOrder: the historical samples of each metric come in time
// order within each forwarding (a birth starts a new one).
func checkHistoricalOrder(t *testing.T, lines []spLine) {
	t.Helper()
	last := map[string]int64{}
	for _, l := range lines {
		if l.Ev != "msg" {
			continue
		}
		if l.Type == "NBIRTH" {
			clear(last)
		}
		for _, m := range l.Ms {
			if !m.Hist {
				continue
			}
			k := l.Device + "." + m.Name
			if m.Ts < last[k] {
				t.Errorf("%s: historical sample at %d after one at %d", k, m.Ts, last[k])
				return
			}
			last[k] = m.Ts
		}
	}
}

// TestSparkplugCommands: Node Control/Rebirth makes a full rebirth; a
// DCMD writes sim.Setpoint through the OPC UA write path (read back over
// OPC UA); a DCMD to the read-only sim.Counter is refused, and counted in
// Diagnostics/Northbound.
func TestSparkplugCommands(t *testing.T) {
	t.Parallel()
	b := mosquitto.Start(t)
	cons := startConsumer(t, "", b.URL(0))
	conf := sparkplugConfig(t, &pconfig.Sparkplug{Brokers: []string{b.URL(0)}, GroupID: "plant", EdgeNodeID: "gw01",
		KeepAliveS: 5, ReplayRate: 10000, Commands: &pconfig.SparkplugCommands{Role: "Operator"}})
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0", "--config", conf)
	m := waitFor(t, out, endpointLine)
	nbirth := cons.wait(0, isMsg("NBIRTH", ""), "NBIRTH")
	cons.wait(nbirth, isMsg("DBIRTH", "io"), "DBIRTH of io")

	// Rebirth: NBIRTH (seq 0, the same bdSeq) and every DBIRTH again.
	mark := cons.len()
	cons.send(map[string]any{"cmd": "rebirth", "group": "plant", "node": "gw01"})
	re := cons.wait(mark, isMsg("NBIRTH", ""), "NBIRTH after Node Control/Rebirth")
	if l := cons.line(re); *l.Seq != 0 || l.BdSeq != cons.line(nbirth).BdSeq {
		t.Errorf("rebirth: seq %d, bdSeq %d (first %d)", *l.Seq, l.BdSeq, cons.line(nbirth).BdSeq)
	}
	cons.wait(re, isMsg("DBIRTH", "sim"), "DBIRTH of sim after the rebirth")
	cons.wait(re, isMsg("DBIRTH", "io"), "DBIRTH of io after the rebirth")

	// A DCMD, as Tahu encodes it: sim.Setpoint := 42.5.
	dcmd := func(name, typ string, v any) {
		cons.send(map[string]any{"cmd": "publish", "topic": "spBv1.0/plant/DCMD/gw01/sim",
			"payload": map[string]any{"timestamp": time.Now().UnixMilli(), "metrics": []map[string]any{{"name": name, "type": typ, "value": v}}}})
	}
	mark = cons.len()
	dcmd("Setpoint", "Float", 42.5)
	cons.wait(mark, func(l spLine) bool {
		if !isMsg("DDATA", "sim")(l) {
			return false
		}
		s := l.metric("Setpoint")
		return s != nil && s.Value == 42.5
	}, "DDATA of sim.Setpoint = 42.5")

	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	defer ccancel()
	c := dialGopcua(t, cctx, m[1])
	read := func(id string) any {
		t.Helper()
		r, err := c.Read(cctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{{NodeID: gua.MustParseNodeID(id), AttributeID: gua.AttributeIDValue}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Results[0].Value.Value()
	}
	if v := read("ns=2;s=sim.Setpoint"); v != float32(42.5) {
		t.Errorf("sim.Setpoint over OPC UA: %v, want 42.5", v)
	}
	if v := read("ns=3;s=Northbound.CommandsWritten"); v != uint64(1) {
		t.Errorf("CommandsWritten %v, want 1", v)
	}

	// A DCMD to a read-only tag is refused by the write path.
	dcmd("Counter", "UInt32", 7)
	deadline := time.Now().Add(time.Minute)
	for read("ns=3;s=Northbound.CommandsRefused") != uint64(1) {
		if time.Now().After(deadline) {
			t.Fatalf("CommandsRefused %v, want 1", read("ns=3;s=Northbound.CommandsRefused"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if e, _ := read("ns=3;s=Northbound.LastError").(string); !containsAll(e, "sim.Counter", "NotWritable") {
		t.Errorf("LastError %q", e)
	}
	if s := read("ns=3;s=Northbound.State"); s != "online" {
		t.Errorf("State %v", s)
	}
	violations(t, cons.stop())
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// TestSparkplugFailover: with two brokers (a cluster's two nodes) and the
// first killed, edged is born on the second within 1.5 keep-alives.
func TestSparkplugFailover(t *testing.T) {
	t.Parallel()
	b1, b2 := mosquitto.Start(t), mosquitto.Start(t)
	cons := startConsumer(t, "", b1.URL(0), b2.URL(0))
	const keepAlive = 5 * time.Second
	conf := sparkplugConfig(t, &pconfig.Sparkplug{Brokers: []string{b1.URL(0), b2.URL(0)}, GroupID: "plant", EdgeNodeID: "gw01",
		KeepAliveS: int(keepAlive / time.Second), ReplayRate: 10000})
	startSecure(t, t.TempDir(), true, "--config", conf)
	first := cons.wait(0, func(l spLine) bool { return isMsg("DBIRTH", "sim")(l) && l.Broker == 0 }, "DBIRTH on the first broker")
	cons.wait(first, func(l spLine) bool { return isMsg("DDATA", "sim")(l) && l.Broker == 0 }, "DDATA on the first broker")
	mark := cons.len()
	b1.Kill()
	killed := time.Now()
	i := cons.wait(mark, func(l spLine) bool { return isMsg("NBIRTH", "")(l) && l.Broker == 1 }, "NBIRTH on the second broker")
	took := cons.line(i).at.Sub(killed)
	t.Logf("first broker killed: NBIRTH on the second after %v (keep-alive %v)", took.Round(time.Millisecond), keepAlive)
	if took > keepAlive*3/2 {
		t.Errorf("failover took %v, more than 1.5 keep-alives", took)
	}
	cons.wait(i, func(l spLine) bool { return isMsg("DDATA", "sim")(l) && l.Broker == 1 }, "DDATA on the second broker")
	violations(t, cons.stop())
}

// writeTestPKI writes a test CA, a broker certificate for 127.0.0.1 and a
// client certificate (PEM, keys 0600) into dir.
func writeTestPKI(t *testing.T, dir string) (ca, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey := newKey()
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "edged test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, name string) (string, string) {
		k := newKey()
		tpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if usage == x509.ExtKeyUsageServerAuth {
			tpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der, 0o644), write(name+".key", "PRIVATE KEY", kder, 0o600)
	}
	ca = write("ca.pem", "CERTIFICATE", caDER, 0o644)
	srvCert, srvKey = leaf(2, "broker", x509.ExtKeyUsageServerAuth, "broker")
	cliCert, cliKey = leaf(3, "edged", x509.ExtKeyUsageClientAuth, "client")
	return
}

// TestSparkplugTLS: edged verifies the broker against the configured CA
// and presents its client certificate to a listener that requires one; a
// key file others may read is refused, naming the field.
func TestSparkplugTLS(t *testing.T) {
	t.Parallel()
	pkiDir := t.TempDir()
	ca, sc, sk, cc, ck := writeTestPKI(t, pkiDir)
	b := mosquitto.Start(t, mosquitto.TLS{CAFile: ca, CertFile: sc, KeyFile: sk, RequireCertificate: true})
	cons := startConsumer(t, "", b.URL(0))
	pw := filepath.Join(pkiDir, "mqtt.pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sp := &pconfig.Sparkplug{Brokers: []string{b.URL(1)}, GroupID: "plant", EdgeNodeID: "gw01", KeepAliveS: 5, ReplayRate: 10000,
		Username: "edge", PasswordFile: pw, TLS: &pconfig.MQTTTLS{CAFile: ca, CertFile: cc, KeyFile: ck}}
	_, out := startSecure(t, t.TempDir(), true, "--config", sparkplugConfig(t, sp))
	cons.wait(0, isMsg("DBIRTH", "sim"), "DBIRTH of sim over TLS")
	if strings.Contains(out.String(), "s3cret") {
		t.Error("the password is in edged's output")
	}
	violations(t, cons.stop())

	// The key readable by others: refused at start, naming the field.
	if err := os.Chmod(ck, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--config", sparkplugConfig(t, sp)}, fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	seedDataDir(t, cfg)
	err = run(context.Background(), cfg, new(lockedBuffer))
	if err == nil || !containsAll(err.Error(), "northbound.sparkplug.tls.key_file", "0600") {
		t.Fatalf("start with a key file of mode 0644: %v", err)
	}
}

// TestSparkplugLive: a configuration applied over OPC UA moves the edge
// node to another broker without a restart (NDEATH on the old one,
// births on the new), and a change of the published tags rebirths it;
// the document read back names the password's file, never the password.
func TestSparkplugLive(t *testing.T) {
	t.Parallel()
	b1, b2 := mosquitto.Start(t), mosquitto.Start(t)
	cons := startConsumer(t, "", b1.URL(0), b2.URL(0))
	pw := filepath.Join(t.TempDir(), "mqtt.pw")
	if err := os.WriteFile(pw, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	sp := &pconfig.Sparkplug{Brokers: []string{b1.URL(0)}, GroupID: "plant", EdgeNodeID: "gw01", KeepAliveS: 5, ReplayRate: 10000,
		Username: "edge", PasswordFile: pw}
	dir := t.TempDir()
	configUsers(t, dir)
	url, out := startSecure(t, dir, true, "--config", sparkplugConfig(t, sp))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := dialConfig(t, ctx, url, dir, out, "admin", gua.MessageSecurityModeSignAndEncrypt)
	cons.wait(0, func(l spLine) bool { return isMsg("DBIRTH", "sim")(l) && l.Broker == 0 }, "DBIRTH on the first broker")

	doc, st := admin.download()
	if st != gua.StatusOK {
		t.Fatal(st)
	}
	if strings.Contains(string(doc), "s3cret") || !strings.Contains(string(doc), pw) {
		t.Errorf("the document read back:\n%s", doc)
	}
	c, err := pconfig.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}

	// Another broker, live.
	c.Northbound.Sparkplug.Brokers = []string{b2.URL(0)}
	next, _ := c.Marshal()
	mark := cons.len()
	if _, p, st := admin.apply(next, admin.version(), 0, "the second broker"); st != gua.StatusOK {
		t.Fatalf("Apply: %v %v", st, p)
	}
	cons.wait(mark, func(l spLine) bool { return isMsg("NDEATH", "")(l) && l.Broker == 0 }, "NDEATH on the first broker")
	i := cons.wait(mark, func(l spLine) bool { return isMsg("DBIRTH", "sim")(l) && l.Broker == 1 }, "DBIRTH on the second broker")

	// Only sim.Counter, live: a rebirth with that one metric.
	c.Northbound.Sparkplug.Tags = []pconfig.SparkplugTag{{Device: "sim", Name: "Counter"}}
	next, _ = c.Marshal()
	if _, p, st := admin.apply(next, admin.version(), 0, "Counter only"); st != gua.StatusOK {
		t.Fatalf("Apply: %v %v", st, p)
	}
	j := cons.wait(i+1, isMsg("NBIRTH", ""), "NBIRTH after the tags changed")
	k := cons.wait(j, isMsg("DBIRTH", "sim"), "DBIRTH after the tags changed")
	if l := cons.line(k); len(l.Ms) != 1 || l.Ms[0].Name != "Counter" {
		t.Errorf("DBIRTH of sim: %+v", l.Ms)
	}
	violations(t, cons.stop())
}

// TestSparkplugDeviceDeath: a device that stops answering gets a DDEATH
// once its tags lost communication, and a DBIRTH when it answers again;
// the other devices go on.
func TestSparkplugDeviceDeath(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	plcSrv := slave.New(slave.NewBank(16))
	go plcSrv.Serve(ln)
	b := mosquitto.Start(t)
	cons := startConsumer(t, "", b.URL(0))
	c := pconfig.Simulator()
	c.Devices = append(c.Devices, pconfig.Device{Name: "ext", Kind: pconfig.KindModbusTCP, NoCommTimeoutMs: 2000,
		ModbusTCP: pconfig.DefaultModbusTCP(addr),
		Tags:      []pconfig.Tag{{Name: "Word", Type: pconfig.UInt16, Address: "hr:0", ScanClass: "fast", Access: pconfig.Read}}})
	c.Devices[len(c.Devices)-1].ModbusTCP.TimeoutMs = 500
	c.Northbound = &pconfig.Northbound{Sparkplug: &pconfig.Sparkplug{Brokers: []string{b.URL(0)}, GroupID: "plant", EdgeNodeID: "gw01",
		KeepAliveS: 5, ReplayRate: 10000}}
	doc, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "edged.json")
	if err := os.WriteFile(conf, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	_, out := startSecure(t, t.TempDir(), true, "--config", conf)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(out.String())
		}
	})
	// ext answered: its Word Good, in its birth or a DDATA after it.
	cons.wait(0, func(l spLine) bool {
		if l.Ev != "msg" || l.Device != "ext" || l.Type != "DBIRTH" && l.Type != "DDATA" {
			return false
		}
		w := l.metric("Word")
		return w != nil && !w.Null && (w.Quality == nil || *w.Quality == 192)
	}, "ext's Word Good")

	plcSrv.Close()
	mark := cons.len()
	d := cons.wait(mark, isMsg("DDEATH", "ext"), "DDEATH of ext when it stopped answering")
	cons.wait(d, isMsg("DDATA", "sim"), "DDATA of sim after ext's DDEATH")

	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	plcSrv2 := slave.New(slave.NewBank(16))
	go plcSrv2.Serve(ln2)
	defer plcSrv2.Close()
	cons.wait(d, isMsg("DBIRTH", "ext"), "DBIRTH of ext when it answered again")
	violations(t, cons.stop())
}

// TestSparkplugWill: edged killed (SIGKILL, as a power cut would) leaves
// the will it registered at CONNECT: the broker publishes its NDEATH, with
// the bdSeq of the NBIRTH (the consumer checks it).
func TestSparkplugWill(t *testing.T) {
	t.Parallel()
	b := mosquitto.Start(t)
	cons := startConsumer(t, "", b.URL(0))
	conf := sparkplugConfig(t, &pconfig.Sparkplug{Brokers: []string{b.URL(0)}, GroupID: "plant", EdgeNodeID: "gw01", KeepAliveS: 5, ReplayRate: 10000})
	args := []string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--config", conf}
	cfg, err := parseFlags(args, fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	seedDataDir(t, cfg)
	cmd, _, _ := edgedProcess(t, args...)
	nb := cons.wait(0, isMsg("NBIRTH", ""), "NBIRTH")
	cons.wait(nb, isMsg("DDATA", "sim"), "DDATA of sim")
	cmd.Process.Kill()
	cmd.Wait()
	i := cons.wait(nb, isMsg("NDEATH", ""), "the will's NDEATH")
	if l := cons.line(i); l.Seq != nil || len(l.Ms) != 1 || l.Ms[0].Name != "bdSeq" || l.Ms[0].Value != float64(cons.line(nb).BdSeq) {
		t.Errorf("NDEATH %+v after NBIRTH with bdSeq %d", l, cons.line(nb).BdSeq)
	}
	violations(t, cons.stop())
}
