package configsvc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// MaxAudit is the size at which the audit log is rotated: audit.log
// becomes audit.log.1 (the one before that goes), so the two take at
// most twice this.
const MaxAudit = 1 << 20

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	Time    time.Time `json:"time"`
	User    string    `json:"user"`
	Client  string    `json:"client,omitempty"`
	Action  string    `json:"action"` // apply, confirm, revert, rollback, refused, ...
	Version uint32    `json:"version,omitempty"`
	Summary string    `json:"summary,omitempty"`
}

// Audit appends lines to the audit log of a folder.
type Audit struct {
	mu   sync.Mutex
	path string

	sink struct {
		mu     sync.Mutex
		closed bool
		lines  chan []byte // nil until the first Put
		lost   atomic.Uint64
		done   chan struct{}
	}
}

// sinkQueue is how many lines Put holds for the disk; beyond them lines
// are counted lost.
const sinkQueue = 1024

// Put queues line, one JSON object, for the log without waiting for the
// disk: a goroutine writes what is queued, syncing once per batch. A line
// beyond sinkQueue waiting is lost and counted, and the count is logged
// with the next batch. Close of the store writes what is queued.
func (a *Audit) Put(line []byte) {
	k := &a.sink
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return // the store is closed: edged stops
	}
	if k.lines == nil {
		k.lines = make(chan []byte, sinkQueue)
		k.done = make(chan struct{})
		go a.drain()
	}
	select {
	case k.lines <- line:
	default:
		k.lost.Add(1)
	}
}

// drain writes the queued lines until stopSink.
func (a *Audit) drain() {
	defer close(a.sink.done)
	for line := range a.sink.lines {
		batch := [][]byte{line}
	more:
		for len(batch) < sinkQueue {
			select {
			case l, ok := <-a.sink.lines:
				if !ok {
					break more
				}
				batch = append(batch, l)
			default:
				break more
			}
		}
		if n := a.sink.lost.Swap(0); n > 0 {
			if l, err := json.Marshal(AuditEntry{Time: time.Now().UTC(), User: "edged", Action: "lost",
				Summary: fmt.Sprintf("%d audit records not written: more came than the disk took", n)}); err == nil {
				batch = append(batch, l)
			}
		}
		a.write(batch...) // a failing disk: the records are lost, as the log line says
	}
}

// stopSink writes what Put queued and stops its goroutine.
func (a *Audit) stopSink() {
	k := &a.sink
	k.mu.Lock()
	started := k.lines != nil && !k.closed
	if started {
		close(k.lines)
	}
	k.closed = true
	k.mu.Unlock()
	if started {
		<-k.done
	}
}

// NewAudit returns the audit log audit.log of dir.
func NewAudit(dir string) *Audit { return &Audit{path: filepath.Join(dir, "audit.log")} }

// Path returns the log's path.
func (a *Audit) Path() string { return a.path }

// Log appends e (Time filled in when zero) and syncs it.
func (a *Audit) Log(e AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return a.Write(line)
}

// Write appends line, one JSON object, and syncs it.
func (a *Audit) Write(line []byte) error { return a.write(line) }

// write appends lines and syncs them, rotating the log at MaxAudit.
func (a *Audit) write(lines ...[]byte) error {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if fi, err := os.Stat(a.path); err == nil && fi.Size()+int64(len(b)) >= MaxAudit {
		if err := os.Rename(a.path, a.path+".1"); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
