package server

import (
	"context"
	"sync"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// FileType open modes (OPC 10000-5 §C.2.1).
const (
	FileRead          = 1
	FileWrite         = 2
	FileEraseExisting = 4
	FileAppend        = 8
)

// FileHandles are the open handles of one FileType object (OPC 10000-5
// Annex C) whose content each handle holds in memory: the mechanics of
// Open, Close, Read, Write, GetPosition and SetPosition. A handle belongs
// to the session that opened it; the handles of a session that ended are
// reclaimed at the next Open. The object's owner checks the caller's rights,
// decides what a new handle holds and what closing a written one does.
// Safe for concurrent use.
type FileHandles struct {
	// Max bounds the handles open at once: one more Open is
	// Bad_TooManyOperations.
	Max int
	// MaxSize bounds what a handle may hold: a Write beyond it is
	// Bad_EncodingLimitsExceeded.
	MaxSize int
	// Exclusive: a handle open for writing excludes every other handle
	// (Part 12's TrustList); else it excludes other writers only.
	Exclusive bool

	mu   sync.Mutex
	next uint32
	open map[uint32]*FileHandle
}

// FileHandle is one open handle.
type FileHandle struct {
	Caller Caller
	Write  bool
	Data   []byte
	Pos    int
	// Version is the owner's: what the content was made from (the
	// configuration version a handle was opened on).
	Version uint32
}

// ParseFileMode checks an Open's mode: read, or write with EraseExisting
// and Append as the owner allows.
func ParseFileMode(in []ua.Variant, allowAppend, requireErase bool) (mode byte, st ua.StatusCode) {
	mode, _ = in[0].Uint8()
	write := mode&FileWrite != 0
	switch {
	case mode == 0 || mode&^(FileRead|FileWrite|FileEraseExisting|FileAppend) != 0,
		mode&FileRead != 0 && write,
		!write && mode&(FileEraseExisting|FileAppend) != 0,
		mode&FileAppend != 0 && !allowAppend,
		write && requireErase && mode&FileEraseExisting == 0:
		return 0, status.BadInvalidArgument
	}
	return mode, status.Good
}

// Open adds f as a handle of the caller of ctx (f.Caller is set) and
// returns its number.
func (fh *FileHandles) Open(ctx context.Context, f *FileHandle) (uint32, ua.StatusCode) {
	c, ok := CallerFrom(ctx)
	if !ok {
		return 0, status.BadUserAccessDenied
	}
	f.Caller = c
	fh.mu.Lock()
	defer fh.mu.Unlock()
	if fh.open == nil {
		fh.open = map[uint32]*FileHandle{}
	}
	for h, o := range fh.open {
		switch {
		case o.Caller.Closed != nil && o.Caller.Closed():
			delete(fh.open, h) // its session ended
		case o.Write && (f.Write || fh.Exclusive), f.Write && fh.Exclusive:
			return 0, status.BadInvalidState
		}
	}
	if len(fh.open) >= fh.Max {
		return 0, status.BadTooManyOperations
	}
	fh.next++
	if fh.next == 0 {
		fh.next = 1
	}
	fh.open[fh.next] = f
	return fh.next, status.Good
}

// Count is the number of open handles (FileType's OpenCount).
func (fh *FileHandles) Count() int {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	return len(fh.open)
}

// get returns the caller's handle in[0]; mu is held.
func (fh *FileHandles) get(ctx context.Context, in []ua.Variant) (uint32, *FileHandle, ua.StatusCode) {
	c, ok := CallerFrom(ctx)
	h, _ := in[0].Uint32()
	f := fh.open[h]
	if !ok || f == nil || f.Caller.SessionID != c.SessionID {
		return 0, nil, status.BadInvalidArgument
	}
	return h, f, status.Good
}

// Close closes the caller's handle in[0] and returns it, for the owner to
// act on what was written.
func (fh *FileHandles) Close(ctx context.Context, in []ua.Variant) (*FileHandle, ua.StatusCode) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	h, f, st := fh.get(ctx, in)
	if st == status.Good {
		delete(fh.open, h)
	}
	return f, st
}

// Read is FileType's Read: in[1] bytes at most from the position.
func (fh *FileHandles) Read(ctx context.Context, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	_, f, st := fh.get(ctx, in)
	if st != status.Good {
		return st, nil
	}
	n, _ := in[1].Int32()
	if f.Write || n < 0 {
		return status.BadInvalidArgument, nil
	}
	end := min(f.Pos+int(n), len(f.Data))
	out := append([]byte{}, f.Data[f.Pos:end]...)
	f.Pos = end
	return status.Good, []ua.Variant{ua.MustVariant(out)}
}

// Write is FileType's Write: in[1] at the position, over what is there.
func (fh *FileHandles) Write(ctx context.Context, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	_, f, st := fh.get(ctx, in)
	if st != status.Good {
		return st, nil
	}
	data, _ := in[1].ByteString()
	if !f.Write {
		return status.BadInvalidArgument, nil
	}
	end := f.Pos + len(data)
	if end > fh.MaxSize {
		return status.BadEncodingLimitsExceeded, nil
	}
	if end > len(f.Data) {
		f.Data = append(f.Data, make([]byte, end-len(f.Data))...)
	}
	copy(f.Data[f.Pos:], data)
	f.Pos = end
	return status.Good, nil
}

// GetPosition is FileType's GetPosition.
func (fh *FileHandles) GetPosition(ctx context.Context, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	_, f, st := fh.get(ctx, in)
	if st != status.Good {
		return st, nil
	}
	return status.Good, []ua.Variant{ua.MustVariant(uint64(f.Pos))}
}

// SetPosition is FileType's SetPosition; beyond the end is the end
// (§C.2.8).
func (fh *FileHandles) SetPosition(ctx context.Context, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	_, f, st := fh.get(ctx, in)
	if st != status.Good {
		return st, nil
	}
	p, _ := in[1].Uint64()
	f.Pos = int(min(p, uint64(len(f.Data))))
	return status.Good, nil
}
