package main

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

	"github.com/edged/edged/binding"
	"github.com/edged/edged/internal/cfgstore"
	pconfig "github.com/edged/edged/plc/config"
)

// ConfigDir is the folder of the configuration versions in the data
// folder; controlSocket, in it, is how `edged config` reaches a running
// edged; lockFile is held by the process that writes the versions.
const (
	ConfigDir     = "config"
	controlSocket = "control.sock"
	lockFile      = "lock"
)

// openVersions opens the versions of dataDir and takes the writer's lock
// (a running edged, or `edged config` when none runs). release gives it
// back.
func openVersions(dataDir string) (st *cfgstore.Store, release func(), err error) {
	dir := filepath.Join(dataDir, ConfigDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s is in use by another edged", dir)
	}
	st, err = cfgstore.Open(dir)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return st, func() { f.Close() }, nil
}

// chooseConfig returns the configuration to run: the store's current
// version; or, when the store holds none or --config-replace is given,
// the command line's (--config, --import-csv, --board or the built-in
// simulator's, read by loadConfig only then), which becomes a new
// version. It says on out where the configuration comes from, and which
// stored versions it passed over.
func chooseConfig(cfg config, st *cfgstore.Store, out io.Writer) (*pconfig.Config, error) {
	for _, d := range st.Damaged() {
		fmt.Fprintf(out, "edged: WARNING: configuration version %s: passed over (kept as *.damaged)\n", d)
	}
	source := "the built-in simulator's configuration"
	if cfg.configFile != "" {
		source = "--config " + cfg.configFile
	}
	cur, doc, err := st.Current()
	switch {
	case errors.Is(err, cfgstore.ErrEmpty), err == nil && cfg.configReplace:
		cmdline, err := loadConfig(cfg)
		if err != nil {
			return nil, err
		}
		b, merr := cmdline.Marshal()
		if merr != nil {
			return nil, merr
		}
		comment := "first version, from " + source
		if cfg.configReplace {
			comment = "--config-replace, from " + source
		}
		m, err := st.Add(cfgstore.Meta{User: "command line", Client: source, Comment: comment, Summary: summaryOf(cmdline)}, b)
		if err != nil {
			return nil, fmt.Errorf("storing the configuration in %s: %w", st.Dir(), err)
		}
		fmt.Fprintf(out, "edged: configuration version %d (%s) stored in %s\n", m.Version, comment, st.Dir())
		return cmdline, nil
	case err != nil:
		return nil, err
	}
	// The newest stored version that still validates (a board profile
	// may have gone, say).
	h := st.History()
	for i := len(h) - 1; i >= 0; i-- {
		m := h[i]
		if m.Version != cur.Version {
			_, doc, _ = st.Get(m.Version)
		}
		c, err := pconfig.Parse(doc)
		if err != nil {
			fmt.Fprintf(out, "edged: WARNING: configuration version %d does not validate, passed over: %v\n", m.Version, err)
			continue
		}
		fmt.Fprintf(out, "edged: configuration version %d from %s (%s, %s)\n", m.Version, st.Dir(), m.User, m.Time.Format(time.RFC3339))
		if cfg.configFile != "" || cfg.importCSV != "" || cfg.board != "" {
			fmt.Fprintf(out, "edged: WARNING: --config, --import-csv and --board are not read: the stored version runs (give --config-replace to make them a new version)\n")
		}
		return c, nil
	}
	return nil, fmt.Errorf("no stored configuration version in %s validates; give --config-replace", st.Dir())
}

// summaryOf describes a whole configuration, for its first version.
func summaryOf(c *pconfig.Config) string {
	return binding.Summarize(&pconfig.Config{}, c)
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

// serveControl answers `edged config` on the control socket of the data
// folder (0600: root's, as the serial console is) until ctx ends.
func serveControl(ctx context.Context, dataDir string, svc *binding.ConfigService) (func(), error) {
	path := filepath.Join(dataDir, ConfigDir, controlSocket)
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
	c, err := net.DialTimeout("unix", filepath.Join(dataDir, ConfigDir, controlSocket), time.Second)
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
