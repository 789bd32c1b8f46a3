// Package kit holds what the benchmark commands (bench/scanbench,
// bench/subbench, bench/fanbench) share: the process's CPU time, the machine's
// load average, percentiles, execution traces, and the load role run as a child process of
// the benchmark's own binary (so that `make bench-*` can pin it to another
// core).
package kit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/trace"
	"slices"
	"strings"
	"syscall"
	"time"
)

// CPUTime returns the process's user + system CPU time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LoadAvg returns the machine's 1-minute load average, "?" if unknown.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// Percentile returns the p-th percentile (0 < p ≤ 100, nearest rank) of d,
// which it sorts; 0 for none.
func Percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := (len(d)*p + 99) / 100
	return d[max(i-1, 0)]
}

// Child is a role of the benchmark's own binary run as a child process:
// its standard input takes command lines, its standard output gives
// result lines; its standard error is ours.
type Child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

// StartChild starts this executable with args, after the words of prefix
// (e.g. "taskset -c 1"); what names the role in errors.
func StartChild(what, prefix string, args ...string) (*Child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	argv := append(strings.Fields(prefix), self)
	argv = append(argv, args...)
	c := &Child{cmd: exec.Command(argv[0], argv[1:]...)}
	c.cmd.Stderr = os.Stderr
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s %q: %w", what, argv, err)
	}
	c.lines = bufio.NewScanner(stdout)
	c.lines.Buffer(nil, 1<<20)
	return c, nil
}

// WaitReady waits for the child's first line, "ready"; otherwise it ends
// the child and fails.
func (c *Child) WaitReady(what string) error {
	if !c.lines.Scan() || c.lines.Text() != "ready" {
		c.Kill()
		return fmt.Errorf("the %s did not get ready: %q %v", what, c.lines.Text(), c.lines.Err())
	}
	return nil
}

// Send writes a command line to the child.
func (c *Child) Send(what, line string) error {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Finish closes the child's input, hands every further line of its output
// to each (if not nil) and waits for it to exit.
func (c *Child) Finish(what string, each func(line string)) error {
	c.stdin.Close()
	for c.lines.Scan() {
		if each != nil {
			each(c.lines.Text())
		}
	}
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Kill ends the child if it is still running; a nil Child is none.
func (c *Child) Kill() {
	if c != nil && c.cmd.ProcessState == nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}

// Main runs a bench command: its child role when the first argument is
// role (run with the rest of the arguments), else the bench itself; an
// error is printed with the command's name and exits 1.
func Main(name, role string, child func(args []string, in io.Reader, out io.Writer) error, bench func(args []string, out io.Writer) error) {
	var err error
	if len(os.Args) > 1 && os.Args[1] == role {
		err = child(os.Args[2:], os.Stdin, os.Stdout)
	} else {
		err = bench(os.Args[1:], os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// StartTrace writes an execution trace (runtime/trace) to file until
// stop is called; with file "" it does nothing.
func StartTrace(file string) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		trace.Stop()
		f.Close()
	}, nil
}
