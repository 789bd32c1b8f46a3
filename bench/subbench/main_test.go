package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the client role: benchMain starts
// os.Executable() with "client" as its first argument.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "client" {
		if err := clientMain(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "subbench:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun runs the whole bench briefly and checks that it prints its
// result lines, every repetition saw its Status change and a good
// response, and values were matched — not how fast.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the simulator, the engine, the server and a client process")
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	// Under make test-arm the child is this ARM test binary: it runs under
	// the emulator named by EDGED_TEST_EXEC.
	args := []string{"-warmup", "100ms", "-duration", "500ms", "-reps", "10", "-client-prefix", os.Getenv("EDGED_TEST_EXEC")}
	go func() { done <- benchMain(args, &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute): // a hang, never a timing
		t.Fatal("subbench did not finish")
	}
	s := out.String()
	for _, what := range []string{"Write sim.Command", "Call sim.WriteCommand"} {
		re := regexp.MustCompile(regexp.QuoteMeta(what) + ` → data change of sim\.Status, 10 repetitions: p50 \S+  p99 \S+  max \S+  \(0 missed, 0 bad responses\)`)
		if !re.MatchString(s) {
			t.Errorf("no result line for %s with 10 repetitions, none missed or bad:\n%s", what, s)
		}
		if !strings.Contains(s, "subbench: "+what+" → its response: p50 ") {
			t.Errorf("no response latency line for %s:\n%s", what, s)
		}
	}
	m := regexp.MustCompile(`image published → Publish response received \(sim\.Counter\), (\d+) matched: p50 \S+  p99 \S+  max \S+  \((\d+) lost, (\d+) unmatched\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no publish latency line:\n%s", s)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		t.Errorf("no Counter value matched:\n%s", s)
	}
	if m[3] != "0" {
		t.Errorf("%s values received that the engine never published:\n%s", m[3], s)
	}
	if !strings.Contains(s, "client in the window: notifications=") || !strings.Contains(s, "server process CPU ") {
		t.Errorf("missing window or CPU line:\n%s", s)
	}
}

// TestMatch: receptions are matched with the publish times by value;
// values published between the first and the last received that never
// came are lost, values never published are unmatched.
func TestMatch(t *testing.T) {
	p := newPubLog(time.Second)
	for v := uint32(100); v <= 110; v++ {
		if v == 105 {
			continue // the engine never read it
		}
		i := int(v) & (len(p.val) - 1)
		p.val[i], p.ns[i], p.ok[i] = v, int64(v)*1e6, true
	}
	recv := []reception{{101, 101e6 + 2e6}, {102, 102e6 + 3e6}, {104, 104e6 + 1e6}, {106, 106e6 + 4e6}, {999, 5}}
	recv = append(recv, reception{107, 107e6 + 5e6})
	var out bytes.Buffer
	reportPublish(&out, p, recv, "x")
	want := "5 matched: p50 3ms  p99 5ms  max 5ms  (1 lost, 1 unmatched)"
	if !strings.Contains(out.String(), want) {
		t.Errorf("got\n%s\nwant %q", out.String(), want)
	}
}
