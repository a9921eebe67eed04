package urlfrontierpb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The wire contract: package, services, messages, field numbers, kinds,
// cardinalities and oneofs of urlfrontier.proto, as crawler-commons'
// API/urlfrontier.proto declares them (testdata/wire.golden was checked
// against a descriptor of that file; comments are not part of it). A
// change here breaks URLFrontier clients.
func TestWireContract(t *testing.T) {
	got := describe(File_urlfrontier_proto)
	golden := filepath.Join("testdata", "wire.golden")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the wire contract changed:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// describe lists what of a .proto file travels on the wire or names a
// gRPC method.
func describe(fd protoreflect.FileDescriptor) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n", fd.Package())
	for i := range fd.Services().Len() {
		s := fd.Services().Get(i)
		fmt.Fprintf(&b, "service %s\n", s.Name())
		for j := range s.Methods().Len() {
			m := s.Methods().Get(j)
			fmt.Fprintf(&b, "  rpc %s(%s%s) returns (%s%s)\n", m.Name(), stream(m.IsStreamingClient()), m.Input().FullName(),
				stream(m.IsStreamingServer()), m.Output().FullName())
		}
	}
	describeEnums(&b, fd.Enums())
	describeMessages(&b, fd.Messages())
	return b.String()
}

func stream(ok bool) string {
	if ok {
		return "stream "
	}
	return ""
}

func describeMessages(b *strings.Builder, ms protoreflect.MessageDescriptors) {
	for i := range ms.Len() {
		m := ms.Get(i)
		fmt.Fprintf(b, "message %s\n", m.FullName())
		for j := range m.Fields().Len() {
			f := m.Fields().Get(j)
			typ := f.Kind().String()
			switch {
			case f.IsMap():
				typ = fmt.Sprintf("map<%s, %s>", f.MapKey().Kind(), typeName(f.MapValue()))
			case f.Message() != nil || f.Enum() != nil:
				typ = typeName(f)
			}
			extra := ""
			if o := f.ContainingOneof(); o != nil {
				extra = " oneof " + string(o.Name())
				if o.IsSynthetic() {
					extra = " optional"
				}
			}
			fmt.Fprintf(b, "  %d %s %s %s%s\n", f.Number(), f.Name(), f.Cardinality(), typ, extra)
		}
		describeEnums(b, m.Enums())
		describeMessages(b, m.Messages())
	}
}

func typeName(f protoreflect.FieldDescriptor) string {
	switch {
	case f.Message() != nil:
		return string(f.Message().FullName())
	case f.Enum() != nil:
		return string(f.Enum().FullName())
	}
	return f.Kind().String()
}

func describeEnums(b *strings.Builder, es protoreflect.EnumDescriptors) {
	for i := range es.Len() {
		e := es.Get(i)
		fmt.Fprintf(b, "enum %s\n", e.FullName())
		for j := range e.Values().Len() {
			v := e.Values().Get(j)
			fmt.Fprintf(b, "  %d %s\n", v.Number(), v.Name())
		}
	}
}
