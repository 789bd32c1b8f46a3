package server_test

import (
	"testing"
	"time"

	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// TestReadServerTimestampIsRequestTime: with the default clock, a Read
// over TCP stamps its values' ServerTimestamp with the time in its
// response header, the time its channel took the request, read once;
// with the poller serving the connection as well as without.
func TestReadServerTimestampIsRequestTime(t *testing.T) {
	for _, poller := range []bool{false, true} {
		_, url := startServer(t, server.Config{Poller: poller})
		r := openRawSession(t, url)
		for i := 0; i < 20; i++ {
			before := time.Now().Truncate(100 * time.Nanosecond) // DateTime's resolution
			resp := r.call(&ua.ReadRequest{TimestampsToReturn: ua.TimestampsToReturnServer, NodesToRead: []ua.ReadValueID{
				{NodeID: ua.NewNumericNodeID(0, id.Server_NamespaceArray), AttributeID: uint32(ua.AttributeIDValue)},
				{NodeID: ua.NewNumericNodeID(0, id.Server_ServiceLevel), AttributeID: uint32(ua.AttributeIDValue)},
			}}).(*ua.ReadResponse)
			after := time.Now()
			at := resp.ResponseHeader.Timestamp
			if at.Before(before) || at.After(after) {
				t.Fatalf("poller %v: response timestamp %v, not within [%v, %v]", poller, at, before, after)
			}
			for j, dv := range resp.Results {
				if !dv.ServerTimestamp.Equal(at) {
					t.Fatalf("poller %v: result %d: ServerTimestamp %v, response timestamp %v", poller, j, dv.ServerTimestamp, at)
				}
			}
			time.Sleep(time.Millisecond) // an idle socket between requests: the poller's case
		}
	}
}
