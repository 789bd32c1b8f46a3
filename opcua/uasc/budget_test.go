package uasc

import (
	"bytes"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// messageChunks returns body as MSG chunks of at most 60,000 bytes, the
// last one final (F) if final.
func (tc *testClient) messageChunks(reqID uint32, body []byte, final bool) []byte {
	var out []byte
	for len(body) > 0 {
		n := min(len(body), 60000)
		ct := byte('C')
		if n == len(body) && final {
			ct = 'F'
		}
		out = append(out, tc.symChunk("MSG", ct, reqID, body[:n])...)
		body = body[n:]
	}
	return out
}

// sendMessage writes messageChunks.
func (tc *testClient) sendMessage(reqID uint32, body []byte, final bool) {
	tc.t.Helper()
	tc.write(tc.messageChunks(reqID, body, final))
}

// TestReassemblyBudget: the channels sharing a Budget hold no more than
// it for their requests being reassembled; a request that would take more
// is Bad_RequestTooLarge; a large buffer is given back once its request
// was handed out and the next one starts, and when the channel ends.
func TestReassemblyBudget(t *testing.T) {
	b := NewBudget(400<<10, 0)
	cfg := &Config{Budget: b, MaxMessageSize: 1 << 20}
	tcA, chA := openTCP(t, cfg, defaultHello())
	tcB, chB := openTCP(t, cfg, defaultHello())

	big := bytes.Repeat([]byte{7}, 300<<10)
	tcA.sendMessage(1, big, true)
	req, err := chA.ReadRequest()
	if err != nil || !bytes.Equal(req.Message, big) {
		t.Fatalf("A's request: %v (%d bytes)", err, len(req.Message))
	}
	if u := b.Used(); u < 300<<10 || u > 400<<10 {
		t.Fatalf("budget used %d while A's request is out, want 300..400 KiB", u)
	}

	// B cannot have 300 KiB more while A holds its buffer.
	doneB := echo(chB)
	go tcB.nc.Write(tcB.messageChunks(1, big, true)) // the server stops reading before the end
	tcB.expectError(status.BadRequestTooLarge)
	wantStatus(t, <-doneB, status.BadRequestTooLarge)
	if u := b.Used(); u < 300<<10 {
		t.Fatalf("budget used %d after B failed, want A's still held", u)
	}

	// A's next request releases the large buffer first.
	small := []byte("next")
	tcA.sendMessage(2, small, false)
	tcA.write(tcA.symChunk("MSG", 'F', 2, nil))
	if req, err := chA.ReadRequest(); err != nil || !bytes.Equal(req.Message, small) {
		t.Fatalf("A's second request: %v %q", err, req.Message)
	}
	if u := b.Used(); u > keepMsgCap {
		t.Fatalf("budget used %d after a small request, want at most %d", u, keepMsgCap)
	}
	chA.Close(status.Good, "")
	if u := b.Used(); u != 0 {
		t.Fatalf("budget used %d after both channels ended", u)
	}
}

// TestInitialMessageLimit: until SetMessageLimit, a request beyond
// InitialMessageLimit is Bad_RequestTooLarge; after it, up to
// MaxMessageSize is accepted.
func TestInitialMessageLimit(t *testing.T) {
	cfg := &Config{InitialMessageLimit: 64 << 10, MaxMessageSize: 1 << 20}
	body := bytes.Repeat([]byte{1}, 100<<10)

	tc, ch := openTCP(t, cfg, defaultHello())
	done := echo(ch)
	go tc.nc.Write(tc.messageChunks(1, body, true))
	tc.expectError(status.BadRequestTooLarge)
	wantStatus(t, <-done, status.BadRequestTooLarge)

	tc, ch = openTCP(t, cfg, defaultHello())
	ch.SetMessageLimit(1 << 30) // capped at MaxMessageSize
	tc.sendMessage(1, body, true)
	if req, err := ch.ReadRequest(); err != nil || len(req.Message) != len(body) {
		t.Fatalf("after SetMessageLimit: %v (%d bytes)", err, len(req.Message))
	}
	go tc.nc.Write(tc.messageChunks(2, make([]byte, 1<<20+1), true))
	if _, err := ch.ReadRequest(); err == nil {
		t.Fatal("a request beyond MaxMessageSize was accepted")
	}
}

// TestBudgetPace: the bytes of multi-chunk requests are admitted at the
// budget's rate, all channels together, paceBurst ahead of it; an idle
// budget starts afresh.
func TestBudgetPace(t *testing.T) {
	b := NewBudget(1<<20, 1<<20) // 1 MiB/s
	if d := b.pace(1 << 10); d != 0 {
		t.Fatalf("the first KiB waits %v, want 0 (within the burst)", d)
	}
	d := b.pace(1 << 19) // half a second's worth more
	if d < 400*time.Millisecond || d > 500*time.Millisecond {
		t.Fatalf("half a MiB more waits %v, want about 500 ms less the burst", d)
	}
	if d := (*Budget)(nil).pace(1 << 30); d != 0 {
		t.Fatalf("no budget waits %v", d)
	}
	if d := NewBudget(1<<20, 0).pace(1 << 30); d != 0 {
		t.Fatalf("an unpaced budget waits %v", d)
	}
}
