package addrspace

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// addAdd adds Plant.Add(A Int32, B Double[]) → (Sum Double) to f.
func addAdd(t *testing.T, f *fixture) *[]ua.Variant {
	t.Helper()
	var got []ua.Variant
	err := f.s.AddMethod(&Method{
		ID:         f.id("Plant.Add"),
		BrowseName: ua.QualifiedName{NamespaceIndex: f.ns, Name: "Add"},
		Object:     f.id("Plant"),
		InputArguments: []ua.Argument{
			{Name: "A", DataType: nid(id.Int32), ValueRank: ValueRankScalar},
			{Name: "B", DataType: nid(id.Double), ValueRank: ValueRankOneDimension},
		},
		OutputArguments: []ua.Argument{{Name: "Sum", DataType: nid(id.Double), ValueRank: ValueRankScalar}},
		Handler: func(_ context.Context, obj ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
			got = in
			a, _ := in[0].Int32()
			sum := float64(a)
			for _, x := range in[1].Value().([]float64) {
				sum += x
			}
			return status.Good, []ua.Variant{ua.MustVariant(sum)}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &got
}

func TestCall(t *testing.T) {
	f := newFixture(t)
	got := addAdd(t, f)
	call := func(obj, m string, user User, in ...any) ua.CallMethodResult {
		t.Helper()
		req := ua.CallMethodRequest{ObjectID: f.id(obj), MethodID: f.id(m)}
		for _, v := range in {
			req.InputArguments = append(req.InputArguments, ua.MustVariant(v))
		}
		var res ua.CallMethodResult
		f.s.Call(context.Background(), &req, user, &res)
		return res
	}
	res := call("Plant", "Plant.Add", nil, int32(1), []float64{2, 3})
	if res.StatusCode != status.Good || len(res.OutputArguments) != 1 || !res.OutputArguments[0].Equal(ua.MustVariant(6.0)) ||
		len(res.InputArgumentResults) != 0 || len(*got) != 2 {
		t.Errorf("Add(1, [2 3]) = %+v", res)
	}
	for _, c := range []struct {
		name, obj, m string
		user         User
		in           []any
		want         ua.StatusCode
		args         []ua.StatusCode
	}{
		{"missing", "Plant", "Plant.Add", nil, []any{int32(1)}, status.BadArgumentsMissing, nil},
		{"too many", "Plant", "Plant.Add", nil, []any{int32(1), []float64{1}, 3.0}, status.BadTooManyArguments, nil},
		{"mistyped", "Plant", "Plant.Add", nil, []any{1.0, []float64{1}}, status.BadInvalidArgument,
			[]ua.StatusCode{status.BadTypeMismatch, status.Good}},
		{"scalar for array", "Plant", "Plant.Add", nil, []any{int32(1), 1.0}, status.BadInvalidArgument,
			[]ua.StatusCode{status.Good, status.BadTypeMismatch}},
		{"both mistyped", "Plant", "Plant.Add", nil, []any{"x", []int32{1}}, status.BadInvalidArgument,
			[]ua.StatusCode{status.BadTypeMismatch, status.BadTypeMismatch}},
		{"unknown object", "Nope", "Plant.Add", nil, []any{int32(1), []float64{1}}, status.BadNodeIDUnknown, nil},
		{"object not an Object", "Int", "Plant.Add", nil, []any{int32(1), []float64{1}}, status.BadNodeClassInvalid, nil},
		{"unknown method", "Plant", "Nope", nil, nil, status.BadMethodInvalid, nil},
		{"not a method", "Plant", "Int", nil, nil, status.BadMethodInvalid, nil},
		{"not a component", "Remote", "Plant.Add", nil, []any{int32(1), []float64{1}}, status.BadMethodInvalid, nil},
		{"user may not", "Plant", "Plant.Add", ReadOnlyUser{}, []any{int32(1), []float64{1}}, status.BadUserAccessDenied, nil},
	} {
		res := call(c.obj, c.m, c.user, c.in...)
		if res.StatusCode != c.want || len(res.InputArgumentResults) != len(c.args) || len(res.OutputArguments) != 0 {
			t.Errorf("%s: %+v, want %v with %v", c.name, res, c.want, c.args)
			continue
		}
		for i := range c.args {
			if res.InputArgumentResults[i] != c.args[i] {
				t.Errorf("%s: argument %d: %v, want %v", c.name, i, res.InputArgumentResults[i], c.args[i])
			}
		}
	}
}

// TestCallNotExecutable: a Method node whose Executable is false, and one
// without a handler.
func TestCallNotExecutable(t *testing.T) {
	f := newFixture(t)
	addAdd(t, f)
	var res ua.CallMethodResult
	f.s.Call(context.Background(), &ua.CallMethodRequest{ObjectID: f.id("Plant"), MethodID: f.id("Method")}, nil, &res)
	if res.StatusCode != status.BadNotImplemented {
		t.Errorf("method without a handler: %v", res.StatusCode)
	}
	f.s.mu.Lock()
	f.s.nodes.get(f.id("Plant.Add")).Executable = false
	f.s.mu.Unlock()
	f.s.Call(context.Background(), &ua.CallMethodRequest{ObjectID: f.id("Plant"), MethodID: f.id("Plant.Add"),
		InputArguments: []ua.Variant{ua.MustVariant(int32(1)), ua.MustVariant([]float64{1})}}, nil, &res)
	if res.StatusCode != status.BadNotExecutable {
		t.Errorf("Executable false: %v", res.StatusCode)
	}
}

// TestAddMethodNodes: the Method node, its component reference and its
// argument properties.
func TestAddMethodNodes(t *testing.T) {
	f := newFixture(t)
	addAdd(t, f)
	if dv := f.read(f.id("Plant.Add"), ua.AttributeIDExecutable, ""); !dv.Value.Equal(ua.MustVariant(true)) {
		t.Errorf("Executable = %v", dv.Value)
	}
	dv := f.read(f.id("Plant.Add.InputArguments"), ua.AttributeIDValue, "")
	eos, ok := dv.Value.Value().([]ua.ExtensionObject)
	if !ok || len(eos) != 2 {
		t.Fatalf("InputArguments = %v", dv.Value)
	}
	if a, ok := eos[1].Body.(*ua.Argument); !ok || a.Name != "B" || a.ValueRank != ValueRankOneDimension {
		t.Errorf("InputArguments[1] = %+v", eos[1].Body)
	}
	if dv := f.read(f.id("Plant.Add.OutputArguments"), ua.AttributeIDValue, ""); dv.Status != status.Good {
		t.Errorf("OutputArguments: %v", dv.Status)
	}
	if err := f.s.AddMethod(&Method{ID: f.id("X"), BrowseName: ua.QualifiedName{NamespaceIndex: f.ns, Name: "X"}, Object: f.id("Nope"),
		Handler: func(context.Context, ua.NodeID, []ua.Variant) (ua.StatusCode, []ua.Variant) { return 0, nil }}); err == nil {
		t.Error("AddMethod on an unknown object succeeded")
	}
}

// TestSetMethodHandler: a handler on the namespace-0 method
// Server.GetMonitoredItems, whose arguments Call checks against its
// InputArguments property.
func TestSetMethodHandler(t *testing.T) {
	f := newFixture(t)
	server, getItems := nid(id.Server), nid(id.Server_GetMonitoredItems)
	var gotObj ua.NodeID
	h := func(_ context.Context, obj ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		gotObj = obj
		v, _ := in[0].Uint32()
		return status.Good, []ua.Variant{ua.MustVariant([]uint32{v}), ua.MustVariant([]uint32{v + 1})}
	}
	// A property that holds no Arguments.
	if err := f.s.SetValue(nid(id.Server_GetMonitoredItems_InputArguments), ua.MustVariant([]string{"SubscriptionId"})); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SetMethodHandler(getItems, h); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("SetMethodHandler with Strings for Arguments: %v, want ErrInvalidNode", err)
	}
	if err := f.s.SetValue(nid(id.Server_GetMonitoredItems_InputArguments), ua.MustVariant([]ua.ExtensionObject{{Body: &ua.Argument{
		Name: "SubscriptionId", DataType: nid(id.UInt32), ValueRank: ValueRankScalar}}})); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SetMethodHandler(getItems, h); err != nil {
		t.Fatal(err)
	}
	call := func(obj, m ua.NodeID, in ...any) ua.CallMethodResult {
		t.Helper()
		req := ua.CallMethodRequest{ObjectID: obj, MethodID: m}
		for _, v := range in {
			req.InputArguments = append(req.InputArguments, ua.MustVariant(v))
		}
		var res ua.CallMethodResult
		f.s.Call(context.Background(), &req, nil, &res)
		return res
	}
	res := call(server, getItems, uint32(7))
	if res.StatusCode != status.Good || len(res.OutputArguments) != 2 ||
		!res.OutputArguments[0].Equal(ua.MustVariant([]uint32{7})) || !res.OutputArguments[1].Equal(ua.MustVariant([]uint32{8})) {
		t.Errorf("GetMonitoredItems(7) = %+v", res)
	}
	if gotObj != server {
		t.Errorf("handler's object %v, want %v", gotObj, server)
	}
	for _, c := range []struct {
		name    string
		obj, m  ua.NodeID
		in      []any
		want    ua.StatusCode
		argsRes []ua.StatusCode
	}{
		{"missing", server, getItems, nil, status.BadArgumentsMissing, nil},
		{"too many", server, getItems, []any{uint32(1), uint32(2)}, status.BadTooManyArguments, nil},
		{"Int32 for UInt32", server, getItems, []any{int32(1)}, status.BadInvalidArgument, []ua.StatusCode{status.BadTypeMismatch}},
		{"array for scalar", server, getItems, []any{[]uint32{1}}, status.BadInvalidArgument, []ua.StatusCode{status.BadTypeMismatch}},
		{"other object", nid(id.ObjectsFolder), getItems, []any{uint32(1)}, status.BadMethodInvalid, nil},
		{"ResendData without handler", server, nid(id.Server_ResendData), []any{uint32(1)}, status.BadNotImplemented, nil},
	} {
		res := call(c.obj, c.m, c.in...)
		if res.StatusCode != c.want || !slices.Equal(res.InputArgumentResults, c.argsRes) || len(res.OutputArguments) != 0 {
			t.Errorf("%s: %+v, want %v with %v", c.name, res, c.want, c.argsRes)
		}
	}

	// A method without an InputArguments property takes no arguments.
	if err := f.s.SetMethodHandler(f.id("Method"), func(context.Context, ua.NodeID, []ua.Variant) (ua.StatusCode, []ua.Variant) {
		return status.Good, nil
	}); err != nil {
		t.Fatal(err)
	}
	if res := call(f.id("Plant"), f.id("Method")); res.StatusCode != status.Good {
		t.Errorf("Method() = %v", res.StatusCode)
	}
	if res := call(f.id("Plant"), f.id("Method"), uint32(1)); res.StatusCode != status.BadTooManyArguments {
		t.Errorf("Method(1) = %v", res.StatusCode)
	}

	for _, c := range []struct {
		name string
		id   ua.NodeID
		h    MethodHandler
		want error
	}{
		{"unknown node", f.id("Nope"), h, ErrUnknownNode},
		{"not a method", server, h, ErrInvalidNode},
		{"nil handler", getItems, nil, ErrInvalidNode},
	} {
		if err := f.s.SetMethodHandler(c.id, c.h); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
