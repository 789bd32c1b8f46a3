package main

import (
	"errors"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/users"
)

// gatewayAuth is edged's Authenticator: user names from the data folder's
// accounts, anonymous sessions with the roles of --anonymous-role (none:
// rejected).
type gatewayAuth struct {
	users     *users.Store
	anonymous server.Roles // 0: anonymous sessions are refused
}

func (a gatewayAuth) Authenticate(token ua.Body) (server.Identity, error) {
	switch t := token.(type) {
	case *ua.AnonymousIdentityToken:
		if t.PolicyID != server.AnonymousPolicyID && t.PolicyID != "" {
			return server.Identity{}, status.BadIdentityTokenInvalid
		}
		if a.anonymous == 0 {
			return server.Identity{}, status.BadIdentityTokenRejected
		}
		return server.Identity{Anonymous: true, Roles: a.anonymous | server.RolesOf(server.RoleAnonymous)}, nil
	case *ua.UserNameIdentityToken:
		names, err := a.users.Authenticate(t.UserName, t.Password)
		switch {
		case errors.Is(err, users.ErrDenied):
			return server.Identity{}, status.BadUserAccessDenied
		case err != nil:
			return server.Identity{}, status.BadInternalError
		}
		roles := server.RolesOf(server.RoleAuthenticatedUser)
		for _, n := range names {
			if r, ok := server.ParseRole(n); ok {
				roles |= server.RolesOf(r)
			}
		}
		return server.Identity{UserName: t.UserName, Roles: roles}, nil
	case *ua.X509IdentityToken:
		// The server checked the certificate against the user trust list
		// and the token's signature; the holder is the user named by its
		// common name, with that account's roles, or an authenticated
		// user without an account.
		leaf, _, err := secpol.LeafCertificate(t.CertificateData)
		if err != nil {
			return server.Identity{}, status.BadIdentityTokenInvalid
		}
		name := leaf.Subject.CommonName
		roles := server.RolesOf(server.RoleAuthenticatedUser)
		for _, n := range a.users.Roles(name) {
			if r, ok := server.ParseRole(n); ok {
				roles |= server.RolesOf(r)
			}
		}
		return server.Identity{UserName: "x509:" + name, Roles: roles}, nil
	case *ua.IssuedIdentityToken:
		return server.Identity{}, status.BadIdentityTokenRejected
	}
	return server.Identity{}, status.BadIdentityTokenInvalid
}

// parseAnonymousRole reads --anonymous-role: a role name, or none.
func parseAnonymousRole(s string) (server.Roles, bool) {
	if s == "none" {
		return 0, true
	}
	r, ok := server.ParseRole(s)
	if !ok || r == server.RoleAnonymous || r == server.RoleAuthenticatedUser || r == server.RoleAuditor {
		return 0, false
	}
	return server.RolesOf(r), true
}

// roleIdentities lists who has role r, for RoleSet's Identities: the
// anonymous user for the Anonymous role and for the role of
// --anonymous-role, every authenticated user for AuthenticatedUser, and
// each account with the role by its user name.
func (a gatewayAuth) roleIdentities(r server.Role) []ua.IdentityMappingRuleType {
	var rules []ua.IdentityMappingRuleType
	if r == server.RoleAnonymous || a.anonymous != 0 && a.anonymous.Has(r) {
		rules = append(rules, ua.IdentityMappingRuleType{CriteriaType: ua.IdentityCriteriaTypeAnonymous})
	}
	if r == server.RoleAuthenticatedUser {
		rules = append(rules, ua.IdentityMappingRuleType{CriteriaType: ua.IdentityCriteriaTypeAuthenticatedUser})
	}
	us, _ := a.users.List()
	for _, u := range us {
		for _, n := range u.Roles {
			if x, ok := server.ParseRole(n); ok && x == r {
				rules = append(rules, ua.IdentityMappingRuleType{CriteriaType: ua.IdentityCriteriaTypeUserName, Criteria: u.Name})
			}
		}
	}
	return rules
}
