package stack

import (
	"fmt"
	"strings"
	"time"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	pconfig "github.com/edged/edged/plc/config"
)

// reverseTargets are the clients conf's opcua section and the
// --reverse-connect flags (Config.ReverseConnect) name, the section's
// first; a flag's URL the section lists too is taken once.
func (st *Stack) reverseTargets(conf *pconfig.Config) []server.ReverseTarget {
	var ts []server.ReverseTarget
	seen := map[string]bool{}
	if conf.OPCUA != nil {
		for _, r := range conf.OPCUA.ReverseConnect {
			ts = append(ts, server.ReverseTarget{URL: r.URL, MaxConnections: r.MaxConnections})
			seen[r.URL] = true
		}
	}
	for _, u := range st.cfg.ReverseConnect {
		if !seen[u] {
			ts = append(ts, server.ReverseTarget{URL: u})
			seen[u] = true
		}
	}
	return ts
}

// applyReverse makes the server connect to conf's reverse-connect clients.
func (st *Stack) applyReverse(conf *pconfig.Config) error {
	st.reverse = st.reverseTargets(conf)
	if err := st.Server.SetReverseConnect(st.reverse); err != nil {
		return fmt.Errorf("opcua.reverse_connect: %w", err)
	}
	return nil
}

// addReverseDiagnostics adds Diagnostics/ReverseConnect.
func (st *Stack) addReverseDiagnostics() error {
	count := func(f func(s *server.ReverseState) bool) func(*ua.Variant) {
		return func(v *ua.Variant) {
			n := uint32(0)
			for _, s := range st.Server.ReverseStates() {
				if f(&s) {
					n++
				}
			}
			v.SetUint32(n)
		}
	}
	vars := []binding.DiagVar{
		{Name: "Targets", DataType: id.UInt32, Desc: "clients the server connects to",
			Get: count(func(*server.ReverseState) bool { return true })},
		{Name: "Waiting", DataType: id.UInt32, Desc: "clients with a connection waiting for their Hello (they can connect now)",
			Get: count(func(s *server.ReverseState) bool { return s.State == "waiting" })},
		{Name: "Connections", DataType: id.UInt32, Desc: "reverse connections served",
			Get: func(v *ua.Variant) {
				n := 0
				for _, s := range st.Server.ReverseStates() {
					n += s.Connections
				}
				v.SetUint32(uint32(n))
			}},
		{Name: "States", DataType: id.String, Desc: "one line per client: URL, state (connecting, waiting, full, retrying, refused), connections, last error",
			Get: func(v *ua.Variant) { v.SetString(reverseLines(st.Server.ReverseStates(), time.Now())) }},
	}
	return st.Binding.AddDiagnostics("ReverseConnect", "The clients the server connects to (reverse connect): their state and last error", vars)
}

// reverseLines is states as text, one line per client.
func reverseLines(states []server.ReverseState, now time.Time) string {
	var b strings.Builder
	for i, s := range states {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s, %d connections, %d opened", s.URL, s.State, s.Connections, s.Opened)
		if !s.RetryAt.IsZero() {
			fmt.Fprintf(&b, ", next try in %v", max(0, s.RetryAt.Sub(now)).Round(time.Second))
		}
		if s.LastError != "" {
			fmt.Fprintf(&b, ", last error: %s", s.LastError)
		}
	}
	return b.String()
}
