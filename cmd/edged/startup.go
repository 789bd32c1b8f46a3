package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"time"

	"github.com/edged/edged/board"
	"github.com/edged/edged/configsvc"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/uasc"
	"github.com/edged/edged/opcua/users"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

// startupConfig turns the command line into the stack's configuration:
// the listener of --listen, the server's settings, the certificate and
// key (loaded or made on a goroutine of their own: on a slow core that is
// a third of the start), the users, the configuration versions and the
// one that runs, the board's real-time settings and watchdog, edged's
// runtime policy. loaded waits for the certificate's goroutine; call it
// once the stack was made (or not).
func startupConfig(cfg config, out io.Writer) (sc stack.Config, loaded func(), err error) {
	ln, err := server.Listen(cfg.listen)
	if err != nil {
		return sc, nil, fmt.Errorf("cannot listen on --listen %s: %w", cfg.listen, err)
	}
	scfg := serverConfig(cfg, endpointURL(cfg.advertiseHost, ln.Addr().(*net.TCPAddr).Port), out)
	// What the certificate's loading says comes after the configuration's
	// lines: when the stack takes the security.
	var (
		sec     *server.Security
		secErr  error
		secOut  bytes.Buffer
		secDone = make(chan struct{})
	)
	go func() {
		defer close(secDone)
		sec, secErr = setupSecurity(cfg, cfg.hostname, &secOut, func(st *pki.Store, trust string) {
			st.LogRejections(scfg.Logger, trust)
		})
	}()
	defer func() {
		if err != nil {
			ln.Close()
			<-secDone // never left writing the data folder
		}
	}()
	auth := gatewayAuth{users: users.Open(cfg.dataDir), anonymous: cfg.anonymous}
	scfg.Authenticator, scfg.RoleIdentities = auth, auth.roleIdentities
	versions, err := configsvc.Lock(cfg.dataDir)
	if err != nil {
		return sc, nil, fmt.Errorf("--data-dir %s: %w", cfg.dataDir, err)
	}
	scfg.Audit = versions.Audit().Put
	conf, err := chooseConfig(cfg, versions, out)
	if err == nil && cfg.mqtt != "" && conf.Northbound == nil {
		conf.Northbound = pconfig.DefaultSparkplug(cfg.mqtt)
		if verr := conf.Validate(); verr != nil {
			err = &configError{fmt.Errorf("--mqtt %s: %w", cfg.mqtt, verr)}
		}
	}
	if err == nil {
		sc, err = boardSettings(cfg, conf)
	}
	if err != nil {
		versions.Close()
		return sc, nil, err
	}
	sc.Plant, sc.Listener, sc.Server, sc.Versions, sc.Control = conf, ln, scfg, versions, true
	sc.Security = func() (*server.Security, error) {
		<-secDone
		out.Write(secOut.Bytes())
		return sec, secErr
	}
	sc.HistoryDir = filepath.Join(cfg.dataDir, HistoryDirName)
	sc.Runtime = stack.Policy()
	sc.StallAfter = cfg.stallAfter
	sc.ReverseConnect = cfg.reverse
	if stack.NeedsSimulator(conf) {
		sc.Simulator = &sim.Options{InMemory: cfg.simInMemory}
	}
	return sc, func() { <-secDone }, nil
}

// HistoryDirName is the folder of the history store in the data folder.
const HistoryDirName = "history"

// boardSettings are the real-time settings and the watchdog of the
// configuration's board profile, as the flags change them.
func boardSettings(cfg config, conf *pconfig.Config) (stack.Config, error) {
	var sc stack.Config
	prof, err := board.Lookup(conf.Board)
	if err != nil {
		return sc, err
	}
	rt := prof.RT
	if cfg.rtPriority >= 0 {
		rt.Priority = cfg.rtPriority
	}
	if cfg.rtCPU >= 0 {
		rt.CPU = cfg.rtCPU
	} else if cfg.rtCPU == -2 {
		rt.CPU = -1
	}
	if rt.CPU >= runtime.NumCPU() {
		rt.CPU = -1 // a board profile for more cores than this machine has
	}
	sc.RealTime = &rt
	sc.Watchdog = prof.Watchdog
	if cfg.watchdog != "" {
		sc.Watchdog = cfg.watchdog
	}
	if sc.Watchdog == "none" {
		sc.Watchdog = ""
	}
	sc.WatchdogTimeout = cfg.watchdogTimeout
	return sc, nil
}

// serverConfig configures the OPC UA server from the command line.
func serverConfig(cfg config, url string, out io.Writer) server.Config {
	number, date := buildStamp()
	return server.Config{
		EndpointURL:     url,
		SoftwareVersion: version,
		BuildNumber:     number,
		BuildDate:       date,
		MaxSessions:     cfg.maxSessions,
		MaxConnections:  cfg.maxConnections,
		DataEfficient:   cfg.dataEfficient,
		Poller:          cfg.poller,
		Channel:         &uasc.Config{ReadSpin: cfg.readSpin},
		Logger:          slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// chooseConfig returns the configuration to run: the store's current
// version; or, when the store holds none or --config-replace is given,
// the command line's (--config, --import-csv, --board or the built-in
// simulator's, read by loadConfig only then), which becomes a new
// version. It says on out where the configuration comes from, and which
// stored versions it passed over.
func chooseConfig(cfg config, st *configsvc.Store, out io.Writer) (*pconfig.Config, error) {
	for _, d := range st.Damaged() {
		fmt.Fprintf(out, "edged: WARNING: configuration version %s: passed over (kept as *.damaged)\n", d)
	}
	source := "the built-in simulator's configuration"
	if cfg.configFile != "" {
		source = "--config " + cfg.configFile
	}
	cur, doc, err := st.Current()
	switch {
	case errors.Is(err, configsvc.ErrEmpty), err == nil && cfg.configReplace:
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
		m, err := st.Add(configsvc.Meta{User: "command line", Client: source, Comment: comment, Summary: pconfig.Summarize(&pconfig.Config{}, cmdline)}, b)
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
