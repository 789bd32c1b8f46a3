package server

import (
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// service is one row of the service table, as open62541's
// serviceDescriptions[]: the DefaultBinary encoding ids of the request and
// the response, what the service needs of the session, the connection's
// reused request value and the handler.
//
// request returns the connection's request value of the service's type
// (decoded into in place) and its header. handle answers it: it fills the
// connection's reused response value, including its ResponseHeader (see
// conn.header), and returns it; a ua.StatusCode error instead makes the
// answer a ServiceFault with that code.
type service struct {
	name     string
	request  uint32
	response uint32
	session  sessionNeed
	req      func(c *conn) (ua.Body, *ua.RequestHeader)
	handle   func(c *conn, s *session, h *ua.RequestHeader) (ua.Body, error)
}

// services is the service table. Every request type not listed is
// answered with a ServiceFault of Bad_ServiceUnsupported.
var services = []service{
	// Discovery Service Set (OPC 10000-4 §5.4).
	{"FindServers", id.FindServersRequest_Encoding_DefaultBinary, id.FindServersResponse_Encoding_DefaultBinary, noSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.findServers, &c.req.findServers.RequestHeader
		},
		(*conn).findServers},
	{"GetEndpoints", id.GetEndpointsRequest_Encoding_DefaultBinary, id.GetEndpointsResponse_Encoding_DefaultBinary, noSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.getEndpoints, &c.req.getEndpoints.RequestHeader
		},
		(*conn).getEndpoints},

	// Session Service Set (§5.7).
	{"CreateSession", id.CreateSessionRequest_Encoding_DefaultBinary, id.CreateSessionResponse_Encoding_DefaultBinary, noSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.createSession, &c.req.createSession.RequestHeader
		},
		(*conn).createSession},
	{"ActivateSession", id.ActivateSessionRequest_Encoding_DefaultBinary, id.ActivateSessionResponse_Encoding_DefaultBinary, createdSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.activateSession, &c.req.activateSession.RequestHeader
		},
		(*conn).activateSession},
	{"CloseSession", id.CloseSessionRequest_Encoding_DefaultBinary, id.CloseSessionResponse_Encoding_DefaultBinary, createdSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.closeSession, &c.req.closeSession.RequestHeader
		},
		(*conn).closeSession},
	{"Cancel", id.CancelRequest_Encoding_DefaultBinary, id.CancelResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.cancel, &c.req.cancel.RequestHeader },
		(*conn).cancel},

	// View Service Set (§5.9).
	{"Browse", id.BrowseRequest_Encoding_DefaultBinary, id.BrowseResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.browse, &c.req.browse.RequestHeader },
		(*conn).browse},
	{"BrowseNext", id.BrowseNextRequest_Encoding_DefaultBinary, id.BrowseNextResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.browseNext, &c.req.browseNext.RequestHeader },
		(*conn).browseNext},
	{"TranslateBrowsePathsToNodeIds", id.TranslateBrowsePathsToNodeIdsRequest_Encoding_DefaultBinary,
		id.TranslateBrowsePathsToNodeIdsResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.translate, &c.req.translate.RequestHeader },
		(*conn).translate},
	{"RegisterNodes", id.RegisterNodesRequest_Encoding_DefaultBinary, id.RegisterNodesResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.registerNodes, &c.req.registerNodes.RequestHeader
		},
		(*conn).registerNodes},
	{"UnregisterNodes", id.UnregisterNodesRequest_Encoding_DefaultBinary, id.UnregisterNodesResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.unregisterNodes, &c.req.unregisterNodes.RequestHeader
		},
		(*conn).unregisterNodes},

	// Attribute Service Set (§5.11).
	{"Read", id.ReadRequest_Encoding_DefaultBinary, id.ReadResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.read, &c.req.read.RequestHeader },
		(*conn).read},
	{"Write", id.WriteRequest_Encoding_DefaultBinary, id.WriteResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.write, &c.req.write.RequestHeader },
		(*conn).write},

	// Method Service Set (§5.12).
	{"Call", id.CallRequest_Encoding_DefaultBinary, id.CallResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.call, &c.req.call.RequestHeader },
		(*conn).call},

	// MonitoredItem Service Set (§5.12).
	{"CreateMonitoredItems", id.CreateMonitoredItemsRequest_Encoding_DefaultBinary, id.CreateMonitoredItemsResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.createMonitoredItems, &c.req.createMonitoredItems.RequestHeader
		},
		(*conn).createMonitoredItems},
	{"ModifyMonitoredItems", id.ModifyMonitoredItemsRequest_Encoding_DefaultBinary, id.ModifyMonitoredItemsResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.modifyMonitoredItems, &c.req.modifyMonitoredItems.RequestHeader
		},
		(*conn).modifyMonitoredItems},
	{"SetMonitoringMode", id.SetMonitoringModeRequest_Encoding_DefaultBinary, id.SetMonitoringModeResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.setMonitoringMode, &c.req.setMonitoringMode.RequestHeader
		},
		(*conn).setMonitoringMode},
	{"SetTriggering", id.SetTriggeringRequest_Encoding_DefaultBinary, id.SetTriggeringResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.setTriggering, &c.req.setTriggering.RequestHeader
		},
		(*conn).setTriggering},
	{"DeleteMonitoredItems", id.DeleteMonitoredItemsRequest_Encoding_DefaultBinary, id.DeleteMonitoredItemsResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.deleteMonitoredItems, &c.req.deleteMonitoredItems.RequestHeader
		},
		(*conn).deleteMonitoredItems},

	// Subscription Service Set (§5.13).
	{"CreateSubscription", id.CreateSubscriptionRequest_Encoding_DefaultBinary, id.CreateSubscriptionResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.createSubscription, &c.req.createSubscription.RequestHeader
		},
		(*conn).createSubscription},
	{"ModifySubscription", id.ModifySubscriptionRequest_Encoding_DefaultBinary, id.ModifySubscriptionResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.modifySubscription, &c.req.modifySubscription.RequestHeader
		},
		(*conn).modifySubscription},
	{"SetPublishingMode", id.SetPublishingModeRequest_Encoding_DefaultBinary, id.SetPublishingModeResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.setPublishingMode, &c.req.setPublishingMode.RequestHeader
		},
		(*conn).setPublishingMode},
	{"Publish", id.PublishRequest_Encoding_DefaultBinary, id.PublishResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.publish, &c.req.publish.RequestHeader },
		(*conn).publish},
	{"Republish", id.RepublishRequest_Encoding_DefaultBinary, id.RepublishResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) { return &c.req.republish, &c.req.republish.RequestHeader },
		(*conn).republish},
	{"TransferSubscriptions", id.TransferSubscriptionsRequest_Encoding_DefaultBinary, id.TransferSubscriptionsResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.transferSubscriptions, &c.req.transferSubscriptions.RequestHeader
		},
		(*conn).transferSubscriptions},
	{"DeleteSubscriptions", id.DeleteSubscriptionsRequest_Encoding_DefaultBinary, id.DeleteSubscriptionsResponse_Encoding_DefaultBinary, activatedSession,
		func(c *conn) (ua.Body, *ua.RequestHeader) {
			return &c.req.deleteSubscriptions, &c.req.deleteSubscriptions.RequestHeader
		},
		(*conn).deleteSubscriptions},
}

// serviceByRequest indexes services by request encoding id (namespace 0,
// numeric).
var serviceByRequest = func() map[uint32]*service {
	m := make(map[uint32]*service, len(services))
	for i := range services {
		m[services[i].request] = &services[i]
	}
	return m
}()

// requests are a connection's reused request values, one per service.
type requests struct {
	findServers     ua.FindServersRequest
	getEndpoints    ua.GetEndpointsRequest
	createSession   ua.CreateSessionRequest
	activateSession ua.ActivateSessionRequest
	closeSession    ua.CloseSessionRequest
	cancel          ua.CancelRequest
	browse          ua.BrowseRequest
	browseNext      ua.BrowseNextRequest
	translate       ua.TranslateBrowsePathsToNodeIDsRequest
	registerNodes   ua.RegisterNodesRequest
	unregisterNodes ua.UnregisterNodesRequest
	read            ua.ReadRequest
	write           ua.WriteRequest
	call            ua.CallRequest

	createMonitoredItems  ua.CreateMonitoredItemsRequest
	modifyMonitoredItems  ua.ModifyMonitoredItemsRequest
	setMonitoringMode     ua.SetMonitoringModeRequest
	setTriggering         ua.SetTriggeringRequest
	deleteMonitoredItems  ua.DeleteMonitoredItemsRequest
	createSubscription    ua.CreateSubscriptionRequest
	modifySubscription    ua.ModifySubscriptionRequest
	setPublishingMode     ua.SetPublishingModeRequest
	publish               ua.PublishRequest
	republish             ua.RepublishRequest
	transferSubscriptions ua.TransferSubscriptionsRequest
	deleteSubscriptions   ua.DeleteSubscriptionsRequest
}

// responses are a connection's reused response values.
type responses struct {
	fault           ua.ServiceFault
	findServers     ua.FindServersResponse
	getEndpoints    ua.GetEndpointsResponse
	createSession   ua.CreateSessionResponse
	activateSession ua.ActivateSessionResponse
	closeSession    ua.CloseSessionResponse
	cancel          ua.CancelResponse
	browse          ua.BrowseResponse
	browseNext      ua.BrowseNextResponse
	translate       ua.TranslateBrowsePathsToNodeIDsResponse
	registerNodes   ua.RegisterNodesResponse
	unregisterNodes ua.UnregisterNodesResponse
	read            ua.ReadResponse
	write           ua.WriteResponse
	call            ua.CallResponse

	createMonitoredItems  ua.CreateMonitoredItemsResponse
	modifyMonitoredItems  ua.ModifyMonitoredItemsResponse
	setMonitoringMode     ua.SetMonitoringModeResponse
	setTriggering         ua.SetTriggeringResponse
	deleteMonitoredItems  ua.DeleteMonitoredItemsResponse
	createSubscription    ua.CreateSubscriptionResponse
	modifySubscription    ua.ModifySubscriptionResponse
	setPublishingMode     ua.SetPublishingModeResponse
	publish               ua.PublishResponse
	republish             ua.RepublishResponse
	transferSubscriptions ua.TransferSubscriptionsResponse
	deleteSubscriptions   ua.DeleteSubscriptionsResponse
}
