package configsvc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/edged/edged/plc/config"
)

// Dir is the folder of the configuration versions in the data folder;
// controlSocket, in it, is how `edged config` reaches a running edged;
// lockFile is held by the process that writes the versions.
const (
	Dir           = "config"
	controlSocket = "control.sock"
	lockFile      = "lock"
)

// OpenDataDir opens the versions of the data folder dataDir to read them;
// a running edged may write them meanwhile.
func OpenDataDir(dataDir string) (*Store, error) {
	return Open(filepath.Join(dataDir, Dir))
}

// Lock opens the versions of the data folder dataDir to write them: it
// takes the writer's lock (held by a running edged, or by `edged config`
// when none runs), which Close gives back.
func Lock(dataDir string) (*Store, error) {
	dir := filepath.Join(dataDir, Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another edged", dir)
	}
	st, err := Open(dir)
	if err != nil {
		f.Close()
		return nil, err
	}
	st.lock = f
	return st, nil
}

// Close writes the audit records queued (Audit.Put) and gives back the
// writer's lock, if the store holds it.
func (s *Store) Close() error {
	s.audit.stopSink()
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// controlRequest is one request on the control socket.
type controlRequest struct {
	Cmd     string `json:"cmd"` // "rollback"
	Version uint32 `json:"version"`
}

// controlReply answers it.
type controlReply struct {
	Version  uint32   `json:"version,omitempty"`
	Problems []string `json:"problems,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// ServeControl answers `edged config` on the control socket beside the
// versions (0600: root's, as the serial console is) until ctx ends or
// stop is called.
func (svc *Service) ServeControl(ctx context.Context) (stop func(), err error) {
	path := filepath.Join(svc.opts.Store.Dir(), controlSocket)
	os.Remove(path) // one left by a run that was killed
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	os.Chmod(path, 0o600)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(time.Minute))
				var req controlRequest
				if err := json.NewDecoder(io.LimitReader(c, 1<<10)).Decode(&req); err != nil {
					return
				}
				var rep controlReply
				switch req.Cmd {
				case "rollback":
					rep.Version, rep.Problems = svc.ConsoleRollback(ctx, req.Version)
				default:
					rep.Error = "unknown command " + req.Cmd
				}
				json.NewEncoder(c).Encode(rep)
			}()
		}
	}()
	return func() { ln.Close(); os.Remove(path) }, nil
}

// callControl sends req to a running edged; ok is false when none runs.
func callControl(dataDir string, req controlRequest) (rep controlReply, ok bool, err error) {
	c, err := net.DialTimeout("unix", filepath.Join(dataDir, Dir, controlSocket), time.Second)
	if err != nil {
		return rep, false, nil
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return rep, true, err
	}
	err = json.NewDecoder(bufio.NewReader(c)).Decode(&rep)
	return rep, true, err
}

// Rollback makes the document of stored version v the next version, as
// `edged config rollback` does: through the running edged, which applies
// it live (live true), or, when none runs, stored for its next start.
// Problems say why nothing changed.
func Rollback(dataDir string, v uint32) (version uint32, live bool, problems []string, err error) {
	rep, running, err := callControl(dataDir, controlRequest{Cmd: "rollback", Version: v})
	switch {
	case err != nil:
		return 0, true, nil, fmt.Errorf("the running edged: %w", err)
	case running && rep.Error != "":
		return 0, true, nil, errors.New(rep.Error)
	case running:
		return rep.Version, true, rep.Problems, nil
	}
	st, err := Lock(dataDir)
	if err != nil {
		return 0, false, nil, err
	}
	defer st.Close()
	_, doc, ok := st.Get(v)
	if !ok {
		return 0, false, nil, fmt.Errorf("no version %d in %s", v, st.Dir())
	}
	if _, err := config.Parse(doc); err != nil {
		var ve *config.ValidationError
		if errors.As(err, &ve) {
			return 0, false, nil, fmt.Errorf("version %d does not validate now: %w", v, err)
		}
		return 0, false, nil, fmt.Errorf("version %d: %w", v, err)
	}
	m, err := st.Add(Meta{User: "console", Comment: fmt.Sprintf("rollback to version %d (edged config rollback, edged not running)", v), Summary: "rollback"}, doc)
	if err != nil {
		return 0, false, nil, err
	}
	st.Audit().Log(AuditEntry{User: "console", Action: "rollback", Version: m.Version, Summary: fmt.Sprintf("to version %d", v)})
	return m.Version, false, nil, nil
}
