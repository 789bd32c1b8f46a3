package subs

import "time"

// Limits bound the subscriptions and monitored items; zero
// fields take the defaults documented on each. The per-session limits are
// advertised in Server/ServerCapabilities where namespace 0 has the
// variables.
type Limits struct {
	// MinPublishingInterval is the base cycle (default
	// Config.MinSupportedSampleRate, 5 ms, the scan cycle): publishing
	// intervals, and the sampling intervals of items without a
	// MinimumSamplingInterval, are revised to multiples of it.
	MinPublishingInterval time.Duration
	// MaxPublishingInterval bounds publishing and sampling intervals
	// (default 1 h).
	MaxPublishingInterval time.Duration
	// MaxSubscriptionsPerSession (default 10): one more is
	// Bad_TooManySubscriptions.
	MaxSubscriptionsPerSession int
	// MaxMonitoredItemsPerSubscription (default 10000): one more is
	// Bad_TooManyMonitoredItems.
	MaxMonitoredItemsPerSubscription int
	// MaxSubscriptions and MaxMonitoredItems bound the whole server's
	// (defaults 1,000 and 100,000): the per-session limits alone do not
	// bound memory, since the subscriptions of a closed session live on
	// until their lifetime ends. One more is Bad_TooManySubscriptions,
	// Bad_TooManyMonitoredItems.
	MaxSubscriptions  int
	MaxMonitoredItems int
	// MaxMonitoredItemsPerSession bounds one session's items, all its
	// subscriptions together (default half of MaxMonitoredItems, at least
	// MaxMonitoredItemsPerSubscription): no session can take every item
	// of the server. One more is Bad_TooManyMonitoredItems.
	MaxMonitoredItemsPerSession int
	// SamplesPerCycle is the run loop's sampling budget per base cycle
	// (default 25,000: milliseconds of work), shared among the sessions; see
	// budget.go.
	SamplesPerCycle int
	// MaxRetransmissionBytes bounds the encoded notifications kept for
	// Republish in all subscriptions together (default 16 MiB): beyond
	// it, the subscription that sends a message drops its oldest
	// unacknowledged ones (Republish of them is Bad_MessageNotAvailable).
	MaxRetransmissionBytes int
	// MaxQueuedNotifications bounds the notifications queued in all
	// monitored items together (default 500,000): beyond it a queue that
	// holds one already takes a new value as if it were full (Overflow
	// bit), so that clients that do not publish cannot exhaust memory.
	MaxQueuedNotifications int
	// MaxMonitoredItemsPerCall bounds the items of one Create/Modify
	// request (default the server's operation limit).
	MaxMonitoredItemsPerCall uint32
	// MaxPublishRequestsPerSession is the length of a session's queue of
	// Publish requests (default 10): one more is Bad_TooManyPublishRequests.
	MaxPublishRequestsPerSession int
	// MaxRetransmissionQueue is the number of unacknowledged
	// NotificationMessages a subscription keeps for Republish (default 10);
	// the oldest is dropped for a new one.
	MaxRetransmissionQueue int
	// MaxNotificationsPerPublish caps a subscription's (default 10000; 0
	// from the client means this cap).
	MaxNotificationsPerPublish uint32
	// MaxQueueSize caps a monitored item's queue size (default 1000).
	MaxQueueSize uint32
	// MaxKeepAliveCount and MaxLifetimeCount cap the revised counts
	// (defaults 10000 and 30000).
	MaxKeepAliveCount uint32
	MaxLifetimeCount  uint32
}

// WithDefaults returns l with its zero fields set to their defaults: base
// is the default MinPublishingInterval (the server's base cycle),
// perCall the default MaxMonitoredItemsPerCall (its operation limit).
func (l Limits) WithDefaults(base time.Duration, perCall uint32) Limits {
	if l.MinPublishingInterval <= 0 {
		l.MinPublishingInterval = base
	}
	if l.MaxPublishingInterval < l.MinPublishingInterval {
		l.MaxPublishingInterval = max(time.Hour, l.MinPublishingInterval)
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defU := func(v *uint32, d uint32) {
		if *v == 0 {
			*v = d
		}
	}
	defInt(&l.MaxSubscriptionsPerSession, 10)
	defInt(&l.MaxMonitoredItemsPerSubscription, 10000)
	defInt(&l.MaxSubscriptions, 1000)
	defInt(&l.MaxMonitoredItems, 100000)
	defInt(&l.MaxMonitoredItemsPerSession, max(l.MaxMonitoredItems/2, l.MaxMonitoredItemsPerSubscription))
	defInt(&l.SamplesPerCycle, 25000)
	defInt(&l.MaxRetransmissionBytes, 16<<20)
	defInt(&l.MaxQueuedNotifications, 500000)
	defInt(&l.MaxPublishRequestsPerSession, 10)
	defInt(&l.MaxRetransmissionQueue, 10)
	defU(&l.MaxMonitoredItemsPerCall, perCall)
	defU(&l.MaxNotificationsPerPublish, 10000)
	defU(&l.MaxQueueSize, 1000)
	defU(&l.MaxKeepAliveCount, 10000)
	defU(&l.MaxLifetimeCount, 30000)
	l.MaxLifetimeCount = max(l.MaxLifetimeCount, 3)
	return l
}
