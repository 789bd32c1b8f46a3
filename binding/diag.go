package binding

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
)

// DiagnosticsNamespaceURI is the namespace of the Diagnostics object and
// its variables, apart from the tags' so that no device name can collide
// with them.
const DiagnosticsNamespaceURI = "urn:edged:diagnostics"

// The Diagnostics object, Objects/Diagnostics (NodeId s=Diagnostics), holds
// the cycle's statistics as variables with the NodeId s=Diagnostics.<name>
// and, per device, a folder s=Devices.<device> with the device's
// statistics s=Devices.<device>.<name>. Durations are OPC UA Durations
// (Double, milliseconds); percentiles are over the engine's window
// (plc.Config.Window cycles).
//
// The values are read from Engine.Diagnostics into one cached struct,
// refreshed by the first Read request after a cycle period has passed, so
// a burst of requests costs one refresh per cycle. Reading them allocates
// nothing. The values of one request may come from two refreshes when
// another request refreshes in between.

// diagVar is one variable of the Diagnostics object.
type diagVar struct {
	name string
	dt   uint32
	desc string
	get  func(d *plc.Diagnostics, dv *ua.Variant)
}

var engineVars = []diagVar{
	{"Period", id.Duration, "the base cycle", func(d *plc.Diagnostics, v *ua.Variant) { v.SetFloat64(ms(d.Period)) }},
	{"Cycles", id.UInt64, "cycles run", func(d *plc.Diagnostics, v *ua.Variant) { v.SetUint64(d.Cycles) }},
	{"Overruns", id.UInt64, "cycles skipped because the loop woke a period late or more", func(d *plc.Diagnostics, v *ua.Variant) { v.SetUint64(d.Overruns) }},
	{"CycleTimeP50", id.Duration, "median time from a cycle's start to its publish", func(d *plc.Diagnostics, v *ua.Variant) { v.SetFloat64(ms(d.CycleTime.P50)) }},
	{"CycleTimeP99", id.Duration, "99th percentile of the cycle time", func(d *plc.Diagnostics, v *ua.Variant) { v.SetFloat64(ms(d.CycleTime.P99)) }},
	{"CycleTimeMax", id.Duration, "longest cycle time in the window", func(d *plc.Diagnostics, v *ua.Variant) { v.SetFloat64(ms(d.CycleTime.Max)) }},
	{"StartJitterP50", id.Duration, "median lateness of a cycle's start against its deadline", func(d *plc.Diagnostics, v *ua.Variant) { v.SetFloat64(ms(d.StartJitter.P50)) }},
	{"StartJitterP99", id.Duration, "99th percentile of the start jitter", func(d *plc.Diagnostics, v *ua.Variant) { v.SetFloat64(ms(d.StartJitter.P99)) }},
	{"StartJitterMax", id.Duration, "largest start jitter in the window", func(d *plc.Diagnostics, v *ua.Variant) { v.SetFloat64(ms(d.StartJitter.Max)) }},
	{"ImagesAllocated", id.UInt64, "images allocated because a reader kept the previous one", func(d *plc.Diagnostics, v *ua.Variant) { v.SetUint64(d.ImagesAllocated) }},
}

type devVar struct {
	name string
	dt   uint32
	desc string
	get  func(d *plc.DeviceDiagnostics, v *ua.Variant)
}

var deviceVars = []devVar{
	{"Requests", id.UInt64, "requests sent", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.Driver.Requests) }},
	{"Errors", id.UInt64, "requests that failed, timeouts included", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.Driver.Errors) }},
	{"Timeouts", id.UInt64, "requests that timed out", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.Driver.Timeouts) }},
	{"Reconnects", id.UInt64, "connections reopened", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.Driver.Reconnects) }},
	{"LastError", id.String, "the last error, empty if none", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetString(d.Driver.LastError) }},
	{"LastErrorTime", id.UtcTime, "when the last error happened", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetDateTime(d.Driver.LastErrorTime) }},
	{"RoundTrip", id.Duration, "the last request's round-trip time", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetFloat64(ms(d.Driver.RoundTrip)) }},
	{"State", id.String, "the driver's connection state", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetString(d.Driver.State) }},
	{"Polls", id.UInt64, "polls finished", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.Polls) }},
	{"PollErrors", id.UInt64, "polls that failed as a whole", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.PollErrors) }},
	{"SkippedPolls", id.UInt64, "cycles with work due while a poll was still running", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.SkippedPolls) }},
	{"PollTime", id.Duration, "the last poll's duration", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetFloat64(ms(d.PollTime)) }},
	{"Writes", id.UInt64, "writes finished or expired", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.Writes) }},
	{"WriteErrors", id.UInt64, "writes whose result was not Good", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetUint64(d.WriteErrors) }},
	{"Failing", id.Boolean, "the device is not answering", func(d *plc.DeviceDiagnostics, v *ua.Variant) { v.SetBool(d.Failing) }},
}

// diagSource serves the Diagnostics variables from a cached
// plc.Diagnostics; it is its own snapshot. Handles below len(engineVars)
// are engineVars; then device i's variable k is
// len(engineVars) + i*len(deviceVars) + k.
type diagSource struct {
	e   *plc.Engine
	now func() time.Time

	mu sync.Mutex
	d  plc.Diagnostics
	at time.Time // when d was filled
}

// Snapshot refreshes the cache when it is a period old or older.
func (s *diagSource) Snapshot() addrspace.Snapshot {
	now := s.now()
	s.mu.Lock()
	if now.Sub(s.at) >= s.d.Period || s.at.IsZero() {
		s.e.Diagnostics(&s.d)
		s.at = now
	}
	s.mu.Unlock()
	return s
}

// Value copies variable h from the cache.
func (s *diagSource) Value(h uint32, dv *ua.DataValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dv.SourceTimestamp = s.at
	if int(h) < len(engineVars) {
		engineVars[h].get(&s.d, &dv.Value)
		return
	}
	h -= uint32(len(engineVars))
	i, k := int(h)/len(deviceVars), int(h)%len(deviceVars)
	if i >= len(s.d.Devices) {
		dv.Value.Reset()
		dv.Status = status.BadInternalError
		return
	}
	deviceVars[k].get(&s.d.Devices[i], &dv.Value)
}

// DiagnosticsNodeID returns the NodeId of the Diagnostics variable name
// ("CycleTimeP99").
func (b *Binding) DiagnosticsNodeID(name string) ua.NodeID {
	return ua.NewStringNodeID(b.dns, "Diagnostics."+name)
}

// DeviceDiagnosticsNodeID returns the NodeId of the Diagnostics variable
// name ("Requests") of device.
func (b *Binding) DeviceDiagnosticsNodeID(device, name string) ua.NodeID {
	return ua.NewStringNodeID(b.dns, "Devices."+device+"."+name)
}

func (b *Binding) addDiagnostics() error {
	b.dns = b.as.AddNamespace(DiagnosticsNamespaceURI)
	s := &diagSource{e: b.e, now: time.Now}
	b.e.Diagnostics(&s.d)
	s.at = time.Now()
	b.diag = s
	src := b.as.AddSource(s)
	folder := ua.NewStringNodeID(b.dns, "Diagnostics")
	if err := b.as.AddNode(&addrspace.Node{
		ID:          folder,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{NamespaceIndex: b.dns, Name: "Diagnostics"},
		Description: text("Statistics of the scan cycle and of each device"),
	},
		ref(id.Organizes, true, ua.NewNumericNodeID(0, id.ObjectsFolder)),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.FolderType)),
	); err != nil {
		return fmt.Errorf("binding: Diagnostics: %w", err)
	}
	for k, v := range engineVars {
		if err := b.addDiagVar(folder, b.DiagnosticsNodeID(v.name), v.name, v.dt, v.desc, src, uint32(k)); err != nil {
			return err
		}
	}
	var names []string
	for _, d := range s.d.Devices {
		names = append(names, d.Name)
	}
	return b.addDiagDevices(names)
}

// addDiagDevices adds the statistics folders of the devices, in the
// engine's order (their handles in the diagnostics source follow it).
func (b *Binding) addDiagDevices(names []string) error {
	folder := ua.NewStringNodeID(b.dns, "Diagnostics")
	src := b.as.AddSource(b.diag)
	for i, name := range names {
		df := ua.NewStringNodeID(b.dns, "Devices."+name)
		if err := b.as.AddNode(&addrspace.Node{
			ID:          df,
			Class:       ua.NodeClassObject,
			BrowseName:  ua.QualifiedName{NamespaceIndex: b.dns, Name: name},
			Description: text("Statistics of device " + name),
		},
			ref(id.Organizes, true, folder),
			ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.FolderType)),
		); err != nil {
			return fmt.Errorf("binding: Diagnostics of %s: %w", name, err)
		}
		for k, v := range deviceVars {
			h := uint32(len(engineVars) + i*len(deviceVars) + k)
			if err := b.addDiagVar(df, b.DeviceDiagnosticsNodeID(name, v.name), v.name, v.dt, v.desc, src, h); err != nil {
				return err
			}
		}
	}
	b.diagDevs = names
	return nil
}

// syncDiagDevices shows the statistics of the engine's devices after a
// change: the folders of all devices are made anew when the devices or
// their order changed.
func (b *Binding) syncDiagDevices() error {
	var d plc.Diagnostics
	b.e.Diagnostics(&d)
	var names []string
	for _, dev := range d.Devices {
		names = append(names, dev.Name)
	}
	if slices.Equal(names, b.diagDevs) {
		return nil
	}
	for _, name := range b.diagDevs {
		b.as.RemoveNode(ua.NewStringNodeID(b.dns, "Devices."+name))
	}
	return b.addDiagDevices(names)
}

func (b *Binding) addDiagVar(parent, nid ua.NodeID, name string, dt uint32, desc string, src addrspace.SourceID, h uint32) error {
	if err := b.as.AddNode(&addrspace.Node{
		ID:                      nid,
		Class:                   ua.NodeClassVariable,
		BrowseName:              ua.QualifiedName{NamespaceIndex: b.dns, Name: name},
		Description:             text(desc),
		DataType:                ua.NewNumericNodeID(0, dt),
		ValueRank:               addrspace.ValueRankScalar,
		AccessLevel:             uint8(ua.AccessLevelTypeCurrentRead),
		MinimumSamplingInterval: ms(b.e.Period()),
		Source:                  src,
		Handle:                  h,
	},
		ref(id.HasComponent, true, parent),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.BaseDataVariableType)),
	); err != nil {
		return fmt.Errorf("binding: Diagnostics variable %s: %w", nid.Text, err)
	}
	return nil
}
