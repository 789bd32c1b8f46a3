package server

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	var b backoff
	now := time.Now()
	if d := b.Delay("10.0.0.1", now); d != 0 {
		t.Fatalf("first attempt delayed %v", d)
	}
	var last time.Duration
	for i := range 10 {
		b.Failed("10.0.0.1", now)
		d := b.Delay("10.0.0.1", now)
		if d < last || d > backoffMax || (i == 0 && d != backoffBase) {
			t.Fatalf("after %d failures: %v (before %v)", i+1, d, last)
		}
		last = d
	}
	if last != backoffMax {
		t.Fatalf("delay %v after 10 failures, want %v", last, backoffMax)
	}
	if d := b.Delay("10.0.0.2", now); d != 0 {
		t.Fatalf("another client delayed %v", d)
	}
	if d := b.Delay("10.0.0.1", now.Add(backoffForget+time.Second)); d != 0 {
		t.Fatalf("not forgotten: %v", d)
	}
	b.Succeeded("10.0.0.1")
	if d := b.Delay("10.0.0.1", now); d != 0 {
		t.Fatalf("after a success: %v", d)
	}
}
