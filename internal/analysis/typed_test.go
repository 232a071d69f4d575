package analysis

import (
	"reflect"
	"testing"
)

// interfacesIn lists the paths of every interface-typed field reachable
// from t (through structs, pointers, slices, arrays and maps).
func interfacesIn(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	switch t.Kind() {
	case reflect.Interface:
		*out = append(*out, path+" ("+t.String()+")")
	case reflect.Pointer, reflect.Slice, reflect.Array:
		interfacesIn(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		interfacesIn(t.Key(), path+"{key}", seen, out)
		interfacesIn(t.Elem(), path+"{}", seen, out)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("json") == "-" {
				continue
			}
			interfacesIn(f.Type, path+"."+f.Name, seen, out)
		}
	}
}

// TestSummaryIsTyped: summary.json is typed Go values throughout, so no
// stage reads a section back out of an `any` (the report, the study and
// compare consume the same types the analysis fills).
func TestSummaryIsTyped(t *testing.T) {
	var found []string
	interfacesIn(reflect.TypeOf(Summary{}), "Summary", map[reflect.Type]bool{}, &found)
	for _, f := range found {
		t.Errorf("untyped field in summary.json: %s", f)
	}
	// The walk itself finds an interface where there is one.
	var probe []string
	interfacesIn(reflect.TypeOf(struct{ X []map[string]any }{}), "probe", map[reflect.Type]bool{}, &probe)
	if len(probe) != 1 {
		t.Errorf("the walk missed an any field: %v", probe)
	}
}
