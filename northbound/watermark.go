package northbound

// watermark is how far a stream of samples got on the wire — a metric's
// live samples, a span's forwarded ones — and how far of it the broker
// confirmed. Positions are source times; marks are the numbers of the
// PINGREQs that follow what was published (mqtt.Conn.Publish, Mark): a
// PINGRESP up to a mark confirms everything published before that
// PINGREQ. The latest position's mark is usually unanswered when the next
// sample goes out, so the position before it waits in pend for its own
// mark's answer.
type watermark struct {
	t        int64  // the latest position published
	mark     uint64 // its mark
	pendT    int64  // an older position, of an older mark
	pendMark uint64 // 0: none
	ackT     int64  // a position the broker confirmed
}

// advance records position t published with mark; confirmed is the
// connection's answered marks.
func (w *watermark) advance(t int64, mark, confirmed uint64) {
	w.settle(confirmed)
	if w.mark != 0 && w.mark != mark {
		// A new mark: the latest becomes the one waiting (an older one
		// still waiting is given up: ackT stays behind it, which only
		// forwards more).
		if w.mark <= confirmed {
			w.ackT = w.t
		} else {
			w.pendT, w.pendMark = w.t, w.mark
		}
	}
	w.t, w.mark = t, mark
}

// settle takes the answers up to confirmed.
func (w *watermark) settle(confirmed uint64) {
	if w.pendMark != 0 && w.pendMark <= confirmed {
		w.ackT, w.pendMark = w.pendT, 0
	}
}

// confirmedAt returns the newest position the broker confirmed, when the
// connection ends with confirmed marks answered.
func (w *watermark) confirmedAt(confirmed uint64) int64 {
	w.settle(confirmed)
	if w.mark != 0 && w.mark <= confirmed {
		return w.t
	}
	return w.ackT
}

// reset starts again at position t, confirmed (a new connection numbers
// its marks from 1).
func (w *watermark) reset(t int64) { *w = watermark{t: t, ackT: t} }
