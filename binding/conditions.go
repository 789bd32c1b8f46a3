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
// method takes one. Namespace 0 as edged builds it leaves out the types'
// methods (nsgen keeps no instance declarations but BaseEventType's):
// AddConditionMethods adds these five.

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
	mu    sync.RWMutex
	byID  map[ua.NodeID]int
	nodes []ua.NodeID
}

// AddConditionMethods adds the condition types' methods and their
// handlers, once.
func (b *Binding) AddConditionMethods(cm ConditionMethods) error {
	if cm.Now == nil {
		cm.Now = time.Now
	}
	eventID := ua.Argument{Name: "EventId", DataType: ua.NewNumericNodeID(0, id.ByteString), ValueRank: addrspace.ValueRankScalar,
		Description: text("the EventId of the condition's last event")}
	comment := ua.Argument{Name: "Comment", DataType: ua.NewNumericNodeID(0, id.LocalizedText), ValueRank: addrspace.ValueRankScalar,
		Description: text("a comment, stored with the condition")}
	type action func(s *alarms.Set, cond int, ev []byte, comment, user string, now time.Time) ua.StatusCode
	methods := []struct {
		id, args, typ uint32
		name          string
		in            []ua.Argument
		roles         uint32
		do            action
	}{
		{id.AcknowledgeableConditionType_Acknowledge, id.AcknowledgeableConditionType_Acknowledge_InputArguments, id.AcknowledgeableConditionType,
			"Acknowledge", []ua.Argument{eventID, comment}, cm.OperateRoles,
			func(s *alarms.Set, c int, ev []byte, cmt, user string, now time.Time) ua.StatusCode {
				return s.Acknowledge(c, ev, cmt, user, now)
			}},
		{id.AcknowledgeableConditionType_Confirm, id.AcknowledgeableConditionType_Confirm_InputArguments, id.AcknowledgeableConditionType,
			"Confirm", []ua.Argument{eventID, comment}, cm.OperateRoles,
			func(s *alarms.Set, c int, ev []byte, cmt, user string, now time.Time) ua.StatusCode {
				return s.Confirm(c, ev, cmt, user, now)
			}},
		{id.ConditionType_AddComment, id.ConditionType_AddComment_InputArguments, id.ConditionType,
			"AddComment", []ua.Argument{eventID, comment}, cm.OperateRoles,
			func(s *alarms.Set, c int, ev []byte, cmt, user string, now time.Time) ua.StatusCode {
				return s.AddComment(c, ev, cmt, user, now)
			}},
		{id.ConditionType_Enable, 0, id.ConditionType, "Enable", nil, cm.ConfigureRoles,
			func(s *alarms.Set, c int, _ []byte, _, user string, now time.Time) ua.StatusCode {
				return s.Enable(c, user, now)
			}},
		{id.ConditionType_Disable, 0, id.ConditionType, "Disable", nil, cm.ConfigureRoles,
			func(s *alarms.Set, c int, _ []byte, _, user string, now time.Time) ua.StatusCode {
				return s.Disable(c, user, now)
			}},
	}
	for _, m := range methods {
		mid := ua.NewNumericNodeID(0, m.id)
		if err := b.as.AddNode(&addrspace.Node{ID: mid, Class: ua.NodeClassMethod, BrowseName: ua.QualifiedName{Name: m.name},
			Executable: true, Roles: m.roles},
			addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasComponent), IsInverse: true,
				Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, m.typ)}}); err != nil {
			return err
		}
		if len(m.in) > 0 {
			v := make([]ua.ExtensionObject, len(m.in))
			for i := range m.in {
				v[i] = ua.ExtensionObject{Body: &m.in[i]}
			}
			if err := b.as.AddNode(&addrspace.Node{ID: ua.NewNumericNodeID(0, m.args), Class: ua.NodeClassVariable,
				BrowseName: ua.QualifiedName{Name: "InputArguments"}, Value: &ua.DataValue{Value: ua.MustVariant(v)},
				DataType: ua.NewNumericNodeID(0, id.Argument), ValueRank: addrspace.ValueRankOneDimension,
				AccessLevel: uint8(ua.AccessLevelTypeCurrentRead)},
				addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasProperty), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: mid}},
				addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.PropertyType)}},
			); err != nil {
				return err
			}
		}
		do := m.do
		takesEvent := len(m.in) > 0
		if err := b.as.SetMethodHandler(mid, func(ctx context.Context, object ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
			b.conds.mu.RLock()
			c, ok := b.conds.byID[object]
			b.conds.mu.RUnlock()
			s := cm.Set()
			if !ok || s == nil {
				return status.BadNodeIDUnknown, nil
			}
			var ev []byte
			var cmt string
			if takesEvent {
				ev, _ = in[0].ByteString()
				lt, _ := in[1].LocalizedTextValue()
				cmt = lt.Text
			}
			user := ""
			if cm.Caller != nil {
				user = cm.Caller(ctx)
			}
			return do(s, c, ev, cmt, user, cm.Now()), nil
		}); err != nil {
			return err
		}
	}
	b.condMethods = true
	return nil
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
	for i := range cs {
		c := &cs[i]
		nid := b.ConditionID(c.Source, c.Name)
		// The device's folder is the condition's source: a tag is not a
		// node of its own (addrspace.AddVariable).
		device, _, _ := strings.Cut(c.Source, ".")
		source := ua.NewStringNodeID(b.ns, device)
		refs := []addrspace.Reference{
			{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, alarmTypes[c.Kind])}},
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
	}
	return nil
}
