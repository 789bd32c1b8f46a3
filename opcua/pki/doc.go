// Package pki keeps the certificates of an OPC UA application in its data
// folder (OPC 10000-12 §F.1 layout): its own certificate and key, the
// trusted and issuer certificates with their CRLs, and the rejected ones;
// it makes certificates and validates peers' as OPC 10000-4 §6.1.3 says.
package pki
