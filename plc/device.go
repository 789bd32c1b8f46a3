package plc

import (
	"context"
	"time"
)

// Device is what the engine polls: one Modbus TCP connection, one serial
// bus (all its unit ids, served one after another), one GPIO chip. Drivers
// are adapted to it.
//
// The engine calls Bind once, in New. After that it calls Poll and Write
// from one goroutine per device, never two at a time for one device, so a
// driver needs no locking for them; a slow or dead device delays only its
// own goroutine. Stats may be called at any time from any goroutine.
type Device interface {
	// Bind tells the device the tags it serves, with the handles the
	// engine will use for them. It reports a tag it cannot serve (a bad
	// Address, an unsupported Type), naming it; New then fails.
	Bind(tags []BoundTag) error

	// Poll reads the tags in due (each a handle passed to Bind) and
	// fills out[i] for due[i]; len(out) == len(due). A tag that could not
	// be read gets a Bad status in out[i].Status (a Modbus exception,
	// say), and the others still count. Poll returns an error only when
	// the device did not answer at all (no connection, a timeout); the
	// error is or wraps a Status (see StatusOf), and out is then ignored.
	// ctx carries the poll's deadline (Config.PollTimeout) and ends with
	// Run. Poll must not keep due, out or ctx after it returns: the
	// engine reuses them, ctx included, for the next call.
	Poll(ctx context.Context, due []Handle, out []Sample) error

	// Write writes v (of the tag's type) to the tag with handle h and
	// returns when the device confirmed it, or an error that is or wraps a
	// Status (status.BadTimeout, status.BadCommunicationError, a mapped exception).
	// ctx is as for Poll.
	Write(ctx context.Context, h Handle, v Value) error

	// Stats returns the driver's statistics; it must be safe to call
	// concurrently with Poll and Write.
	Stats() DeviceStats
}

// Inline is a Device whose Poll and Write never wait for anything but
// the CPU (memory, GPIO lines read by ioctl): with Inline true the engine
// calls them from its cycle's own goroutine, not the device's, which
// saves the two goroutine hand-offs (and, with an idle P, the two thread
// wake-ups) of each cycle's poll. A device that talks over a network or a
// serial line must not be Inline: its wait would hold up the cycle.
type Inline interface {
	Device
	Inline() bool
}

// BoundTag is a tag with its handle, as passed to Device.Bind.
type BoundTag struct {
	Handle Handle
	Tag    Tag
}

// Sample is one read of one tag, as a driver delivers it.
type Sample struct {
	Value  Value
	Status Status
	// Time is the source timestamp in Unix nanoseconds; 0 means the time
	// Poll returned. (Not a time.Time: a device's buffer of samples, one
	// per tag, takes 48 bytes a tag, not 64.)
	Time int64
}

// Timestamp returns s's source timestamp, zero for none.
func (s Sample) Timestamp() time.Time {
	if s.Time == 0 {
		return time.Time{}
	}
	return time.Unix(0, s.Time)
}

// DeviceStats are a driver's statistics, passed through to Diagnostics.
type DeviceStats struct {
	Requests      uint64        // requests sent
	Errors        uint64        // requests that failed, timeouts included
	Timeouts      uint64        // requests that timed out
	Reconnects    uint64        // connections reopened
	LastError     string        // the last error, "" if none
	LastErrorTime time.Time     // when it happened
	RoundTrip     time.Duration // the last request's round-trip time
	State         string        // "connected", "connecting", "closed"... driver-defined
}

// Reconnecter is a Device that can drop and reopen its connection on
// request (Engine.Reconnect), as an operator does with a PLC that answers
// badly. Reconnect is called from any goroutine, concurrently with Poll
// and Write (the driver serializes it with its requests, as it does for
// Stats): it closes the connection, waiting up to ctx for a request in
// progress, so that the next Poll or Write opens it again. An error is or
// wraps a Status.
type Reconnecter interface {
	Reconnect(ctx context.Context) error
}
