package devices

import (
	"context"
	"testing"
	"time"
)

// valueCtx is a context of a type that is not comparable: req must not
// compare it with ==, which would panic.
type valueCtx struct {
	context.Context
	tags []string
}

// TestReqContext: a request's deadline is at most the device's timeout
// away and at least 7/8 of it; requests within that while share one
// context; a poll context with an earlier deadline is used as it is, and
// so is any where the link bounds each request (a TCP device's).
func TestReqContext(t *testing.T) {
	if c := (&modbusDevice{}).req(context.Background()); c != context.Background() {
		t.Error("a device whose link bounds its requests made a context")
	}
	m := &modbusDevice{timeout: time.Second}
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	a := m.req(parent)
	b := m.req(parent)
	if a != b {
		t.Error("two requests at once made two contexts")
	}
	dl, ok := a.Deadline()
	if d := dl.Sub(t0); !ok || d < time.Second*7/8 || d > time.Second+time.Since(t0) {
		t.Errorf("deadline %v after the first request, want 7/8 s .. 1 s", d)
	}
	// Aged past 1/8 of the timeout: a new one.
	m.rctx.deadline = time.Now().Add(time.Second * 7 / 8).Add(-time.Millisecond)
	if c := m.req(parent); c == a {
		t.Error("a context 1/8 timeout old was reused")
	}
	// Another poll context: a new one, which ends with it.
	other, cancelOther := context.WithCancel(context.Background())
	c := m.req(other)
	if c == a || c.Err() != nil {
		t.Fatal("the context of another poll was not made anew")
	}
	cancelOther()
	if c.Err() == nil {
		t.Error("the request's context did not end with its poll's")
	}
	short, cancelShort := context.WithTimeout(parent, time.Millisecond*100)
	defer cancelShort()
	if c := m.req(short); c != short {
		t.Error("a poll context with an earlier deadline was not used as it is")
	}
	v := valueCtx{parent, []string{"x"}}
	if c1, c2 := m.req(v), m.req(v); c1 == nil || c2 == nil {
		t.Error("no context for a context type that is not comparable")
	}
}
