package server

import (
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// AnonymousPolicyID is the PolicyId of the one user token policy the
// server advertises: anonymous.
const AnonymousPolicyID = "anonymous"

// Identity is the user a session acts for.
type Identity struct {
	// Anonymous is true for the anonymous user.
	Anonymous bool
	// UserName is the user of a user-name token, or the subject of an
	// X.509 token, once such tokens are accepted.
	UserName string
	// Roles are the user's roles: what the session may do (see Roles).
	Roles Roles
}

// Authenticator decides who the user identity token of an ActivateSession
// request stands for. Token is the decoded token: *ua.AnonymousIdentityToken,
// *ua.UserNameIdentityToken, *ua.X509IdentityToken or
// *ua.IssuedIdentityToken (a null token is passed as an
// *ua.AnonymousIdentityToken with an empty PolicyID, as OPC 10000-4
// §5.7.3 allows). A rejection is a ua.StatusCode, normally
// Bad_IdentityTokenInvalid (the token does not fit the policies offered)
// or Bad_IdentityTokenRejected (the token is valid but not accepted);
// other errors are reported as Bad_IdentityTokenRejected.
//
// Authenticate may be called from several connections at once.
type Authenticator interface {
	Authenticate(token ua.Body) (Identity, error)
}

// AnonymousOnly accepts the anonymous user with OperatorRights and rejects
// every other token: user-name and X.509 tokens with
// Bad_IdentityTokenRejected, anything else with Bad_IdentityTokenInvalid.
// It is the default of Config.Authenticator, for tests and tools; edged
// gives anonymous sessions Observer rights unless told otherwise.
type AnonymousOnly struct{}

// Authenticate implements Authenticator.
func (AnonymousOnly) Authenticate(token ua.Body) (Identity, error) {
	switch t := token.(type) {
	case *ua.AnonymousIdentityToken:
		// The policy id names the policy the client chose from our
		// endpoint; an empty one is tolerated (some clients send none).
		if t.PolicyID != AnonymousPolicyID && t.PolicyID != "" {
			return Identity{}, status.BadIdentityTokenInvalid
		}
		return Identity{Anonymous: true, Roles: OperatorRights}, nil
	case *ua.UserNameIdentityToken, *ua.X509IdentityToken:
		return Identity{}, status.BadIdentityTokenRejected
	}
	return Identity{}, status.BadIdentityTokenInvalid
}
