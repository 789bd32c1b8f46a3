package binding

import (
	"strings"
	"time"

	"github.com/edged/edged/alarms"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// The alarms' changes as OPC UA events (OPC 10000-9): each change of a
// condition is an event of its alarm type (ExclusiveLimitAlarmType,
// NonExclusiveLimitAlarmType, OffNormalAlarmType; a device's
// communication alarm a DiscreteAlarmType) with the condition's state in
// the fields a client selects: ActiveState/Id, AckedState/Id, Retain,
// Severity, Message, ... Its ConditionId is ns=<tags>;s=<source>/<name>
// ("sim.Sine/Limit").

// alarmEvent is one change of an alarm, immutable once made: the values
// of alarmPaths, in their order.
type alarmEvent struct {
	typ  ua.NodeID
	lay  *alarmLayout
	vals [len(alarmPaths)]ua.Variant
	cond ua.Variant
}

func (e *alarmEvent) EventType() ua.NodeID { return e.typ }

func (e *alarmEvent) Field(f events.Field) *ua.Variant {
	if int(f) < len(e.lay.slot) {
		if i := e.lay.slot[f]; i >= 0 && !e.vals[i].IsNull() {
			return &e.vals[i]
		}
	}
	return nil
}

func (e *alarmEvent) ConditionID() *ua.Variant { return &e.cond }

// alarmPaths are the fields an alarm event may carry.
var alarmPaths = [...]string{
	"EventId", "EventType", "SourceNode", "SourceName", "Time", "ReceiveTime", "Message", "Severity", "LastSeverity",
	"ConditionClassId", "ConditionClassName", "ConditionName", "BranchId", "Retain", "EnabledState", "EnabledState/Id",
	"Quality", "Comment", "ClientUserId", "AckedState", "AckedState/Id", "ConfirmedState", "ConfirmedState/Id",
	"ActiveState", "ActiveState/Id", "ActiveState/TransitionTime", "ActiveState/EffectiveDisplayName",
	"ShelvingState/CurrentState", "SuppressedOrShelved", "InputNode", "LimitState/CurrentState",
	"HighHighState/Id", "HighState/Id", "LowState/Id", "LowLowState/Id",
	"HighHighLimit", "HighLimit", "LowLimit", "LowLowLimit",
}

// alarmLayout places alarmPaths in the fields of a Types: the slot of
// each Field (-1: not an alarm's), and of each path.
type alarmLayout struct {
	ty   *events.Types
	slot []int8
	at   map[string]int
}

// layout returns the layout of ty, made once (the server's Types does
// not change).
func (b *Binding) layout(ty *events.Types) *alarmLayout {
	if l := b.alarmLay.Load(); l != nil && l.ty == ty {
		return l
	}
	l := &alarmLayout{ty: ty, slot: make([]int8, ty.Fields()), at: make(map[string]int, len(alarmPaths))}
	for i := range l.slot {
		l.slot[i] = -1
	}
	for i, p := range alarmPaths {
		f, ok := ty.Known(p)
		if !ok {
			continue // not a field of ty's types: never selected
		}
		l.slot[f], l.at[p] = int8(i), i
	}
	b.alarmLay.Store(l)
	return l
}

// alarmTypes are the event types of the kinds of conditions.
var alarmTypes = map[alarms.Kind]uint32{
	alarms.ExclusiveLimit:    id.ExclusiveLimitAlarmType,
	alarms.NonExclusiveLimit: id.NonExclusiveLimitAlarmType,
	alarms.OffNormal:         id.OffNormalAlarmType,
	alarms.Communication:     id.DiscreteAlarmType,
	alarms.System:            id.SystemOffNormalAlarmType,
}

// alarmType is the event type of condition c: its kind's, and Part 12's
// CertificateExpirationAlarmType for the certificate's system condition.
func alarmType(c *alarms.Config) uint32 {
	if c.Kind == alarms.System && c.Name == "CertificateExpiration" {
		return id.CertificateExpirationAlarmType
	}
	return alarmTypes[c.Kind]
}

// ConditionID returns the NodeId of the condition of an alarm of source
// (a tag "dev.tag", or a device) named name.
func (b *Binding) ConditionID(source, name string) ua.NodeID {
	return ua.NewStringNodeID(b.ns, source+"/"+name)
}

// AlarmEvent returns the event of an alarm's change and the notifiers
// it goes to besides the Server object (its device's folder), for
// Server.PostEvent.
func (b *Binding) AlarmEvent(ty *events.Types, ev *alarms.Event) (events.Event, []ua.NodeID) {
	lay := b.layout(ty)
	e := &alarmEvent{typ: ua.NewNumericNodeID(0, alarmType(ev.Config)), lay: lay}
	c, st := ev.Config, &ev.State
	set := func(path string, v ua.Variant) {
		if i, ok := lay.at[path]; ok {
			e.vals[i] = v
		}
	}
	text := func(s string) ua.Variant { return ua.MustVariant(ua.LocalizedText{Locale: "en", Text: s}) }
	state := func(path string, on bool, yes, no string) {
		set(path+"/Id", ua.MustVariant(on))
		if on {
			set(path, text(yes))
		} else {
			set(path, text(no))
		}
	}
	source := ua.NewStringNodeID(b.ns, c.Source) // the tag's variable, or the device's folder
	if c.Kind == alarms.System {
		source = ua.NewNumericNodeID(0, id.Server) // the gateway's own: the Server object
	}
	e.cond = ua.MustVariant(b.ConditionID(c.Source, c.Name))
	set("EventId", ua.MustVariant(st.EventID[:]))
	set("EventType", ua.MustVariant(e.typ))
	set("SourceNode", ua.MustVariant(source))
	set("SourceName", ua.MustVariant(c.Source))
	set("Time", ua.MustVariant(time.Unix(0, st.Time).UTC()))
	set("ReceiveTime", ua.MustVariant(time.Now().UTC()))
	set("Message", text(c.Message))
	set("Severity", ua.MustVariant(st.Severity))
	set("LastSeverity", ua.MustVariant(st.LastSeverity))
	class, className := uint32(id.ProcessConditionClassType), "Process"
	if c.Kind == alarms.Communication || c.Kind == alarms.System {
		class, className = id.SystemConditionClassType, "System"
	}
	set("ConditionClassId", ua.MustVariant(ua.NewNumericNodeID(0, class)))
	set("ConditionClassName", text(className))
	set("ConditionName", ua.MustVariant(c.Name))
	set("BranchId", ua.MustVariant(ua.NodeID{}))
	set("Retain", ua.MustVariant(st.Retain))
	state("EnabledState", st.Enabled, "Enabled", "Disabled")
	set("Quality", ua.MustVariant(ua.StatusCode(st.Quality)))
	set("Comment", text(st.Comment))
	set("ClientUserId", ua.MustVariant(st.User))
	state("AckedState", st.Acked, "Acknowledged", "Unacknowledged")
	state("ConfirmedState", st.Confirmed, "Confirmed", "Unconfirmed")
	state("ActiveState", st.Active, "Active", "Inactive")
	set("ActiveState/TransitionTime", ua.MustVariant(time.Unix(0, st.ActiveTime).UTC()))
	shelving := [...]string{"Unshelved", "OneShotShelved", "TimedShelved"}[st.Shelving]
	set("ShelvingState/CurrentState", text(shelving))
	set("SuppressedOrShelved", ua.MustVariant(st.Shelving != alarms.NotShelved))
	if c.Kind != alarms.Communication && c.Kind != alarms.System {
		set("InputNode", ua.MustVariant(source))
	}
	switch c.Kind {
	case alarms.ExclusiveLimit:
		set("LimitState/CurrentState", text(st.Level.String()))
		if st.Active {
			set("ActiveState/EffectiveDisplayName", text(st.Level.String()))
		}
	case alarms.NonExclusiveLimit:
		set("HighHighState/Id", ua.MustVariant(st.Bits&alarms.BitHighHigh != 0))
		set("HighState/Id", ua.MustVariant(st.Bits&alarms.BitHigh != 0))
		set("LowState/Id", ua.MustVariant(st.Bits&alarms.BitLow != 0))
		set("LowLowState/Id", ua.MustVariant(st.Bits&alarms.BitLowLow != 0))
	}
	if c.Kind == alarms.ExclusiveLimit || c.Kind == alarms.NonExclusiveLimit {
		for _, l := range [...]struct {
			path string
			x    float64
		}{{"HighHighLimit", c.Limits.HighHigh}, {"HighLimit", c.Limits.High}, {"LowLimit", c.Limits.Low}, {"LowLowLimit", c.Limits.LowLow}} {
			if l.x == l.x { // set
				set(l.path, ua.MustVariant(l.x))
			}
		}
	}
	if c.Kind == alarms.System {
		return e, nil // the Server object's only
	}
	device, _, _ := strings.Cut(c.Source, ".")
	return e, []ua.NodeID{ua.NewStringNodeID(b.ns, device)}
}
