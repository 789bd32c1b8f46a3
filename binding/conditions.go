package binding

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/edged/edged/alarms"
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// The conditions in the address space (OPC 10000-9): each alarm is an
// Object of its alarm type, ns=<tags>;s=<source>/<name> (its ConditionId),
// which its device's folder references with HasCondition. A client acknowledges, confirms, comments, enables
// and disables it by calling the methods of the condition types
// (AcknowledgeableConditionType.Acknowledge i=9111, Confirm i=9113,
// ConditionType.AddComment i=9029, Enable i=9027, Disable i=9028) on the
// condition, with the EventId of the condition's last event where the
// method takes one. AddConditionMethods gives these methods of namespace
// 0 their handlers and Roles.

// ConditionMethods is what the condition methods need from the process.
type ConditionMethods struct {
	// Set returns the running alarms, nil when there are none.
	Set func() *alarms.Set
	// Caller returns the name of the user calling, "" for anonymous.
	Caller func(ctx context.Context) string
	// OperateRoles and ConfigureRoles are the Roles of the methods (see
	// addrspace.Method): who may acknowledge, confirm and comment, and
	// who may enable and disable.
	OperateRoles, ConfigureRoles uint32
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// conditionIndex finds a condition by its ConditionId.
type conditionIndex struct {
	mu         sync.RWMutex
	byID       map[ua.NodeID]int
	byShelving map[ua.NodeID]int // by the condition's ShelvingState
	nodes      []ua.NodeID
}

// AddConditionMethods gives the condition types' methods their handlers
// and Roles, once.
func (b *Binding) AddConditionMethods(cm ConditionMethods) error {
	if cm.Now == nil {
		cm.Now = time.Now
	}
	// The methods of the condition itself, and (the shelving methods) of
	// its ShelvingState.
	methods := []struct {
		id       uint32
		roles    uint32
		shelving bool
		do       conditionAction
	}{
		{id.AcknowledgeableConditionType_Acknowledge, cm.OperateRoles, false, func(s *alarms.Set, c int, in []ua.Variant, user string, now time.Time) ua.StatusCode {
			ev, cmt := eventAndComment(in)
			return s.Acknowledge(c, ev, cmt, user, now)
		}},
		{id.AcknowledgeableConditionType_Confirm, cm.OperateRoles, false, func(s *alarms.Set, c int, in []ua.Variant, user string, now time.Time) ua.StatusCode {
			ev, cmt := eventAndComment(in)
			return s.Confirm(c, ev, cmt, user, now)
		}},
		{id.ConditionType_AddComment, cm.OperateRoles, false, func(s *alarms.Set, c int, in []ua.Variant, user string, now time.Time) ua.StatusCode {
			ev, cmt := eventAndComment(in)
			return s.AddComment(c, ev, cmt, user, now)
		}},
		{id.ConditionType_Enable, cm.ConfigureRoles, false, func(s *alarms.Set, c int, _ []ua.Variant, user string, now time.Time) ua.StatusCode {
			return s.Enable(c, user, now)
		}},
		{id.ConditionType_Disable, cm.ConfigureRoles, false, func(s *alarms.Set, c int, _ []ua.Variant, user string, now time.Time) ua.StatusCode {
			return s.Disable(c, user, now)
		}},
		{id.AlarmConditionType_ShelvingState_TimedShelve, cm.OperateRoles, true, func(s *alarms.Set, c int, in []ua.Variant, user string, now time.Time) ua.StatusCode {
			ms, _ := in[0].Float64() // ShelvingTime, a Duration
			if ms != ms || ms <= 0 || ms > float64(alarms.MaxShelvingTime/time.Millisecond) {
				return status.BadShelvingTimeOutOfRange
			}
			return s.TimedShelve(c, time.Duration(ms*float64(time.Millisecond)), user, now)
		}},
		{id.AlarmConditionType_ShelvingState_OneShotShelve, cm.OperateRoles, true, func(s *alarms.Set, c int, _ []ua.Variant, user string, now time.Time) ua.StatusCode {
			return s.OneShotShelve(c, user, now)
		}},
		{id.AlarmConditionType_ShelvingState_Unshelve, cm.OperateRoles, true, func(s *alarms.Set, c int, _ []ua.Variant, user string, now time.Time) ua.StatusCode {
			return s.Unshelve(c, user, now)
		}},
	}
	for _, m := range methods {
		if err := b.conditionMethod(cm, m.id, m.roles, m.shelving, m.do); err != nil {
			return err
		}
	}
	b.condMethods = true
	return nil
}

// conditionAction is what a condition method does to condition c of s.
type conditionAction func(s *alarms.Set, c int, in []ua.Variant, user string, now time.Time) ua.StatusCode

// conditionMethod gives method m its Roles and its handler: the object
// it is called on (a condition, or with shelving its ShelvingState) names
// the condition do acts on, for the caller's user.
func (b *Binding) conditionMethod(cm ConditionMethods, m, roles uint32, shelving bool, do conditionAction) error {
	mid := ua.NewNumericNodeID(0, m)
	if err := b.as.SetRoles(mid, roles); err != nil {
		return err
	}
	return b.as.SetMethodHandler(mid, func(ctx context.Context, object ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		b.conds.mu.RLock()
		byNode := b.conds.byID
		if shelving {
			byNode = b.conds.byShelving
		}
		c, ok := byNode[object]
		b.conds.mu.RUnlock()
		s := cm.Set()
		if !ok || s == nil {
			return status.BadNodeIDUnknown, nil
		}
		user := ""
		if cm.Caller != nil {
			user = cm.Caller(ctx)
		}
		return do(s, c, in, user, cm.Now()), nil
	})
}

// eventAndComment are the EventId and Comment inputs of Acknowledge,
// Confirm and AddComment (their types checked by the address space).
func eventAndComment(in []ua.Variant) ([]byte, string) {
	ev, _ := in[0].ByteString()
	lt, _ := in[1].LocalizedTextValue()
	return ev, lt.Text
}

// SetConditions makes the condition nodes of cs (in the order of the
// alarms' Set) and removes those of the last call.
func (b *Binding) SetConditions(cs []alarms.Config) error {
	b.conds.mu.Lock()
	defer b.conds.mu.Unlock()
	for _, n := range b.conds.nodes {
		b.as.RemoveNode(n)
	}
	b.conds.nodes = b.conds.nodes[:0]
	b.conds.byID = make(map[ua.NodeID]int, len(cs))
	b.conds.byShelving = make(map[ua.NodeID]int)
	for i := range cs {
		c := &cs[i]
		nid := b.ConditionID(c.Source, c.Name)
		// The device's folder is the condition's source: a tag is not a
		// node of its own (addrspace.AddVariable).
		device, _, _ := strings.Cut(c.Source, ".")
		source := ua.NewStringNodeID(b.ns, device)
		if c.Kind == alarms.System {
			source = ua.NewNumericNodeID(0, id.Server)
		}
		refs := []addrspace.Reference{
			{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, alarmType(c))}},
			{TypeID: ua.NewNumericNodeID(0, id.HasCondition), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: source}},
		}
		if b.condMethods {
			for _, m := range []uint32{id.AcknowledgeableConditionType_Acknowledge, id.AcknowledgeableConditionType_Confirm,
				id.ConditionType_AddComment, id.ConditionType_Enable, id.ConditionType_Disable} {
				refs = append(refs, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasComponent), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, m)}})
			}
		}
		if err := b.as.AddNode(&addrspace.Node{ID: nid, Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{NamespaceIndex: b.ns, Name: c.Name},
			Description: text(c.Message)}, refs...); err != nil {
			return err
		}
		b.conds.nodes = append(b.conds.nodes, nid)
		b.conds.byID[nid] = i
		if b.condMethods && c.Kind != alarms.Communication && c.Kind != alarms.System {
			// Its ShelvingState, whose methods shelve it.
			sid := ua.NewStringNodeID(b.ns, nid.Text+"/ShelvingState")
			srefs := []addrspace.Reference{
				{TypeID: ua.NewNumericNodeID(0, id.HasComponent), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: nid}},
				{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ShelvedStateMachineType)}},
			}
			for _, m := range []uint32{id.AlarmConditionType_ShelvingState_TimedShelve, id.AlarmConditionType_ShelvingState_OneShotShelve,
				id.AlarmConditionType_ShelvingState_Unshelve} {
				srefs = append(srefs, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasComponent), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, m)}})
			}
			if err := b.as.AddNode(&addrspace.Node{ID: sid, Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "ShelvingState"}}, srefs...); err != nil {
				return err
			}
			b.conds.nodes = append(b.conds.nodes, sid)
			b.conds.byShelving[sid] = i
		}
	}
	return nil
}
