package server

import (
	"sync/atomic"

	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
)

// diagnostics are the counters of Server/ServerDiagnostics/
// ServerDiagnosticsSummary (OPC 10000-5 §12.9, ServerDiagnosticsSummaryDataType).
// The subscription counters are the engine's (subs.Manager.Counts). Views are not implemented
// and PublishingIntervalCount is not kept: those counters stay 0.
type diagnostics struct {
	serverViews          atomic.Uint32
	currentSessions      atomic.Uint32
	cumulatedSessions    atomic.Uint32
	securityRejectedSess atomic.Uint32
	rejectedSessions     atomic.Uint32
	sessionTimeouts      atomic.Uint32
	sessionAborts        atomic.Uint32
	publishingIntervals  atomic.Uint32
	securityRejectedReqs atomic.Uint32
	rejectedRequests     atomic.Uint32
}

// summary returns the counters as the DataType, with the subscription
// counts of m.
func (d *diagnostics) summary(m *subs.Manager) ua.ServerDiagnosticsSummaryDataType {
	cur, cum := m.Counts()
	return ua.ServerDiagnosticsSummaryDataType{
		ServerViewCount:               d.serverViews.Load(),
		CurrentSessionCount:           d.currentSessions.Load(),
		CumulatedSessionCount:         d.cumulatedSessions.Load(),
		SecurityRejectedSessionCount:  d.securityRejectedSess.Load(),
		RejectedSessionCount:          d.rejectedSessions.Load(),
		SessionTimeoutCount:           d.sessionTimeouts.Load(),
		SessionAbortCount:             d.sessionAborts.Load(),
		CurrentSubscriptionCount:      cur,
		CumulatedSubscriptionCount:    cum,
		PublishingIntervalCount:       d.publishingIntervals.Load(),
		SecurityRejectedRequestsCount: d.securityRejectedReqs.Load(),
		RejectedRequestsCount:         d.rejectedRequests.Load(),
	}
}

// Diagnostics is a snapshot of the server's diagnostic counters.
type Diagnostics = ua.ServerDiagnosticsSummaryDataType

// Diagnostics returns the counters of ServerDiagnosticsSummary.
func (s *Server) Diagnostics() Diagnostics { return s.diag.summary(s.subs) }
