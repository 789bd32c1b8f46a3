// Package northbound publishes the scan engine's tags to the systems above
// the shop floor: a Sparkplug B 3.0 edge node (package sparkplug) over
// MQTT (package mqtt), with failover between a cluster's brokers, a
// primary host's STATE, commands written through a Writer, and
// store-and-forward from the history store. It knows nothing of the OPC
// UA server. One goroutine owns the node's state; docs/sparkplug.md says
// how it behaves.
package northbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/historian"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// Writer writes v to tag device.name with the rights of role, as a
// client's write would be checked, and returns the result.
type Writer func(ctx context.Context, role, device, tag string, v plc.Value) plc.Status

// Options are what a node works with.
type Options struct {
	Engine *plc.Engine
	// History forwards the historized tags' samples after an outage (nil:
	// none are).
	History *historian.Historian
	// Write makes DCMD writes (nil: refused).
	Write   Writer
	Logger  *slog.Logger
	Version string // edged's, in the NBIRTH
}

// Node is an edge node. Its methods are safe to call from any goroutine.
type Node struct {
	opt Options
	log *slog.Logger

	images  chan *plc.Image
	reconf  chan *update
	cmds    chan command
	quit    chan struct{}
	done    chan struct{}
	stopSub func()
	started bool

	mu    sync.Mutex // guards stats' strings
	stats Stats
	cnt   counters
}

// counters are the node's figures that change often.
type counters struct {
	messages, metrics, replayed, backlog, commands, refused, reconnects, missed atomic.Uint64
	backlogFrom                                                                 atomic.Int64
}

// update is a configuration for the node's goroutine.
type update struct {
	st  *settings
	lay *layout
}

// Stats are the node's diagnostics.
type Stats struct {
	State         string // "connecting", "waiting for the primary host", "online", "stopped"
	Broker        string // the broker in use, "" none
	BdSeq         uint64
	Messages      uint64 // MQTT messages published
	Metrics       uint64 // metrics published, births and forwarded ones included
	Replayed      uint64 // stored samples forwarded as historical
	Backlog       uint64 // stored samples waiting to be forwarded
	BacklogAge    time.Duration
	Commands      uint64 // DCMD writes made
	Refused       uint64 // DCMD writes refused (commands off, unknown metric, wrong type, a Bad result)
	Reconnects    uint64
	LastError     string
	LastErrorTime time.Time
}

// New makes the edge node of conf's northbound.sparkplug section, which
// must be present. It publishes nothing before Start.
func New(opt Options, conf *config.Config) (*Node, error) {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	n := &Node{opt: opt, log: opt.Logger, images: make(chan *plc.Image, 64), reconf: make(chan *update, 1),
		cmds: make(chan command, 64), quit: make(chan struct{}), done: make(chan struct{})}
	n.stats.State = "stopped"
	u, err := n.prepare(conf)
	if err != nil {
		return nil, err
	}
	n.reconf <- u
	return n, nil
}

// prepare resolves conf's section and lays out its tags.
func (n *Node) prepare(conf *config.Config) (*update, error) {
	if conf.Northbound == nil || conf.Northbound.Sparkplug == nil {
		return nil, errors.New("northbound.sparkplug: missing")
	}
	st, err := resolve(conf.Northbound.Sparkplug)
	if err != nil {
		return nil, err
	}
	return &update{st: st, lay: newLayout(n.opt.Engine, n.opt.History, conf, st)}, nil
}

// Apply makes the node follow conf, live: a change of the brokers, ids,
// credentials or primary host reconnects; of the tags, rebirths. It is
// called after the engine took the configuration (its handles).
func (n *Node) Apply(conf *config.Config) error {
	u, err := n.prepare(conf)
	if err != nil {
		return err
	}
	for {
		select {
		case n.reconf <- u:
			return nil
		case <-n.reconf: // not taken yet: the newer replaces it
		}
	}
}

// Start starts publishing.
func (n *Node) Start() {
	n.started = true
	n.stopSub = n.opt.Engine.Subscribe(func(im *plc.Image) {
		im.Hold()
		select {
		case n.images <- im:
		default:
			im.Release()
			n.cnt.missed.Add(1)
		}
	})
	go n.run()
}

// Stop publishes NDEATH, disconnects and stops.
func (n *Node) Stop() {
	if !n.started {
		return
	}
	n.stopSub()
	close(n.quit)
	<-n.done
}

// Stats returns the node's diagnostics.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	s := n.stats
	n.mu.Unlock()
	s.Messages, s.Metrics, s.Replayed = n.cnt.messages.Load(), n.cnt.metrics.Load(), n.cnt.replayed.Load()
	s.Backlog, s.Commands, s.Refused = n.cnt.backlog.Load(), n.cnt.commands.Load(), n.cnt.refused.Load()
	s.Reconnects = n.cnt.reconnects.Load()
	if from := n.cnt.backlogFrom.Load(); from != 0 && s.Backlog > 0 {
		s.BacklogAge = time.Since(time.Unix(0, from))
	}
	return s
}

func (n *Node) setState(state, broker string, bdSeq uint64) {
	n.mu.Lock()
	n.stats.State, n.stats.Broker, n.stats.BdSeq = state, broker, bdSeq
	n.mu.Unlock()
}

func (n *Node) setError(err error) {
	n.mu.Lock()
	n.stats.LastError, n.stats.LastErrorTime = err.Error(), time.Now()
	n.mu.Unlock()
}

// errorf records and logs a problem.
func (n *Node) errorf(format string, args ...any) {
	err := fmt.Errorf(format, args...)
	n.setError(err)
	n.log.Warn("sparkplug: " + err.Error())
}

// Check reports what New or Apply would refuse of conf's section: the
// files it names unreadable, a secret's file readable by others, no host
// name to stand for the node id.
func Check(conf *config.Config) error {
	if conf.Northbound == nil || conf.Northbound.Sparkplug == nil {
		return nil
	}
	_, err := resolve(conf.Northbound.Sparkplug)
	return err
}
