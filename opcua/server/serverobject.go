package server

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// ServerProfileURI is the profile edged's server claims in
// ServerCapabilities/ServerProfileArray (OPC 10000-7): Nano Embedded
// Device, the one without subscriptions. edged serves subscriptions, but
// it claims no profile whose conformance units it has not been checked
// against.
const ServerProfileURI = "http://opcfoundation.org/UA-Profile/Server/NanoEmbeddedDevice2017"

// liveVar is a variable of the Server object whose value the server
// computes at each read (a handle of the server's SourceFunc).
type liveVar uint32

const (
	liveCurrentTime liveVar = iota
	liveState
	liveServerStatus
	liveSecondsTillShutdown
	liveShutdownReason
	liveServiceLevel
	liveDiagnosticsSummary
	// The counters of ServerDiagnosticsSummary, in the order of the
	// DataType's fields.
	liveServerViewCount
	liveCurrentSessionCount
	liveCumulatedSessionCount
	liveSecurityRejectedSessionCount
	liveRejectedSessionCount
	liveSessionTimeoutCount
	liveSessionAbortCount
	liveCurrentSubscriptionCount
	liveCumulatedSubscriptionCount
	livePublishingIntervalCount
	liveSecurityRejectedRequestsCount
	liveRejectedRequestsCount
	// ServerConfiguration's TrustList.
	liveTrustListSize
	liveTrustListOpenCount
	liveTrustListUpdated
	liveUserTrustListSize
	liveUserTrustListOpenCount
	liveUserTrustListUpdated
	// The Identities of the well-known roles under RoleSet, in the order
	// of Role.
	liveIdentities
)

// identitiesNodes are the roles' Identities variables, by Role.
var identitiesNodes = [numRoles]uint32{
	id.WellKnownRole_Anonymous_Identities, id.WellKnownRole_AuthenticatedUser_Identities,
	id.WellKnownRole_Observer_Identities, id.WellKnownRole_Operator_Identities,
	id.WellKnownRole_Engineer_Identities, id.WellKnownRole_Supervisor_Identities,
	id.WellKnownRole_ConfigureAdmin_Identities, id.WellKnownRole_SecurityAdmin_Identities,
}

// liveNodes maps the live variables to their namespace-0 nodes.
var liveNodes = []struct {
	node uint32
	h    liveVar
}{
	{id.Server_ServerStatus_CurrentTime, liveCurrentTime},
	{id.Server_ServerStatus_State, liveState},
	{id.Server_ServerStatus, liveServerStatus},
	{id.Server_ServerStatus_SecondsTillShutdown, liveSecondsTillShutdown},
	{id.Server_ServerStatus_ShutdownReason, liveShutdownReason},
	{id.Server_ServiceLevel, liveServiceLevel},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary, liveDiagnosticsSummary},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_ServerViewCount, liveServerViewCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSessionCount, liveCurrentSessionCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_CumulatedSessionCount, liveCumulatedSessionCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_SecurityRejectedSessionCount, liveSecurityRejectedSessionCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_RejectedSessionCount, liveRejectedSessionCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_SessionTimeoutCount, liveSessionTimeoutCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_SessionAbortCount, liveSessionAbortCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSubscriptionCount, liveCurrentSubscriptionCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_CumulatedSubscriptionCount, liveCumulatedSubscriptionCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_PublishingIntervalCount, livePublishingIntervalCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_SecurityRejectedRequestsCount, liveSecurityRejectedRequestsCount},
	{id.Server_ServerDiagnostics_ServerDiagnosticsSummary_RejectedRequestsCount, liveRejectedRequestsCount},
	{id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Size, liveTrustListSize},
	{id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_OpenCount, liveTrustListOpenCount},
	{id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_LastUpdateTime, liveTrustListUpdated},
	{id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Size, liveUserTrustListSize},
	{id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_OpenCount, liveUserTrustListOpenCount},
	{id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_LastUpdateTime, liveUserTrustListUpdated},
}

// liveValue is the server's SourceFunc: it fills dv with the current value
// of variable h. Scalars are set without allocating (reading CurrentTime
// is free); the structures allocate their ExtensionObject.
func (s *Server) liveValue(h uint32, dv *ua.DataValue) {
	dv.SourceTimestamp = s.clock() // computed now
	switch liveVar(h) {
	case liveCurrentTime:
		dv.Value.SetDateTime(s.clock())
	case liveState:
		dv.Value.SetInt32(s.state.Load())
	case liveServerStatus:
		st := s.serverStatus()
		dv.Value = ua.MustVariant(ua.ExtensionObject{Body: &st})
	case liveSecondsTillShutdown:
		dv.Value.SetUint32(s.secondsTillShutdown())
	case liveShutdownReason:
		dv.Value = ua.MustVariant(s.shutdownText())
	case liveServiceLevel:
		dv.Value.SetUint8(s.serviceLevel())
	case liveTrustListSize, liveUserTrustListSize:
		var ts TrustLists
		if sec := s.cfg.Security; sec != nil && sec.TrustStore != nil {
			ts = sec.TrustStore
			if liveVar(h) == liveUserTrustListSize {
				ts = sec.UserTrustStore
			}
		}
		var n uint64
		if ts != nil {
			if b, err := encodedTrustList(ts, 15); err == nil {
				n = uint64(len(b))
			}
		}
		dv.Value.SetUint64(n)
	case liveTrustListOpenCount:
		dv.Value.SetUint16(uint16(s.trust.handles.Count()))
	case liveUserTrustListOpenCount:
		dv.Value.SetUint16(uint16(s.userTrust.handles.Count()))
	case liveTrustListUpdated, liveUserTrustListUpdated:
		t := s.trustOf(appGroup)
		if liveVar(h) == liveUserTrustListUpdated {
			t = s.trustOf(userGroup)
		}
		t.mu.Lock()
		at := t.updated
		t.mu.Unlock()
		if at.IsZero() {
			at = s.startTime
		}
		dv.Value.SetDateTime(at)
	case liveDiagnosticsSummary:
		sum := s.diag.summary(s.subs)
		dv.Value = ua.MustVariant(ua.ExtensionObject{Body: &sum})
	default:
		if h >= uint32(liveIdentities) && h < uint32(liveIdentities)+uint32(numRoles) {
			rules := s.roleIdentities(Role(h - uint32(liveIdentities)))
			eo := make([]ua.ExtensionObject, len(rules))
			for i := range rules {
				eo[i].Body = &rules[i]
			}
			dv.Value = ua.MustVariant(eo)
			return
		}
		if h >= uint32(liveServerViewCount) && h <= uint32(liveRejectedRequestsCount) {
			sum := s.diag.summary(s.subs)
			counters := [...]uint32{
				sum.ServerViewCount, sum.CurrentSessionCount, sum.CumulatedSessionCount,
				sum.SecurityRejectedSessionCount, sum.RejectedSessionCount, sum.SessionTimeoutCount,
				sum.SessionAbortCount, sum.CurrentSubscriptionCount, sum.CumulatedSubscriptionCount,
				sum.PublishingIntervalCount, sum.SecurityRejectedRequestsCount, sum.RejectedRequestsCount,
			}
			dv.Value.SetUint32(counters[h-uint32(liveServerViewCount)])
			return
		}
		dv.Status = status.BadInternalError
	}
}

// roleIdentities returns the identity mapping rules of role r:
// Config.RoleIdentities's, or by default Anonymous for the Anonymous role,
// AuthenticatedUser for AuthenticatedUser and none for the others.
func (s *Server) roleIdentities(r Role) []ua.IdentityMappingRuleType {
	if f := s.cfg.RoleIdentities; f != nil {
		return f(r)
	}
	switch r {
	case RoleAnonymous:
		return []ua.IdentityMappingRuleType{{CriteriaType: ua.IdentityCriteriaTypeAnonymous}}
	case RoleAuthenticatedUser:
		return []ua.IdentityMappingRuleType{{CriteriaType: ua.IdentityCriteriaTypeAuthenticatedUser}}
	}
	return nil
}

// limit is a configured size limit as a UInt32 capability: v, or def
// where v is 0.
func limit(v, def int) uint32 {
	if v <= 0 {
		v = def
	}
	return uint32(min(int64(v), math.MaxUint32))
}

// serverStatus returns Server/ServerStatus now.
func (s *Server) serverStatus() ua.ServerStatusDataType {
	return ua.ServerStatusDataType{
		StartTime:           s.startTime,
		CurrentTime:         s.clock(),
		State:               ua.ServerState(s.state.Load()),
		BuildInfo:           s.buildInfo(),
		SecondsTillShutdown: s.secondsTillShutdown(),
		ShutdownReason:      s.shutdownText(),
	}
}

func (s *Server) buildInfo() ua.BuildInfo {
	return ua.BuildInfo{
		ProductURI:       s.cfg.ProductURI,
		ManufacturerName: s.cfg.ManufacturerName,
		ProductName:      DefaultProductName,
		SoftwareVersion:  s.cfg.SoftwareVersion,
		BuildNumber:      s.cfg.BuildNumber,
		BuildDate:        s.cfg.BuildDate,
	}
}

// secondsTillShutdown is 0 unless a shutdown is announced.
func (s *Server) secondsTillShutdown() uint32 {
	at := s.shutdownAt.Load()
	if at == 0 {
		return 0
	}
	left := time.Duration(at - s.clock().UnixNano())
	if left <= 0 {
		return 0
	}
	return uint32(math.Ceil(left.Seconds()))
}

func (s *Server) shutdownText() ua.LocalizedText {
	if r := s.shutdownReason.Load(); r != nil {
		return ua.LocalizedText{Locale: "en", Text: *r}
	}
	return ua.LocalizedText{}
}

// serviceLevel is Config.ServiceLevel while running, 0 during shutdown.
func (s *Server) serviceLevel() byte {
	if ua.ServerState(s.state.Load()) != ua.ServerStateRunning {
		return 0
	}
	return s.cfg.ServiceLevel
}

// Gateway namespace nodes.
const (
	// GatewayFolderName is the BrowseName of the folder under Objects that
	// holds the gateway's own nodes, in the application namespace.
	GatewayFolderName = "Gateway"
)

// initServerObject fills in the Server object of namespace 0 and the
// application namespace with its Gateway folder.
func (s *Server) initServerObject() error {
	sp := s.as
	for _, v := range slices.Concat(s.statusValues(), historyValues(false, 0), s.configurationValues()) {
		if sp.Node(ua.NewNumericNodeID(0, v.node)) == nil {
			continue // not in the generated namespace 0 (optional node)
		}
		if err := sp.SetValue(ua.NewNumericNodeID(0, v.node), ua.MustVariant(v.v)); err != nil {
			return fmt.Errorf("server: Server object node %s: %w", id.Name(v.node), err)
		}
	}
	if err := s.setLiveSources(); err != nil {
		return err
	}
	if err := s.initSubMethods(); err != nil {
		return err
	}
	if err := s.addGatewayFolder(); err != nil {
		return err
	}
	return s.addAuditorRole()
}

// nodeValue is the value of a namespace-0 variable.
type nodeValue struct {
	node uint32
	v    any
}

// statusValues are the Server object's values that do not change while
// the server runs: its status, build info, capabilities and limits.
func (s *Server) statusValues() []nodeValue {
	lim := s.cfg.Limits
	bi := s.buildInfo()
	return []nodeValue{
		{id.Server_ServerArray, []string{s.cfg.ApplicationURI}},
		{id.Server_ServerStatus_StartTime, s.startTime},
		{id.Server_ServerStatus_BuildInfo, ua.ExtensionObject{Body: &bi}},
		{id.Server_ServerStatus_BuildInfo_ProductUri, bi.ProductURI},
		{id.Server_ServerStatus_BuildInfo_ManufacturerName, bi.ManufacturerName},
		{id.Server_ServerStatus_BuildInfo_ProductName, bi.ProductName},
		{id.Server_ServerStatus_BuildInfo_SoftwareVersion, bi.SoftwareVersion},
		{id.Server_ServerStatus_BuildInfo_BuildNumber, bi.BuildNumber},
		{id.Server_ServerStatus_BuildInfo_BuildDate, bi.BuildDate},
		{id.Server_ServerCapabilities_ServerProfileArray, []string{ServerProfileURI}},
		{id.Server_ServerCapabilities_LocaleIdArray, []string{"en"}},
		{id.Server_ServerCapabilities_MinSupportedSampleRate, float64(s.cfg.MinSupportedSampleRate) / float64(time.Millisecond)},
		{id.Server_ServerCapabilities_MaxBrowseContinuationPoints, uint16(min(s.cfg.MaxBrowseContinuationPoints, math.MaxUint16))},
		{id.Server_ServerCapabilities_MaxQueryContinuationPoints, uint16(0)},
		{id.Server_ServerCapabilities_MaxHistoryContinuationPoints, uint16(min(s.cfg.MaxHistoryContinuationPoints, math.MaxUint16))},
		{id.Server_ServerCapabilities_SoftwareCertificates, []ua.ExtensionObject{}},
		{id.Server_ServerCapabilities_MaxArrayLength, limit(s.cfg.Channel.Limits.MaxArrayLength, ua.DefaultLimits.MaxArrayLength)},
		{id.Server_ServerCapabilities_MaxStringLength, limit(s.cfg.Channel.Limits.MaxStringLength, ua.DefaultLimits.MaxStringLength)},
		{id.Server_ServerCapabilities_MaxByteStringLength, limit(s.cfg.Channel.Limits.MaxByteStringLength, ua.DefaultLimits.MaxByteStringLength)},
		{id.Server_ServerCapabilities_MaxSessions, limit(s.cfg.MaxSessions, DefaultMaxSessions)},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerRead, lim.MaxNodesPerRead},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerWrite, lim.MaxNodesPerWrite},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerBrowse, lim.MaxNodesPerBrowse},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerRegisterNodes, lim.MaxNodesPerRegisterNodes},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerTranslateBrowsePathsToNodeIds, lim.MaxNodesPerTranslateBrowsePathsToNodeIDs},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerMethodCall, lim.MaxNodesPerMethodCall},
		{id.Server_ServerCapabilities_OperationLimits_MaxMonitoredItemsPerCall, s.cfg.Subscriptions.MaxMonitoredItemsPerCall},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryReadData, lim.MaxNodesPerHistoryReadData},
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryUpdateData, lim.MaxNodesPerHistoryUpdateData},
		{id.Server_ServerCapabilities_MaxSubscriptions, uint32(s.cfg.Subscriptions.MaxSubscriptions)},
		{id.Server_ServerCapabilities_MaxMonitoredItems, uint32(s.cfg.Subscriptions.MaxMonitoredItems)},
		{id.Server_ServerCapabilities_MaxSubscriptionsPerSession, uint32(s.cfg.Subscriptions.MaxSubscriptionsPerSession)},
		{id.Server_ServerCapabilities_MaxMonitoredItemsPerSubscription, uint32(s.cfg.Subscriptions.MaxMonitoredItemsPerSubscription)},
		{id.Server_ServerCapabilities_MaxMonitoredItemsQueueSize, s.cfg.Subscriptions.MaxQueueSize},
		// Only ServerDiagnosticsSummary is kept; the per-session and
		// per-subscription arrays are not in the space.
		{id.Server_ServerDiagnostics_EnabledFlag, false},
		{id.Server_ServerRedundancy_RedundancySupport, int32(0)}, // None
		{id.Server_Auditing, s.auditing()},
	}
}

// historyValues are HistoryServerCapabilities: with on, reads of data
// history (raw, processed, at time; AddHistory), at most maxReturn values
// per operation and call; never updates, events (yet) or annotations.
// Server timestamps are supported: they are the source timestamps, edged
// stamping values as it reads them.
func historyValues(on bool, maxReturn int) []nodeValue {
	if !on {
		maxReturn = 0
	}
	return []nodeValue{
		{id.HistoryServerCapabilities_AccessHistoryDataCapability, on},
		{id.HistoryServerCapabilities_AccessHistoryEventsCapability, false},
		{id.HistoryServerCapabilities_MaxReturnDataValues, uint32(maxReturn)},
		{id.HistoryServerCapabilities_MaxReturnEventValues, uint32(0)},
		{id.HistoryServerCapabilities_InsertDataCapability, false},
		{id.HistoryServerCapabilities_ReplaceDataCapability, false},
		{id.HistoryServerCapabilities_UpdateDataCapability, false},
		{id.HistoryServerCapabilities_DeleteRawCapability, false},
		{id.HistoryServerCapabilities_DeleteAtTimeCapability, false},
		{id.HistoryServerCapabilities_InsertEventCapability, false},
		{id.HistoryServerCapabilities_ReplaceEventCapability, false},
		{id.HistoryServerCapabilities_UpdateEventCapability, false},
		{id.HistoryServerCapabilities_DeleteEventCapability, false},
		{id.HistoryServerCapabilities_InsertAnnotationCapability, false},
		{id.HistoryServerCapabilities_ServerTimestampSupported, on},
	}
}

// configurationValues are ServerConfiguration's (trustlist.go).
func (s *Server) configurationValues() []nodeValue {
	certTypes, _ := s.applicationCertTypes()
	return []nodeValue{
		{id.ServerConfiguration_ApplicationUri, s.cfg.ApplicationURI},
		{id.ServerConfiguration_ProductUri, s.cfg.ProductURI},
		{id.ServerConfiguration_ApplicationType, int32(ua.ApplicationTypeServer)},
		{id.ServerConfiguration_ServerCapabilities, []string{"NA"}},
		{id.ServerConfiguration_SupportedPrivateKeyFormats, []string{"PEM"}},
		{id.ServerConfiguration_MaxTrustListSize, uint32(MaxTrustListSize)},
		{id.ServerConfiguration_MulticastDnsEnabled, false},
		{id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_CertificateTypes, certTypes},
		// The methods check the caller's right; these say what the
		// TrustList is.
		{id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Writable, true},
		{id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_UserWritable, true},
		{id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Writable, true},
		{id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_UserWritable, true},
		// The user tokens' group has no certificate of the server's.
		{id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_CertificateTypes, []ua.NodeID{}},
	}
}

// addAuditorRole adds the Auditor role to the RoleSet: a RoleType object
// of the server's namespace whose Identities say who has it.
func (s *Server) addAuditorRole() error {
	sp := s.as
	if s.ns != auditorRole.Namespace {
		return fmt.Errorf("server: the application namespace is %d, not the Auditor role's %d", s.ns, auditorRole.Namespace)
	}
	if err := sp.AddNode(&addrspace.Node{
		ID:          auditorRole,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{NamespaceIndex: 1, Name: "Auditor"},
		Description: ua.LocalizedText{Locale: "en", Text: "Observes, and receives the audit events"},
	},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasComponent), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.Server_ServerCapabilities_RoleSet)}},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.RoleType)}},
	); err != nil {
		return fmt.Errorf("server: the Auditor role: %w", err)
	}
	identities := ua.NewStringNodeID(1, "Role.Auditor.Identities")
	if err := sp.AddNode(&addrspace.Node{
		ID:          identities,
		Class:       ua.NodeClassVariable,
		BrowseName:  ua.QualifiedName{Name: "Identities"},
		DataType:    ua.NewNumericNodeID(0, id.IdentityMappingRuleType),
		ValueRank:   addrspace.ValueRankOneDimension,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead),
	},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasProperty), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: auditorRole}},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.PropertyType)}},
	); err != nil {
		return fmt.Errorf("server: the Auditor role: %w", err)
	}
	return sp.SetSource(identities, sp.AddSource(addrspace.SourceFunc(s.liveValue)), uint32(liveIdentities+liveVar(RoleAuditor)))
}

// setLiveSources has the Server object's changing variables read when
// asked for (liveValue).
func (s *Server) setLiveSources() error {
	sp := s.as
	src := sp.AddSource(addrspace.SourceFunc(s.liveValue))
	live := liveNodes
	for r, n := range identitiesNodes {
		live = append(live, struct {
			node uint32
			h    liveVar
		}{n, liveIdentities + liveVar(r)})
	}
	for _, l := range live {
		nid := ua.NewNumericNodeID(0, l.node)
		if sp.Node(nid) == nil {
			continue
		}
		if err := sp.SetSource(nid, src, uint32(l.h)); err != nil {
			return fmt.Errorf("server: Server object node %s: %w", id.Name(l.node), err)
		}
	}
	return nil
}

// addGatewayFolder adds the application namespace and its Gateway folder
// with two demo variables: Setpoint (writable) and Model (read-only).
func (s *Server) addGatewayFolder() error {
	sp := s.as
	s.ns = sp.AddNamespace(s.cfg.NamespaceURI)
	s.gateway = ua.NewStringNodeID(s.ns, GatewayFolderName)
	if err := sp.AddNode(&addrspace.Node{
		ID:          s.gateway,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{NamespaceIndex: s.ns, Name: GatewayFolderName},
		Description: ua.LocalizedText{Locale: "en", Text: "The gateway's own variables"},
	},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.FolderType)}},
	); err != nil {
		return fmt.Errorf("server: Gateway folder: %w", err)
	}
	if err := s.AddVariable(GatewayVariable{Name: "Setpoint", Value: ua.MustVariant(float64(0)), DataType: id.Double, Writable: true,
		Description: "A writable demo setpoint (Double)"}); err != nil {
		return err
	}
	return s.AddVariable(GatewayVariable{Name: "Model", Value: ua.MustVariant("edged gateway"), DataType: id.String,
		Description: "The gateway model (read-only)"})
}

// GatewayVariable describes a variable to add under the Gateway folder
// (see AddVariable).
type GatewayVariable struct {
	// Name is the BrowseName and DisplayName; the NodeId is
	// ns=<application namespace>;s=Gateway.<Name>.
	Name        string
	Description string
	// DataType is the namespace-0 id of the DataType (id.Double, ...).
	DataType uint32
	// Value is the initial value of a static variable.
	Value ua.Variant
	// Source and Handle, when Source is set, serve the value instead.
	Source addrspace.ValueSource
	Handle uint32
	// Writable allows clients to write the value.
	Writable bool
}

// AddVariable adds a variable under the Gateway folder.
func (s *Server) AddVariable(v GatewayVariable) error {
	access := uint8(ua.AccessLevelTypeCurrentRead)
	if v.Writable {
		access |= uint8(ua.AccessLevelTypeCurrentWrite)
	}
	n := &addrspace.Node{
		ID:          s.GatewayNodeID(v.Name),
		Class:       ua.NodeClassVariable,
		BrowseName:  ua.QualifiedName{NamespaceIndex: s.ns, Name: v.Name},
		Description: ua.LocalizedText{Locale: "en", Text: v.Description},
		Value:       &ua.DataValue{Value: v.Value, SourceTimestamp: s.clock()},
		DataType:    ua.NewNumericNodeID(0, v.DataType),
		ValueRank:   -1,
		AccessLevel: access,
	}
	if err := s.as.AddNode(n,
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasComponent), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: s.gateway}},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.BaseDataVariableType)}},
	); err != nil {
		return fmt.Errorf("server: Gateway variable %s: %w", v.Name, err)
	}
	if v.Source != nil {
		if err := s.as.SetSource(n.ID, s.as.AddSource(v.Source), v.Handle); err != nil {
			return fmt.Errorf("server: Gateway variable %s: %w", v.Name, err)
		}
	}
	return nil
}

// GatewayNodeID returns the NodeId of the Gateway variable name.
func (s *Server) GatewayNodeID(name string) ua.NodeID {
	return ua.NewStringNodeID(s.ns, GatewayFolderName+"."+name)
}

// GatewayFolder returns the NodeId of the Gateway folder.
func (s *Server) GatewayFolder() ua.NodeID { return s.gateway }

// AddressSpace returns the server's address space, to add nodes to.
func (s *Server) AddressSpace() *addrspace.Space { return s.as }
