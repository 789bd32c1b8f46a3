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
// of alarmPaths that change with its state (numbers, times, texts), the
// states whose fields are one of a few values (shared by every event),
// and its condition's values that do not change (shared by its events).
type alarmEvent struct {
	st    *alarmStatic
	vals  [nStored]ua.Variant
	id    [16]byte // the EventId's bytes (the alarms.Event is reused)
	state alarms.State
	drop  ua.Variant // where a field ty does not know is set
}

func (e *alarmEvent) EventType() ua.NodeID { return e.st.typ }

func (e *alarmEvent) Field(f events.Field) *ua.Variant {
	lay := e.st.lay
	if int(f) >= len(lay.slot) {
		return nil
	}
	var v *ua.Variant
	switch i := int(lay.slot[f]); {
	case i < 0:
		return nil
	case i < nStored:
		v = &e.vals[i]
	case i < nDynamic:
		v = e.derived(i)
	default:
		v = &e.st.vals[i-nDynamic]
	}
	if v == nil || v.IsNull() {
		return nil
	}
	return v
}

// derived returns the value of field i (nStored ≤ i < nDynamic) of the
// event's state: one of the shared values, nil for none.
func (e *alarmEvent) derived(i int) *ua.Variant {
	st, kind := &e.state, e.st.conf.Kind
	switch i {
	case fRetain:
		return boolVariant(st.Retain)
	case fEnabledState:
		return twoState(&enabledTexts, st.Enabled)
	case fEnabledStateID:
		return boolVariant(st.Enabled)
	case fAckedState:
		return twoState(&ackedTexts, st.Acked)
	case fAckedStateID:
		return boolVariant(st.Acked)
	case fConfirmedState:
		return twoState(&confirmedTexts, st.Confirmed)
	case fConfirmedStateID:
		return boolVariant(st.Confirmed)
	case fActiveState:
		return twoState(&activeTexts, st.Active)
	case fActiveStateID:
		return boolVariant(st.Active)
	case fShelvingCurrentState:
		if int(st.Shelving) < len(shelvingTexts) {
			return &shelvingTexts[st.Shelving]
		}
	case fSuppressedOrShelved:
		return boolVariant(st.Shelving != alarms.NotShelved)
	case fLimitCurrentState:
		if kind == alarms.ExclusiveLimit && int(st.Level) < len(levelTexts) {
			return &levelTexts[st.Level]
		}
	case fActiveEffectiveDisplayName:
		if kind == alarms.ExclusiveLimit && st.Active && int(st.Level) < len(levelTexts) {
			return &levelTexts[st.Level]
		}
	case fHighHighStateID, fHighStateID, fLowStateID, fLowLowStateID:
		if kind == alarms.NonExclusiveLimit {
			bit := [...]uint8{alarms.BitHighHigh, alarms.BitHigh, alarms.BitLow, alarms.BitLowLow}[i-fHighHighStateID]
			return boolVariant(st.Bits&bit != 0)
		}
	}
	return nil
}

func (e *alarmEvent) ConditionID() *ua.Variant { return &e.st.cond }

func (e *alarmEvent) Fields() []events.Field { return e.st.lay.fields }

// The fields an alarm event may carry: the indexes of alarmPaths. First
// those that change with the condition's state, the event's own values,
// then those of its state that take one of a few values, then those its
// configuration fixes (its condition's).
const (
	fEventID = iota
	fTime
	fReceiveTime
	fSeverity
	fLastSeverity
	fQuality
	fComment
	fClientUserID
	fActiveTransitionTime
	nStored

	fRetain = iota - 1
	fEnabledState
	fEnabledStateID
	fAckedState
	fAckedStateID
	fConfirmedState
	fConfirmedStateID
	fActiveState
	fActiveStateID
	fActiveEffectiveDisplayName
	fShelvingCurrentState
	fSuppressedOrShelved
	fLimitCurrentState
	fHighHighStateID
	fHighStateID
	fLowStateID
	fLowLowStateID
	nDynamic

	fEventType = iota - 2
	fSourceNode
	fSourceName
	fMessage
	fConditionClassID
	fConditionClassName
	fConditionName
	fBranchID
	fInputNode
	fHighHighLimit
	fHighLimit
	fLowLimit
	fLowLowLimit
	nFields
)

// alarmPaths are the browse paths of the fields, by index.
var alarmPaths = [nFields]string{
	fEventID: "EventId", fTime: "Time", fReceiveTime: "ReceiveTime", fSeverity: "Severity", fLastSeverity: "LastSeverity",
	fRetain: "Retain", fEnabledState: "EnabledState", fEnabledStateID: "EnabledState/Id", fQuality: "Quality",
	fComment: "Comment", fClientUserID: "ClientUserId", fAckedState: "AckedState", fAckedStateID: "AckedState/Id",
	fConfirmedState: "ConfirmedState", fConfirmedStateID: "ConfirmedState/Id", fActiveState: "ActiveState",
	fActiveStateID: "ActiveState/Id", fActiveTransitionTime: "ActiveState/TransitionTime",
	fActiveEffectiveDisplayName: "ActiveState/EffectiveDisplayName", fShelvingCurrentState: "ShelvingState/CurrentState",
	fSuppressedOrShelved: "SuppressedOrShelved", fLimitCurrentState: "LimitState/CurrentState",
	fHighHighStateID: "HighHighState/Id", fHighStateID: "HighState/Id", fLowStateID: "LowState/Id", fLowLowStateID: "LowLowState/Id",
	fEventType: "EventType", fSourceNode: "SourceNode", fSourceName: "SourceName", fMessage: "Message",
	fConditionClassID: "ConditionClassId", fConditionClassName: "ConditionClassName", fConditionName: "ConditionName",
	fBranchID: "BranchId", fInputNode: "InputNode",
	fHighHighLimit: "HighHighLimit", fHighLimit: "HighLimit", fLowLimit: "LowLimit", fLowLowLimit: "LowLowLimit",
}

// alarmLayout places alarmPaths in the fields of a Types: the slot of
// each Field (-1: not an alarm's), and whether ty knows each path.
type alarmLayout struct {
	ty     *events.Types
	slot   []int8
	known  [nFields]bool
	fields []events.Field // the Fields of the known paths
}

// layout returns the layout of ty, made once (the server's Types does
// not change).
func (b *Binding) layout(ty *events.Types) *alarmLayout {
	if l := b.alarmLay.Load(); l != nil && l.ty == ty {
		return l
	}
	l := &alarmLayout{ty: ty, slot: make([]int8, ty.Fields())}
	for i := range l.slot {
		l.slot[i] = -1
	}
	for i, p := range alarmPaths {
		f, ok := ty.Known(p)
		if !ok {
			continue // not a field of ty's types: never selected
		}
		l.slot[f], l.known[i] = int8(i), true
		l.fields = append(l.fields, f)
	}
	b.alarmLay.Store(l)
	return l
}

// alarmStatic is what a condition's events share: the fields its
// configuration fixes, and the notifiers they go to besides the Server
// object.
type alarmStatic struct {
	conf      *alarms.Config // made of
	lay       *alarmLayout
	typ       ua.NodeID
	cond      ua.Variant
	vals      [nFields - nDynamic]ua.Variant
	notifiers []ua.NodeID // length = capacity: the server appends to a copy
}

// alarmStatic returns the shared fields of ev's condition, made at its
// first event and kept while the condition's configuration is the same
// (a Watch's: a ConditionRefresh's copies make their own).
func (b *Binding) alarmStatic(lay *alarmLayout, ev *alarms.Event) *alarmStatic {
	b.alarmMu.Lock()
	defer b.alarmMu.Unlock()
	if ev.Cond >= 0 && ev.Cond < len(b.alarmStatics) {
		if s := b.alarmStatics[ev.Cond]; s != nil && s.conf == ev.Config && s.lay == lay {
			return s
		}
	}
	s := b.newAlarmStatic(lay, ev.Config)
	if ev.Cond >= 0 && ev.Cond < maxAlarmStatics {
		if ev.Cond >= len(b.alarmStatics) {
			b.alarmStatics = append(b.alarmStatics, make([]*alarmStatic, ev.Cond+1-len(b.alarmStatics))...)
		}
		b.alarmStatics[ev.Cond] = s
	}
	return s
}

// maxAlarmStatics bounds the conditions whose shared fields are kept (a
// configuration has fewer).
const maxAlarmStatics = 1 << 20

func (b *Binding) newAlarmStatic(lay *alarmLayout, c *alarms.Config) *alarmStatic {
	s := &alarmStatic{conf: c, lay: lay, typ: ua.NewNumericNodeID(0, alarmType(c))}
	set := func(i int, v ua.Variant) {
		if lay.known[i] {
			s.vals[i-nDynamic] = v
		}
	}
	source := ua.NewStringNodeID(b.ns, c.Source) // the tag's variable, or the device's folder
	if c.Kind == alarms.System {
		source = ua.NewNumericNodeID(0, id.Server) // the gateway's own: the Server object
	}
	s.cond = ua.MustVariant(b.ConditionID(c.Source, c.Name))
	set(fEventType, ua.MustVariant(s.typ))
	set(fSourceNode, ua.MustVariant(source))
	set(fSourceName, ua.MustVariant(c.Source))
	set(fMessage, alarmText(c.Message))
	class, className := uint32(id.ProcessConditionClassType), "Process"
	if c.Kind == alarms.Communication || c.Kind == alarms.System {
		class, className = id.SystemConditionClassType, "System"
	}
	set(fConditionClassID, ua.MustVariant(ua.NewNumericNodeID(0, class)))
	set(fConditionClassName, alarmText(className))
	set(fConditionName, ua.MustVariant(c.Name))
	set(fBranchID, ua.MustVariant(ua.NodeID{}))
	if c.Kind != alarms.Communication && c.Kind != alarms.System {
		set(fInputNode, ua.MustVariant(source))
	}
	if c.Kind == alarms.ExclusiveLimit || c.Kind == alarms.NonExclusiveLimit {
		for i, x := range [...]float64{c.Limits.HighHigh, c.Limits.High, c.Limits.Low, c.Limits.LowLow} {
			if x == x { // set
				set(fHighHighLimit+i, ua.MustVariant(x))
			}
		}
	}
	if c.Kind != alarms.System { // the Server object's only
		device, _, _ := strings.Cut(c.Source, ".")
		s.notifiers = []ua.NodeID{ua.NewStringNodeID(b.ns, device)}
	}
	return s
}

func alarmText(s string) ua.Variant { return ua.MustVariant(ua.LocalizedText{Locale: "en", Text: s}) }

// The values the states' fields take, made once and shared by every
// event (read only).
var (
	boolVariants   = [2]ua.Variant{ua.MustVariant(false), ua.MustVariant(true)}
	enabledTexts   = [2]ua.Variant{alarmText("Disabled"), alarmText("Enabled")}
	ackedTexts     = [2]ua.Variant{alarmText("Unacknowledged"), alarmText("Acknowledged")}
	confirmedTexts = [2]ua.Variant{alarmText("Unconfirmed"), alarmText("Confirmed")}
	activeTexts    = [2]ua.Variant{alarmText("Inactive"), alarmText("Active")}
	shelvingTexts  = [...]ua.Variant{alarms.NotShelved: alarmText("Unshelved"), alarms.OneShotShelved: alarmText("OneShotShelved"),
		alarms.TimedShelved: alarmText("TimedShelved")}
	levelTexts = func() (t [alarms.HighHigh + 1]ua.Variant) {
		for l := range t {
			t[l] = alarmText(alarms.Level(l).String())
		}
		return t
	}()
	noComment = alarmText("")
)

func boolVariant(b bool) *ua.Variant {
	if b {
		return &boolVariants[1]
	}
	return &boolVariants[0]
}

// twoState returns the text of a two-state variable.
func twoState(texts *[2]ua.Variant, on bool) *ua.Variant {
	if on {
		return &texts[1]
	}
	return &texts[0]
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
	e := &alarmEvent{st: b.alarmStatic(lay, ev), state: ev.State}
	st := &ev.State
	e.state.Comment, e.state.User = "", "" // kept in vals when selectable
	set := func(i int) *ua.Variant {
		if lay.known[i] {
			return &e.vals[i]
		}
		return &e.drop // not a field of ty's
	}
	e.id = st.EventID
	set(fEventID).SetByteString(e.id[:])
	set(fTime).SetDateTime(time.Unix(0, st.Time))
	set(fReceiveTime).SetDateTime(time.Now())
	set(fSeverity).SetUint16(st.Severity)
	set(fLastSeverity).SetUint16(st.LastSeverity)
	set(fQuality).SetStatusCode(ua.StatusCode(st.Quality))
	if st.Comment == "" {
		*set(fComment) = noComment
	} else {
		*set(fComment) = alarmText(st.Comment)
	}
	set(fClientUserID).SetString(st.User)
	set(fActiveTransitionTime).SetDateTime(time.Unix(0, st.ActiveTime))
	return e, e.st.notifiers
}
