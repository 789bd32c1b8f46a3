package ua

import (
	"strconv"
	"time"

	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Sample values of the built-in types for the generated round-trip tests
// (zz_types_test.go): each is non-zero, derived from seed, and in the
// canonical form a decoder gives back, so that a decoded value is
// reflect.DeepEqual to the original. Different seeds give different forms
// (numeric, string, GUID and opaque NodeIds, with and without locale, ...).

func sampleGUID(seed int) GUID {
	s := uint32(seed)
	return GUID{
		Data1: 0x9E3779B9*s + 1,
		Data2: uint16(s) ^ 0xA5A5,
		Data3: uint16(s>>16) | 0x4000,
		Data4: [8]byte{0x80, byte(s), 2, 3, 4, 5, 6, byte(s >> 8)},
	}
}

func sampleNodeID(seed int) NodeID {
	switch seed % 5 {
	case 0: // two-byte form
		return NodeID{Numeric: uint32(1 + seed%200)}
	case 1: // four-byte form
		return NodeID{Namespace: uint16(1 + seed%200), Numeric: uint32(1000 + seed)}
	case 2: // numeric form
		return NodeID{Namespace: 300, Numeric: 100000 + uint32(seed)}
	case 3:
		return NodeID{Namespace: uint16(1 + seed%7), Type: IDString, Text: "node-" + strconv.Itoa(seed)}
	default:
		if seed%2 == 0 {
			return NodeID{Namespace: 2, Type: IDGUID, GUID: sampleGUID(seed)}
		}
		return NodeID{Namespace: 3, Type: IDOpaque, Text: string([]byte{byte(seed), 0, 0xFF})}
	}
}

func sampleExpandedNodeID(seed int) ExpandedNodeID {
	e := ExpandedNodeID{NodeID: sampleNodeID(seed), ServerIndex: uint32(seed % 3)}
	if seed%2 == 0 {
		// With a namespace URI the index is not used; keep it 0.
		e.NodeID.Namespace = 0
		e.NamespaceURI = "urn:edged:test:" + strconv.Itoa(seed)
	}
	if e.IsNull() {
		e.ServerIndex = 1
	}
	return e
}

func sampleQualifiedName(seed int) QualifiedName {
	return QualifiedName{NamespaceIndex: uint16(seed % 5), Name: "Name" + strconv.Itoa(seed)}
}

func sampleLocalizedText(seed int) LocalizedText {
	t := LocalizedText{Text: "text " + strconv.Itoa(seed)}
	if seed%3 != 0 {
		t.Locale = "en-US"
	}
	return t
}

// sampleTime returns a UTC time after 1601 with a whole number of 100 ns,
// so that it survives the UA DateTime encoding unchanged.
func sampleTime(seed int) time.Time {
	return time.Date(2024, time.March, 1+seed%28, 12, seed%60, 0, 0, time.UTC).
		Add(time.Duration(seed) * 1234500 * time.Nanosecond)
}

func sampleStatusCode(seed int) StatusCode {
	codes := [...]StatusCode{
		status.BadDecodingError,
		status.Uncertain,
		status.BadEncodingLimitsExceeded | 0x0400, // with an info bit
		status.Bad,
		status.Good | 0x0001,
	}
	return codes[seed%len(codes)]
}

func sampleDiagnosticInfo(seed int) DiagnosticInfo {
	return DiagnosticInfo{
		EncodingMask: DiagSymbolicID | DiagLocalizedText | DiagAdditionalInfo |
			DiagInnerStatusCode | DiagInnerDiagnosticInfo,
		SymbolicID:      int32(seed),
		LocalizedText:   int32(seed + 1),
		AdditionalInfo:  "info " + strconv.Itoa(seed),
		InnerStatusCode: sampleStatusCode(seed),
		InnerDiagnosticInfo: &DiagnosticInfo{
			EncodingMask: DiagNamespaceURI | DiagLocale,
			NamespaceURI: int32(seed % 4),
			Locale:       int32(seed%4 + 1),
		},
	}
}

// sampleVariant returns a Variant holding a scalar or an array whose type
// depends on seed.
func sampleVariant(seed int) Variant {
	switch seed % 4 {
	case 0:
		return MustVariant(int32(seed))
	case 1:
		return MustVariant("value " + strconv.Itoa(seed))
	case 2:
		return MustVariant([]float64{float64(seed), 0.5, -1})
	default:
		return MustVariant(sampleLocalizedText(seed))
	}
}

func sampleDataValue(seed int) DataValue {
	return DataValue{
		Value:             sampleVariant(seed),
		Status:            sampleStatusCode(seed),
		SourceTimestamp:   sampleTime(seed),
		SourcePicoseconds: uint16(1 + seed%9999),
		ServerTimestamp:   sampleTime(seed + 1),
		ServerPicoseconds: uint16(1 + (seed+1)%9999),
	}
}

// sampleExtensionObject returns, depending on seed, an ExtensionObject
// with a body of a generated type, which decodes into Body, or one of an
// unknown type, which decodes into Raw.
func sampleExtensionObject(seed int) ExtensionObject {
	if seed%2 == 0 {
		return ExtensionObject{
			TypeID:   NodeID{Numeric: id.RationalNumber_Encoding_DefaultBinary},
			Encoding: ExtensionObjectBinary,
			Body:     &RationalNumber{Numerator: int32(-seed), Denominator: uint32(seed + 1)},
		}
	}
	return ExtensionObject{
		TypeID:   NodeID{Namespace: 2, Numeric: uint32(5000 + seed)},
		Encoding: ExtensionObjectBinary,
		Raw:      []byte{byte(seed), 1, 2, 3},
	}
}
