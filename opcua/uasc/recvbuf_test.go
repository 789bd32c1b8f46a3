package uasc

import (
	"bytes"
	"testing"

	"github.com/edged/edged/opcua/ua"
)

// TestReceiveBufferGrows: a channel starts with a receive buffer of
// initialRecvBuf and keeps it while requests are small; a chunk larger
// than that makes it grow to the negotiated size, and the request still
// arrives whole.
func TestReceiveBufferGrows(t *testing.T) {
	for _, big := range []bool{false, true} {
		tc, ch := openTCP(t, &Config{}, defaultHello())
		done := echo(ch)
		bodies := [][]byte{bytes.Repeat([]byte{1}, 100), bytes.Repeat([]byte{2}, 3000)}
		if big {
			bodies = append(bodies, bytes.Repeat([]byte{3}, 40000), bytes.Repeat([]byte{4}, 10))
		}
		for i, body := range bodies {
			tc.request(uint32(100+i), body)
			id, got, _ := tc.response()
			if id != uint32(100+i) || !bytes.Equal(got, body) {
				t.Fatalf("big=%v, response %d: id %d, %d bytes, want %d", big, i, id, len(got), len(body))
			}
		}
		tc.write(tc.symChunk("CLO", 'F', 200, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{})))
		if err := <-done; err != ErrClosed {
			t.Fatalf("after CLO: %v, want ErrClosed", err)
		}
		want := initialRecvBuf
		if big {
			want = ch.recvBufSize
		}
		if len(ch.rbuf) != want || want <= initialRecvBuf && big {
			t.Errorf("big=%v: receive buffer of %d bytes, want %d", big, len(ch.rbuf), want)
		}
	}
}
