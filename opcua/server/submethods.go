package server

import (
	"context"
	"fmt"

	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// The methods of the Server object that act on a subscription of the
// calling session (OPC 10000-5 §9.1, §9.2, their use in OPC 10000-4
// §6.7):
//
//   - GetMonitoredItems(SubscriptionId UInt32) → (ServerHandles UInt32[],
//     ClientHandles UInt32[]): the MonitoredItemIds of the subscription's
//     items and their client handles, in the order of the ids.
//   - ResendData(SubscriptionId UInt32): every Reporting item of the
//     subscription samples its current value and queues it, whether it
//     changed or not, so that the subscription's next NotificationMessage
//     carries the current value of each.
//
// Both answer Bad_SubscriptionIdInvalid for an unknown subscription and
// Bad_UserAccessDenied for one of another session. They run on the
// subscription manager's goroutine, like the subscription services.

// initSubMethods registers the handlers of GetMonitoredItems and
// ResendData; Call checks their input arguments against the
// InputArguments properties of namespace 0.
func (s *Server) initSubMethods() error {
	sp := s.as
	for _, m := range []struct {
		node uint32
		h    func(context.Context, ua.NodeID, []ua.Variant) (ua.StatusCode, []ua.Variant)
	}{
		{id.Server_GetMonitoredItems, s.getMonitoredItems},
		{id.Server_ResendData, s.resendData},
	} {
		if err := sp.SetMethodHandler(ua.NewNumericNodeID(0, m.node), m.h); err != nil {
			return fmt.Errorf("server: %s: %w", id.Name(m.node), err)
		}
	}
	for _, m := range s.trustListMethods() {
		if err := sp.SetMethodHandler(ua.NewNumericNodeID(0, m.node), m.h); err != nil {
			return fmt.Errorf("server: %s: %w", id.Name(m.node), err)
		}
	}
	return nil
}

// callerOf returns the session calling the method (ctx), nil outside a
// Call of a session.
func callerOf(ctx context.Context) subs.Session {
	if sess := sessionFrom(ctx); sess != nil {
		return sess
	}
	return nil
}

// getMonitoredItems is the handler of Server.GetMonitoredItems.
func (s *Server) getMonitoredItems(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	subID, _ := in[0].Uint32()
	serverHandles, clientHandles, st := s.subs.MonitoredItems(callerOf(ctx), subID)
	if st != status.Good {
		return st, nil
	}
	return status.Good, []ua.Variant{ua.MustVariant(serverHandles), ua.MustVariant(clientHandles)}
}

// resendData is the handler of Server.ResendData.
func (s *Server) resendData(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	subID, _ := in[0].Uint32()
	return s.subs.ResendData(callerOf(ctx), subID), nil
}
