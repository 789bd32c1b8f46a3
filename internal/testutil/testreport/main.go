// Command testreport runs `go test` with -json and prints what the plain
// command prints (each package's result line, the output of the tests
// that failed, build errors), then the tests that were skipped. With -v
// it prints every test's output as it comes. -skips FILE appends the
// skipped tests to FILE, one "package test: reason" a line, so that CI
// can list them at its end (.ci/run).
//
//	testreport [-v] [-skips FILE] -- go test [flags] [packages]
//
// It exits with go test's status, or 1 if go test said nothing.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// event is the part of a test2json TestEvent (go doc cmd/test2json) that
// testreport uses; build-output events carry ImportPath instead of
// Package.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// report collects the stream of one go test run.
type report struct {
	out     io.Writer
	verbose bool
	// pending holds the output of each running test until it ends: shown
	// when it fails (or always with -v), dropped when it passes.
	pending map[string]*strings.Builder
	skipped []string
	failed  int
}

func main() {
	verbose := flag.Bool("v", false, "print every test's output, as go test -v")
	skips := flag.String("skips", "", "append the skipped tests to this file")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testreport [-v] [-skips FILE] -- go test [flags] [packages]")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	i := slices.Index(args, "test")
	if len(args) < 2 || i < 1 {
		flag.Usage()
		os.Exit(2)
	}
	args = slices.Insert(slices.Clone(args), i+1, "-json")
	if *verbose {
		args = slices.Insert(args, i+2, "-v")
	}
	os.Exit(run(args, *verbose, *skips))
}

func run(args []string, verbose bool, skipsFile string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 1
	}
	r := &report{out: os.Stdout, verbose: verbose, pending: map[string]*strings.Builder{}}
	events := r.read(stdout)
	err = cmd.Wait()
	if len(r.skipped) > 0 {
		fmt.Fprintf(r.out, "testreport: %d skipped:\n", len(r.skipped))
		for _, s := range r.skipped {
			fmt.Fprintf(r.out, "    %s\n", s)
		}
		if skipsFile != "" {
			if err := appendLines(skipsFile, r.skipped); err != nil {
				fmt.Fprintln(os.Stderr, "testreport:", err)
				return 1
			}
		}
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 1
	case events == 0:
		fmt.Fprintln(os.Stderr, "testreport: go test reported nothing")
		return 1
	case r.failed > 0:
		return 1
	}
	return 0
}

// read handles the events on in and returns how many it read. A line
// that is not an event (go test's own messages) is printed as it is.
func (r *report) read(in io.Reader) int {
	n := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			fmt.Fprintln(r.out, sc.Text())
			continue
		}
		n++
		r.handle(&e)
	}
	return n
}

func (r *report) handle(e *event) {
	key := e.Package + " " + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(r.out, e.Output)
	case e.Test == "":
		// The package's own lines: its result, a panic outside a test,
		// a benchmark's figures.
		if e.Action == "output" && !(strings.HasPrefix(e.Output, "PASS") && !r.verbose) {
			fmt.Fprint(r.out, e.Output)
		}
		if e.Action == "fail" {
			r.failed++
			// Tests that started and never ended (the binary crashed, was
			// killed or timed out in them): their output says why.
			for k, b := range r.pending {
				if strings.HasPrefix(k, e.Package+" ") {
					fmt.Fprintf(r.out, "testreport: output of %s, which did not end:\n%s", k, b.String())
					delete(r.pending, k)
				}
			}
		}
	case e.Action == "output":
		if r.verbose {
			fmt.Fprint(r.out, e.Output)
			break
		}
		b := r.pending[key]
		if b == nil {
			b = &strings.Builder{}
			r.pending[key] = b
		}
		b.WriteString(e.Output)
	case e.Action == "fail":
		if b := r.pending[key]; b != nil {
			fmt.Fprint(r.out, b.String())
		}
		delete(r.pending, key)
	case e.Action == "skip":
		reason := ""
		if b := r.pending[key]; b != nil {
			reason = skipReason(b.String())
		}
		delete(r.pending, key)
		r.skipped = append(r.skipped, strings.TrimSpace(e.Package+" "+e.Test+": "+reason))
	case e.Action == "pass":
		delete(r.pending, key)
	}
}

// skipReason picks the message of t.Skip out of a skipped test's output:
// its lines but go test's own ("=== RUN", "--- SKIP", ...), without the
// file:line prefix.
func skipReason(out string) string {
	var msg []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if pos, m, ok := strings.Cut(l, ": "); ok && strings.Contains(pos, ".go:") {
			l = m
		}
		msg = append(msg, l)
	}
	return strings.Join(msg, " ")
}

// appendLines appends lines to the file at path, creating it.
func appendLines(path string, lines []string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(f, l)
	}
	return f.Close()
}
