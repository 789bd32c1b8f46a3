//go:build robust

package robust

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/tsdb"
)

// Power cuts of edged while it records history (kill -9 at random
// moments, powerCuts times on one data folder). After each one the
// history is opened from a copy, as the next start opens it, and must
// hold: every sample read after an earlier cut (nothing once readable is
// lost or changed), sim.Counter's samples in time order and rising within
// a run, a Bad_DataLost gap between runs, and the samples up to the flush
// interval before the cut when it came while edged recorded. The files
// of the configuration and the certificates are those of the first run,
// byte for byte, and edged starts again each time.
const (
	powerCuts = 50
	flushMs   = 1000 // the simulator's configuration's flush interval
	// lossAllowance is the time beyond the flush interval a cut may take
	// with it: the flush's own duration and the lag of the historian
	// behind the scan, on a shared machine.
	lossAllowance = 500 * time.Millisecond
)

func TestPowerCut(t *testing.T) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	t.Logf("seed %d", seed)

	// The first run makes the configuration and the certificates, and
	// stops before anything is cut.
	e := startEdged(t, dir)
	if !e.waitServing(30 * time.Second) {
		t.Fatalf("edged did not serve within 30 s:\n%s", e.output())
	}
	time.Sleep(1500 * time.Millisecond)
	e.stop(t)
	files := checksums(t, dir)
	if len(files) == 0 {
		t.Fatal("the first run left no configuration or certificate files")
	}

	var prev []tsdb.Sample
	var losses []time.Duration
	var torn int
	for i := range powerCuts {
		e := startEdged(t, dir)
		// Anywhere from the store's opening (the log replayed, its head
		// written as a block: the first milliseconds, one cut in five) to a
		// few flushes into the run.
		at := time.Duration(rng.Int64N(int64(3500 * time.Millisecond)))
		if rng.IntN(5) == 0 {
			at = time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
		}
		time.Sleep(at)
		cut := time.Now()
		serving := e.servingSince()
		e.kill()

		cur, notes := readCounter(t, dir)
		if len(notes) > 0 {
			torn++
		}
		checkHistory(t, i, prev, cur)
		if !serving.IsZero() && cut.Sub(serving) > flushMs*time.Millisecond+500*time.Millisecond {
			last := lastValued(cur)
			loss := cut.Sub(time.Unix(0, last))
			losses = append(losses, loss)
			if loss > flushMs*time.Millisecond+lossAllowance {
				t.Errorf("cut %d, %v into the run: the last sample kept is %v before the cut, more than the flush interval (%d ms) and %v",
					i, at, loss, flushMs, lossAllowance)
			}
		}
		if got := checksums(t, dir); !maps(got, files) {
			t.Fatalf("cut %d: the configuration or certificate files changed: %v, were %v", i, got, files)
		}
		prev = cur
	}

	// And edged starts once more on what the cuts left.
	e = startEdged(t, dir)
	if !e.waitServing(30 * time.Second) {
		t.Fatalf("edged did not serve after the cuts:\n%s", e.output())
	}
	e.stop(t)
	slices.Sort(losses)
	if len(losses) == 0 {
		t.Fatal("no cut came while edged recorded")
	}
	t.Logf("%d cuts, %d while recording: samples lost before the cut p50 %v max %v (flush interval %d ms); %d opens cut a torn tail; %d samples of sim.Counter kept",
		powerCuts, len(losses), losses[len(losses)/2].Round(time.Millisecond), losses[len(losses)-1].Round(time.Millisecond), flushMs, torn, len(prev))
}

// edgedRun is edged started on a data folder, its output gathered.
type edgedRun struct {
	cmd     *exec.Cmd
	out     chan outLine
	lines   []string
	serving time.Time
}

func startEdged(t *testing.T, dir string) *edgedRun {
	t.Helper()
	e := &edgedRun{out: make(chan outLine, 1024)}
	e.cmd = exec.Command(edgedBin, "--listen", "127.0.0.1:0", "--report-every", "0",
		"--allow-insecure", "--anonymous-role", "Operator", "--data-dir", dir)
	pr, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e.cmd.Stderr = e.cmd.Stdout
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.kill)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case e.out <- outLine{sc.Text(), time.Now()}:
			default: // a chatty edged: the rest is not needed
			}
		}
		close(e.out)
	}()
	return e
}

// outLine is a line of edged's output and when it came.
type outLine struct {
	text string
	at   time.Time
}

// drain takes the lines printed so far; false once the output ended.
func (e *edgedRun) drain(wait time.Duration) bool {
	var timer <-chan time.Time
	if wait > 0 {
		timer = time.After(wait)
	}
	for {
		select {
		case l, ok := <-e.out:
			if !ok {
				return false
			}
			e.lines = append(e.lines, l.text)
			if e.serving.IsZero() && endpointLine.MatchString(l.text) {
				e.serving = l.at
			}
			if wait > 0 && !e.serving.IsZero() {
				return true
			}
		case <-timer:
			return true
		default:
			if timer == nil {
				return true
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// waitServing waits up to d for edged's endpoint line.
func (e *edgedRun) waitServing(d time.Duration) bool {
	end := time.Now().Add(d)
	for e.serving.IsZero() && time.Now().Before(end) {
		if !e.drain(time.Until(end)) {
			break
		}
	}
	return !e.serving.IsZero()
}

// servingSince returns when the endpoint line came (zero: not yet).
func (e *edgedRun) servingSince() time.Time {
	e.drain(0)
	return e.serving
}

func (e *edgedRun) output() string {
	e.drain(0)
	return strings.Join(e.lines, "\n")
}

// kill cuts edged's power: SIGKILL, nothing written after it.
func (e *edgedRun) kill() {
	if e.cmd.ProcessState == nil {
		e.cmd.Process.Kill()
		e.cmd.Wait()
	}
}

// stop stops edged as a service manager does (SIGTERM) and waits.
func (e *edgedRun) stop(t *testing.T) {
	t.Helper()
	e.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- e.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("edged stopped with %v:\n%s", err, e.output())
		}
	case <-time.After(30 * time.Second):
		e.cmd.Process.Kill()
		<-done
		t.Fatalf("edged did not stop within 30 s of SIGTERM:\n%s", e.output())
	}
}

// checksums returns the SHA-256 of each file of the data folder outside
// the history.
func checksums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == "history" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() { // the control socket
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		sums[rel] = hex.EncodeToString(h[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// readCounter opens a copy of the history (the next start's Open changes
// the store: a torn tail cut off, the head written as a block) and reads
// all of sim.Counter; notes are what the store logged on opening.
func readCounter(t *testing.T, dir string) (samples []tsdb.Sample, notes []string) {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "history")
	if err := copyDir(filepath.Join(dir, "history"), cp); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	db, err := tsdb.Open(cp, tsdb.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatalf("the history does not open after a power cut: %v", err)
	}
	defer db.Close()
	id, err := db.Series("sim.Counter", tsdb.Int)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Scan(id, math.MinInt64, math.MaxInt64, false, uint32(status.BadDataLost), func(s *tsdb.Sample) bool {
		samples = append(samples, *s)
		return true
	})
	if err != nil {
		t.Fatalf("reading sim.Counter's history after a power cut: %v", err)
	}
	if s := logged.String(); s != "" {
		notes = strings.Split(strings.TrimSpace(s), "\n")
	}
	return samples, notes
}

func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, src); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// checkHistory checks cur, sim.Counter's history after cut i, against
// prev, that after the cut before.
func checkHistory(t *testing.T, i int, prev, cur []tsdb.Sample) {
	t.Helper()
	if len(cur) < len(prev) {
		t.Fatalf("cut %d: %d samples of sim.Counter, %d after the cut before", i, len(cur), len(prev))
	}
	for k := range prev {
		if !sameSample(&prev[k], &cur[k]) {
			t.Fatalf("cut %d: sample %d is %s, was %s after the cut before", i, k, fmtSample(&cur[k]), fmtSample(&prev[k]))
		}
	}
	for k := 1; k < len(cur); k++ {
		a, b := &cur[k-1], &cur[k]
		if b.Time <= a.Time {
			t.Fatalf("cut %d: sample %d (%s) is not after sample %d (%s)", i, k, fmtSample(b), k-1, fmtSample(a))
		}
		if !a.NoValue && !b.NoValue && uint32(b.Value) <= uint32(a.Value) {
			t.Fatalf("cut %d: sim.Counter %s after %s with no gap between: a restart not marked", i, fmtSample(b), fmtSample(a))
		}
		if b.NoValue && b.Status != uint32(status.BadDataLost) && b.Status != uint32(status.BadNoCommunication) {
			t.Fatalf("cut %d: sample %d without a value has status %v", i, k, status.Code(b.Status))
		}
	}
}

func sameSample(a, b *tsdb.Sample) bool {
	return a.Time == b.Time && a.Value == b.Value && a.Status == b.Status && a.NoValue == b.NoValue
}

func fmtSample(s *tsdb.Sample) string {
	at := time.Unix(0, s.Time).Format("15:04:05.000")
	if s.NoValue {
		return fmt.Sprintf("%s %v (no value)", at, status.Code(s.Status))
	}
	return fmt.Sprintf("%s %d %v", at, uint32(s.Value), status.Code(s.Status))
}

// lastValued returns the time of the last sample with a value.
func lastValued(s []tsdb.Sample) int64 {
	for k := len(s) - 1; k >= 0; k-- {
		if !s[k].NoValue {
			return s[k].Time
		}
	}
	return 0
}
