package stack

import (
	"context"
	"fmt"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/northbound"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	pconfig "github.com/edged/edged/plc/config"
)

// hasNorthbound reports whether conf publishes northbound.
func hasNorthbound(conf *pconfig.Config) bool {
	return conf.Northbound != nil && conf.Northbound.Sparkplug != nil
}

// checkNorthbound checks what Validate cannot: the commands' role and the
// files the section names.
func checkNorthbound(conf *pconfig.Config) error {
	if !hasNorthbound(conf) {
		return nil
	}
	if c := conf.Northbound.Sparkplug.Commands; c != nil {
		if _, ok := server.ParseRole(c.Role); !ok {
			return fmt.Errorf("northbound.sparkplug.commands.role: %q is not a role (Observer, Operator, Engineer, Supervisor, ...)", c.Role)
		}
	}
	return northbound.Check(conf)
}

// makeNorthbound makes the edge node of conf, if it has one, and its
// diagnostics (present without one: state "off").
func (st *Stack) makeNorthbound(conf *pconfig.Config) error {
	if err := st.addNorthboundDiagnostics(); err != nil {
		return err
	}
	if !hasNorthbound(conf) {
		return nil
	}
	if err := checkNorthbound(conf); err != nil {
		return err
	}
	n, err := northbound.New(st.northboundOptions(), conf)
	if err != nil {
		return err
	}
	st.nbMu.Lock()
	st.Northbound = n
	st.nbMu.Unlock()
	return nil
}

func (st *Stack) northboundOptions() northbound.Options {
	return northbound.Options{Engine: st.Engine, History: st.Historian, Write: st.sparkplugWrite,
		Logger: st.cfg.Server.Logger, Version: st.cfg.Server.SoftwareVersion}
}

// sparkplugWrite makes a DCMD's write as a session with role would:
// through the address space, with that role's rights.
func (st *Stack) sparkplugWrite(ctx context.Context, role, device, tag string, v plc.Value) plc.Status {
	r, ok := server.ParseRole(role)
	if !ok {
		return status.BadUserAccessDenied
	}
	return st.Binding.WriteTag(ctx, server.RolesOf(r).User(), device, tag, v)
}

// applyNorthbound makes the edge node follow conf: made and started when
// conf adds one, stopped when it removes it.
func (st *Stack) applyNorthbound(conf *pconfig.Config) error {
	st.nbMu.Lock()
	n := st.Northbound
	st.nbMu.Unlock()
	switch {
	case n != nil && hasNorthbound(conf):
		return n.Apply(conf)
	case n != nil:
		n.Stop()
		st.nbMu.Lock()
		st.Northbound = nil
		st.nbMu.Unlock()
		return nil
	case hasNorthbound(conf):
		n, err := northbound.New(st.northboundOptions(), conf)
		if err != nil {
			return err
		}
		if st.running {
			n.Start()
		}
		st.nbMu.Lock()
		st.Northbound = n
		st.nbMu.Unlock()
	}
	return nil
}

// stopNorthbound stops the edge node, if one runs.
func (st *Stack) stopNorthbound() {
	st.nbMu.Lock()
	n := st.Northbound
	st.Northbound = nil
	st.nbMu.Unlock()
	if n != nil {
		n.Stop()
	}
}

// northboundStats are the edge node's figures; State "off" without one.
func (st *Stack) northboundStats() northbound.Stats {
	st.nbMu.Lock()
	n := st.Northbound
	st.nbMu.Unlock()
	if n == nil {
		return northbound.Stats{State: "off"}
	}
	return n.Stats()
}

// addNorthboundDiagnostics adds Diagnostics/Northbound.
func (st *Stack) addNorthboundDiagnostics() error {
	get := func(f func(s *northbound.Stats, v *ua.Variant)) func(*ua.Variant) {
		return func(v *ua.Variant) {
			s := st.northboundStats()
			f(&s, v)
		}
	}
	vars := []binding.DiagVar{
		{Name: "State", DataType: id.String, Desc: "off, connecting, waiting for the primary host, online, stopped",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetString(s.State) })},
		{Name: "Broker", DataType: id.String, Desc: "the broker in use or being tried",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetString(s.Broker) })},
		{Name: "BdSeq", DataType: id.UInt64, Desc: "the Sparkplug bdSeq of the session",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.BdSeq) })},
		{Name: "MessagesSent", DataType: id.UInt64, Desc: "MQTT messages published",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.Messages) })},
		{Name: "MetricsSent", DataType: id.UInt64, Desc: "metrics published, in births and forwarded ones included",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.Metrics) })},
		{Name: "Forwarded", DataType: id.UInt64, Desc: "stored samples forwarded after an outage (is_historical)",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.Replayed) })},
		{Name: "Backlog", DataType: id.UInt64, Desc: "stored samples waiting to be forwarded",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.Backlog) })},
		{Name: "BacklogAge", DataType: id.Duration, Desc: "age of the oldest sample waiting to be forwarded (ms)",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetFloat64(float64(s.BacklogAge.Milliseconds())) })},
		{Name: "CommandsWritten", DataType: id.UInt64, Desc: "DCMD writes made",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.Commands) })},
		{Name: "CommandsRefused", DataType: id.UInt64, Desc: "DCMD writes refused or failed",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.Refused) })},
		{Name: "Reconnects", DataType: id.UInt64, Desc: "connections lost and made again",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetUint64(s.Reconnects) })},
		{Name: "LastError", DataType: id.String, Desc: "the last problem, \"\" none",
			Get: get(func(s *northbound.Stats, v *ua.Variant) { v.SetString(s.LastError) })},
	}
	return st.Binding.AddDiagnostics("Northbound", "The Sparkplug B edge node: its connection, messages and store-and-forward backlog", vars)
}
