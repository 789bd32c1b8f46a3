package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/uasc"
)

// Default values of Config's zero fields.
const (
	DefaultMaxConnections               = 100
	DefaultNoSessionTimeout             = 10 * time.Second
	DefaultRequestMemory                = 16 << 20
	DefaultRequestRate                  = 8 << 20
	DefaultAcceptRate                   = 100
	DefaultMaxArrayLength               = 65535
	DefaultPreSessionMessageSize        = 64 << 10
	DefaultMaxSessions                  = 100
	DefaultMinSessionTimeout            = 10 * time.Second
	DefaultMaxSessionTimeout            = time.Hour
	DefaultMaxBrowseContinuationPoints  = 10
	DefaultMaxHistoryContinuationPoints = 10
	DefaultMaxReturnDataValues          = 10000
	DefaultMaxNodesPerRequest           = 1000
	DefaultWriteTimeout                 = 5 * time.Second
	DefaultNamespaceURI                 = "urn:edged:gateway"
	DefaultApplicationURI               = "urn:edged:server"
	DefaultProductURI                   = "https://github.com/edged/edged"
	DefaultProductName                  = "edged"
)

// OperationLimits bound the operations of one request. A request with more
// operations than its limit is answered with Bad_TooManyOperations. The
// limits are advertised in Server/ServerCapabilities/OperationLimits; 0
// there means "no limit" (OPC 10000-5 §6.3.11), which the server never
// uses: zero fields take DefaultMaxNodesPerRequest.
type OperationLimits struct {
	MaxNodesPerRead                          uint32
	MaxNodesPerWrite                         uint32
	MaxNodesPerBrowse                        uint32
	MaxNodesPerRegisterNodes                 uint32
	MaxNodesPerTranslateBrowsePathsToNodeIDs uint32
	MaxNodesPerMethodCall                    uint32
	MaxNodesPerHistoryReadData               uint32
	MaxNodesPerHistoryUpdateData             uint32
}

// SubscriptionLimits bound the subscriptions and monitored items; see
// the fields of subs.Limits.
type SubscriptionLimits = subs.Limits

// Config configures a Server. Zero fields take the defaults documented on
// each.
type Config struct {
	// EndpointURL is the URL clients connect to, opc.tcp://host:port. It
	// is required: it goes into the endpoint descriptions and the
	// discovery URLs.
	EndpointURL string

	// ApplicationURI identifies this server instance (default
	// DefaultApplicationURI), ProductURI the product (default
	// DefaultProductURI), ApplicationName its name shown to users
	// (default DefaultProductName).
	ApplicationURI  string
	ProductURI      string
	ApplicationName string
	// NamespaceURI is the URI of the application namespace (index 1) that
	// holds the gateway's own nodes (default DefaultNamespaceURI).
	NamespaceURI string

	// BuildInfo of Server/ServerStatus/BuildInfo: ManufacturerName
	// (default "edged"), SoftwareVersion (default "dev"), BuildNumber and
	// BuildDate.
	ManufacturerName string
	SoftwareVersion  string
	BuildNumber      string
	BuildDate        time.Time

	// MaxConnections bounds the concurrent connections (default
	// DefaultMaxConnections); MaxSessions the sessions (default
	// DefaultMaxSessions).
	//
	// When the connections are all taken, the oldest one whose channel has
	// no session is closed to admit a new one (OPC 10000-4 §5.5.2); when
	// the sessions are all taken, the oldest session not activated yet is
	// closed to admit a new one (§5.6.2).
	MaxConnections int
	MaxSessions    int
	// NoSessionTimeout closes a connection whose channel has had no
	// session for this long (default DefaultNoSessionTimeout, 10 s), so
	// that connections that never create a session do not hold their
	// places.
	NoSessionTimeout time.Duration
	// RequestMemory bounds the bytes all connections together may hold
	// for requests of several chunks being reassembled (default
	// DefaultRequestMemory, 16 MiB: one request of uasc's largest); a
	// request that would take more is answered with Bad_RequestTooLarge
	// and its connection closed. Until an ActivateSession over it succeeds,
	// a connection's requests are bounded by
	// Channel.InitialMessageLimit (default DefaultPreSessionMessageSize,
	// 64 KiB), so that no client holds much memory before it has
	// authenticated.
	RequestMemory int64
	// AcceptRate paces the acceptance of connections, per listener, in
	// connections per second, a second's worth ahead at most (default
	// DefaultAcceptRate, 100; negative: not paced): clients that connect
	// again and again, each evicted or refused, wait in the kernel's
	// backlog instead of taking the CPU with handshakes.
	AcceptRate float64
	// RequestRate paces the reading of requests of several chunks, all
	// connections together, in bytes per second (default
	// DefaultRequestRate, 8 MiB/s; negative: not paced): clients that
	// stream large requests slow down to it, and the scan keeps its cycle.
	// Requests of one chunk, every ordinary service call, are not paced.
	RequestRate int64
	// MinSessionTimeout and MaxSessionTimeout bound the revised session
	// timeout (defaults 10 s and 1 h). A client asking for 0 gets
	// MaxSessionTimeout.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxBrowseContinuationPoints is the number of Browse continuation
	// points a session may hold (default 10); one more is
	// Bad_NoContinuationPoints.
	MaxBrowseContinuationPoints int
	// MaxHistoryContinuationPoints is the number of HistoryRead
	// continuation points a session may hold (default 10); one more is
	// Bad_NoContinuationPoints.
	MaxHistoryContinuationPoints int
	// MaxReturnDataValues bounds the values one HistoryRead operation
	// returns (default 10,000): a read of more gets a continuation point.
	MaxReturnDataValues int
	// MinSupportedSampleRate is advertised in ServerCapabilities (default
	// 5 ms, the scan cycle).
	MinSupportedSampleRate time.Duration
	// Limits bound the operations per request.
	Limits OperationLimits
	// Subscriptions bound the subscriptions and monitored items.
	Subscriptions SubscriptionLimits

	// DataEfficient leaves Nagle's algorithm on: fewer, fuller TCP
	// segments at the cost of latency. By default TCP_NODELAY is set on
	// every connection.
	DataEfficient bool

	// Channel configures the secure channel layer; nil means uasc's
	// defaults.
	Channel *uasc.Config

	// Runtime tells the process of the server's heavy work and of memory
	// it released, so that the process's runtime policy can act on them;
	// the server itself changes no process-wide runtime state.
	Runtime Runtime

	// Poller serves the connections that are between requests from one
	// poller goroutine (on Linux, without Channel.ReadSpin), which
	// answers their reads and Publish requests in the same pass: one
	// wake-up per batch of requests (see docs/performance.md). Off by
	// default, a goroutine per connection: under the robustness suite's
	// subscription flood an observer's Reads were slower with it than
	// the suite's bound (docs/performance.md).
	Poller bool

	// Authenticator checks user identity tokens (default AnonymousOnly).
	Authenticator Authenticator

	// Audit, when set, turns auditing on (Server/Auditing true): the
	// server raises audit events (see audit.go), which sessions with the
	// SecurityAdmin or Auditor role receive, and hands Audit each one's
	// record, one JSON object without secrets, from the goroutine that
	// raised it. The caller bounds where it keeps them.
	Audit func(record []byte)

	// WriteTimeout bounds the wait of a Write (or Call) request for the
	// devices' answers to its writes (default DefaultWriteTimeout, above
	// the scan engine's own WriteTimeout plus PollTimeout); a write not
	// answered by then is Bad_Timeout. The wait blocks neither the
	// address space nor the client's connection: such a request is
	// answered later, by a goroutine of its own (see conn.later).
	WriteTimeout time.Duration

	// ShutdownDelay is how long Shutdown announces the shutdown in
	// Server/ServerStatus (State Shutdown, SecondsTillShutdown counting
	// down) before it closes the connections (default 0).
	ShutdownDelay time.Duration

	// ServiceLevel is Server/ServiceLevel while running (default 255).
	ServiceLevel byte

	// RoleIdentities, when set, says who has each well-known role, for the
	// Identities of Server/ServerCapabilities/RoleSet (read at each
	// Read); the Authenticator, not these rules, grants the roles.
	RoleIdentities func(Role) []ua.IdentityMappingRuleType

	// Security, when set, offers the secure endpoints (see Security);
	// without it the server offers SecurityPolicy None only.
	Security *Security

	// Logger receives connection and session events (default: discard).
	Logger *slog.Logger

	// Clock gives the time (default time.Now); tests replace it.
	Clock func() time.Time
}

// withDefaults returns c with its zero fields set, or an error naming the
// first bad field.
func (c Config) withDefaults() (Config, error) {
	if c.EndpointURL == "" {
		return c, errors.New("server: Config.EndpointURL is required")
	}
	u, err := url.Parse(c.EndpointURL)
	if err != nil || u.Scheme != "opc.tcp" || u.Host == "" {
		return c, fmt.Errorf("server: Config.EndpointURL %q is not an opc.tcp://host:port URL", c.EndpointURL)
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.ApplicationURI, DefaultApplicationURI)
	def(&c.ProductURI, DefaultProductURI)
	def(&c.ApplicationName, DefaultProductName)
	def(&c.NamespaceURI, DefaultNamespaceURI)
	def(&c.ManufacturerName, DefaultProductName)
	def(&c.SoftwareVersion, "dev")
	if c.NoSessionTimeout <= 0 {
		c.NoSessionTimeout = DefaultNoSessionTimeout
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = DefaultMinSessionTimeout
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = DefaultMaxSessionTimeout
	}
	if c.MaxSessionTimeout < c.MinSessionTimeout {
		return c, fmt.Errorf("server: MaxSessionTimeout %v is below MinSessionTimeout %v", c.MaxSessionTimeout, c.MinSessionTimeout)
	}
	if c.MaxBrowseContinuationPoints <= 0 {
		c.MaxBrowseContinuationPoints = DefaultMaxBrowseContinuationPoints
	}
	if c.MaxHistoryContinuationPoints <= 0 {
		c.MaxHistoryContinuationPoints = DefaultMaxHistoryContinuationPoints
	}
	if c.MaxReturnDataValues <= 0 {
		c.MaxReturnDataValues = DefaultMaxReturnDataValues
	}
	if c.MinSupportedSampleRate <= 0 {
		c.MinSupportedSampleRate = 5 * time.Millisecond
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	c.Subscriptions = c.Subscriptions.WithDefaults(c.MinSupportedSampleRate, DefaultMaxNodesPerRequest)
	c.limitsWithDefaults()
	if c.Security != nil {
		sc := *c.Security
		if sc.Credentials == nil {
			return c, errors.New("server: Config.Security.Credentials is required")
		}
		c.Security = &sc
	}
	if c.Authenticator == nil {
		c.Authenticator = AnonymousOnly{}
	}
	if c.ServiceLevel == 0 {
		c.ServiceLevel = 255
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c, nil
}

// limitsWithDefaults sets the operation limits, the channel's
// configuration (a copy of the caller's) and the request memory's bounds
// where c has none.
func (c *Config) limitsWithDefaults() {
	lim := func(v *uint32) {
		if *v == 0 {
			*v = DefaultMaxNodesPerRequest
		}
	}
	lim(&c.Limits.MaxNodesPerRead)
	lim(&c.Limits.MaxNodesPerWrite)
	lim(&c.Limits.MaxNodesPerBrowse)
	lim(&c.Limits.MaxNodesPerRegisterNodes)
	lim(&c.Limits.MaxNodesPerTranslateBrowsePathsToNodeIDs)
	lim(&c.Limits.MaxNodesPerMethodCall)
	lim(&c.Limits.MaxNodesPerHistoryReadData)
	lim(&c.Limits.MaxNodesPerHistoryUpdateData)
	if c.Channel == nil {
		c.Channel = &uasc.Config{}
	} else {
		cc := *c.Channel
		c.Channel = &cc
	}
	if c.Channel.HeavyWork == nil {
		c.Channel.HeavyWork = c.Runtime.HeavyWork
	}
	if c.RequestMemory <= 0 {
		c.RequestMemory = DefaultRequestMemory
	}
	if c.AcceptRate == 0 {
		c.AcceptRate = DefaultAcceptRate
	}
	if c.RequestRate == 0 {
		c.RequestRate = DefaultRequestRate
	}
	if c.Channel.Budget == nil {
		c.Channel.Budget = uasc.NewBudget(c.RequestMemory, max(c.RequestRate, 0))
	}
	if c.Channel.Limits.MaxArrayLength == 0 {
		// Arrays of a request, the operations included, are refused at
		// their length field beyond this, before memory is allocated.
		c.Channel.Limits.MaxArrayLength = DefaultMaxArrayLength
	}
	if c.Channel.InitialMessageLimit == 0 {
		c.Channel.InitialMessageLimit = DefaultPreSessionMessageSize
	}
}

// Runtime are the server's hooks into the process's runtime policy; a nil
// field does nothing.
type Runtime struct {
	// HeavyWork is called as a goroutine starts milliseconds of
	// computation (a handshake's or a renewal's asymmetric cryptography, a
	// session service's signatures, decryption or password hash); the
	// function it returns is called as the work ends. Calls overlap.
	HeavyWork func() (done func())
	// MemoryReleased is called when much memory became garbage: large
	// request buffers given back, or many monitored items deleted (and
	// once more two sweeps later, when what the connections held is
	// garbage too).
	MemoryReleased func()
}

// heavyWork marks the start of heavy work; call the result at its end.
func (r *Runtime) heavyWork() (done func()) {
	if r.HeavyWork == nil {
		return func() {}
	}
	return r.HeavyWork()
}

func (r *Runtime) memoryReleased() {
	if r.MemoryReleased != nil {
		r.MemoryReleased()
	}
}
