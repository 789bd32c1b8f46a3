package peer

import (
	"context"
	"time"

	"github.com/edged/edged/opcua/ua/id"
	"github.com/gopcua/opcua"
	"github.com/gopcua/opcua/ua"
)

// GopcuaSubscribe is c.Subscribe, guarded against a race in gopcua
// v0.8.0's publish loop that leaves a new subscription without Publish
// requests for good: the loop sends a Publish as soon as the client
// connects; the server answers it Bad_NoSubscription, and when that answer
// is handled after CreateSubscription's, the loop takes the resume signal
// of Subscribe before its own pause and stays paused
// (client_sub.go, monitorSubscriptions). Notifications reach notes through
// a goroutine of the guard; until the first arrives, each second of
// silence resumes the loop the one way gopcua offers, a Subscribe (of a
// subscription deleted at once). The guard ends with ctx.
func GopcuaSubscribe(ctx context.Context, c *opcua.Client, p *opcua.SubscriptionParameters, notes chan<- *opcua.PublishNotificationData) (*opcua.Subscription, error) {
	inner := make(chan *opcua.PublishNotificationData, max(cap(notes), 1))
	sub, err := c.Subscribe(ctx, p, inner)
	if err != nil {
		return nil, err
	}
	go func() {
		quiet := time.NewTimer(time.Second)
		defer quiet.Stop()
		first := false
		for {
			select {
			case n := <-inner:
				first = true
				select {
				case notes <- n:
				case <-ctx.Done():
					return
				}
			case <-quiet.C:
				if !first {
					kick := make(chan *opcua.PublishNotificationData, 1)
					if s, err := c.Subscribe(ctx, &opcua.SubscriptionParameters{Interval: time.Second}, kick); err == nil {
						s.Cancel(ctx)
					}
					quiet.Reset(time.Second)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return sub, nil
}

// GopcuaField selects the Value of the field at path of the events of
// type typ (a type of namespace 0), for an EventFilter's select clauses.
func GopcuaField(typ uint32, path ...string) *ua.SimpleAttributeOperand {
	o := &ua.SimpleAttributeOperand{TypeDefinitionID: ua.NewNumericNodeID(0, typ), AttributeID: ua.AttributeIDValue}
	for _, p := range path {
		o.BrowsePath = append(o.BrowsePath, &ua.QualifiedName{Name: p})
	}
	return o
}

// GopcuaConditionID selects an event's ConditionId: the NodeId attribute
// of ConditionType.
func GopcuaConditionID() *ua.SimpleAttributeOperand {
	return &ua.SimpleAttributeOperand{TypeDefinitionID: ua.NewNumericNodeID(0, id.ConditionType), AttributeID: ua.AttributeIDNodeID}
}

// GopcuaEventItem is the request for an event item on node with the
// select clauses sel and where (nil: none), reporting, queueSize deep and
// discarding the oldest.
func GopcuaEventItem(node *ua.NodeID, handle, queueSize uint32, sel []*ua.SimpleAttributeOperand, where *ua.ContentFilter) *ua.MonitoredItemCreateRequest {
	if where == nil {
		where = &ua.ContentFilter{}
	}
	return &ua.MonitoredItemCreateRequest{
		// gopcua encodes a nil DataEncoding as nothing: an empty one is sent.
		ItemToMonitor:  &ua.ReadValueID{NodeID: node, AttributeID: ua.AttributeIDEventNotifier, DataEncoding: &ua.QualifiedName{}},
		MonitoringMode: ua.MonitoringModeReporting,
		RequestedParameters: &ua.MonitoringParameters{ClientHandle: handle, QueueSize: queueSize, DiscardOldest: true,
			Filter: ua.NewExtensionObject(&ua.EventFilter{SelectClauses: sel, WhereClause: where})},
	}
}

// GopcuaConditionRefresh calls ConditionRefresh for subscription sub
// on c: the error of the call, or its status when not Good.
func GopcuaConditionRefresh(ctx context.Context, c *opcua.Client, sub uint32) error {
	r, err := c.Call(ctx, &ua.CallMethodRequest{ObjectID: ua.NewNumericNodeID(0, id.ConditionType),
		MethodID: ua.NewNumericNodeID(0, id.ConditionType_ConditionRefresh), InputArguments: []*ua.Variant{ua.MustVariant(sub)}})
	if err != nil {
		return err
	}
	if r.StatusCode != ua.StatusOK {
		return r.StatusCode
	}
	return nil
}

// GopcuaNextEvents waits for the next event notifications in notes,
// passing over data changes; the error of a failed Publish, or ctx's.
func GopcuaNextEvents(ctx context.Context, notes <-chan *opcua.PublishNotificationData) ([]*ua.EventFieldList, error) {
	for {
		select {
		case n := <-notes:
			if n.Error != nil {
				return nil, n.Error
			}
			if l, ok := n.Value.(*ua.EventNotificationList); ok {
				return l.Events, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
