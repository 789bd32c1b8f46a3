package main

import (
	"strings"
	"testing"
)

// stream is go test -json's output for a package with a passing, a
// failing and a skipped test, then a build failure of another package.
const stream = `{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"    a_test.go:3: chatter\n"}
{"Action":"pass","Package":"p","Test":"TestOK"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"    a_test.go:9: got 1, want 2\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestBad"}
{"Action":"output","Package":"p","Test":"TestPeer","Output":"=== RUN   TestPeer\n"}
{"Action":"output","Package":"p","Test":"TestPeer","Output":"    peer.go:20: socat not installed\n"}
{"Action":"output","Package":"p","Test":"TestPeer","Output":"--- SKIP: TestPeer (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestPeer"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
{"ImportPath":"q","Action":"build-output","Output":"q/x.go:1: syntax error\n"}
go: some message
`

func TestReport(t *testing.T) {
	var out strings.Builder
	r := &report{out: &out, pending: map[string]*strings.Builder{}}
	if n := r.read(strings.NewReader(stream)); n != 16 {
		t.Errorf("%d events, want 16", n)
	}
	got := out.String()
	for _, want := range []string{"a_test.go:9: got 1, want 2", "--- FAIL: TestBad", "FAIL\tp\t0.01s", "q/x.go:1: syntax error", "go: some message"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") {
		t.Errorf("a passing test's output printed:\n%s", got)
	}
	if len(r.skipped) != 1 || r.skipped[0] != "p TestPeer: socat not installed" {
		t.Errorf("skipped %q", r.skipped)
	}
	if r.failed != 1 {
		t.Errorf("%d packages failed, want 1", r.failed)
	}
}

// TestReportUnfinished: a test the binary died in (no pass or fail of its
// own) has its output printed when its package fails.
func TestReportUnfinished(t *testing.T) {
	const s = `{"Action":"output","Package":"p","Test":"TestCrash","Output":"=== RUN   TestCrash\n"}
{"Action":"output","Package":"p","Test":"TestCrash","Output":"    edged: the last words\n"}
{"Action":"output","Package":"p","Test":"TestFine","Output":"=== RUN   TestFine\n"}
{"Action":"pass","Package":"p","Test":"TestFine"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t28.0s\n"}
{"Action":"fail","Package":"p"}
`
	var out strings.Builder
	r := &report{out: &out, pending: map[string]*strings.Builder{}}
	r.read(strings.NewReader(s))
	got := out.String()
	if !strings.Contains(got, "output of p TestCrash, which did not end") || !strings.Contains(got, "the last words") {
		t.Errorf("the unfinished test's output is missing:\n%s", got)
	}
	if strings.Contains(got, "TestFine") {
		t.Errorf("a passing test's output printed:\n%s", got)
	}
}
