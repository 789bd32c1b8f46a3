package ua_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/edged/edged/opcua/ua"
)

// fuzzLimits are tight limits for FuzzMessage: small enough that no input
// makes the decoder allocate much (the fuzzer's inputs are small anyway,
// and every length is checked against what remains), large enough for
// every seed.
var fuzzLimits = ua.Limits{
	MaxStringLength:     1 << 12,
	MaxByteStringLength: 1 << 12,
	MaxArrayLength:      1 << 10,
	MaxDepth:            16,
}

// fuzzSeeds are the messages FuzzMessage starts from: the sample messages
// and a few more of the session and subscription set-up.
func fuzzSeeds() []ua.Body {
	var seeds []ua.Body
	for _, s := range sampleMessages() {
		seeds = append(seeds, s.msg)
	}
	return append(seeds,
		&ua.OpenSecureChannelRequest{
			RequestHeader:         requestHeader(1),
			ClientProtocolVersion: 0,
			RequestType:           ua.SecurityTokenRequestTypeIssue,
			SecurityMode:          ua.MessageSecurityModeSign,
			ClientNonce:           []byte{1, 2, 3, 4, 5, 6, 7, 8},
			RequestedLifetime:     3600000,
		},
		&ua.OpenSecureChannelResponse{
			ResponseHeader: responseHeader(1),
			SecurityToken:  ua.ChannelSecurityToken{ChannelID: 7, TokenID: 1, CreatedAt: msgTime(0), RevisedLifetime: 600000},
			ServerNonce:    []byte{9, 9, 9},
		},
		&ua.CreateSubscriptionRequest{
			RequestHeader:               requestHeader(3),
			RequestedPublishingInterval: 100,
			RequestedLifetimeCount:      600,
			RequestedMaxKeepAliveCount:  20,
			MaxNotificationsPerPublish:  1000,
			PublishingEnabled:           true,
			Priority:                    1,
		},
		&ua.CreateMonitoredItemsRequest{
			RequestHeader:      requestHeader(4),
			SubscriptionID:     5,
			TimestampsToReturn: ua.TimestampsToReturnBoth,
			ItemsToCreate: []ua.MonitoredItemCreateRequest{{
				ItemToMonitor:  newReadRequest(1).NodesToRead[0],
				MonitoringMode: ua.MonitoringModeReporting,
				RequestedParameters: ua.MonitoringParameters{
					ClientHandle:     100,
					SamplingInterval: 50,
					Filter:           ua.ExtensionObject{Body: &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: 1, DeadbandValue: 0.5}},
					QueueSize:        10,
					DiscardOldest:    true,
				},
			}},
		},
		&ua.BrowseNextRequest{
			RequestHeader:             requestHeader(5),
			ReleaseContinuationPoints: false,
			ContinuationPoints:        [][]byte{{1, 2, 3}, {4}},
		},
		&ua.TranslateBrowsePathsToNodeIDsRequest{
			RequestHeader: requestHeader(6),
			BrowsePaths: []ua.BrowsePath{{
				StartingNode: ua.NewNumericNodeID(0, 85),
				RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
					{ReferenceTypeID: ua.NewNumericNodeID(0, 33), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 2, Name: "sim"}},
					{ReferenceTypeID: ua.NewNumericNodeID(0, 47), IsInverse: true, TargetName: ua.QualifiedName{NamespaceIndex: 2, Name: "Counter"}},
				}},
			}},
		},
		&ua.GetEndpointsRequest{
			RequestHeader: requestHeader(7),
			EndpointURL:   "opc.tcp://gw:4840",
			LocaleIDs:     []string{"en"},
			ProfileURIs:   []string{"http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary"},
		},
	)
}

// FuzzMessage decodes arbitrary bytes as a service message under tight
// limits. It must never panic; a failure must be a StatusCode; whatever
// decodes must encode to bytes that decode again, to a value that encodes
// to the same bytes (the first encoding may differ from the input: a
// NodeId in a longer form than needed, an empty array, picoseconds above
// 9999 are all normalised). The same bytes must also come out of decoding
// with Alias, and of decoding into a value that held a sample message of
// the same type (reuse must leave nothing stale behind, and a null array
// must stay apart from an empty one: see TestDecodeIntoUsedValue).
func FuzzMessage(f *testing.F) {
	held := map[reflect.Type][]byte{} // a sample encoding of each type, to decode into first
	for _, m := range fuzzSeeds() {
		enc := ua.AppendMessage(nil, m)
		f.Add(enc)
		if _, ok := held[reflect.TypeOf(m)]; !ok {
			held[reflect.TypeOf(m)] = enc
		}
	}

	f.Fuzz(func(t *testing.T, b []byte) {
		d := &ua.Decoder{Limits: fuzzLimits}
		d.Reset(b)
		m, err := ua.DecodeMessage(d)
		if err != nil {
			var code ua.StatusCode
			if m != nil || !errors.As(err, &code) || !code.IsBad() {
				t.Fatalf("DecodeMessage = %T, %v; want nil and a Bad StatusCode", m, err)
			}
			return
		}
		enc := ua.AppendMessage(nil, m)

		d.Reset(enc)
		m2, err := ua.DecodeMessage(d)
		if err != nil {
			t.Fatalf("%T: the re-encoding does not decode: %v\ninput     % x\nre-encoded % x", m, err, b, enc)
		}
		if enc2 := ua.AppendMessage(nil, m2); !bytes.Equal(enc2, enc) {
			t.Fatalf("%T: encoding is not stable\ninput % x\nfirst  % x\nsecond % x", m, b, enc, enc2)
		}

		alias := &ua.Decoder{Limits: fuzzLimits, Alias: true}
		alias.Reset(b)
		m3, err := ua.DecodeMessage(alias)
		if err != nil {
			t.Fatalf("%T: decodes without Alias, not with it: %v", m, err)
		}
		if enc3 := ua.AppendMessage(nil, m3); !bytes.Equal(enc3, enc) {
			t.Fatalf("%T: with Alias it encodes differently\ninput % x\nwithout % x\nwith    % x", m, b, enc, enc3)
		}

		reused := reflect.New(reflect.TypeOf(m).Elem()).Interface().(ua.Body)
		if sample, ok := held[reflect.TypeOf(m)]; ok {
			d.Reset(sample)
			if err := ua.DecodeMessageInto(d, reused); err != nil {
				t.Fatalf("decoding the sample %T: %v", m, err)
			}
		}
		d.Reset(b)
		if err := ua.DecodeMessageInto(d, reused); err != nil {
			t.Fatalf("%T: DecodeMessageInto a used value fails where DecodeMessage did not: %v", m, err)
		}
		if enc4 := ua.AppendMessage(nil, reused); !bytes.Equal(enc4, enc) {
			t.Fatalf("%T: decoded into a used value it encodes differently\ninput % x\nnew  % x\nused % x", m, b, enc, enc4)
		}
	})
}
