package binding

import (
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/plc"
)

// Notify calls f with the binding's ValueSource, the handles of the tags
// that changed (Image.Changed) and those of them whose value or status
// changed (Image.ValueChanged) on every image the engine publishes, on
// the engine's goroutine: f must return quickly and must not keep the
// slices. The OPC UA server's SourceValuesChanged is such an f:
//
//	b.Notify(srv.SourceValuesChanged)
//
// so that monitored items sample in the cycle in which their tag changed.
// cancel stops the calls. Notify does not allocate per image once its
// buffers have grown to the largest change set.
func (b *Binding) Notify(f func(src addrspace.SourceID, changed, values []uint32)) (cancel func()) {
	var buf, vbuf []uint32 // reused: the engine calls subscribers one image at a time
	return b.e.Subscribe(func(im *plc.Image) {
		ch := im.Changed()
		if len(ch) == 0 {
			return
		}
		buf, vbuf = buf[:0], vbuf[:0]
		for _, h := range ch {
			buf = append(buf, uint32(h))
		}
		for _, h := range im.ValueChanged() {
			vbuf = append(vbuf, uint32(h))
		}
		f(b.src, buf, vbuf)
	})
}

// Source returns the ValueSource that serves the tags.
func (b *Binding) Source() addrspace.SourceID { return b.src }
