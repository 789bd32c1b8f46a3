package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	return nil
}

// onCallerSub runs f on the subscription manager with the subscription
// subID of the session calling the method (ctx), and returns Good, or
// Bad_SubscriptionIdInvalid, Bad_UserAccessDenied (another session's, or
// no session), Bad_Shutdown.
func (s *Server) onCallerSub(ctx context.Context, subID uint32, f func(*subscription)) ua.StatusCode {
	sess := sessionFrom(ctx)
	st := status.Good
	err := s.subs.call(func() {
		sub := s.subs.subs[subID]
		switch {
		case sub == nil:
			st = status.BadSubscriptionIDInvalid
		case sess == nil || sub.ss.sess != sess:
			st = status.BadUserAccessDenied
		default:
			f(sub)
		}
	})
	if err != nil {
		var code ua.StatusCode
		if errors.As(err, &code) {
			return code
		}
		return status.BadInternalError
	}
	return st
}

// sortedItems returns the items of sub in the order of their ids.
func sortedItems(sub *subscription) []*monItem {
	items := make([]*monItem, 0, len(sub.items))
	for _, it := range sub.items {
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *monItem) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return items
}

// getMonitoredItems is the handler of Server.GetMonitoredItems.
func (s *Server) getMonitoredItems(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	subID, _ := in[0].Uint32()
	var serverHandles, clientHandles []uint32
	st := s.onCallerSub(ctx, subID, func(sub *subscription) {
		items := sortedItems(sub)
		serverHandles = make([]uint32, len(items))
		clientHandles = make([]uint32, len(items))
		for i, it := range items {
			serverHandles[i], clientHandles[i] = it.id, it.handle
		}
	})
	if st != status.Good {
		return st, nil
	}
	return status.Good, []ua.Variant{ua.MustVariant(serverHandles), ua.MustVariant(clientHandles)}
}

// resendData is the handler of Server.ResendData: each Reporting item
// reads its current value, which becomes the item's last reported value,
// and queues it; the subscription publishes it in its next cycle.
func (s *Server) resendData(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	subID, _ := in[0].Uint32()
	m := &s.subs
	st := s.onCallerSub(ctx, subID, func(sub *subscription) {
		m.rc.Reset()
		for _, it := range sortedItems(sub) {
			if it.mode != ua.MonitoringModeReporting {
				continue
			}
			var dv ua.DataValue
			s.as.Read(&m.rc, &it.rv, ua.TimestampsToReturnBoth, &dv)
			m.report(it, &dv)
			m.sampledNow(it)
		}
		m.clearTouched()
	})
	return st, nil
}
