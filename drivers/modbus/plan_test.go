package modbus

import (
	"reflect"
	"testing"
)

func hr(addr uint16, t Type) Point {
	return Point{Unit: 1, Area: HoldingRegisters, Address: addr, Type: t}
}

func TestPlanBasics(t *testing.T) {
	pts := []Point{
		hr(10, Float32), // 10-11
		hr(0, Uint16),   // 0
		hr(1, Int16),    // 1
		hr(12, Uint16),  // 12 contiguous with 10-11
		hr(20, Float64), // 20-23: gap of 7 after 12
		hr(10, Uint16),  // overlaps 10
		{Unit: 1, Area: InputRegisters, Address: 0, Type: Uint16},
		{Unit: 1, Area: Coils, Address: 5, Type: Bool},
		{Unit: 1, Area: Coils, Address: 7, Type: Bool},
		{Unit: 2, Area: HoldingRegisters, Address: 0, Type: Uint16},
		{Unit: 1, Area: HoldingRegisters, Address: 3, Type: Bit, Bit: 4},
	}
	blocks, err := Plan(pts, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type b struct {
		u     uint8
		a     Area
		s, c  uint16
		index []int
	}
	var got []b
	for _, x := range blocks {
		got = append(got, b{x.Unit, x.Area, x.Start, x.Count, x.Points})
	}
	want := []b{
		{1, Coils, 5, 1, []int{7}},
		{1, Coils, 7, 1, []int{8}},
		{1, InputRegisters, 0, 1, []int{6}},
		{1, HoldingRegisters, 0, 2, []int{1, 2}},
		{1, HoldingRegisters, 3, 1, []int{10}},
		{1, HoldingRegisters, 10, 3, []int{0, 5, 3}},
		{1, HoldingRegisters, 20, 4, []int{4}},
		{2, HoldingRegisters, 0, 1, []int{9}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("gap 0:\n got %v\nwant %v", got, want)
	}
	// With gaps allowed: registers 0..23 in one block, coils 5..7 in one.
	blocks, _ = Plan(pts, PlanOptions{MaxGapRegisters: 7, MaxGapBits: 1})
	if len(blocks) != 4 || blocks[0].Count != 3 || blocks[2].Start != 0 || blocks[2].Count != 24 {
		t.Errorf("gap 7: %+v", blocks)
	}
	// A gap of 6 is one too few to join 12 and 20.
	blocks, _ = Plan(pts, PlanOptions{MaxGapRegisters: 6})
	if n := len(blocks); n != 6 {
		t.Errorf("gap 6: %d blocks: %+v", n, blocks)
	}
	// Deterministic: the same points in another order give the same plan
	// (Points indexes refer to the permuted slice, so compare ranges).
	rev := make([]Point, len(pts))
	for i := range pts {
		rev[len(pts)-1-i] = pts[i]
	}
	b1, _ := Plan(pts, PlanOptions{MaxGapRegisters: 3})
	b2, _ := Plan(rev, PlanOptions{MaxGapRegisters: 3})
	if len(b1) != len(b2) {
		t.Fatal("plan depends on order")
	}
	for i := range b1 {
		if b1[i].Unit != b2[i].Unit || b1[i].Area != b2[i].Area || b1[i].Start != b2[i].Start || b1[i].Count != b2[i].Count {
			t.Errorf("block %d: %+v vs %+v", i, b1[i], b2[i])
		}
	}
}

func TestPlanLimits(t *testing.T) {
	// 200 contiguous uint16: 125 + 75 registers.
	var pts []Point
	for i := 0; i < 200; i++ {
		pts = append(pts, hr(uint16(i), Uint16))
	}
	blocks, _ := Plan(pts, PlanOptions{})
	if len(blocks) != 2 || blocks[0].Count != 125 || blocks[1].Start != 125 || blocks[1].Count != 75 {
		t.Errorf("%+v", blocks)
	}
	// A device limited to 50 registers per request.
	blocks, _ = Plan(pts, PlanOptions{MaxRegisters: 50})
	if len(blocks) != 4 {
		t.Errorf("limit 50: %d blocks", len(blocks))
	}
	// A float32 never straddles a block: 62 float32 fill 124 registers, the
	// 63rd would end at 126.
	pts = pts[:0]
	for i := 0; i < 63; i++ {
		pts = append(pts, hr(uint16(2*i), Float32))
	}
	blocks, _ = Plan(pts, PlanOptions{})
	if len(blocks) != 2 || blocks[0].Count != 124 || blocks[1].Start != 124 {
		t.Errorf("float32: %+v", blocks)
	}
	// Bits: 2500 coils → 2000 + 500.
	pts = pts[:0]
	for i := 0; i < 2500; i++ {
		pts = append(pts, Point{Area: Coils, Address: uint16(i), Type: Bool})
	}
	blocks, _ = Plan(pts, PlanOptions{})
	if len(blocks) != 2 || blocks[0].Count != 2000 || blocks[1].Count != 500 {
		t.Errorf("coils: %d blocks", len(blocks))
	}
	blocks, _ = Plan(pts, PlanOptions{MaxBits: 256})
	if len(blocks) != 10 {
		t.Errorf("coils/256: %d blocks", len(blocks))
	}
	// Errors.
	if _, err := Plan([]Point{{Area: HoldingRegisters, Type: String, Len: 60}}, PlanOptions{MaxRegisters: 50}); err == nil {
		t.Error("string longer than the limit: no error")
	}
	if _, err := Plan(nil, PlanOptions{MaxRegisters: 126}); err == nil {
		t.Error("MaxRegisters 126: no error")
	}
	if _, err := Plan([]Point{{Area: Coils, Type: Float32}}, PlanOptions{}); err == nil {
		t.Error("float on coils: no error")
	}
	if b, err := Plan(nil, PlanOptions{}); err != nil || len(b) != 0 {
		t.Error("empty plan")
	}
}

// realisticPoints lays out 1,000 tags on 4 devices (unit ids 1..4), the way
// PLC programs are usually mapped: blocks of analog values (float32) with
// the odd spare register between groups, status words and bits, counters
// (uint32), setpoints, a few strings, coils and discrete inputs in groups.
func realisticPoints() []Point {
	var pts []Point
	add := func(p Point) { pts = append(pts, p) }
	for u := uint8(1); u <= 4; u++ {
		// 120 analog inputs, float32, in groups of 10 with 2 spare registers
		// after each group, at 30001.
		a := uint16(0)
		for g := 0; g < 12; g++ {
			for i := 0; i < 10; i++ {
				add(Point{Unit: u, Area: InputRegisters, Address: a, Type: Float32, Order: CDAB})
				a += 2
			}
			a += 2
		}
		// 40 status words (uint16) at 31001, and 20 bits of status word 0..1.
		for i := 0; i < 40; i++ {
			add(Point{Unit: u, Area: InputRegisters, Address: 1000 + uint16(i), Type: Uint16})
		}
		for i := 0; i < 20; i++ {
			add(Point{Unit: u, Area: InputRegisters, Address: 1000 + uint16(i/16), Type: Bit, Bit: uint8(i % 16)})
		}
		// 20 counters (uint32) at 32001.
		for i := 0; i < 20; i++ {
			add(Point{Unit: u, Area: InputRegisters, Address: 2000 + 2*uint16(i), Type: Uint32})
		}
		// 20 setpoints (float32) at 40001, 5 int16 modes with a spare
		// register each at 40101, 2 strings of 8 registers at 40201.
		for i := 0; i < 20; i++ {
			add(Point{Unit: u, Area: HoldingRegisters, Address: 2 * uint16(i), Type: Float32})
		}
		for i := 0; i < 5; i++ {
			add(Point{Unit: u, Area: HoldingRegisters, Address: 100 + 2*uint16(i), Type: Int16})
		}
		add(Point{Unit: u, Area: HoldingRegisters, Address: 200, Type: String, Len: 8})
		add(Point{Unit: u, Area: HoldingRegisters, Address: 208, Type: String, Len: 8})
		// 3 energy totals (float64) at 40301.
		for i := 0; i < 3; i++ {
			add(Point{Unit: u, Area: HoldingRegisters, Address: 300 + 4*uint16(i), Type: Float64})
		}
		// 10 coils (commands) at 00001, 8 at 00101; 2 discrete inputs groups.
		for i := 0; i < 10; i++ {
			add(Point{Unit: u, Area: Coils, Address: uint16(i), Type: Bool})
		}
		for i := 0; i < 8; i++ {
			add(Point{Unit: u, Area: Coils, Address: 100 + uint16(i), Type: Bool})
		}
		n := 250 - (len(pts) - 250*int(u-1))
		for i := 0; i < n; i++ {
			add(Point{Unit: u, Area: DiscreteInputs, Address: uint16(i + i/16*4), Type: Bool})
		}
	}
	return pts
}

func TestPlanRealistic(t *testing.T) {
	pts := realisticPoints()
	if len(pts) != 1000 {
		t.Fatalf("%d points", len(pts))
	}
	for _, gap := range []int{0, 4, 16} {
		blocks, err := Plan(pts, PlanOptions{MaxGapRegisters: gap, MaxGapBits: 16 * gap})
		if err != nil {
			t.Fatal(err)
		}
		covered := 0
		for _, b := range blocks {
			covered += len(b.Points)
			if !b.Area.IsBit() && b.Count > MaxRegisters || b.Area.IsBit() && b.Count > MaxBits {
				t.Errorf("block over the limit: %+v", b)
			}
			for _, i := range b.Points {
				p := &pts[i]
				if p.Unit != b.Unit || p.Area != b.Area || int(p.Address) < int(b.Start) || int(p.Address)+p.Span() > b.End() {
					t.Errorf("point %d %+v outside block %+v", i, p, b)
				}
			}
		}
		if covered != len(pts) {
			t.Errorf("%d points covered", covered)
		}
		t.Logf("planner: 1000 tags on 4 devices, gap %d registers / %d bits: %d requests per full scan", gap, 16*gap, len(blocks))
	}
}
