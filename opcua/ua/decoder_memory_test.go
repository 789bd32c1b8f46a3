package ua

import (
	"errors"
	"runtime"
	"testing"

	"github.com/edged/edged/opcua/ua/status"
)

// A Variant array of null Variants takes one byte per element on the wire
// and a Variant's size in memory. Without a memory budget a 1 MB input
// would allocate about 100 MB; with it, decoding stops at the budget.
func TestArrayMemoryBudget(t *testing.T) {
	const n = 1 << 20
	in := make([]byte, 0, 5+n)
	in = append(in, 0x80|byte(TypeVariant)) // Variant array
	in = AppendInt32(in, n)
	in = append(in, make([]byte, n)...) // n null Variants

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var v Variant
	d := NewDecoder(in)
	v.Decode(d)
	runtime.ReadMemStats(&after)
	if !errors.Is(d.Err(), status.BadEncodingLimitsExceeded) {
		t.Fatalf("err = %v, want BadEncodingLimitsExceeded", d.Err())
	}
	// The default budget is 16 bytes per input byte plus 1 MiB.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(16*len(in)+2<<20); got > limit {
		t.Errorf("decoding allocated %d bytes, budget allows %d", got, limit)
	}

	// A configured budget applies, and decoding into a reused value that
	// has the capacity is not charged.
	small := []byte{0x80 | byte(TypeInt32), 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}
	d = &Decoder{Limits: Limits{MaxArrayMemory: 8}}
	d.Reset(small)
	v.Decode(d)
	if !errors.Is(d.Err(), status.BadEncodingLimitsExceeded) {
		t.Fatalf("3 Int32 with an 8-byte budget: err = %v", d.Err())
	}
	d.Limits.MaxArrayMemory = 12
	d.Reset(small)
	v.Decode(d)
	if d.Err() != nil {
		t.Fatalf("3 Int32 with a 12-byte budget: %v", d.Err())
	}
	d.Limits.MaxArrayMemory = 1
	d.Reset(small)
	v.Decode(d) // reuses the []int32 of the last decode
	if d.Err() != nil {
		t.Fatalf("reused capacity was charged: %v", d.Err())
	}
	if got, _ := v.Value().([]int32); len(got) != 3 || got[2] != 3 {
		t.Errorf("decoded %v", v.Value())
	}
}

// Generated structures' arrays are charged too: a ReadRequest claiming
// more ReadValueIds than the budget allows is refused before allocating.
func TestArrayMemoryBudgetGenerated(t *testing.T) {
	req := ReadRequest{NodesToRead: make([]ReadValueID, 1000)}
	in := req.Encode(nil)
	d := &Decoder{Limits: Limits{MaxArrayMemory: 1000}}
	d.Reset(in)
	var got ReadRequest
	got.Decode(d)
	if !errors.Is(d.Err(), status.BadEncodingLimitsExceeded) {
		t.Fatalf("err = %v, want BadEncodingLimitsExceeded", d.Err())
	}
	d.Limits.MaxArrayMemory = 0 // default: 16× the input + 1 MiB
	d.Reset(in)
	got.Decode(d)
	if d.Err() != nil || len(got.NodesToRead) != 1000 {
		t.Fatalf("default budget: err %v, %d nodes", d.Err(), len(got.NodesToRead))
	}
}
