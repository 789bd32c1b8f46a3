package stack

import (
	"crypto/x509"
	"time"

	"github.com/edged/edged/alarms"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/uasc"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/tsdb"
)

// The gateway's own conditions (alarms.SystemConditions), checked each
// second on the alarms' goroutine.
const (
	// CertificateWarning is how long before its end the server's
	// certificate makes CertificateExpiration active (OPC 10000-12's
	// default ExpirationLimit).
	CertificateWarning = 30 * 24 * time.Hour
	// OverrunBurst overruns of the scan within OverrunWindow make
	// ScanOverrun active; it ends after a window with fewer.
	OverrunBurst  = 10
	OverrunWindow = 10 * time.Second
	// historyQuiet is how long the history store must keep every sample
	// for HistoryStore to end.
	historyQuiet = 10 * time.Second
)

// systemChecks has w check the system conditions each second.
func (st *Stack) systemChecks(w *alarms.Watch) {
	var (
		overruns     []uint64 // the engine's count, the last OverrunWindow seconds
		lastDropped  uint64
		lastHistFail time.Time
		diag         plc.Diagnostics
		cert         certEnd
	)
	w.OnTick(func(now time.Time) {
		w.SetSystem("CertificateExpiration", cert.expiring(st.security, now), now)

		st.Engine.Diagnostics(&diag)
		overruns = append(overruns, diag.Overruns)
		if n := int(OverrunWindow / time.Second); len(overruns) > n+1 {
			overruns = overruns[len(overruns)-n-1:]
		}
		w.SetSystem("ScanOverrun", overruns[len(overruns)-1]-overruns[0] >= OverrunBurst, now)

		if hs := st.Historian; hs != nil {
			var ts tsdb.Stats
			hs.DB().Stats(&ts)
			dropped := hs.Stats().Dropped + ts.Dropped
			if ts.Paused != "" || dropped != lastDropped {
				lastHistFail = now
			}
			lastDropped = dropped
			w.SetSystem("HistoryStore", !lastHistFail.IsZero() && now.Sub(lastHistFail) < historyQuiet, now)
		}

		w.SetSystem("RealTime", st.rtRefused.Load(), now)
	})
}

// certEnd is the end of the server's certificate, parsed once per
// certificate (a rotation gives new Credentials), so that the check of
// each second allocates nothing.
type certEnd struct {
	of       *uasc.Credentials
	notAfter time.Time
	ok       bool // the certificate parsed
}

// expiring reports whether the server's certificate (sec's Credentials)
// ends within CertificateWarning of now (or has ended).
func (e *certEnd) expiring(sec *server.Security, now time.Time) bool {
	if sec == nil || sec.Credentials == nil {
		return false
	}
	c := sec.Credentials()
	if c == nil {
		return false
	}
	if c != e.of {
		cert, err := x509.ParseCertificate(c.Certificate)
		e.of, e.ok = c, err == nil
		if e.ok {
			e.notAfter = cert.NotAfter
		}
	}
	return e.ok && e.notAfter.Sub(now) < CertificateWarning
}
