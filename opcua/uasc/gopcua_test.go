package uasc

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	gua "github.com/gopcua/opcua/ua"
	guacp "github.com/gopcua/opcua/uacp"
	guasc "github.com/gopcua/opcua/uasc"

	"github.com/edged/edged/opcua/ua"
)

// Interoperability with an independent client: gopcua v0.8.0's uacp and
// uasc talk to our Channel over loopback TCP: Hello, OpenSecureChannel,
// Read requests (single and multi-chunk responses), a renewal, and
// CloseSecureChannel.

// readServer answers ReadRequests with a ReadResponse of n Int32 values
// for the same request handle, where n is the request's MaxAge.
func readServer(t *testing.T, ch *Channel) <-chan error {
	done := make(chan error, 1)
	go func() {
		var d ua.Decoder
		var req ua.ReadRequest
		for {
			r, err := ch.ReadRequest()
			if err != nil {
				done <- err
				return
			}
			d.Reset(r.Message)
			if err := ua.DecodeMessageInto(&d, &req); err != nil {
				done <- err
				return
			}
			resp := ua.ReadResponse{
				ResponseHeader: ua.ResponseHeader{Timestamp: time.Now(), RequestHandle: req.RequestHeader.RequestHandle},
				Results:        make([]ua.DataValue, int(req.MaxAge)),
			}
			for i := range resp.Results {
				resp.Results[i].Value.SetInt32(int32(i))
			}
			if err := ch.WriteResponse(r.RequestID, ua.AppendMessage(nil, &resp)); err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

func TestGopcuaClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	endpoint := "opc.tcp://" + ln.Addr().String()
	served := make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		ch, err := Open(context.Background(), nc, &Config{
			CheckEndpointURL: func(u string) error {
				if u != endpoint {
					t.Errorf("endpoint %q", u)
				}
				return nil
			},
		})
		if err != nil {
			served <- err
			return
		}
		served <- <-readServer(t, ch)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := guacp.Dial(ctx, endpoint)
	if err != nil {
		t.Fatalf("uacp.Dial: %v", err)
	}
	defer conn.Close()
	errCh := make(chan error, 10)
	sc, err := guasc.NewSecureChannel(endpoint, conn, &guasc.Config{
		SecurityPolicyURI: gua.SecurityPolicyURINone,
		SecurityMode:      gua.MessageSecurityModeNone,
		Lifetime:          60000,
		RequestTimeout:    5 * time.Second,
	}, errCh)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Open(ctx); err != nil {
		t.Fatalf("Open: %v", err)
	}

	read := func(n, nodes int) {
		t.Helper()
		req := &gua.ReadRequest{MaxAge: float64(n)}
		for range nodes {
			req.NodesToRead = append(req.NodesToRead, &gua.ReadValueID{
				NodeID:      gua.NewNumericNodeID(0, 2258),
				AttributeID: gua.AttributeIDValue,
				// Must be set: gopcua writes nothing for a nil one.
				DataEncoding: &gua.QualifiedName{},
			})
		}
		var got *gua.ReadResponse
		err := sc.SendRequest(ctx, req, nil, func(r gua.Response) error {
			got, _ = r.(*gua.ReadResponse)
			return nil
		})
		if err != nil {
			t.Fatalf("Read(%d): %v", n, err)
		}
		if got == nil || len(got.Results) != n {
			t.Fatalf("Read(%d): response %+v", n, got)
		}
		if n > 0 {
			if v, _ := got.Results[n-1].Value.Value().(int32); v != int32(n-1) {
				t.Fatalf("Read(%d): last value %v", n, got.Results[n-1].Value.Value())
			}
		}
	}
	read(1, 1)
	read(20000, 1) // a response of ≈ 200 KB: several chunks of 64 KiB
	read(1, 8000)  // a request of ≈ 170 KB: several chunks
	if err := sc.Renew(ctx); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	read(3, 1)
	read(4, 1)
	// gopcua's Close reports io.EOF after sending CloseSecureChannel.
	if err := sc.Close(); err != nil && err != io.EOF {
		t.Fatalf("Close: %v", err)
	}
	if err := <-served; err != ErrClosed {
		t.Fatalf("server: %v, want ErrClosed", err)
	}
	select {
	case err := <-errCh:
		t.Logf("client error channel: %v", err)
	default:
	}
}
