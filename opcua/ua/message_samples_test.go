package ua_test

import (
	"fmt"
	"math"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Sample service messages shared by the message, gopcua cross-check, fuzz
// and benchmark tests. Every field that a test compares is set to a value
// that is not the zero value, so that a field dropped or misplaced by a
// codec shows.

// msgTime returns a UTC time with 100 ns resolution (what a UA DateTime
// keeps), distinct for each i.
func msgTime(i int) time.Time {
	return time.Date(2024, 5, 17, 9, 30, 15, 123456700, time.UTC).Add(time.Duration(i) * 1500 * time.Millisecond)
}

// authToken is an opaque session authentication token as servers hand out
// (32 random-looking bytes in namespace 0).
var authToken = ua.NewOpaqueNodeID(0, []byte{
	0x3a, 0x91, 0x0c, 0x5e, 0x77, 0xd2, 0x41, 0x08, 0x9f, 0x13, 0xb6, 0x2a, 0xe4, 0x50, 0x0d, 0xc7,
	0x68, 0x1f, 0xa3, 0x39, 0x84, 0xee, 0x27, 0x5b, 0xc0, 0x06, 0x9d, 0x72, 0x4b, 0xf1, 0x18, 0xa6,
})

func requestHeader(handle uint32) ua.RequestHeader {
	return ua.RequestHeader{
		AuthenticationToken: authToken,
		Timestamp:           msgTime(int(handle)),
		RequestHandle:       handle,
		ReturnDiagnostics:   0,
		TimeoutHint:         10000,
	}
}

// fullRequestHeader sets every field of a RequestHeader, the additional
// header included.
func fullRequestHeader(handle uint32) ua.RequestHeader {
	h := requestHeader(handle)
	h.AuthenticationToken = ua.NewNumericNodeID(3, 0x8a6b4c21)
	h.ReturnDiagnostics = 0x3FF
	h.AuditEntryID = "audit-" + fmt.Sprint(handle)
	h.AdditionalHeader = additionalParameters("request", handle)
	return h
}

// additionalParameters returns an AdditionalParametersType, which OPC
// 10000-4 (1.05) puts in the AdditionalHeader of request and response
// headers.
func additionalParameters(key string, n uint32) ua.ExtensionObject {
	return ua.ExtensionObject{Body: &ua.AdditionalParametersType{Parameters: []ua.KeyValuePair{
		{Key: ua.QualifiedName{NamespaceIndex: 2, Name: key + "-id"}, Value: ua.MustVariant(n)},
		{Key: ua.QualifiedName{NamespaceIndex: 0, Name: "ECDHPolicyUri"}, Value: ua.MustVariant("http://opcfoundation.org/UA/SecurityPolicy#ECC_nistP256")},
	}}}
}

func responseHeader(handle uint32) ua.ResponseHeader {
	return ua.ResponseHeader{
		Timestamp:     msgTime(int(handle) + 1),
		RequestHandle: handle,
		ServiceResult: status.Good,
	}
}

// fullResponseHeader sets every field of a ResponseHeader.
func fullResponseHeader(handle uint32) ua.ResponseHeader {
	h := responseHeader(handle)
	h.ServiceResult = status.GoodLocalOverride
	h.ServiceDiagnostics = diagnosticInfo(1)
	h.StringTable = []string{"symbol-a", "urn:edged:ns", "en-US", "additional"}
	h.AdditionalHeader = additionalParameters("response", handle)
	return h
}

// diagnosticInfo returns a DiagnosticInfo with every field set and one
// inner DiagnosticInfo.
func diagnosticInfo(seed int32) ua.DiagnosticInfo {
	return ua.DiagnosticInfo{
		EncodingMask: ua.DiagSymbolicID | ua.DiagNamespaceURI | ua.DiagLocalizedText | ua.DiagLocale |
			ua.DiagAdditionalInfo | ua.DiagInnerStatusCode | ua.DiagInnerDiagnosticInfo,
		SymbolicID:      seed,
		NamespaceURI:    seed + 1,
		Locale:          seed + 2,
		LocalizedText:   seed + 3,
		AdditionalInfo:  fmt.Sprintf("diagnostic %d", seed),
		InnerStatusCode: status.BadNodeIDUnknown,
		InnerDiagnosticInfo: &ua.DiagnosticInfo{
			EncodingMask: ua.DiagSymbolicID | ua.DiagInnerStatusCode,
			SymbolicID:   seed + 10,
			// A status with info bits: they travel unchanged.
			InnerStatusCode: status.UncertainLastUsableValue | 0x0400,
		},
	}
}

// tagName returns the string identifier of the i-th simulated tag: the
// first is "sim.Counter".
func tagName(i int) string {
	if i == 0 {
		return "sim.Counter"
	}
	return fmt.Sprintf("sim.Tag%03d", i)
}

// newReadRequest returns the Read request that a client polling n tags
// sends: string NodeIds in namespace 2, attribute Value, both timestamps.
func newReadRequest(n int) *ua.ReadRequest {
	req := &ua.ReadRequest{
		RequestHeader:      requestHeader(42),
		MaxAge:             0,
		TimestampsToReturn: ua.TimestampsToReturnBoth,
		NodesToRead:        make([]ua.ReadValueID, n),
	}
	for i := range req.NodesToRead {
		req.NodesToRead[i] = ua.ReadValueID{
			NodeID:      ua.NewStringNodeID(2, tagName(i)),
			AttributeID: uint32(ua.AttributeIDValue),
		}
	}
	return req
}

// newReadResponse returns the response to newReadRequest(n): Double,
// UInt32 and Boolean values in turn, every third one with an Uncertain
// status (a Good status is not encoded), source and server timestamps.
func newReadResponse(n int) *ua.ReadResponse {
	resp := &ua.ReadResponse{
		ResponseHeader: responseHeader(42),
		Results:        make([]ua.DataValue, n),
	}
	for i := range resp.Results {
		dv := &resp.Results[i]
		switch i % 3 {
		case 0:
			dv.Value.SetFloat64(20.5 + float64(i)/8)
			dv.Status = status.UncertainLastUsableValue
		case 1:
			dv.Value.SetUint32(uint32(1000 + i))
		case 2:
			dv.Value.SetBool(i%2 == 0)
		}
		dv.SourceTimestamp = msgTime(i)
		dv.ServerTimestamp = msgTime(i + 1)
	}
	return resp
}

// fullReadRequest sets every field of a ReadRequest and of its two
// ReadValueIds.
func fullReadRequest() *ua.ReadRequest {
	return &ua.ReadRequest{
		RequestHeader:      fullRequestHeader(7),
		MaxAge:             250.5,
		TimestampsToReturn: ua.TimestampsToReturnBoth,
		NodesToRead: []ua.ReadValueID{
			{
				NodeID:       ua.NewStringNodeID(2, "sim.Counter"),
				AttributeID:  uint32(ua.AttributeIDValue),
				IndexRange:   "1:3",
				DataEncoding: ua.QualifiedName{NamespaceIndex: 0, Name: "Default Binary"},
			},
			{
				NodeID:       ua.NewGUIDNodeID(5, ua.GUID{Data1: 0x72962B91, Data2: 0xFA75, Data3: 0x4AE6, Data4: [8]byte{0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D, 0xAF, 0x63}}),
				AttributeID:  uint32(ua.AttributeIDDisplayName),
				IndexRange:   "0",
				DataEncoding: ua.QualifiedName{NamespaceIndex: 3, Name: "Encoding"},
			},
			{
				NodeID:      ua.NewNumericNodeID(0, 2258), // Server_ServerStatus_CurrentTime
				AttributeID: uint32(ua.AttributeIDValue),
			},
		},
	}
}

// fullReadResponse sets every field of a ReadResponse: DataValues with
// values of several types, status codes, both timestamps and picoseconds,
// and DiagnosticInfos.
func fullReadResponse() *ua.ReadResponse {
	return &ua.ReadResponse{
		ResponseHeader: fullResponseHeader(7),
		Results: []ua.DataValue{
			{
				Value:             ua.MustVariant(float64(21.25)),
				Status:            status.Good,
				SourceTimestamp:   msgTime(1),
				SourcePicoseconds: 1200,
				ServerTimestamp:   msgTime(2),
				ServerPicoseconds: 9999,
			},
			{
				Value:           ua.MustVariant(ua.LocalizedText{Locale: "de-DE", Text: "Zähler"}),
				Status:          status.UncertainLastUsableValue,
				SourceTimestamp: msgTime(3),
				ServerTimestamp: msgTime(4),
			},
			{
				Status:          status.BadNodeIDUnknown,
				ServerTimestamp: msgTime(5),
			},
			{
				Value:           ua.MustVariant([]int32{-1, 0, 1 << 30}),
				SourceTimestamp: msgTime(6),
			},
		},
		DiagnosticInfos: []ua.DiagnosticInfo{diagnosticInfo(20), {EncodingMask: ua.DiagAdditionalInfo, AdditionalInfo: "second"}},
	}
}

func fullBrowseRequest() *ua.BrowseRequest {
	return &ua.BrowseRequest{
		RequestHeader: fullRequestHeader(8),
		View: ua.ViewDescription{
			ViewID:      ua.NewNumericNodeID(1, 5000),
			Timestamp:   msgTime(9),
			ViewVersion: 3,
		},
		RequestedMaxReferencesPerNode: 100,
		NodesToBrowse: []ua.BrowseDescription{
			{
				NodeID:          ua.NewNumericNodeID(0, 85), // Objects
				BrowseDirection: ua.BrowseDirectionForward,
				ReferenceTypeID: ua.NewNumericNodeID(0, 33), // HierarchicalReferences
				IncludeSubtypes: true,
				NodeClassMask:   0xFF,
				ResultMask:      0x3F,
			},
			{
				NodeID:          ua.NewStringNodeID(2, "sim"),
				BrowseDirection: ua.BrowseDirectionBoth,
				ReferenceTypeID: ua.NewNumericNodeID(0, 35), // Organizes
				IncludeSubtypes: false,
				NodeClassMask:   uint32(ua.NodeClassVariable),
				ResultMask:      0x21,
			},
		},
	}
}

func reference(i int) ua.ReferenceDescription {
	return ua.ReferenceDescription{
		ReferenceTypeID: ua.NewNumericNodeID(0, 47), // HasComponent
		IsForward:       i%2 == 0,
		NodeID:          ua.ExpandedNodeID{NodeID: ua.NewStringNodeID(2, tagName(i))},
		BrowseName:      ua.QualifiedName{NamespaceIndex: 2, Name: fmt.Sprintf("Tag%d", i)},
		DisplayName:     ua.LocalizedText{Locale: "en", Text: fmt.Sprintf("Tag %d", i)},
		NodeClass:       ua.NodeClassVariable,
		TypeDefinition:  ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, 63)}, // BaseDataVariableType
	}
}

func fullBrowseResponse() *ua.BrowseResponse {
	remote := reference(9)
	remote.NodeID = ua.ExpandedNodeID{
		NodeID:       ua.NewNumericNodeID(0, 1234),
		NamespaceURI: "urn:other:server",
		ServerIndex:  2,
	}
	remote.TypeDefinition = ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(7, 70000), ServerIndex: 1}
	return &ua.BrowseResponse{
		ResponseHeader: fullResponseHeader(8),
		Results: []ua.BrowseResult{
			{
				StatusCode:        status.Good,
				ContinuationPoint: []byte{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80},
				References:        []ua.ReferenceDescription{reference(1), reference(2), remote},
			},
			{
				StatusCode:        status.BadContinuationPointInvalid,
				ContinuationPoint: []byte{0xff},
				References:        []ua.ReferenceDescription{reference(3), reference(4)},
			},
		},
		DiagnosticInfos: []ua.DiagnosticInfo{diagnosticInfo(30), diagnosticInfo(40)},
	}
}

func clientDescription() ua.ApplicationDescription {
	return ua.ApplicationDescription{
		ApplicationURI:      "urn:edged:client",
		ProductURI:          "urn:edged",
		ApplicationName:     ua.LocalizedText{Locale: "en", Text: "edged client"},
		ApplicationType:     ua.ApplicationTypeClient,
		GatewayServerURI:    "urn:edged:gateway",
		DiscoveryProfileURI: "http://opcfoundation.org/UA-Profile/Discovery",
		DiscoveryURLs:       []string{"opc.tcp://gw1:4840", "opc.tcp://gw2:4840/edged"},
	}
}

func fullCreateSessionRequest() *ua.CreateSessionRequest {
	nonce := make([]byte, 32)
	for i := range nonce {
		nonce[i] = byte(i*37 + 11)
	}
	return &ua.CreateSessionRequest{
		RequestHeader:           fullRequestHeader(1),
		ClientDescription:       clientDescription(),
		ServerURI:               "urn:plc:server",
		EndpointURL:             "opc.tcp://plc.local:4840",
		SessionName:             "edged session 1",
		ClientNonce:             nonce,
		ClientCertificate:       []byte{0x30, 0x82, 0x01, 0x0a, 0x02, 0x82, 0x01, 0x01, 0x00, 0xc4},
		RequestedSessionTimeout: 1.2e6,
		MaxResponseMessageSize:  16 << 20,
	}
}

func fullActivateSessionRequest() *ua.ActivateSessionRequest {
	return &ua.ActivateSessionRequest{
		RequestHeader: fullRequestHeader(2),
		ClientSignature: ua.SignatureData{
			Algorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
			Signature: []byte{9, 8, 7, 6, 5, 4, 3, 2, 1},
		},
		ClientSoftwareCertificates: []ua.SignedSoftwareCertificate{
			{CertificateData: []byte{1, 2}, Signature: []byte{3}},
			{CertificateData: []byte{4}, Signature: []byte{5, 6}},
		},
		LocaleIDs: []string{"en-US", "de-DE"},
		UserIdentityToken: ua.ExtensionObject{Body: &ua.UserNameIdentityToken{
			PolicyID:            "username_basic256sha256",
			UserName:            "operator",
			Password:            []byte("s3cr3t-encrypted"),
			EncryptionAlgorithm: "http://www.w3.org/2001/04/xmlenc#rsa-oaep",
		}},
		UserTokenSignature: ua.SignatureData{Algorithm: "none", Signature: []byte{0}},
	}
}

// writeRequest writes each of values to its own node.
func writeRequest(values []ua.Variant) *ua.WriteRequest {
	req := &ua.WriteRequest{RequestHeader: requestHeader(9)}
	for i, v := range values {
		req.NodesToWrite = append(req.NodesToWrite, ua.WriteValue{
			NodeID:      ua.NewStringNodeID(2, tagName(i)),
			AttributeID: uint32(ua.AttributeIDValue),
			Value:       ua.DataValue{Value: v, SourceTimestamp: msgTime(i)},
		})
	}
	return req
}

func publishResponse() *ua.PublishResponse {
	dcn := &ua.DataChangeNotification{}
	for i, dv := range newReadResponse(4).Results {
		dcn.MonitoredItems = append(dcn.MonitoredItems, ua.MonitoredItemNotification{ClientHandle: uint32(100 + i), Value: dv})
	}
	return &ua.PublishResponse{
		ResponseHeader:           responseHeader(77),
		SubscriptionID:           5,
		AvailableSequenceNumbers: []uint32{11, 12},
		MoreNotifications:        true,
		NotificationMessage: ua.NotificationMessage{
			SequenceNumber: 12,
			PublishTime:    msgTime(12),
			NotificationData: []ua.ExtensionObject{
				{Body: dcn},
				{Body: &ua.StatusChangeNotification{Status: status.Good}},
			},
		},
		Results: []ua.StatusCode{status.Good, status.BadNodeIDUnknown},
	}
}

func serviceFault() *ua.ServiceFault {
	return &ua.ServiceFault{ResponseHeader: ua.ResponseHeader{
		Timestamp:     msgTime(3),
		RequestHandle: 42,
		ServiceResult: status.BadServiceUnsupported,
	}}
}

// sampleGUID is a Guid with distinct bytes everywhere.
var sampleGUID = ua.GUID{Data1: 0x72962B91, Data2: 0xFA75, Data3: 0x4AE6, Data4: [8]byte{0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D, 0xAF, 0x63}}

// scalarValues returns one value of each built-in type that a Variant
// can hold as a scalar (all but Variant), as the Go values NewVariant
// takes, in type id order.
func scalarValues() []any {
	return []any{
		true,
		int8(-100),
		uint8(200),
		int16(-30000),
		uint16(60000),
		int32(-2_000_000_000),
		uint32(4_000_000_000),
		int64(-9_000_000_000_000_000_000),
		uint64(18_000_000_000_000_000_000),
		float32(3.25),
		float64(-1.0 / 3),
		"Grüße, OPC UA",
		msgTime(0),
		sampleGUID,
		[]byte{0, 1, 2, 0xfe, 0xff},
		ua.XMLElement("<a b=\"1\">x</a>"),
		ua.NewStringNodeID(2, "sim.Counter"),
		ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, 4000), NamespaceURI: "urn:remote", ServerIndex: 3},
		status.UncertainLastUsableValue,
		ua.QualifiedName{NamespaceIndex: 2, Name: "Counter"},
		ua.LocalizedText{Locale: "en-US", Text: "Counter"},
		ua.ExtensionObject{Body: &ua.Range{Low: -5, High: 5.5}},
		ua.DataValue{Value: ua.MustVariant(int16(7)), Status: status.GoodLocalOverride, SourceTimestamp: msgTime(1), ServerTimestamp: msgTime(2)},
		diagnosticInfo(5),
	}
}

// arrayValues returns a two-element array of each built-in type, Variant
// included, in type id order. Byte is a Byte array (NewByteArray), not a
// ByteString.
func arrayValues() []ua.Variant {
	return []ua.Variant{
		ua.MustVariant([]bool{true, false, true}),
		ua.MustVariant([]int8{-128, 127}),
		ua.NewByteArray([]byte{0, 255, 7}),
		ua.MustVariant([]int16{-32768, 32767}),
		ua.MustVariant([]uint16{0, 65535}),
		ua.MustVariant([]int32{math.MinInt32, math.MaxInt32}),
		ua.MustVariant([]uint32{0, math.MaxUint32}),
		ua.MustVariant([]int64{math.MinInt64, math.MaxInt64}),
		ua.MustVariant([]uint64{0, math.MaxUint64}),
		ua.MustVariant([]float32{-0.5, float32(math.Inf(1))}),
		ua.MustVariant([]float64{math.Pi, math.Inf(-1), math.SmallestNonzeroFloat64}),
		ua.MustVariant([]string{"a", "ß", "sim.Counter"}),
		ua.MustVariant([]time.Time{msgTime(1), msgTime(2)}),
		ua.MustVariant([]ua.GUID{sampleGUID, {Data1: 1}}),
		// Equal lengths: gopcua takes a [][]byte of unequal lengths for
		// an unbalanced matrix (see TestGopcuaByteStringArray).
		ua.MustVariant([][]byte{{1, 2}, {3, 4}}),
		ua.MustVariant([]ua.XMLElement{"<a/>", "<b>c</b>"}),
		ua.MustVariant([]ua.NodeID{ua.NewNumericNodeID(0, 5), ua.NewNumericNodeID(3, 70000), ua.NewOpaqueNodeID(1, []byte{1, 2, 3}), ua.NewGUIDNodeID(4, sampleGUID)}),
		ua.MustVariant([]ua.ExpandedNodeID{{NodeID: ua.NewNumericNodeID(0, 85)}, {NodeID: ua.NewStringNodeID(0, "x"), NamespaceURI: "urn:y", ServerIndex: 1}}),
		ua.MustVariant([]ua.StatusCode{status.Good, status.BadNodeIDUnknown}),
		ua.MustVariant([]ua.QualifiedName{{NamespaceIndex: 0, Name: "a"}, {NamespaceIndex: 9, Name: "b"}}),
		ua.MustVariant([]ua.LocalizedText{{Text: "only text"}, {Locale: "fr", Text: "texte"}}),
		ua.MustVariant([]ua.ExtensionObject{{Body: &ua.Range{Low: 1, High: 2}}, {Body: &ua.EUInformation{NamespaceURI: "http://www.opcfoundation.org/UA/units/un/cefact", UnitID: 4408652, DisplayName: ua.LocalizedText{Text: "°C"}, Description: ua.LocalizedText{Text: "degree Celsius"}}}}),
		ua.MustVariant([]ua.DataValue{{Value: ua.MustVariant(true)}, {Status: status.BadNodeIDUnknown, ServerTimestamp: msgTime(4)}}),
		ua.MustVariant([]ua.Variant{ua.MustVariant(int32(1)), ua.MustVariant("two"), ua.MustVariant([]float64{3})}),
		ua.MustVariant([]ua.DiagnosticInfo{diagnosticInfo(1), {EncodingMask: ua.DiagLocale, Locale: 3}}),
	}
}

// allVariants returns a Variant of every scalar of scalarValues, every
// array of arrayValues, a matrix and the null Variant.
func allVariants() []ua.Variant {
	var vs []ua.Variant
	for _, x := range scalarValues() {
		vs = append(vs, ua.MustVariant(x))
	}
	vs = append(vs, arrayValues()...)
	m, err := ua.NewMatrix([]int32{1, 2, 3, 4, 5, 6}, []int32{2, 3})
	if err != nil {
		panic(err)
	}
	return append(vs, m, ua.Variant{})
}

// sampleMessages returns named messages of many kinds, for round trips and
// fuzz seeds.
func sampleMessages() []struct {
	name string
	msg  ua.Body
} {
	return []struct {
		name string
		msg  ua.Body
	}{
		{"ReadRequest1", newReadRequest(1)},
		{"ReadRequest100", newReadRequest(100)},
		{"ReadResponse1", newReadResponse(1)},
		{"ReadResponse100", newReadResponse(100)},
		{"ReadRequestFull", fullReadRequest()},
		{"ReadResponseFull", fullReadResponse()},
		{"BrowseRequest", fullBrowseRequest()},
		{"BrowseResponse", fullBrowseResponse()},
		{"CreateSessionRequest", fullCreateSessionRequest()},
		{"ActivateSessionRequest", fullActivateSessionRequest()},
		{"WriteRequest", writeRequest(allVariants())},
		{"PublishResponse", publishResponse()},
		{"PublishRequest", &ua.PublishRequest{
			RequestHeader:                requestHeader(78),
			SubscriptionAcknowledgements: []ua.SubscriptionAcknowledgement{{SubscriptionID: 5, SequenceNumber: 11}},
		}},
		{"ServiceFault", serviceFault()},
		{"CallRequest", &ua.CallRequest{
			RequestHeader: requestHeader(79),
			MethodsToCall: []ua.CallMethodRequest{{
				ObjectID: ua.NewNumericNodeID(2, 1),
				MethodID: ua.NewNumericNodeID(2, 2),
				InputArguments: []ua.Variant{
					ua.MustVariant("reset"),
					ua.MustVariant(uint16(3)),
					// Bodies that are not decoded: of an unknown type, and XML.
					ua.MustVariant(ua.ExtensionObject{TypeID: ua.NewStringNodeID(4, "vendor.Settings"), Encoding: ua.ExtensionObjectBinary, Raw: []byte{0xde, 0xad, 0xbe, 0xef}}),
					ua.MustVariant(ua.ExtensionObject{TypeID: ua.NewNumericNodeID(0, id.Range_Encoding_DefaultXml), Encoding: ua.ExtensionObjectXML, Raw: []byte("<Range><Low>1</Low><High>2</High></Range>")}),
				},
			}},
		}},
		{"CloseSessionRequest", &ua.CloseSessionRequest{RequestHeader: requestHeader(80), DeleteSubscriptions: true}},
	}
}
