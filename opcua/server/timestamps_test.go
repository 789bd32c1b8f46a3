package server

import (
	"github.com/edged/edged/opcua/server/internal/subtest"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// TestServerValuesHaveSourceTimestamps: every Variable under Objects whose
// Value reads Good carries a SourceTimestamp and a ServerTimestamp, the
// Server object's computed variables (ServerStatus, CurrentTime, the
// diagnostics counters) as well as those the server set once.
func TestServerValuesHaveSourceTimestamps(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	vars, good := goodObjectValues(t, tc)
	for _, v := range good {
		if v.dv.SourceTimestamp.IsZero() || v.dv.ServerTimestamp.IsZero() {
			t.Errorf("%v: Good with SourceTimestamp %v, ServerTimestamp %v", v.id, v.dv.SourceTimestamp, v.dv.ServerTimestamp)
		}
	}
	t.Logf("%d variables under Objects, %d with a Good value", vars, len(good))
}

// objectValue is a Variable under Objects and its Value as read.
type objectValue struct {
	id ua.NodeID
	dv ua.DataValue
}

// goodObjectValues reads the Value, with both timestamps, of every
// Variable under Objects over tc, one at a time, and returns how many
// there are and those that read Good.
func goodObjectValues(t *testing.T, tc *testConn) (int, []objectValue) {
	t.Helper()
	vars := objectsVariables(t, tc)
	var good []objectValue
	for _, v := range vars {
		r := subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{TimestampsToReturn: ua.TimestampsToReturnBoth,
			NodesToRead: []ua.ReadValueID{{NodeID: v, AttributeID: uint32(ua.AttributeIDValue)}}}))
		if dv := r.Results[0]; dv.Status == status.Good {
			good = append(good, objectValue{v, dv})
		}
	}
	return len(vars), good
}

// objectsVariables browses everything under Objects over tc and returns
// the Variables it finds.
func objectsVariables(t *testing.T, tc *testConn) []ua.NodeID {
	t.Helper()
	seen := map[ua.NodeID]bool{}
	queue := []ua.NodeID{ua.NewNumericNodeID(0, id.ObjectsFolder)}
	var vars []ua.NodeID
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		r := subtest.WantOK[ua.BrowseResponse](t, tc.call(&ua.BrowseRequest{NodesToBrowse: []ua.BrowseDescription{{
			NodeID: n, BrowseDirection: ua.BrowseDirectionForward,
			ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true,
			ResultMask: uint32(ua.BrowseResultMaskAll),
		}}}))
		for _, ref := range r.Results[0].References {
			t := ref.NodeID.NodeID
			if seen[t] || ref.NodeID.ServerIndex != 0 {
				continue
			}
			seen[t] = true
			queue = append(queue, t)
			if ref.NodeClass == ua.NodeClassVariable {
				vars = append(vars, t)
			}
		}
	}
	if len(vars) < 50 {
		t.Fatalf("%d variables under Objects, want the Server object's", len(vars))
	}
	return vars
}

// TestRequestTimeStale: with the default clock a request takes its time
// from when its channel read it, unless the connection marked that read
// stale (it waited since), and then from the clock; a later read's
// requests take their own time again.
func TestRequestTimeStale(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	read := func() (ua.DataValue, time.Time) {
		t.Helper()
		r := subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{TimestampsToReturn: ua.TimestampsToReturnServer,
			NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_ServiceLevel), AttributeID: uint32(ua.AttributeIDValue)}}}))
		return r.Results[0], r.ResponseHeader.Timestamp
	}
	first := time.Now().Add(-time.Hour).Truncate(100 * time.Nanosecond) // DateTime's resolution
	tc.received = first
	if dv, at := read(); !at.Equal(first) || !dv.ServerTimestamp.Equal(first) {
		t.Fatalf("read at %v: response %v, ServerTimestamp %v", first, at, dv.ServerTimestamp)
	}
	tc.c.stale(first)
	before := time.Now().Truncate(100 * time.Nanosecond)
	if dv, at := read(); at.Before(before) || !dv.ServerTimestamp.Equal(at) {
		t.Fatalf("read at %v, marked stale: response %v (want the clock, from %v), ServerTimestamp %v", first, at, before, dv.ServerTimestamp)
	}
	second := first.Add(time.Minute)
	tc.received = second
	if dv, at := read(); !at.Equal(second) || !dv.ServerTimestamp.Equal(second) {
		t.Fatalf("read at %v after the stale mark: response %v, ServerTimestamp %v", second, at, dv.ServerTimestamp)
	}
}
