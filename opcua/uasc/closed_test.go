package uasc

import (
	"testing"

	"github.com/edged/edged/opcua/ua/status"
)

// TestClosed: a channel reports Closed once the client went away (the
// read fails) or Close ran, and not before.
func TestClosed(t *testing.T) {
	t.Run("client gone", func(t *testing.T) {
		tc, ch := openTCP(t, &Config{}, defaultHello())
		if ch.Closed() {
			t.Fatal("Closed on an open channel")
		}
		tc.nc.Close()
		if _, err := ch.ReadRequest(); err == nil {
			t.Fatal("ReadRequest succeeded after the client closed")
		}
		if !ch.Closed() {
			t.Error("not Closed after the read failed")
		}
	})
	t.Run("Close", func(t *testing.T) {
		_, ch := openTCP(t, &Config{}, defaultHello())
		ch.Close(status.Good, "")
		if !ch.Closed() {
			t.Error("not Closed after Close")
		}
	})
}
