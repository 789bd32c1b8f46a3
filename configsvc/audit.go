package configsvc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
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
	a.mu.Lock()
	defer a.mu.Unlock()
	if fi, err := os.Stat(a.path); err == nil && fi.Size()+int64(len(line)) >= MaxAudit {
		if err := os.Rename(a.path, a.path+".1"); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
