package uasc

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// Config.ReadSpin: requests that come while the reader polls, after it
// has given up polling, and in pieces are all read whole; the end of the
// stream during a poll is reported as it is without polling.
func TestReadSpin(t *testing.T) {
	const spin = 20 * time.Millisecond
	tc, ch := openTCP(t, &Config{ReadSpin: spin}, defaultHello())
	done := echo(ch)
	roundTrip := func(id uint32, body []byte, send func(b []byte)) {
		t.Helper()
		send(tc.symChunk("MSG", 'F', id, body))
		gotID, got, _ := tc.response()
		if gotID != id || !bytes.Equal(got, body) {
			t.Fatalf("request %d: response %d, body %x", id, gotID, got)
		}
	}
	whole := func(b []byte) { tc.write(b) }
	roundTrip(1, []byte("at once"), whole) // during the poll
	roundTrip(2, []byte("again"), whole)
	time.Sleep(2 * spin) // the reader has blocked
	roundTrip(3, []byte("after the poll"), whole)
	roundTrip(4, bytes.Repeat([]byte{4}, 300), func(b []byte) {
		tc.write(b[:5]) // a partial header: the rest is read blocking
		time.Sleep(spin / 4)
		tc.write(b[5:])
	})
	roundTrip(5, []byte("last"), whole)
	tc.nc.Close() // during the poll
	select {
	case err := <-done:
		if err != ErrClosed {
			t.Fatalf("client closed: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not see the end of the stream")
	}
	if ch.spin == nil { // the reader has returned: its fields may be read
		t.Error("a TCP connection was not polled")
	}
}

// A connection that is not a syscall.Conn is read as without ReadSpin.
func TestReadSpinPipe(t *testing.T) {
	sc, cc := net.Pipe()
	defer cc.Close()
	res := make(chan opened, 1)
	go func() {
		ch, err := Open(t.Context(), sc, &Config{ReadSpin: time.Millisecond})
		res <- opened{ch, err}
	}()
	tc := newTestClient(t, cc)
	tc.open(defaultHello(), 60000)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.ch.Close(status.Good, "")
	done := echo(r.ch)
	tc.request(7, []byte("pipe"))
	if id, got, _ := tc.response(); id != 7 || string(got) != "pipe" {
		t.Fatalf("response %d %q", id, got)
	}
	if r.ch.spin != nil {
		t.Error("a pipe was polled")
	}
	cc.Close()
	<-done
}
