package peer

import (
	"context"
	"time"

	"github.com/gopcua/opcua"
)

// GopcuaSubscribe is c.Subscribe, guarded against a race in gopcua
// v0.8.0's publish loop that leaves a new subscription without Publish
// requests for good: the loop sends a Publish as soon as the client
// connects; the server answers it Bad_NoSubscription, and when that answer
// is handled after CreateSubscription's, the loop takes the resume signal
// of Subscribe before its own pause and stays paused
// (client_sub.go, monitorSubscriptions). Notifications reach notes through
// a goroutine of the guard; until the first arrives, each second of
// silence resumes the loop the one way gopcua offers, a Subscribe (of a
// subscription deleted at once). The guard ends with ctx.
func GopcuaSubscribe(ctx context.Context, c *opcua.Client, p *opcua.SubscriptionParameters, notes chan<- *opcua.PublishNotificationData) (*opcua.Subscription, error) {
	inner := make(chan *opcua.PublishNotificationData, max(cap(notes), 1))
	sub, err := c.Subscribe(ctx, p, inner)
	if err != nil {
		return nil, err
	}
	go func() {
		quiet := time.NewTimer(time.Second)
		defer quiet.Stop()
		first := false
		for {
			select {
			case n := <-inner:
				first = true
				select {
				case notes <- n:
				case <-ctx.Done():
					return
				}
			case <-quiet.C:
				if !first {
					kick := make(chan *opcua.PublishNotificationData, 1)
					if s, err := c.Subscribe(ctx, &opcua.SubscriptionParameters{Interval: time.Second}, kick); err == nil {
						s.Cancel(ctx)
					}
					quiet.Reset(time.Second)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return sub, nil
}
