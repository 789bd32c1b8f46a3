package ua

import "github.com/edged/edged/opcua/ua/status"

// diagKnown is every DiagnosticInfo mask bit that Part 6 assigns.
const diagKnown = DiagSymbolicID | DiagNamespaceURI | DiagLocalizedText | DiagLocale |
	DiagAdditionalInfo | DiagInnerStatusCode | DiagInnerDiagnosticInfo

// effectiveMask returns the mask that Encode writes for v: the assigned
// bits of EncodingMask, without DiagInnerDiagnosticInfo when there is no
// inner DiagnosticInfo.
func (v *DiagnosticInfo) effectiveMask() uint8 {
	mask := v.EncodingMask & diagKnown
	if v.InnerDiagnosticInfo == nil {
		mask &^= DiagInnerDiagnosticInfo
	}
	return mask
}

// Encode appends the DiagnosticInfo (OPC 10000-6 §5.2.2.12): the encoding
// mask, then exactly the fields whose bit is set, in the order SymbolicId,
// NamespaceUri, Locale, LocalizedText, AdditionalInfo, InnerStatusCode,
// InnerDiagnosticInfo. Bits that Part 6 does not assign are not written;
// DiagInnerDiagnosticInfo is cleared when InnerDiagnosticInfo is nil. The
// chain of inner DiagnosticInfos is written in a loop, not recursively.
func (v *DiagnosticInfo) Encode(b []byte) []byte {
	for di := v; di != nil; {
		mask := di.effectiveMask()
		b = append(b, mask)
		if mask&DiagSymbolicID != 0 {
			b = AppendInt32(b, di.SymbolicID)
		}
		if mask&DiagNamespaceURI != 0 {
			b = AppendInt32(b, di.NamespaceURI)
		}
		if mask&DiagLocale != 0 {
			b = AppendInt32(b, di.Locale)
		}
		if mask&DiagLocalizedText != 0 {
			b = AppendInt32(b, di.LocalizedText)
		}
		if mask&DiagAdditionalInfo != 0 {
			b = AppendString(b, di.AdditionalInfo)
		}
		if mask&DiagInnerStatusCode != 0 {
			b = AppendUint32(b, uint32(di.InnerStatusCode))
		}
		if mask&DiagInnerDiagnosticInfo == 0 {
			break
		}
		di = di.InnerDiagnosticInfo
	}
	return b
}

// Decode reads a DiagnosticInfo and its chain of inner DiagnosticInfos, in
// a loop. Every level counts against Limits.MaxDepth (a deeper chain is
// status.BadEncodingLimitsExceeded); a mask bit that Part 6 does not assign
// (0x80) is status.BadDecodingError. Fields whose bit is clear are zeroed;
// inner DiagnosticInfos that v already has are decoded into.
func (v *DiagnosticInfo) Decode(d *Decoder) {
	levels := 0
	for di := v; d.Enter(); {
		levels++
		mask := d.ReadUint8()
		if mask&^diagKnown != 0 {
			d.Fail(status.BadDecodingError)
			break
		}
		*di = DiagnosticInfo{
			EncodingMask:        mask,
			AdditionalInfo:      di.AdditionalInfo,
			InnerDiagnosticInfo: di.InnerDiagnosticInfo,
		}
		if mask&DiagSymbolicID != 0 {
			di.SymbolicID = d.ReadInt32()
		}
		if mask&DiagNamespaceURI != 0 {
			di.NamespaceURI = d.ReadInt32()
		}
		if mask&DiagLocale != 0 {
			di.Locale = d.ReadInt32()
		}
		if mask&DiagLocalizedText != 0 {
			di.LocalizedText = d.ReadInt32()
		}
		if mask&DiagAdditionalInfo != 0 {
			di.AdditionalInfo = d.ReadStringReuse(di.AdditionalInfo)
		} else {
			di.AdditionalInfo = ""
		}
		if mask&DiagInnerStatusCode != 0 {
			di.InnerStatusCode = StatusCode(d.ReadUint32())
		}
		if mask&DiagInnerDiagnosticInfo == 0 {
			di.InnerDiagnosticInfo = nil
			break
		}
		if di.InnerDiagnosticInfo == nil {
			di.InnerDiagnosticInfo = new(DiagnosticInfo)
		}
		di = di.InnerDiagnosticInfo
	}
	for ; levels > 0; levels-- {
		d.Leave()
	}
}

// diagnosticInfoEqual reports whether a and b encode the same: fields
// whose bit is clear are not compared.
func diagnosticInfoEqual(a, b *DiagnosticInfo) bool {
	for a != nil && b != nil {
		mask := a.effectiveMask()
		if mask != b.effectiveMask() {
			return false
		}
		if mask&DiagSymbolicID != 0 && a.SymbolicID != b.SymbolicID ||
			mask&DiagNamespaceURI != 0 && a.NamespaceURI != b.NamespaceURI ||
			mask&DiagLocale != 0 && a.Locale != b.Locale ||
			mask&DiagLocalizedText != 0 && a.LocalizedText != b.LocalizedText ||
			mask&DiagAdditionalInfo != 0 && a.AdditionalInfo != b.AdditionalInfo ||
			mask&DiagInnerStatusCode != 0 && a.InnerStatusCode != b.InnerStatusCode {
			return false
		}
		if mask&DiagInnerDiagnosticInfo == 0 {
			return true
		}
		a, b = a.InnerDiagnosticInfo, b.InnerDiagnosticInfo
	}
	return a == nil && b == nil
}
