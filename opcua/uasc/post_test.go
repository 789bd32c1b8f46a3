package uasc

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// PostResponse: responses written in the background.

// postBody is a response body of size bytes (at least 8) tagged with its
// writer and index.
func postBody(w, i, size int) []byte {
	b := make([]byte, max(size, 8))
	binary.LittleEndian.PutUint32(b, uint32(w))
	binary.LittleEndian.PutUint32(b[4:], uint32(i))
	return b
}

func TestPostResponseWritten(t *testing.T) {
	// A posted response leaves without any other call on the channel.
	tc, ch, _ := openCounted(t, &Config{}, defaultHello())
	if err := ch.PostResponse(7, postBody(1, 2, 100)); err != nil {
		t.Fatal(err)
	}
	tc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	reqID, body, n := tc.response()
	if reqID != 7 || n != 1 || len(body) != 100 || binary.LittleEndian.Uint32(body[4:]) != 2 {
		t.Fatalf("request id %d, %d chunks, %d bytes, index %d", reqID, n, len(body), binary.LittleEndian.Uint32(body[4:]))
	}
}

func TestPostResponseWithConcurrentWriters(t *testing.T) {
	// Two goroutines post, two write (one of them queueing too): every
	// response arrives once, its chunks together, in the order its
	// goroutine sent it, with continuous sequence numbers.
	tc, ch, _ := openCounted(t, &Config{}, defaultHello())
	const writers, per = 4, 150
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				id := uint32(w*per + i + 1)
				size := 100
				if i%25 == 0 {
					size = 150_000 // three chunks
				}
				var err error
				switch w {
				case 0, 1:
					err = ch.PostResponse(id, postBody(w, i, size))
				case 2:
					err = ch.WriteResponse(id, postBody(w, i, size))
				case 3:
					if err = ch.QueueResponse(id, postBody(w, i, size)); err == nil && i%5 == 4 {
						err = ch.Flush()
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
			if w == 3 {
				if err := ch.Flush(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	tc.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	next := make([]int, writers) // next index expected of each writer
	var lastSeq uint32
	for got := 0; got < writers*per; got++ {
		var reqID uint32
		var body []byte
		for n := 0; ; n++ {
			b := tc.mustChunk("MSG")
			seq := binary.LittleEndian.Uint32(b[16:])
			if (got > 0 || n > 0) && seq != lastSeq+1 {
				t.Fatalf("sequence number %d after %d", seq, lastSeq)
			}
			lastSeq = seq
			id := binary.LittleEndian.Uint32(b[20:])
			if n > 0 && id != reqID {
				t.Fatalf("chunk of request %d inside the response to %d", id, reqID)
			}
			reqID = id
			body = append(body, b[symHdrLen+seqHdrLen:]...)
			if b[3] == 'F' {
				break
			}
		}
		w, i := int(binary.LittleEndian.Uint32(body)), int(binary.LittleEndian.Uint32(body[4:]))
		if w >= writers || i != next[w] || reqID != uint32(w*per+i+1) {
			t.Fatalf("response %d: writer %d index %d request id %d; want index %d of writer %d", got, w, i, reqID, next[min(w, writers-1)], w)
		}
		if want := 100; i%25 == 0 && len(body) != 150_000 || i%25 != 0 && len(body) != want {
			t.Fatalf("response %d of writer %d: %d bytes", i, w, len(body))
		}
		next[w]++
	}
	wg.Wait()
}

// stalledClient opens a channel with cfg whose client never reads, with
// socket buffers as small as the system allows on both sides.
func stalledClient(t *testing.T, cfg *Config) (*testClient, *Channel, *countConn) {
	h := defaultHello()
	h.ReceiveBufferSize = MinBufferSize
	tc, ch, cn := openCounted(t, cfg, h)
	tc.nc.(*net.TCPConn).SetReadBuffer(4096)
	cn.Conn.(*net.TCPConn).SetWriteBuffer(4096)
	return tc, ch, cn
}

const stallPosts, stallSize = 200, 32 << 10 // 6.4 MB, far beyond the sockets' buffers

func TestPostResponseNonReadingPeer(t *testing.T) {
	// The client stops reading: every post returns at once, though its
	// bytes cannot all be written before the (long) write timeout.
	tc, ch, cn := stalledClient(t, &Config{WriteTimeout: 10 * time.Minute})
	done := make(chan error, 1)
	go func() {
		for i := range stallPosts {
			if err := ch.PostResponse(uint32(i+1), postBody(0, i, stallSize)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("PostResponse: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("PostResponse blocked on a client that does not read")
	}
	if n := cn.bytes.Load(); n >= stallPosts*stallSize {
		t.Fatalf("%d bytes written to a client that does not read", n)
	}
	tc.nc.Close() // fails the background write at once
}

func TestPostResponseWriteTimeoutSticky(t *testing.T) {
	// The background write to a client that does not read times out:
	// then the channel is dead, PostResponse returns the sticky write
	// error and ReadRequest fails (the connection was closed).
	_, ch, _ := stalledClient(t, &Config{WriteTimeout: 300 * time.Millisecond})
	var err error
	for i := 0; err == nil; i++ {
		if i > 30_000 {
			t.Fatal("no error after 30 s of posting to a client that does not read")
		}
		if i >= stallPosts {
			time.Sleep(time.Millisecond)
		}
		err = ch.PostResponse(uint32(i+1), postBody(0, i, stallSize))
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("sticky error %v, want the write timeout", err)
	}
	if err2 := ch.WriteResponse(1, postBody(0, 0, 8)); err2 != err {
		t.Fatalf("WriteResponse after the failure: %v, want %v", err2, err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := ch.ReadRequest()
		readErr <- err
	}()
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("ReadRequest succeeded on a dead channel")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ReadRequest still waiting on a dead channel")
	}
}

// BenchmarkSendToClient: one 200-byte response from the call until the
// client has read it, written (WriteResponse) or posted (PostResponse:
// framed at once, written by a goroutine it starts).
func BenchmarkSendToClient(b *testing.B) {
	for _, post := range []bool{false, true} {
		name := "WriteResponse"
		if post {
			name = "PostResponse"
		}
		b.Run(name, func(b *testing.B) {
			tc, ch := openTCP(b, &Config{}, defaultHello())
			body := postBody(0, 0, 200)
			buf := make([]byte, symHdrLen+seqHdrLen+len(body))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if post {
					err = ch.PostResponse(1, body)
				} else {
					err = ch.WriteResponse(1, body)
				}
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(tc.nc, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestCloseBoundsWriteToStalledClient(t *testing.T) {
	// A write to a client that does not read is in progress, with a write
	// timeout far beyond the test's: Close ends it within CloseTimeout.
	_, ch, _ := stalledClient(t, &Config{WriteTimeout: time.Hour, CloseTimeout: 50 * time.Millisecond})
	for i := range stallPosts {
		if err := ch.PostResponse(uint32(i+1), postBody(0, i, stallSize)); err != nil {
			t.Fatalf("PostResponse: %v", err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- ch.Close(status.BadShutdown, "shutdown") }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for the write timeout of a client that does not read")
	}
	if err := ch.WriteResponse(1, postBody(0, 0, 8)); err == nil {
		t.Fatal("WriteResponse succeeded after Close")
	}
}
