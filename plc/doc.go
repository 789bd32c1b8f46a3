// Package plc is the scan engine of edged: it polls the devices (Modbus
// connections and buses, GPIO chips, all behind the Device interface) on a
// fixed cycle and publishes what it read as an immutable process image.
// It is driver-agnostic and knows nothing of OPC UA; a thin binding adapts
// an Image to the address space (see "Binding" below).
//
// # The cycle
//
// A base period (Config.Period, 5 ms by default) drives everything; each
// Tag has a scan class, a multiple of the period. Cycle n starts at
// start + (n-1)·Period. It
//
//  1. starts, on each idle device's own goroutine, the writes queued for it
//     and then one Poll of its tags that are due in this cycle; a device
//     whose previous poll is still running is skipped (counted in
//     DeviceDiagnostics.SkippedPolls) and its tags keep their last samples;
//     they are read as soon as the device is idle again;
//  2. waits for those polls up to Config.CollectTimeout, so a dead device
//     never delays another (a poll that ends later is published by a later
//     cycle);
//  3. publishes a new Image by an atomic pointer swap and calls the
//     subscribers (Engine.Subscribe) with it.
//
// The schedule runs on absolute deadlines, so it does not drift. When the
// cycle goroutine wakes a whole period late, the cycles whose slots passed
// are counted as overruns and skipped; a cycle never runs twice to catch
// up. Image.Cycle is the slot number, so skipped cycles leave gaps.
//
// One goroutine (Run's) owns the tag state; the device goroutines and the
// callers of Write talk to it over channels.
//
// # Quality
//
// A tag not read yet is status.BadWaitingForInitialData. When its source does not
// answer (the poll fails with a communication Status — status.BadTimeout,
// status.BadCommunicationError... see Status.IsCommunication — for the device or
// for the tag, or the poll runs past Config.PollTimeout), it keeps its last
// value as status.UncertainLastUsableValue with that value's original source
// timestamp; once its source has been silent for Config.NoCommAfter it is
// status.BadNoCommunication, without a value, timestamped when that was
// recognized. Any other Bad status a driver reports for a tag is shown as
// is, without a value. An image with a Bad status holds no value (Invalid),
// as an OPC UA Read returns none.
//
// # Images and allocation
//
// An image is a header, one array of 24-byte entries without pointers (so
// the garbage collector does not scan them), the list of changed tags and
// the texts of String tags: about 28 KB for 1,000 numeric tags. Publishing
// reuses the image of two cycles before unless a reader kept it, so in
// steady state with nobody reading (clients that subscribe are served on
// the cycle's goroutine) publishing allocates nothing, and each image a
// reader keeps costs 3 allocations at a later publish. The pin protocol
// that makes reuse safe — the engine never writes an image a reader may
// hold — is described, with its proof, under Image. Each device reuses
// one context for its calls (a deadline per call, see Device.Poll), so a
// cycle allocates nothing at all; TestCycleAllocs asserts 0, and 3 with a
// reader keeping every image.
//
// Image.Changed lists the tags whose entry differs from the previous
// image, so that a subscription sampler (issue 6) works in proportion to
// what changed rather than to every tag.
//
// # Binding
//
// The address-space binding is meant to be a few lines: its ValueSource's
// Snapshot returns (a type defined on) Engine.Image() — a pointer, so
// storing it in an interface does not allocate — and Snapshot.Value(h, dv)
// copies Image.Sample(Handle(h)): Value by its Type into the Variant,
// Status as the StatusCode (same numbers), Time as SourceTimestamp. Tag
// handles are indexes in Config.Tags. Each Read request takes one image
// with Engine.Image, which keeps it for as long as the request needs. Diagnostics fills a plain struct for
// the Diagnostics object; Write takes a callback for the Write service that
// waits for the device's answer.
//
// On 32-bit ARM every 64-bit counter shared between goroutines is an
// atomic.Uint64 or atomic.Int64, or is guarded by a mutex.
package plc
