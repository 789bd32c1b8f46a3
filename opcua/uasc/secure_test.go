package uasc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Secure conversation: renewals, sequence numbers, chunking and the
// robustness of the reader.

func TestRenewOverlap(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	oldTok := tc.tokID

	tc.request(1, []byte("before"))
	tc.response()

	tc.write(tc.opnChunk(ua.SecurityTokenRequestTypeRenew, 2, 60000))
	resp := tc.readOPN()
	newTok := resp.SecurityToken.TokenID
	if newTok == oldTok || resp.SecurityToken.ChannelID != ch.ID() {
		t.Fatalf("renewed token %+v, old token %d", resp.SecurityToken, oldTok)
	}

	// The old token is still accepted, and the server keeps answering
	// with it, until the client uses the new one.
	tc.tokID = oldTok
	tc.request(3, []byte("old"))
	b := tc.mustChunk("MSG")
	if got := binary.LittleEndian.Uint32(b[12:]); got != oldTok {
		t.Fatalf("response under token %d, want the old %d", got, oldTok)
	}

	tc.tokID = newTok
	tc.request(4, []byte("new"))
	b = tc.mustChunk("MSG")
	if got := binary.LittleEndian.Uint32(b[12:]); got != newTok {
		t.Fatalf("response under token %d, want the new %d", got, newTok)
	}

	// Once the new token was used, the old one is gone.
	tc.tokID = oldTok
	tc.request(5, []byte("old again"))
	tc.expectError(status.BadSecureChannelTokenUnknown)
	wantStatus(t, <-done, status.BadSecureChannelTokenUnknown)
}

// TestRenewTwiceBeforeUse: a client that renews twice before it uses the
// first renewal's token (its second OpenSecureChannel sent before its
// requests under the first token reached the server) may still use that
// token; once it uses the newest, the older ones are gone.
func TestRenewTwiceBeforeUse(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	oldTok := tc.tokID
	tc.write(tc.opnChunk(ua.SecurityTokenRequestTypeRenew, 2, 60000))
	tc.write(tc.opnChunk(ua.SecurityTokenRequestTypeRenew, 3, 60000))
	first := tc.readOPN().SecurityToken.TokenID
	second := tc.readOPN().SecurityToken.TokenID
	if first == oldTok || second == first {
		t.Fatalf("tokens %d, %d, %d", oldTok, first, second)
	}
	for i, c := range []struct {
		tok, want uint32 // the request's token, the response's
	}{{oldTok, oldTok}, {first, first}, {second, second}} {
		tc.tokID = c.tok
		tc.request(uint32(10+i), []byte("x"))
		if got := binary.LittleEndian.Uint32(tc.mustChunk("MSG")[12:]); got != c.want {
			t.Fatalf("request under token %d: response under %d, want %d", c.tok, got, c.want)
		}
	}
	tc.tokID = first
	tc.request(20, []byte("first again"))
	tc.expectError(status.BadSecureChannelTokenUnknown)
	wantStatus(t, <-done, status.BadSecureChannelTokenUnknown)
}

func TestRenewWrongChannel(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	tc.chanID++
	tc.write(tc.opnChunk(ua.SecurityTokenRequestTypeRenew, 2, 60000))
	tc.expectError(status.BadSecureChannelIDInvalid)
	wantStatus(t, <-done, status.BadSecureChannelIDInvalid)
}

func TestIssueOnOpenChannel(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	tc.write(tc.opnChunk(ua.SecurityTokenRequestTypeIssue, 2, 60000))
	tc.expectError(status.BadRequestTypeInvalid)
	wantStatus(t, <-done, status.BadRequestTypeInvalid)
}

func TestTokenExpires(t *testing.T) {
	// The newest token's lifetime + 25 % passes without a renewal (and
	// without traffic): the read deadline closes the channel.
	tc, ch := openTCP(t, &Config{MinTokenLifetime: 40e6, MaxTokenLifetime: 40e6}, defaultHello())
	done := echo(ch)
	tc.expectError(status.BadSecureChannelTokenUnknown)
	wantStatus(t, <-done, status.BadSecureChannelTokenUnknown)
}

func TestExpiredTokenRejected(t *testing.T) {
	// A message arrives under a token past its lifetime + 25 %.
	tc, ch := openTCP(t, &Config{MinTokenLifetime: 40e6, MaxTokenLifetime: 40e6}, defaultHello())
	time.Sleep(60 * time.Millisecond) // past 40 ms + 25 %; the reader is not reading yet
	done := echo(ch)
	tc.request(1, []byte("late"))
	tc.expectError(status.BadSecureChannelTokenUnknown)
	wantStatus(t, <-done, status.BadSecureChannelTokenUnknown)
}

func TestSequenceNumbers(t *testing.T) {
	for _, c := range []struct {
		name string
		seqs []uint32 // after the OPN's sequence number 1
		ok   bool
	}{
		{"consecutive", []uint32{2, 3, 4}, true},
		{"gap", []uint32{2, 4}, false},
		{"repeat", []uint32{2, 2}, false},
		{"backwards", []uint32{2, 1}, false},
		{"early wrap", []uint32{2, 0}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc, ch := openTCP(t, &Config{}, defaultHello())
			done := echo(ch)
			for i, seq := range c.seqs {
				tc.write(tc.symChunkSeq("MSG", 'F', seq, uint32(i), []byte{1}))
			}
			if c.ok {
				for range c.seqs {
					tc.response()
				}
				return
			}
			for range len(c.seqs) - 1 {
				tc.response()
			}
			tc.expectError(status.BadSequenceNumberInvalid)
			wantStatus(t, <-done, status.BadSequenceNumberInvalid)
		})
	}
}

func TestSequenceNumberWrap(t *testing.T) {
	ch := &Channel{}
	for _, c := range []struct {
		last, next uint32
		ok         bool
	}{
		{4294966271, 4294966272, true},
		{4294966271, 5, false}, // not yet past UInt32.MaxValue − 1024
		{4294966272, 5, true},
		{4294966272, 1023, true},
		{4294966272, 1024, false},
		{0xFFFFFFFF, 0, true},
		{0xFFFFFFFF, 1, true},
		{0xFFFFFFFF, 2000, false},
		{7, 8, true},
	} {
		ch.lastSeq = c.last
		if err := ch.checkSeq(c.next); (err == nil) != c.ok {
			t.Errorf("%d after %d: %v", c.next, c.last, err)
		}
	}
}

func TestMultiChunkRequest(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	var want []byte
	for i := range 3 {
		part := bytes.Repeat([]byte{byte(i + 1)}, 1000)
		want = append(want, part...)
		ct := byte('C')
		if i == 2 {
			ct = 'F'
		}
		tc.write(tc.symChunk("MSG", ct, 9, part))
	}
	id, got, _ := tc.response()
	if id != 9 || !bytes.Equal(got, want) {
		t.Fatalf("id %d, %d bytes", id, len(got))
	}
	// The reassembly buffer is reused for the next request.
	tc.write(tc.symChunk("MSG", 'C', 10, []byte("ab")))
	tc.write(tc.symChunk("MSG", 'F', 10, []byte("cd")))
	if id, got, _ := tc.response(); id != 10 || string(got) != "abcd" {
		t.Fatalf("id %d, %q", id, got)
	}
	ch.Close(status.Good, "")
	<-done
}

func TestMultiChunkResponse(t *testing.T) {
	// The client receives chunks of at most 8192 bytes: a 20000-byte
	// response takes 3 chunks, all in one write.
	h := defaultHello()
	h.ReceiveBufferSize = 8192
	tc, ch := openTCP(t, &Config{}, h)
	done := echo(ch)
	body := make([]byte, 20000)
	for i := range body {
		body[i] = byte(i * 7)
	}
	tc.write(tc.symChunk("MSG", 'C', 3, body[:8000]))
	tc.write(tc.symChunk("MSG", 'C', 3, body[8000:16000]))
	tc.write(tc.symChunk("MSG", 'F', 3, body[16000:]))
	id, got, n := tc.response()
	if id != 3 || !bytes.Equal(got, body) || n != 3 {
		t.Fatalf("id %d, %d chunks, %d bytes", id, n, len(got))
	}
	ch.Close(status.Good, "")
	<-done
}

func TestAbortChunk(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	tc.write(tc.symChunk("MSG", 'C', 4, []byte("partial")))
	abort := ua.AppendUint32(nil, uint32(status.BadRequestInterrupted))
	abort = ua.AppendString(abort, "changed my mind")
	tc.write(tc.symChunk("MSG", 'A', 4, abort))
	// No response to the aborted request; the channel goes on.
	tc.request(5, []byte("next"))
	if id, got, _ := tc.response(); id != 5 || string(got) != "next" {
		t.Fatalf("after abort: id %d, %q", id, got)
	}
	ch.Close(status.Good, "")
	<-done
}

func TestInterleavedChunks(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	tc.write(tc.symChunk("MSG", 'C', 4, []byte("a")))
	tc.write(tc.symChunk("MSG", 'F', 5, []byte("b")))
	tc.expectError(status.BadTcpMessageTypeInvalid)
	wantStatus(t, <-done, status.BadTcpMessageTypeInvalid)
}

func TestRequestTooLarge(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks int
		size   int
		want   ua.StatusCode
	}{
		{"message size, one chunk", 1, 9000, status.BadRequestTooLarge},
		{"message size, many chunks", 3, 4000, status.BadRequestTooLarge},
		{"chunk count", 5, 10, status.BadRequestTooLarge},
		{"chunk size", 1, 70000, status.BadTcpMessageTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc, ch := openTCP(t, &Config{MaxMessageSize: 8192, MaxChunkCount: 4}, defaultHello())
			done := echo(ch)
			var all []byte
			for i := range c.chunks {
				ct := byte('C')
				if i == c.chunks-1 {
					ct = 'F'
				}
				all = append(all, tc.symChunk("MSG", ct, 1, make([]byte, c.size))...)
			}
			go tc.nc.Write(all) // the server may stop reading before the end
			tc.expectError(c.want)
			wantStatus(t, <-done, c.want)
		})
	}
}

func TestGarbageAfterHandshake(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want ua.StatusCode
	}{
		{"text", []byte("GET / HTTP/1.1\r\n\r\n"), status.BadTcpMessageTypeInvalid},
		{"hello again", appendHello(nil, &hello{ReceiveBufferSize: 65535, SendBufferSize: 65535}), status.BadTcpMessageTypeInvalid},
		{"unknown chunk type", []byte("MSGX\x20\x00\x00\x00"), status.BadTcpMessageTypeInvalid},
		{"intermediate CLO", []byte("CLOC\x20\x00\x00\x00"), status.BadTcpMessageTypeInvalid},
		{"size below headers", []byte("MSGF\x0a\x00\x00\x00\x00\x00"), status.BadDecodingError},
		{"size 0xFFFFFFFF", []byte("MSGF\xff\xff\xff\xff"), status.BadTcpMessageTooLarge},
		{"wrong channel", []byte("MSGF\x18\x00\x00\x00\xff\xff\xff\xff\x01\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00"), status.BadSecureChannelIDInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc, ch := openTCP(t, &Config{}, defaultHello())
			done := echo(ch)
			tc.write(c.b)
			tc.expectError(c.want)
			wantStatus(t, <-done, c.want)
		})
	}
}

func TestUnknownToken(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	done := echo(ch)
	tc.tokID += 7
	tc.request(1, []byte{1})
	tc.expectError(status.BadSecureChannelTokenUnknown)
	wantStatus(t, <-done, status.BadSecureChannelTokenUnknown)
}

func TestIncompleteMessage(t *testing.T) {
	t.Run("chunk never completes", func(t *testing.T) {
		tc, ch := openTCP(t, &Config{MessageTimeout: 50e6}, defaultHello())
		done := echo(ch)
		b := tc.symChunk("MSG", 'F', 1, make([]byte, 100))
		tc.write(b[:50])
		tc.expectError(status.BadTimeout)
		wantStatus(t, <-done, status.BadTimeout)
	})
	t.Run("final chunk never comes", func(t *testing.T) {
		tc, ch := openTCP(t, &Config{MessageTimeout: 50e6}, defaultHello())
		done := echo(ch)
		tc.write(tc.symChunk("MSG", 'C', 1, make([]byte, 100)))
		tc.expectError(status.BadTimeout)
		wantStatus(t, <-done, status.BadTimeout)
	})
	t.Run("connection ends inside a chunk", func(t *testing.T) {
		tc, ch := openTCP(t, &Config{}, defaultHello())
		done := echo(ch)
		b := tc.symChunk("MSG", 'F', 1, make([]byte, 100))
		tc.write(b[:50])
		tc.nc.Close()
		if err := <-done; !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("connection ends between messages", func(t *testing.T) {
		tc, ch := openTCP(t, &Config{}, defaultHello())
		done := echo(ch)
		tc.nc.Close()
		if err := <-done; err != ErrClosed {
			t.Fatalf("got %v", err)
		}
	})
}

func TestClientStopsReading(t *testing.T) {
	// The client sends requests but never reads: once the socket buffers
	// are full, a write times out and the channel fails for everyone.
	tc, ch := openTCP(t, &Config{WriteTimeout: 100e6}, defaultHello())
	body := make([]byte, 60000)
	var err error
	for i := uint32(0); err == nil; i++ {
		err = ch.WriteResponse(i, body)
	}
	var we *writeError
	if !errors.As(err, &we) {
		t.Fatalf("WriteResponse: %v", err)
	}
	if err2 := ch.WriteResponse(1, []byte{1}); err2 != err {
		t.Fatalf("not sticky: %v", err2)
	}
	// The reader stops too.
	if _, err3 := ch.ReadRequest(); err3 != err {
		t.Fatalf("ReadRequest: %v", err3)
	}
	_ = tc
}

func TestConcurrentWriters(t *testing.T) {
	// Responses written by many goroutines arrive whole, each chunk with
	// the next sequence number.
	h := defaultHello()
	h.ReceiveBufferSize = 8192
	tc, ch := openTCP(t, &Config{}, h)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := uint32(w*each + i)
				n := 10 + int(id)*37%20000 // some take several chunks
				if err := ch.WriteResponse(id, bytes.Repeat([]byte{byte(id)}, n)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen := map[uint32]bool{}
	var lastSeq uint32
	for len(seen) < writers*each {
		var body []byte
		for {
			b := tc.mustChunk("MSG")
			seq := binary.LittleEndian.Uint32(b[16:])
			if lastSeq != 0 && seq != lastSeq+1 {
				t.Fatalf("sequence %d after %d", seq, lastSeq)
			}
			lastSeq = seq
			body = append(body, b[24:]...)
			if b[3] == 'F' {
				id := binary.LittleEndian.Uint32(b[20:])
				if n := 10 + int(id)*37%20000; !bytes.Equal(body, bytes.Repeat([]byte{byte(id)}, n)) {
					t.Fatalf("response %d garbled", id)
				}
				seen[id] = true
				break
			}
		}
	}
	wg.Wait()
}

func TestResponseTooLarge(t *testing.T) {
	h := defaultHello()
	h.MaxMessageSize = 10000
	h.MaxChunkCount = 2
	tc, ch := openTCP(t, &Config{}, h)

	// A ReadResponse for request handle 77, too large for the client.
	big := ua.AppendMessage(nil, &ua.ReadResponse{
		ResponseHeader: ua.ResponseHeader{RequestHandle: 77},
		Results:        make([]ua.DataValue, 20000),
	})
	go func() {
		wantStatus(t, ch.WriteResponse(5, big), status.BadResponseTooLarge)
	}()
	id, body, _ := tc.response()
	var f ua.ServiceFault
	if err := ua.DecodeMessageInto(ua.NewDecoder(body), &f); err != nil || id != 5 {
		t.Fatalf("id %d: %v", id, err)
	}
	if f.ResponseHeader.RequestHandle != 77 || f.ResponseHeader.ServiceResult != status.BadResponseTooLarge {
		t.Fatalf("fault %+v", f.ResponseHeader)
	}
	// The channel goes on.
	go ch.WriteResponse(6, []byte("small"))
	if id, got, _ := tc.response(); id != 6 || string(got) != "small" {
		t.Fatalf("id %d %q", id, got)
	}
}
