package binding

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/edged/edged/historian"
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/history"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/tsdb"
)

// The history of the tags (historian) is shown as OPC 10000-11 asks: a
// historized tag's Variable is Historizing, has the HistoryRead bit in its
// AccessLevel and a HasHistoricalConfiguration reference to an "HA
// Configuration" object (HistoricalDataConfigurationType). Tags whose
// history is configured alike share that object, so that a gateway with
// 10,000 historized tags keeps a few of them, not 10,000 (its
// StartOfArchive is the store's oldest sample: no tag has data before
// it).

// histKey tells the HA Configuration objects apart: what their values
// say.
type histKey struct {
	conf    string // the tag's history settings and the store's, as JSON
	stepped bool
	scanMs  float64
}

// haConfig returns the HA Configuration object of a tag with history
// settings th (and cfg's store settings), stepped or sloped, scanned every
// scanMs, making it on first use.
func (b *Binding) haConfig(cfg *config.Config, th *config.TagHistory, stepped bool, scanMs float64) (ua.NodeID, error) {
	js, err := json.Marshal(struct {
		T *config.TagHistory
		H *config.History
	}{th, cfg.History})
	if err != nil {
		return ua.NodeID{}, err
	}
	k := histKey{conf: string(js), stepped: stepped, scanMs: scanMs}
	if nid, ok := b.haNodes[k]; ok {
		return nid, nil
	}
	if b.haNodes == nil {
		b.haNodes = map[histKey]ua.NodeID{}
	}
	// '/' is not in a device or tag name: no tag's NodeId is like it.
	nid := ua.NewStringNodeID(b.ns, fmt.Sprintf("history/%d", len(b.haNodes)+1))
	if err := b.addHAConfig(nid, cfg, th, stepped, scanMs); err != nil {
		return ua.NodeID{}, err
	}
	b.haNodes[k] = nid
	return nid, nil
}

// Values of ExceptionDeviationFormat (OPC 10000-11 §5.2.2).
const (
	deviationAbsolute  = 0
	deviationPercentEU = 3
)

// addHAConfig adds HA Configuration object nid with its properties and
// its AggregateConfiguration.
func (b *Binding) addHAConfig(nid ua.NodeID, cfg *config.Config, th *config.TagHistory, stepped bool, scanMs float64) error {
	if err := b.as.AddNode(&addrspace.Node{
		ID:          nid,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{Name: "HA Configuration"},
		Description: text("How edged records the history of the tags that refer to it"),
	}, ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.HistoricalDataConfigurationType))); err != nil {
		return err
	}
	minMs, maxMs, dev, devFormat := scanMs, 0.0, 0.0, int32(deviationAbsolute)
	def := "every change of the value or the status, at its source time"
	switch th.Mode {
	case config.Periodic:
		minMs, maxMs = float64(th.PeriodMs), float64(th.PeriodMs)
		def = fmt.Sprintf("every %d ms: the value read last, at the period's multiple (when read again since)", th.PeriodMs)
	case config.OnDeadband:
		dev = th.Deadband
		unit := ""
		if th.DeadbandType == config.DeadbandPercent {
			devFormat, unit = deviationPercentEU, " % of the EU range"
		}
		def = fmt.Sprintf("every change of the status, and of the value by more than %g%s, at its source time", th.Deadband, unit)
	}
	def += fmt.Sprintf("; flushed to flash every %d ms; gaps (edged not running, a full disk) are Bad_DataLost", cfg.History.FlushIntervalMs)
	props := []struct {
		name string
		dt   uint32
		v    any
	}{
		{"Stepped", id.Boolean, stepped},
		{"Definition", id.String, def},
		{"MinTimeInterval", id.Duration, minMs},
		{"MaxTimeInterval", id.Duration, maxMs},
		{"ExceptionDeviation", id.Double, dev},
		{"ExceptionDeviationFormat", id.ExceptionDeviationFormat, devFormat},
		{"ServerTimestampSupported", id.Boolean, true},
	}
	for _, p := range props {
		pid := ua.NewStringNodeID(nid.Namespace, nid.Text+"/"+p.name)
		if err := b.as.AddProperty(nid, pid, ua.QualifiedName{Name: p.name}, p.dt, ua.MustVariant(p.v)); err != nil {
			return err
		}
	}
	for _, name := range []string{"StartOfArchive", "StartOfOnlineArchive"} {
		if err := b.as.AddNode(&addrspace.Node{
			ID:          ua.NewStringNodeID(nid.Namespace, nid.Text+"/"+name),
			Class:       ua.NodeClassVariable,
			BrowseName:  ua.QualifiedName{Name: name},
			DataType:    ua.NewNumericNodeID(0, id.UtcTime),
			ValueRank:   addrspace.ValueRankScalar,
			AccessLevel: uint8(ua.AccessLevelTypeCurrentRead),
			Source:      b.archiveSrc,
		},
			ref(id.HasProperty, true, nid),
			ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.PropertyType)),
		); err != nil {
			return err
		}
	}
	ac := ua.NewStringNodeID(nid.Namespace, nid.Text+"/AggregateConfiguration")
	if err := b.as.AddNode(&addrspace.Node{ID: ac, Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "AggregateConfiguration"}},
		ref(id.HasComponent, true, nid),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.AggregateConfigurationType))); err != nil {
		return err
	}
	a := cfg.History.Aggregates
	for _, p := range []struct {
		name string
		dt   uint32
		v    any
	}{
		{"TreatUncertainAsBad", id.Boolean, a.TreatUncertainAsBad},
		{"PercentDataBad", id.Byte, uint8(a.PercentDataBad)},
		{"PercentDataGood", id.Byte, uint8(a.PercentDataGood)},
		{"UseSlopedExtrapolation", id.Boolean, a.UseSlopedExtrapolation},
	} {
		if err := b.as.AddProperty(ac, ua.NewStringNodeID(nid.Namespace, ac.Text+"/"+p.name), ua.QualifiedName{Name: p.name}, p.dt, ua.MustVariant(p.v)); err != nil {
			return err
		}
	}
	return nil
}

// archiveStart is the source of the StartOfArchive properties: the time
// of the store's oldest sample, or when it holds none, when it opened.
type archiveStart struct {
	db     *tsdb.DB
	opened time.Time
}

func (a *archiveStart) value(_ uint32, dv *ua.DataValue) {
	var st tsdb.Stats
	a.db.Stats(&st)
	t := a.opened
	if st.Oldest != 0 {
		t = time.Unix(0, st.Oldest).UTC()
	}
	dv.Value.SetDateTime(t)
	dv.SourceTimestamp = time.Now()
}

// tagHistory is the tags' history as the server reads it: the
// historian's series, their samples as the tags' values.
type tagHistory struct {
	hs *historian.Historian
}

// Read gives the samples of tag h's series as values of the tag's type.
// A chunk of the store that cannot be read stands as Bad_DataLost.
func (th tagHistory) Read(h uint32, from, to int64, reverse bool, fn func(*history.Value) bool) error {
	sid, typ, _, ok := th.hs.Series(plc.Handle(h))
	if !ok {
		return nil
	}
	var v history.Value
	return th.hs.DB().Scan(sid, from, to, reverse, uint32(status.BadDataLost), func(s *tsdb.Sample) bool {
		v.T, v.Status = s.Time, ua.StatusCode(s.Status)
		if s.NoValue {
			v.V.Reset()
		} else if typ == plc.String {
			v.V.SetString(string(s.Bytes))
		} else {
			setVariant(&v.V, plc.FromBits(typ, s.Value))
		}
		return fn(&v)
	})
}

// Aggregation returns tag h's Stepped and the store's aggregate
// configuration.
func (th tagHistory) Aggregation(h uint32) history.Config {
	_, _, stepped, _ := th.hs.Series(plc.Handle(h))
	a := th.hs.Aggregates()
	return history.Config{Stepped: stepped, TreatUncertainAsBad: a.TreatUncertainAsBad,
		PercentDataBad: uint8(a.PercentDataBad), PercentDataGood: uint8(a.PercentDataGood), UseSlopedExtrapolation: a.UseSlopedExtrapolation}
}

// History returns what the server reads the tags' history from
// (server.AddHistory with Source), nil without a historian.
func (b *Binding) History() interface {
	history.Reader
	Aggregation(uint32) history.Config
} {
	if b.hs == nil {
		return nil
	}
	return tagHistory{hs: b.hs}
}

// histVar is a variable of Diagnostics/History.
type histVar struct {
	name string
	dt   uint32
	desc string
	get  func(st *tsdb.Stats, hs *historian.Stats, v *ua.Variant)
}

var historyVars = []histVar{
	{"Paused", id.String, "why history is not written (a full or failing disk), empty while it is",
		func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetString(st.Paused) }},
	{"Tags", id.UInt32, "tags historized", func(_ *tsdb.Stats, hs *historian.Stats, v *ua.Variant) { v.SetUint32(uint32(hs.Tags)) }},
	{"Recorded", id.UInt64, "samples recorded since the start", func(_ *tsdb.Stats, hs *historian.Stats, v *ua.Variant) { v.SetUint64(hs.Recorded) }},
	{"Dropped", id.UInt64, "samples the store refused while paused (the gap is marked Bad_DataLost)",
		func(_ *tsdb.Stats, hs *historian.Stats, v *ua.Variant) { v.SetUint64(hs.Dropped) }},
	{"Bytes", id.UInt64, "bytes of the store on flash", func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetUint64(uint64(st.Bytes)) }},
	{"Blocks", id.UInt32, "blocks on flash", func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetUint32(uint32(st.Blocks)) }},
	{"UnreadableBlocks", id.UInt32, "block files that could not be read (a checksum failed, a newer format): left in place",
		func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetUint32(uint32(st.Unreadable)) }},
	{"HeadBytes", id.UInt32, "bytes of samples in memory, not yet in a block", func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetUint32(uint32(st.HeadBytes)) }},
	{"BytesWritten", id.UInt64, "bytes written to flash since the start", func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetUint64(st.Written) }},
	{"Writes", id.UInt64, "writes to flash since the start", func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetUint64(st.Writes) }},
	{"OldestSample", id.UtcTime, "the time of the oldest sample kept", func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) {
		if st.Oldest == 0 {
			v.SetDateTime(time.Time{})
			return
		}
		v.SetDateTime(time.Unix(0, st.Oldest).UTC())
	}},
	{"LastFlush", id.Duration, "how long the last flush took", func(st *tsdb.Stats, _ *historian.Stats, v *ua.Variant) { v.SetFloat64(ms(st.LastFlush)) }},
}

// addHistoryDiagnostics adds Diagnostics/History, the figures of the
// history store and recorder.
func (b *Binding) addHistoryDiagnostics() error {
	parent := ua.NewStringNodeID(b.dns, "Diagnostics")
	folder := ua.NewStringNodeID(b.dns, "History")
	if err := b.as.AddNode(&addrspace.Node{
		ID:          folder,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{NamespaceIndex: b.dns, Name: "History"},
		Description: text("The history store: its state, size and writes"),
	},
		ref(id.Organizes, true, parent),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.FolderType)),
	); err != nil {
		return fmt.Errorf("binding: Diagnostics/History: %w", err)
	}
	hs := b.hs
	src := b.as.AddSource(addrspace.SourceFunc(func(h uint32, dv *ua.DataValue) {
		var st tsdb.Stats
		hs.DB().Stats(&st)
		hst := hs.Stats()
		historyVars[h].get(&st, &hst, &dv.Value)
		dv.SourceTimestamp = time.Now()
	}))
	for k, v := range historyVars {
		if err := b.addDiagVar(folder, ua.NewStringNodeID(b.dns, "History."+v.name), v.name, v.dt, v.desc, src, uint32(k)); err != nil {
			return err
		}
	}
	return nil
}
