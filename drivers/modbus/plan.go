package modbus

import (
	"fmt"
	"sort"
)

// Protocol limits of one read request.
const (
	MaxRegisters = 125  // registers per read (function codes 3, 4)
	MaxBits      = 2000 // bits per read (function codes 1, 2)
)

// PlanOptions bound the blocks the planner builds. Zero values take the
// protocol maximum (MaxRegisters, MaxBits) and no gap.
type PlanOptions struct {
	MaxRegisters int // registers per request, 1..125 (a device may accept fewer)
	MaxBits      int // bits per request, 1..2000
	// Unused registers (bits) a block may read across to join two points:
	// 0 joins only contiguous or overlapping points. Reading across a gap
	// costs bytes on the wire but saves a request; a device may answer an
	// exception for unmapped addresses in the gap, so keep it 0 for such
	// devices.
	MaxGapRegisters int
	MaxGapBits      int
}

func (o PlanOptions) limits() (regs, bits int, err error) {
	regs, bits = o.MaxRegisters, o.MaxBits
	if regs == 0 {
		regs = MaxRegisters
	}
	if bits == 0 {
		bits = MaxBits
	}
	if regs < 1 || regs > MaxRegisters {
		return 0, 0, fmt.Errorf("modbus: plan: MaxRegisters %d out of range 1..%d", o.MaxRegisters, MaxRegisters)
	}
	if bits < 1 || bits > MaxBits {
		return 0, 0, fmt.Errorf("modbus: plan: MaxBits %d out of range 1..%d", o.MaxBits, MaxBits)
	}
	if o.MaxGapRegisters < 0 || o.MaxGapBits < 0 {
		return 0, 0, fmt.Errorf("modbus: plan: negative gap")
	}
	return regs, bits, nil
}

// Block is one read request of a plan: Count registers or bits of Area at
// unit Unit from Start, covering the points listed (indexes into the slice
// given to Plan, ascending by address).
type Block struct {
	Unit   uint8
	Area   Area
	Start  uint16
	Count  uint16
	Points []int
}

// End returns the address after the block (an int: it may be 65536).
func (b *Block) End() int { return int(b.Start) + int(b.Count) }

// Plan merges points into the fewest block reads per (unit, area): points
// are sorted by (unit, area, address) and a block grows while the next
// point starts within the allowed gap of the block's end and the block
// stays within the per-request limit. For points sorted by start this
// greedy sweep is optimal (it is interval covering). The result depends only
// on the points and options — re-plan by calling Plan again when the
// configuration changes. Blocks come out ordered by unit, area, start.
// A point that is invalid (Point.Validate) or larger than one request is an
// error naming its index. For a device with lower limits or a different gap
// than the others, plan its points in a call of their own.
func Plan(points []Point, opt PlanOptions) ([]Block, error) {
	maxRegs, maxBits, err := opt.limits()
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(points))
	for i := range points {
		if err := points[i].Validate(); err != nil {
			return nil, fmt.Errorf("modbus: plan: point %d: %w", i, err)
		}
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		p, q := &points[idx[a]], &points[idx[b]]
		if p.Unit != q.Unit {
			return p.Unit < q.Unit
		}
		if p.Area != q.Area {
			return p.Area < q.Area
		}
		if p.Address != q.Address {
			return p.Address < q.Address
		}
		return p.Span() > q.Span()
	})
	var blocks []Block
	var cur *Block
	for _, i := range idx {
		p := &points[i]
		limit, gap := maxRegs, opt.MaxGapRegisters
		if p.Area.IsBit() {
			limit, gap = maxBits, opt.MaxGapBits
		}
		start, end := int(p.Address), int(p.Address)+p.Span()
		if end-start > limit {
			return nil, fmt.Errorf("modbus: plan: point %d (%v at %d, %d registers) exceeds the %d-register request limit", i, p.Area, p.Address, end-start, limit)
		}
		if cur != nil && cur.Unit == p.Unit && cur.Area == p.Area && start <= cur.End()+gap {
			newEnd := max(end, cur.End())
			if newEnd-int(cur.Start) <= limit {
				cur.Count = uint16(newEnd - int(cur.Start))
				cur.Points = append(cur.Points, i)
				continue
			}
		}
		blocks = append(blocks, Block{Unit: p.Unit, Area: p.Area, Start: p.Address, Count: uint16(end - start), Points: []int{i}})
		cur = &blocks[len(blocks)-1]
	}
	return blocks, nil
}
