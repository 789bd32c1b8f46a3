package mqtt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// broker is a minimal MQTT 3.1.1 broker for one connection at a time: it
// answers CONNECT with code, SUBSCRIBE with SUBACK, PINGREQ with PINGRESP
// (unless mute), and records the PUBLISHes.
type broker struct {
	ln      net.Listener
	code    byte
	mu      sync.Mutex
	connect []byte
	pubs    []string // topic + " " + payload
	mute    bool
	discard bool // publishes are read and dropped, allocating nothing
	conns   []net.Conn
}

func newBroker(t *testing.T, code byte) *broker {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &broker{ln: ln, code: code}
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		for _, c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
			go b.serve(c)
		}
	}()
	return b
}

func (b *broker) url() string { return "tcp://" + b.ln.Addr().String() }

func (b *broker) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var buf []byte
	for {
		h, body, err := readPacket(r, &buf, 1<<20)
		if err != nil {
			return
		}
		b.mu.Lock()
		switch h >> 4 {
		case tConnect:
			b.connect = append([]byte(nil), body...)
			c.Write([]byte{tConnack << 4, 2, 0, b.code})
		case tSubscribe:
			id := binary.BigEndian.Uint16(body)
			c.Write([]byte{tSuback << 4, 3, byte(id >> 8), byte(id), 1})
		case tPingreq:
			if !b.mute {
				c.Write([]byte{tPingresp << 4, 0})
			}
		case tPublish:
			if b.discard {
				break
			}
			topic, payload, _, _, _ := parsePublish(h, body)
			b.pubs = append(b.pubs, topic+" "+string(payload))
		case tDisconnect:
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
}

func (b *broker) published() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.pubs...)
}

func TestConnectPacket(t *testing.T) {
	pkt, err := connectPacket(&Options{ClientID: "c", Username: "u", Password: []byte("p"), KeepAlive: 30 * time.Second,
		Will: &Message{Topic: "w", Payload: []byte{1}, QoS: 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x10, 25,
		0, 4, 'M', 'Q', 'T', 'T', 4,
		0x80 | 0x40 | 0x08 | 0x04 | 0x02, // user, password, will QoS 1, will, clean session
		0, 30,                            // keep-alive
		0, 1, 'c', 0, 1, 'w', 0, 1, 1, 0, 1, 'u', 0, 1, 'p'}
	if !bytes.Equal(pkt, want) {
		t.Fatalf("got  % x\nwant % x", pkt, want)
	}
}

func TestPublishConfirmed(t *testing.T) {
	b := newBroker(t, 0)
	ctx := context.Background()
	c, err := Dial(ctx, b.url(), Options{ClientID: "t", KeepAlive: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Subscribe(ctx, 1, "a/#"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.Publish("t/x", []byte{'0' + byte(i)}, false); err != nil {
			t.Fatal(err)
		}
	}
	mark := c.Mark()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for c.Confirmed() < mark {
		select {
		case <-c.Done():
			t.Fatal(c.Err())
		case <-time.After(time.Millisecond):
		}
	}
	// The PINGRESP came after the broker read the three PUBLISHes.
	if got := b.published(); len(got) != 3 || got[2] != "t/x 2" {
		t.Fatalf("the broker has %q", got)
	}
}

// A PUBLISH that brings the buffer to flushAt bytes is written at once,
// with what was buffered before it: no Flush is called here.
func TestPublishWritesLarge(t *testing.T) {
	b := newBroker(t, 0)
	c, err := Dial(context.Background(), b.url(), Options{ClientID: "t", KeepAlive: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Publish("t/small", []byte{1}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish("t/large", make([]byte, flushAt), false); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(b.published()) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the broker has %d PUBLISHes, want 2", len(b.published()))
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRefused(t *testing.T) {
	b := newBroker(t, 5)
	_, err := Dial(context.Background(), b.url(), Options{ClientID: "t"})
	var ce ConnectError
	if !errors.As(err, &ce) || ce != 5 {
		t.Fatalf("%v, want ConnectError 5", err)
	}
}

// A broker that stops answering PINGREQ is given up within the
// keep-alive.
func TestDeadBroker(t *testing.T) {
	b := newBroker(t, 0)
	c, err := Dial(context.Background(), b.url(), Options{ClientID: "t", KeepAlive: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.mute = true
	b.mu.Unlock()
	c.Mark()
	c.Flush()
	<-c.Done()
	if err := c.Err(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("PINGRESP")) {
		t.Fatalf("%v", err)
	}
	if _, err := c.Publish("x", nil, false); err == nil {
		t.Fatal("a publish on a dead connection succeeded")
	}
}

// Mark sends no PINGREQ while Window of them are unanswered.
func TestWindow(t *testing.T) {
	b := newBroker(t, 0)
	b.mute = true
	c, err := Dial(context.Background(), b.url(), Options{ClientID: "t", Window: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m1, m2, m3 := c.Mark(), c.Mark(), c.Mark()
	if m1 != 1 || m2 != 2 || m3 != 3 || c.marks.Load() != 2 {
		t.Fatalf("marks %d %d %d, %d sent", m1, m2, m3, c.marks.Load())
	}
}

func TestTargets(t *testing.T) {
	for url, want := range map[string]string{
		"tcp://h": "h:1883", "mqtt://h:1": "h:1", "ssl://h": "h:8883", "mqtts://[::1]": "[::1]:8883",
	} {
		addr, _, err := target(url, nil)
		if err != nil || addr != want {
			t.Errorf("%s: %s %v", url, addr, err)
		}
	}
	for _, url := range []string{"http://h", "tcp://", "tcp://h/path", "::"} {
		if _, _, err := target(url, nil); err == nil {
			t.Errorf("%s: no error", url)
		}
	}
}

// Publishing a message and marking it allocate nothing. (The broker
// drops what it reads: AllocsPerRun counts every goroutine's allocations,
// and a slow machine preempts the loop for the broker's.)
func TestPublishAllocs(t *testing.T) {
	b := newBroker(t, 0)
	b.discard = true
	c, err := Dial(context.Background(), b.url(), Options{ClientID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload := make([]byte, 100)
	for range 10 { // grow the buffers
		c.Publish("spBv1.0/g/DDATA/n/d", payload, false)
		c.Flush()
	}
	allocs := testing.AllocsPerRun(200, func() {
		c.Publish("spBv1.0/g/DDATA/n/d", payload, false)
		c.Flush()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per publish, want 0", allocs)
	}
}

// What the broker sends is read with its sizes checked: every input
// either parses or fails, without a panic or an allocation beyond max.
func FuzzReadPacket(f *testing.F) {
	f.Add([]byte{0x30, 5, 0, 1, 't', 'x', 'y'})
	f.Add([]byte{0x32, 7, 0, 1, 't', 0, 9, 'x', 'y'})
	f.Add([]byte{0xd0, 0})
	f.Add([]byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		var buf []byte
		for {
			h, body, err := readPacket(r, &buf, 1024)
			if err != nil {
				return
			}
			if len(body) > 1024 {
				t.Fatalf("a body of %d bytes", len(body))
			}
			if h>>4 == tPublish {
				parsePublish(h, body)
			}
		}
	})
}
