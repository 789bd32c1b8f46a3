package uasc

import "testing"

// TestMsgType checks the message types a header's three bytes give, and
// that no other bytes give one of them.
func TestMsgType(t *testing.T) {
	kinds := map[string]msgKind{"HEL": kindHEL, "OPN": kindOPN, "MSG": kindMSG, "CLO": kindCLO, "ERR": kindERR}
	for name, k := range kinds {
		if got := msgType([]byte(name + "F\x00\x00\x00\x00")); got != k {
			t.Errorf("msgType(%q) = %#x, want %#x", name, got, k)
		}
	}
	for _, other := range []string{"MSH", "GSM", "msg", "\x00MS", "ACK", "RHE", "HE\x00"} {
		got := msgType([]byte(other))
		for name, k := range kinds {
			if got == k {
				t.Errorf("msgType(%q) = %s's type", other, name)
			}
		}
	}
}
