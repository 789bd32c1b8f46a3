package slave

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

func pdu(fc byte, words ...uint16) []byte {
	b := []byte{fc}
	for _, w := range words {
		b = binary.BigEndian.AppendUint16(b, w)
	}
	return b
}

func TestHandle(t *testing.T) {
	bank := NewBank(20)
	bank.HoldingRegisters[1] = 0x1234
	bank.InputRegisters[19] = 0xBEEF
	bank.Coils[9] = true
	bank.DiscreteInputs[0] = true
	s := New(bank)
	for _, tc := range []struct {
		name     string
		req, out []byte
	}{
		{"fc3", pdu(3, 0, 2), []byte{3, 4, 0, 0, 0x12, 0x34}},
		{"fc4 last", pdu(4, 19, 1), []byte{4, 2, 0xBE, 0xEF}},
		{"fc4 past end", pdu(4, 19, 2), []byte{0x84, 2}},
		{"fc3 qty 0", pdu(3, 0, 0), []byte{0x83, 3}},
		{"fc3 qty 126", pdu(3, 0, 126), []byte{0x83, 3}},
		{"fc3 short", []byte{3, 0, 0}, []byte{0x83, 3}},
		{"fc1", pdu(1, 2, 10), []byte{1, 2, 0x80, 0}}, // coil 9 is bit 7 from 2
		{"fc2", pdu(2, 0, 1), []byte{2, 1, 1}},
		{"fc1 past end", pdu(1, 15, 6), []byte{0x81, 2}},
		{"fc5", pdu(5, 3, 0xFF00), pdu(5, 3, 0xFF00)},
		{"fc5 bad value", pdu(5, 3, 0x1234), []byte{0x85, 3}},
		{"fc5 past end", pdu(5, 20, 0), []byte{0x85, 2}},
		{"fc6", pdu(6, 5, 777), pdu(6, 5, 777)},
		{"fc6 past end", pdu(6, 20, 1), []byte{0x86, 2}},
		{"fc15", append(pdu(15, 10, 3), 1, 0b101), pdu(15, 10, 3)},
		{"fc15 byte count", append(pdu(15, 10, 9), 1, 0xFF), []byte{0x8F, 3}},
		{"fc16", append(pdu(16, 7, 2), 4, 0, 1, 0, 2), pdu(16, 7, 2)},
		{"fc16 past end", append(pdu(16, 19, 2), 4, 0, 1, 0, 2), []byte{0x90, 2}},
		{"fc16 byte count", append(pdu(16, 7, 2), 3, 0, 1, 0), []byte{0x90, 3}},
		{"fc23 unsupported", pdu(23, 0, 1, 0, 1), []byte{0x97, 1}},
		{"fc43 unsupported", []byte{43, 14, 1, 0}, []byte{0xAB, 1}},
	} {
		if got := s.Handle(tc.req, nil); !bytes.Equal(got, tc.out) {
			t.Errorf("%s: % x, want % x", tc.name, got, tc.out)
		}
	}
	s.Update(func(b *Bank) {
		if !b.Coils[3] || b.HoldingRegisters[5] != 777 || !b.Coils[10] || b.Coils[11] || !b.Coils[12] || b.HoldingRegisters[8] != 2 {
			t.Error("writes not in the bank")
		}
	})
}

// Requests over TCP while a simulation tick updates two registers that must
// always be seen together.
func TestServeConcurrent(t *testing.T) {
	s := New(NewBank(10))
	addr, err := s.ListenAndServe("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := uint16(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Update(func(b *Bank) { b.HoldingRegisters[0], b.HoldingRegisters[1] = i, i })
		}
	})
	for c := 0; c < 4; c++ {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr.String())
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			req := []byte{0, 0, 0, 0, 0, 6, 1, 3, 0, 0, 0, 2}
			var resp [13]byte
			for i := 0; i < 200; i++ {
				binary.BigEndian.PutUint16(req, uint16(i))
				if _, err := conn.Write(req); err != nil {
					t.Error(err)
					return
				}
				if _, err := io.ReadFull(conn, resp[:]); err != nil {
					t.Error(err)
					return
				}
				if binary.BigEndian.Uint16(resp[:]) != uint16(i) || resp[7] != 3 || resp[8] != 4 {
					t.Errorf("response % x", resp)
					return
				}
				if a, b := binary.BigEndian.Uint16(resp[9:]), binary.BigEndian.Uint16(resp[11:]); a != b {
					t.Errorf("torn update: %d %d", a, b)
					return
				}
			}
		})
	}
	time.Sleep(10 * time.Millisecond)
	close(stop)
	wg.Wait()
}

func FuzzHandle(f *testing.F) {
	f.Add(pdu(3, 0, 2))
	f.Add(append(pdu(16, 7, 2), 4, 0, 1, 0, 2))
	f.Add(append(pdu(15, 10, 3), 1, 0b101))
	f.Add([]byte{})
	s := New(NewBank(100))
	f.Fuzz(func(t *testing.T, req []byte) {
		out := s.Handle(req, nil)
		if len(out) < 2 || len(out) > 253 {
			t.Fatalf("response of %d bytes", len(out))
		}
	})
}
