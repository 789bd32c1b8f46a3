package northbound

import (
	"math"

	"github.com/edged/edged/historian"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/sparkplug"
	"github.com/edged/edged/tsdb"
)

// metric is one published tag and what was published of it. Its fields
// after the first block are touched by the node's goroutine only.
type metric struct {
	h        plc.Handle
	dev      *device
	name     string
	alias    uint64
	dt       sparkplug.DataType
	typ      plc.Type
	deadband float64
	unit     string // engineering unit's symbol, "" none
	euLow    float64
	euHigh   float64
	hasEU    bool
	readOnly bool
	series   tsdb.SeriesID
	stored   bool // historized: forwarded after an outage

	have     bool // a value was published in this birth session
	sentBits uint64
	sentText string
	sentSt   plc.Status
	pending  bool // in dev.dirty
	next     plc.Sample
	nocomm   bool // its status is Bad_NoCommunication

	// Store-and-forward: how far its samples got and what the broker
	// confirmed of them.
	wm     watermark
	birthT int64 // the source time of the value in the last birth
}

// device is one Sparkplug device: an engine device with published tags.
type device struct {
	name      string
	topicData string
	topicDBir string
	topicDDth string
	metrics   []*metric
	dirty     []*metric
	nocomm    int  // metrics with Bad_NoCommunication
	online    bool // its DBIRTH is out, no DDEATH since
	changed   bool // nocomm changed in this image
	lastSent  int64
}

// layout is what the configuration publishes.
type layout struct {
	devices  []*device
	byHandle []*metric // by engine handle, nil: not published
	byName   map[string]*metric
	byAlias  map[uint64]*metric
	stored   int // metrics forwarded after an outage
}

// newLayout makes the layout of conf's tags as st selects them, the
// aliases numbered after the node's own metrics.
func newLayout(e *plc.Engine, hs *historian.Historian, conf *config.Config, st *settings) *layout {
	lay := &layout{byHandle: make([]*metric, e.Len()), byName: map[string]*metric{}, byAlias: map[uint64]*metric{}}
	alias := uint64(len(nodeMetrics))
	for di := range conf.Devices {
		cd := &conf.Devices[di]
		d := &device{name: cd.Name}
		for ti := range cd.Tags {
			ct := &cd.Tags[ti]
			key := cd.Name + "." + ct.Name
			deadband := 0.0
			if st.tags != nil {
				db, ok := st.tags[key]
				if !ok {
					continue
				}
				deadband = db
			}
			h, ok := e.Lookup(cd.Name, ct.Name)
			if !ok {
				continue
			}
			pt := e.Tag(h)
			alias++
			m := &metric{h: h, dev: d, name: ct.Name, alias: alias, dt: dataType(pt.Type), typ: pt.Type,
				deadband: deadband, readOnly: pt.Access != plc.ReadWrite}
			if u, ok := config.LookupUnit(ct.Units); ok {
				m.unit = u.DisplayName
			}
			if sc := ct.Scaling; sc != nil {
				m.euLow, m.euHigh, m.hasEU = sc.EUMin, sc.EUMax, true
			}
			if hs != nil {
				if id, _, _, ok := hs.Series(h); ok {
					m.series, m.stored = id, true
					lay.stored++
				}
			}
			d.metrics = append(d.metrics, m)
			lay.byHandle[h] = m
			lay.byName[key] = m
			lay.byAlias[m.alias] = m
		}
		if len(d.metrics) > 0 {
			lay.devices = append(lay.devices, d)
		}
	}
	for _, d := range lay.devices {
		d.topicData = string(sparkplug.AppendTopic(nil, st.group, sparkplug.DDATA, st.node, d.name))
		d.topicDBir = string(sparkplug.AppendTopic(nil, st.group, sparkplug.DBIRTH, st.node, d.name))
		d.topicDDth = string(sparkplug.AppendTopic(nil, st.group, sparkplug.DDEATH, st.node, d.name))
	}
	return lay
}

// carry takes over the store-and-forward state of old's metrics of the
// same device and name: what the broker has of them.
func (lay *layout) carry(old *layout) {
	for key, m := range lay.byName {
		if o := old.byName[key]; o != nil && o.stored && m.stored && o.series == m.series {
			m.wm = o.wm
		}
	}
}

// dataType is the Sparkplug data type of a tag type.
func dataType(t plc.Type) sparkplug.DataType {
	switch t {
	case plc.Bool:
		return sparkplug.Boolean
	case plc.Int16:
		return sparkplug.Int16
	case plc.UInt16:
		return sparkplug.UInt16
	case plc.Int32:
		return sparkplug.Int32
	case plc.UInt32:
		return sparkplug.UInt32
	case plc.Int64:
		return sparkplug.Int64
	case plc.UInt64:
		return sparkplug.UInt64
	case plc.Float32:
		return sparkplug.Float
	case plc.Float64:
		return sparkplug.Double
	}
	return sparkplug.String
}

// quality is a status as Sparkplug's Quality property says it (3.0
// §6.4.8): 192 GOOD, 500 STALE for an Uncertain value (a last usable one,
// say), 0 BAD.
func quality(st plc.Status) uint64 {
	switch {
	case st.IsGood():
		return 192
	case st.IsUncertain():
		return 500
	}
	return 0
}

// changedEnough reports whether sample s of m is to be published: a
// change of the status, or of the value beyond the deadband.
func (m *metric) changedEnough(s *plc.Sample) bool {
	if s.Status == status.BadWaitingForInitialData {
		return false
	}
	if !m.have || s.Status != m.sentSt {
		return true
	}
	if s.Status.IsBad() {
		return false
	}
	switch {
	case m.typ == plc.String:
		return s.Value.Text() != m.sentText
	case m.deadband > 0:
		return math.Abs(s.Value.Float64()-plc.FromBits(m.typ, m.sentBits).Float64()) >= m.deadband
	}
	return s.Value.Bits() != m.sentBits
}
