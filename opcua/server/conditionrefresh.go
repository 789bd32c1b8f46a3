package server

import (
	"context"
	"time"

	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// ConditionRefresh and ConditionRefresh2 (OPC 10000-9 §5.5.7, §5.5.8):
// methods of ConditionType, called with the ConditionType itself as the
// object. They queue on the caller's subscription (one of its event items
// for ConditionRefresh2) a RefreshStartEvent, an event of each retained
// condition, and a RefreshEndEvent.

// plainEvent is an event of the server's own, its fields by path.
type plainEvent struct {
	typ    ua.NodeID
	fields map[events.Field]*ua.Variant
}

func (e *plainEvent) EventType() ua.NodeID             { return e.typ }
func (e *plainEvent) Field(f events.Field) *ua.Variant { return e.fields[f] }
func (e *plainEvent) ConditionID() *ua.Variant         { return nil }

// serverEvent makes an event of the Server object of type typ.
func (s *Server) serverEvent(typ uint32, message string) *plainEvent {
	e := &plainEvent{typ: ua.NewNumericNodeID(0, typ), fields: map[events.Field]*ua.Variant{}}
	now := s.clock()
	set := func(path string, v ua.Variant) { e.fields[s.events.FieldOf(path)] = &v }
	set("EventId", ua.MustVariant([]byte(now.Format(time.RFC3339Nano)+message)))
	set("EventType", ua.MustVariant(e.typ))
	set("SourceNode", ua.MustVariant(ua.NewNumericNodeID(0, id.Server)))
	set("SourceName", ua.MustVariant("Server"))
	set("Time", ua.MustVariant(now))
	set("ReceiveTime", ua.MustVariant(now))
	set("Message", ua.MustVariant(ua.LocalizedText{Text: message}))
	set("Severity", ua.MustVariant(uint16(1)))
	return e
}

// SetConditionRefresh makes ConditionRefresh and ConditionRefresh2
// callable: retained returns the events of the retained conditions, as
// of now. Call it once, before serving.
func (s *Server) SetConditionRefresh(retained func() []events.Event) error {
	for _, m := range []uint32{id.ConditionType_ConditionRefresh, id.ConditionType_ConditionRefresh2} {
		mid := ua.NewNumericNodeID(0, m)
		if err := s.as.SetMethodHandler(mid, func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
			sess := callerOf(ctx)
			if sess == nil {
				return status.BadSessionIDInvalid, nil
			}
			sub, _ := in[0].Uint32()
			var item uint32
			if len(in) > 1 {
				item, _ = in[1].Uint32()
				if item == 0 {
					return status.BadMonitoredItemIDInvalid, nil
				}
			}
			evs := []events.Event{s.serverEvent(id.RefreshStartEventType, "ConditionRefresh starts")}
			evs = append(evs, retained()...)
			evs = append(evs, s.serverEvent(id.RefreshEndEventType, "ConditionRefresh ends"))
			return s.subs.Refresh(sess, sub, item, evs), nil
		}); err != nil {
			return err
		}
	}
	return nil
}
