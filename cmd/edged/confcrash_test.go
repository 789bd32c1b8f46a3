package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/configsvc"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	pconfig "github.com/edged/edged/plc/config"
)

// TestMain lets a test run the test binary as edged itself
// (EDGED_TEST_AS_EDGED=1), so that it can kill a real process.
func TestMain(m *testing.M) {
	if os.Getenv("EDGED_TEST_AS_EDGED") == "1" {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// edgedProcess starts this binary as edged with args and returns it and
// its endpoint URL.
func edgedProcess(t *testing.T, args ...string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	name, argv := os.Args[0], args
	if pre := os.Getenv("EDGED_TEST_EXEC"); pre != "" { // an emulator
		name, argv = pre, append([]string{os.Args[0]}, args...)
	}
	cmd := exec.Command(name, argv...)
	cmd.Env = append(os.Environ(), "EDGED_TEST_AS_EDGED=1")
	out := new(lockedBuffer)
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go io.Copy(out, bufio.NewReader(pr))
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := endpointLine.FindStringSubmatch(out.String()); m != nil {
			return cmd, m[1], out
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("edged printed no endpoint:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConfigCrash: edged is killed with SIGKILL at random moments while a
// client applies versions one after another, 200 applies in all. After
// every restart the stored and the running configuration are exactly
// the last version whose Apply was answered, or the one in flight when
// the kill came; nothing else, never a mix. Then a stored version is
// damaged on disk: edged passes over it, says so, and runs the one before.
func TestConfigCrash(t *testing.T) {
	total := 200
	if os.Getenv("EDGED_TEST_EMULATED") != "" {
		total = 5 // each start of an emulated edged takes seconds; the 200 run natively
	}
	dir := t.TempDir()
	edgedUser(t, dir, "admin-password\n", "add", "admin", "--role", "ConfigureAdmin")
	cfg, err := parseFlags([]string{"--data-dir", dir, "--listen", "127.0.0.1:0"}, fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	seedDataDir(t, cfg)
	const uri = "urn:edged:test:gopcua"
	cert, key := clientCert(t, uri, 2048)
	os.WriteFile(filepath.Join(dir, pki.TrustedCerts, "admin.der"), cert, 0o644)

	// Version k's document: the simulator's, with k in a description.
	docOf := func(k int) []byte {
		c := pconfig.Simulator()
		c.Devices[0].Tags[0].Description = fmt.Sprintf("generation %d", k)
		b, _ := json.Marshal(&c)
		return b
	}
	genOf := func(doc []byte) int {
		c, err := pconfig.Parse(doc)
		if err != nil {
			t.Fatalf("a stored document does not parse: %v", err)
		}
		var k int
		if _, err := fmt.Sscanf(c.Devices[0].Tags[0].Description, "generation %d", &k); err != nil {
			return 0 // the first version, from the command line
		}
		return k
	}

	acked, sent, restarts := 0, 0, 0
	cut, cutNew := 0, 0 // applies cut by the kill; of those, found stored after it
	for acked < total {
		cmd, url, out := edgedProcess(t, "--data-dir", dir, "--listen", "127.0.0.1:0", "--report-every", "0")
		restarts++
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		// The configuration runs as stored: check before anything else.
		st, err := configsvc.OpenDataDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, doc, err := st.Current()
		if err != nil {
			t.Fatal(err)
		}
		if g := genOf(doc); g != acked && g != sent {
			t.Fatalf("after restart %d the stored configuration is generation %d; the last answered was %d, the one in flight %d", restarts, g, acked, sent)
		} else if g != acked {
			acked = g // the Apply in flight was stored before the kill
			cutNew++
		}
		eps, err := opcua.GetEndpoints(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		ep, _ := opcua.SelectEndpoint(eps, secpol.URIBasic256Sha256, gua.MessageSecurityModeSignAndEncrypt)
		c, err := dialUser(ctx, url, ep, uri, cert, key, "admin", "admin-password")
		if err != nil {
			t.Fatalf("restart %d: %v\n%s", restarts, err, out.String())
		}
		ns := uint16(0)
		if m := configLine.FindStringSubmatch(out.String()); m != nil {
			fmt.Sscan(m[1], &ns)
		}
		cc := &cfgClient{t: t, ctx: ctx, c: c, ns: ns}
		if running, _ := cc.download(); genOf(running) != acked {
			t.Fatalf("after restart %d edged runs generation %d, the store holds %d", restarts, genOf(running), acked)
		}

		// A few applies answered, then one cut short by the kill: it
		// comes a random moment, up to a few milliseconds, after the
		// Apply is sent, so that it lands anywhere in it.
		apply := func(k int) error {
			res, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: cc.nid("Configuration"), MethodID: cc.nid("Configuration.Apply"),
				InputArguments: []*gua.Variant{gua.MustVariant(docOf(k)), gua.MustVariant(uint32(0)), gua.MustVariant(uint32(0)), gua.MustVariant("crash test")}})
			if err == nil && res.StatusCode != gua.StatusOK {
				t.Errorf("Apply %d: %v", k, res.StatusCode)
			}
			return err
		}
		for n := rand.IntN(5); n > 0 && acked < total; n-- {
			sent = acked + 1
			if err := apply(sent); err != nil {
				t.Fatalf("Apply %d before the kill: %v", sent, err)
			}
			acked = sent
		}
		killed := make(chan struct{})
		sent = acked + 1
		done := make(chan error, 1)
		go func() { done <- apply(sent) }()
		go func() {
			time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond)
			cmd.Process.Signal(syscall.SIGKILL)
			close(killed)
		}()
		if err := <-done; err == nil {
			acked = sent // answered before the kill
		} else {
			cut++
		}
		<-killed
		cmd.Wait()
		cancel()
		c.Close(context.Background())
	}
	t.Logf("%d applies over %d runs of edged, each ended by SIGKILL; %d applies cut by the kill, %d of them found stored after it, the others not at all",
		acked, restarts, cut, cutNew)

	// A damaged newest version: passed over, the one before runs.
	st, _ := configsvc.OpenDataDir(dir)
	m, doc, _ := st.Current()
	h := st.History()
	prev := h[len(h)-2]
	path := filepath.Join(dir, configsvc.Dir, fmt.Sprintf("v%010d.json", m.Version))
	b, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(b, []byte("generation"), []byte("Generation"), 1), 0o600)
	cmd, _, out := edgedProcess(t, "--data-dir", dir, "--listen", "127.0.0.1:0", "--report-every", "0")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !strings.Contains(out.String(), "passed over") || !strings.Contains(out.String(), fmt.Sprintf("configuration version %d from", prev.Version)) {
		t.Fatalf("edged with a damaged version %d:\n%s", m.Version, out.String())
	}
	_ = doc
}
