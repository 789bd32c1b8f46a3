package server

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua/id"
)

// TestServiceTable: every row of the engine's services is in the server's
// table once, and the services the poller answers (rows that never
// block) are the reads of the address space, Publish and Republish.
func TestServiceTable(t *testing.T) {
	for _, sv := range subs.Services {
		n := 0
		for i := range services {
			if services[i].request == sv.Request {
				n++
			}
		}
		if n != 1 {
			t.Errorf("the engine's service %s is %d times in the server's table", id.Name(sv.Request), n)
		}
	}
	want := []uint32{
		id.ReadRequest_Encoding_DefaultBinary, id.BrowseRequest_Encoding_DefaultBinary,
		id.BrowseNextRequest_Encoding_DefaultBinary, id.TranslateBrowsePathsToNodeIdsRequest_Encoding_DefaultBinary,
		id.RegisterNodesRequest_Encoding_DefaultBinary, id.UnregisterNodesRequest_Encoding_DefaultBinary,
		id.PublishRequest_Encoding_DefaultBinary, id.RepublishRequest_Encoding_DefaultBinary,
	}
	var got []uint32
	for i := range services {
		msg := []byte{0x01, 0, 0, 0}
		binary.LittleEndian.PutUint16(msg[2:], uint16(services[i].request))
		if polledService(msg) {
			got = append(got, services[i].request)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("polled services %v, want %v", got, want)
	}
}
