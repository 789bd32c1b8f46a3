// Package binding shows the scan engine's process image in the OPC UA
// address space: it connects package plc to package opcua/addrspace, which
// know nothing of each other.
//
// How it works, and why, is in docs/binding.md.
package binding

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/historian"
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// NamespaceURI is the namespace of the tags and their device folders.
const NamespaceURI = "urn:edged:tags"

// UnitsNamespaceURI is the NamespaceUri of the EngineeringUnits of a tag:
// the UNECE codes (OPC 10000-8 §5.6.3).
const UnitsNamespaceURI = "http://www.opcfoundation.org/UA/units/un/cefact"

// Binding is the address space's view of one engine.
type Binding struct {
	as *addrspace.Space
	e  *plc.Engine
	ns uint16
	// conds are the condition nodes (conditions.go); condMethods: the
	// condition types' methods were added.
	conds       conditionIndex
	condMethods bool
	alarmLay    atomic.Pointer[alarmLayout] // alarms.go
	// alarmStatics: each condition's fields that its events share, by
	// condition (alarms.go).
	alarmMu      sync.Mutex
	alarmStatics []*alarmStatic
	diag         *diagSource
	dns          uint16
	src          addrspace.SourceID // the tags' ValueSource
	sink         *tagSink
	// shown is what the address space shows, by device name (Apply).
	shown map[string]*shownDevice
	// diagDevs are the devices of the Diagnostics folder, in the order of
	// their handles.
	diagDevs []string
	// tagProps are the property sets of the tags, classes their
	// Variables' classes.
	tagProps map[tagPropsKey]*tagProps
	classes  map[tagClassKey]*addrspace.VariableClass
	// hs records the history of the tags with one (nil: no history);
	// haNodes are the HA Configuration objects (history.go).
	hs         *historian.Historian
	haNodes    map[histKey]ua.NodeID
	archiveSrc addrspace.SourceID
}

// New adds the tags of cfg, served by e, and the Diagnostics object to as.
// Every tag of cfg must be one of e's (Engine.Lookup); cfg supplies what
// the engine does not keep: units, scaling ranges and descriptions. With
// hs, the tags with a history are shown historized (history.go). The
// binding does not keep cfg (megabytes with many tags), only digests of
// it for Apply.
func New(as *addrspace.Space, e *plc.Engine, cfg *config.Config, hs *historian.Historian) (*Binding, error) {
	b := &Binding{as: as, e: e, shown: map[string]*shownDevice{}, hs: hs}
	b.ns = as.AddNamespace(NamespaceURI)
	b.src = as.AddSource((*imageSource)(e))
	if hs != nil {
		b.archiveSrc = as.AddSource(addrspace.SourceFunc((&archiveStart{db: hs.DB(), opened: time.Now().UTC()}).value))
	}
	b.sink = (*tagSink)(e)
	for i := range cfg.Devices {
		if err := b.addDevice(cfg, &cfg.Devices[i]); err != nil {
			return nil, err
		}
	}
	if err := b.addDiagnostics(); err != nil {
		return nil, err
	}
	if hs != nil {
		if err := b.addHistoryDiagnostics(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// EventNotifier's SubscribeToEvents and HistoryRead bits.
const (
	eventNotifierSubscribe = 1
	eventNotifierHistory   = 4
)

// addDevice adds the folder of device d of cfg with its properties, its
// tags and its Reconnect method.
func (b *Binding) addDevice(cfg *config.Config, d *config.Device) error {
	folder := ua.NewStringNodeID(b.ns, d.Name)
	// A device's folder notifies its alarms' events (EventNotifier
	// SubscribeToEvents; HistoryRead too when the history store keeps
	// them), and the Server object, which notifies all of them, says so
	// with HasNotifier.
	notifier := uint8(eventNotifierSubscribe)
	if b.hs != nil {
		notifier |= eventNotifierHistory
	}
	if err := b.as.AddNode(&addrspace.Node{
		ID:            folder,
		Class:         ua.NodeClassObject,
		BrowseName:    ua.QualifiedName{NamespaceIndex: b.ns, Name: d.Name},
		Description:   text(fmt.Sprintf("Device %s (%s)", d.Name, d.Kind)),
		EventNotifier: notifier,
	},
		ref(id.Organizes, true, ua.NewNumericNodeID(0, id.ObjectsFolder)),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.FolderType)),
		ref(id.HasNotifier, true, ua.NewNumericNodeID(0, id.Server)),
	); err != nil {
		return fmt.Errorf("binding: device %s: %w", d.Name, err)
	}
	if err := b.addDeviceProperties(d); err != nil {
		return fmt.Errorf("binding: device %s: %w", d.Name, err)
	}
	sd := &shownDevice{settings: deviceDigest(d)}
	b.shown[d.Name] = sd
	shown := make([]shownTag, 0, len(d.Tags))
	for j := range d.Tags {
		t := &d.Tags[j]
		if err := b.addTag(cfg, d, t, folder); err != nil {
			sd.setTags(shown)
			return fmt.Errorf("binding: devices[%s].tags[%s]: %w", d.Name, t.Name, err)
		}
		shown = append(shown, shownTag{name: t.Name, digest: tagDigest(cfg, t)})
	}
	sd.setTags(shown)
	if err := b.addReconnect(d.Name, folder); err != nil {
		return fmt.Errorf("binding: device %s: Reconnect: %w", d.Name, err)
	}
	return nil
}

// Namespace returns the index of NamespaceURI.
func (b *Binding) Namespace() uint16 { return b.ns }

// NodeID returns the NodeId of tag device.tag.
func (b *Binding) NodeID(device, tag string) ua.NodeID {
	return ua.NewStringNodeID(b.ns, device+"."+tag)
}

func (b *Binding) addTag(cfg *config.Config, d *config.Device, t *config.Tag, folder ua.NodeID) error {
	h, ok := b.e.Lookup(d.Name, t.Name)
	if !ok {
		return fmt.Errorf("not a tag of the engine")
	}
	pt := b.e.Tag(h)
	dt, ok := dataTypes[pt.Type]
	if !ok {
		return fmt.Errorf("type %v has no OPC UA DataType", pt.Type)
	}
	access := uint8(ua.AccessLevelTypeCurrentRead)
	if pt.Access == plc.ReadWrite {
		access |= uint8(ua.AccessLevelTypeCurrentWrite)
	}
	scan := pt.Scan
	if scan == 0 {
		scan = b.e.Period()
	}
	v := &addrspace.Variable{
		Name:        t.Name,
		Description: describe(t.Description),
		DataType:    dt,
		AccessLevel: access,
		Source:      b.src,
		Handle:      uint32(h),
	}
	if t.Units != "" {
		u, ok := config.LookupUnit(t.Units)
		if !ok {
			return fmt.Errorf("units: %q is not a UNECE code", t.Units)
		}
		eu := &ua.EUInformation{
			NamespaceURI: UnitsNamespaceURI,
			UnitID:       u.UnitID,
			DisplayName:  ua.LocalizedText{Locale: "en", Text: u.DisplayName},
			Description:  ua.LocalizedText{Locale: "en", Text: u.Description},
		}
		v.Properties = append(v.Properties, addrspace.Property{Name: ua.QualifiedName{Name: "EngineeringUnits"}, DataType: id.EUInformation, Value: ua.MustVariant(ua.ExtensionObject{Body: eu})})
	}
	if s := t.Scaling; s != nil {
		r := &ua.Range{Low: s.EUMin, High: s.EUMax}
		v.Properties = append(v.Properties, addrspace.Property{Name: ua.QualifiedName{Name: "EURange"}, DataType: id.Range, Value: ua.MustVariant(ua.ExtensionObject{Body: r})})
	}
	var set *tagProps
	v.Properties, set = b.tagProperties(v.Properties, cfg, t, pt.Address)
	var hist ua.NodeID
	if b.hs != nil && t.History != nil && cfg.History != nil {
		var err error
		if hist, err = b.haConfig(cfg, t.History, t.IsStepped(), ms(scan)); err != nil {
			return fmt.Errorf("HA Configuration: %w", err)
		}
		v.AccessLevel |= uint8(ua.AccessLevelTypeHistoryRead)
	}
	v.Class = b.tagClass(ms(scan), pt.Access == plc.ReadWrite, set, hist)
	v.Properties = slices.Clip(v.Properties)
	// A Variable held by the device folder: no node, references or table
	// entry of its own (docs/binding.md).
	return b.as.AddVariable(folder, v)
}

// tagClassKey tells the classes of the tags' Variables apart.
type tagClassKey struct {
	interval float64 // MinimumSamplingInterval
	write    bool
	set      *tagProps
	hist     ua.NodeID // the HA Configuration of historized tags
}

// tagClass returns the class of the tags' Variables with sampling
// interval interval, written through to the engine if write, with the
// properties of set, historized with HA Configuration hist when it is not
// null.
func (b *Binding) tagClass(interval float64, write bool, set *tagProps, hist ua.NodeID) *addrspace.VariableClass {
	k := tagClassKey{interval: interval, write: write, set: set, hist: hist}
	if c := b.classes[k]; c != nil {
		return c
	}
	c := &addrspace.VariableClass{MinimumSamplingInterval: interval, Shared: set, Historizing: !hist.IsNull(), HistoryConfiguration: hist}
	if write {
		c.Sink = b.sink
	}
	if b.classes == nil {
		b.classes = make(map[tagClassKey]*addrspace.VariableClass)
	}
	b.classes[k] = c
	return c
}

// dataTypes maps the tag types to their namespace-0 DataTypes.
var dataTypes = map[plc.Type]uint32{
	plc.Bool:    id.Boolean,
	plc.Int16:   id.Int16,
	plc.UInt16:  id.UInt16,
	plc.Int32:   id.Int32,
	plc.UInt32:  id.UInt32,
	plc.Int64:   id.Int64,
	plc.UInt64:  id.UInt64,
	plc.Float32: id.Float,
	plc.Float64: id.Double,
	plc.String:  id.String,
}

// imageSource is the engine as a ValueSource: its snapshots are images.
type imageSource plc.Engine

// Snapshot returns the engine's current image, which does not change
// until it is released (addrspace.Releaser).
func (s *imageSource) Snapshot() addrspace.Snapshot {
	return (*imageSnapshot)((*plc.Engine)(s).Acquire())
}

// Release gives the image back to the engine for reuse.
func (im *imageSnapshot) Release() { (*plc.Image)(im).Release() }

// imageSnapshot is an image as a Snapshot.
type imageSnapshot plc.Image

// Value copies tag h's sample into dv: value (none when the status is
// Bad), status (the same numbers) and source timestamp.
func (im *imageSnapshot) Value(h uint32, dv *ua.DataValue) {
	if int(h) >= (*plc.Image)(im).Len() {
		// A tag added after this image was taken (Engine.Reconfigure).
		dv.Value.Reset()
		dv.Status = status.BadWaitingForInitialData
		return
	}
	s := (*plc.Image)(im).Sample(plc.Handle(h))
	setVariant(&dv.Value, s.Value)
	dv.Status = s.Status
	dv.SourceTimestamp = s.Timestamp()
}

// setVariant makes v the Variant of x (null for an Invalid x), without
// allocating.
func setVariant(v *ua.Variant, x plc.Value) {
	switch x.Type() {
	case plc.Bool:
		v.SetBool(x.Bool())
	case plc.Int16:
		v.SetInt16(int16(x.Int64()))
	case plc.UInt16:
		v.SetUint16(uint16(x.Uint64()))
	case plc.Int32:
		v.SetInt32(int32(x.Int64()))
	case plc.UInt32:
		v.SetUint32(uint32(x.Uint64()))
	case plc.Int64:
		v.SetInt64(x.Int64())
	case plc.UInt64:
		v.SetUint64(x.Uint64())
	case plc.Float32:
		v.SetFloat32(x.Float32())
	case plc.Float64:
		v.SetFloat64(x.Float64())
	case plc.String:
		v.SetString(x.Text())
	default:
		v.Reset()
	}
}

// tagSink is the engine as the ValueSink of the read-write tags.
type tagSink plc.Engine

// WriteValue queues the write of wv's value (of the tag's DataType, checked
// by the address space) and returns Engine.Write's refusal, or Good and
// the Pending device answer (see the package doc).
func (s *tagSink) WriteValue(h uint32, wv *ua.WriteValue) (ua.StatusCode, addrspace.Pending) {
	if wv.IndexRange != "" {
		return status.BadWriteNotSupported, nil
	}
	v, ok := plcValue(wv.Value.Value)
	if !ok {
		return status.BadTypeMismatch, nil
	}
	return writeTag((*plc.Engine)(s), plc.Handle(h), v)
}

// writeTag queues the write of v to tag h and returns Good and its
// Pending result, or the reason it was not queued.
func writeTag(e *plc.Engine, h plc.Handle, v plc.Value) (ua.StatusCode, addrspace.Pending) {
	res := make(chan ua.StatusCode, 1) // done never blocks, even when nobody waits
	if st := e.Write(h, v, func(st plc.Status) { res <- st }); st != status.Good {
		return st, nil
	}
	return status.Good, res
}

// plcValue converts a scalar Variant of a tag's DataType to a Value; a
// String is copied, since the Variant may share the request's buffer.
func plcValue(v ua.Variant) (plc.Value, bool) {
	if v.IsArray() {
		return plc.Value{}, false
	}
	switch v.Type() {
	case ua.TypeBoolean:
		x, _ := v.Bool()
		return plc.BoolValue(x), true
	case ua.TypeInt16:
		x, _ := v.Int16()
		return plc.Int16Value(x), true
	case ua.TypeUInt16:
		x, _ := v.Uint16()
		return plc.UInt16Value(x), true
	case ua.TypeInt32:
		x, _ := v.Int32()
		return plc.Int32Value(x), true
	case ua.TypeUInt32:
		x, _ := v.Uint32()
		return plc.UInt32Value(x), true
	case ua.TypeInt64:
		x, _ := v.Int64()
		return plc.Int64Value(x), true
	case ua.TypeUInt64:
		x, _ := v.Uint64()
		return plc.UInt64Value(x), true
	case ua.TypeFloat:
		x, _ := v.Float32()
		return plc.Float32Value(x), true
	case ua.TypeDouble:
		x, _ := v.Float64()
		return plc.Float64Value(x), true
	case ua.TypeString:
		x, _ := v.StringValue()
		return plc.StringValue(strings.Clone(x)), true
	}
	return plc.Value{}, false
}

func ref(typ uint32, inverse bool, target ua.NodeID) addrspace.Reference {
	return addrspace.Reference{TypeID: ua.NewNumericNodeID(0, typ), IsInverse: inverse, Target: ua.ExpandedNodeID{NodeID: target}}
}

// describe is text(s), nil for "".
func describe(s string) *ua.LocalizedText {
	if s == "" {
		return nil
	}
	lt := text(s)
	return &lt
}

func text(s string) ua.LocalizedText {
	if s == "" {
		return ua.LocalizedText{}
	}
	return ua.LocalizedText{Locale: "en", Text: s}
}

// ms returns d in milliseconds, as OPC UA's Duration.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
