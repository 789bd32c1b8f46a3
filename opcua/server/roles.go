package server

import (
	"strings"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// Role is one of the well-known roles of OPC 10000-18 §4, or edged's
// Auditor.
type Role uint8

// The well-known roles.
const (
	RoleAnonymous Role = iota
	RoleAuthenticatedUser
	RoleObserver
	RoleOperator
	RoleEngineer
	RoleSupervisor
	RoleConfigureAdmin
	RoleSecurityAdmin
	// RoleAuditor observes, and receives the audit events (a role of the
	// server's namespace, ns=1;s=Role.Auditor).
	RoleAuditor
	numRoles
)

var roleNames = [numRoles]string{"Anonymous", "AuthenticatedUser", "Observer", "Operator", "Engineer", "Supervisor", "ConfigureAdmin", "SecurityAdmin", "Auditor"}

// String returns the role's BrowseName.
func (r Role) String() string {
	if r < numRoles {
		return roleNames[r]
	}
	return "Role(?)"
}

// ParseRole returns the role named name (case-insensitive).
func ParseRole(name string) (Role, bool) {
	for i, n := range roleNames {
		if strings.EqualFold(n, name) {
			return Role(i), true
		}
	}
	return 0, false
}

// Roles is a set of roles.
type Roles uint16

// RolesOf returns the set of rs.
func RolesOf(rs ...Role) Roles {
	var s Roles
	for _, r := range rs {
		s |= 1 << r
	}
	return s
}

// Has reports whether r holds x.
func (r Roles) Has(x Role) bool { return r&(1<<x) != 0 }

// List returns the roles of r.
func (r Roles) List() []Role {
	var out []Role
	for i := Role(0); i < numRoles; i++ {
		if r.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

// What each role may do (OPC 10000-18 §4.2, as a gateway grants it):
// every role browses, reads and subscribes; Operator, Engineer and
// Supervisor also write the writable variables and call the methods.
// ConfigureAdmin and SecurityAdmin manage the configuration and the
// security; on the process image they observe.
const operating = Roles(1<<RoleOperator | 1<<RoleEngineer | 1<<RoleSupervisor)

// MayObserve reports whether r may browse, read and subscribe.
func (r Roles) MayObserve() bool { return r != 0 }

// MayOperate reports whether r may write variables and call methods.
func (r Roles) MayOperate() bool { return r&operating != 0 }

// OperatorRights is the role set AnonymousOnly grants: observe and
// operate.
var OperatorRights = RolesOf(RoleAnonymous, RoleOperator)

// roleUser is the address space's view of a session's roles: the one
// place that turns roles into the rights Read, Write, Call and the
// User* attributes see. It holds the roles up to SecurityAdmin (one byte:
// as an interface value it needs no allocation); Auditor, beyond them,
// adds no right there (every session that has it is an AuthenticatedUser).
type roleUser uint8

// userOf is the address space's view of rs.
func userOf(rs Roles) roleUser { return roleUser(rs & (1<<RoleAuditor - 1)) }

func (u roleUser) AccessLevel(n *addrspace.Node) uint8 {
	r := Roles(u)
	var al uint8
	if r.MayObserve() {
		al |= uint8(ua.AccessLevelTypeCurrentRead | ua.AccessLevelTypeHistoryRead)
	}
	if r.MayOperate() {
		al |= uint8(ua.AccessLevelTypeCurrentWrite)
	}
	return al
}

func (u roleUser) WriteMask(*addrspace.Node) uint32 {
	if Roles(u).MayOperate() {
		return ^uint32(0) // what the node's WriteMask allows
	}
	return 0
}

// Executable: a method with Roles for those roles; the security
// management methods of ServerConfiguration for SecurityAdmin; the other methods of namespace 0 (GetMonitoredItems,
// ResendData: about the caller's own subscriptions) for every role; the
// gateway's methods (device commands) for the operating roles.
func (u roleUser) Executable(n *addrspace.Node) bool {
	r := Roles(u)
	switch {
	case n.Roles != 0:
		return uint32(r)&n.Roles != 0
	case securityMethods[n.ID]:
		return r.Has(RoleSecurityAdmin)
	case n.ID.Namespace == 0:
		return r.MayObserve()
	}
	return r.MayOperate()
}

// securityMethods are the methods that manage the server's security.
var securityMethods = map[ua.NodeID]bool{}

func init() {
	// The method values are only listed, never called, on the nil server.
	for _, m := range (*Server)(nil).trustListMethods() {
		securityMethods[ua.NewNumericNodeID(0, m.node)] = true
	}
}

// roleNodes are the Objects of the well-known roles, by Role.
var roleNodes = [RoleAuditor]uint32{
	id.WellKnownRole_Anonymous, id.WellKnownRole_AuthenticatedUser, id.WellKnownRole_Observer,
	id.WellKnownRole_Operator, id.WellKnownRole_Engineer, id.WellKnownRole_Supervisor,
	id.WellKnownRole_ConfigureAdmin, id.WellKnownRole_SecurityAdmin,
}

// auditorRole is the Auditor role's Object, in the server's namespace.
var auditorRole = ua.NewStringNodeID(1, "Role.Auditor")

// roleNode is role r's Object.
func roleNode(r Role) ua.NodeID {
	if r == RoleAuditor {
		return auditorRole
	}
	return ua.NewNumericNodeID(0, roleNodes[r])
}

// permissions is what role r may do with n: the rights roleUser gives
// (browse and read for every role; write where the variable is writable
// and call where the method is executable, for the roles that may).
func permissions(r Role, n *addrspace.Node) ua.PermissionType {
	one := userOf(RolesOf(r))
	if r == RoleAuditor {
		one = userOf(RolesOf(RoleObserver))
	}
	p := ua.PermissionTypeBrowse | ua.PermissionTypeReadRolePermissions
	switch n.Class {
	case ua.NodeClassVariable:
		if n.AccessLevel&one.AccessLevel(n)&uint8(ua.AccessLevelTypeCurrentRead) != 0 {
			p |= ua.PermissionTypeRead
		}
		if n.AccessLevel&one.AccessLevel(n)&uint8(ua.AccessLevelTypeCurrentWrite) != 0 {
			p |= ua.PermissionTypeWrite
		}
	case ua.NodeClassMethod:
		if n.Executable && one.Executable(n) {
			p |= ua.PermissionTypeCall
		}
	default:
		p |= ua.PermissionTypeRead // the node's attributes
	}
	return p
}

func rolePermissions(rs Roles, n *addrspace.Node) []ua.RolePermissionType {
	var out []ua.RolePermissionType
	for _, r := range rs.List() {
		out = append(out, ua.RolePermissionType{RoleID: roleNode(r), Permissions: permissions(r, n)})
	}
	return out
}

// RolePermissions lists every role's permissions on n.
func (u roleUser) RolePermissions(n *addrspace.Node) []ua.RolePermissionType {
	return rolePermissions(Roles(1<<numRoles-1), n)
}

// UserRolePermissions lists the permissions of the user's roles on n.
func (u roleUser) UserRolePermissions(n *addrspace.Node) []ua.RolePermissionType {
	return rolePermissions(Roles(u), n)
}

var _ addrspace.Permissions = roleUser(0)

// User is the address space's view of a holder of r: what a session with
// these roles may read, write and call (for writes made on the server's
// behalf, such as a northbound's commands).
func (r Roles) User() addrspace.User { return userOf(r) }
