package conclude

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestSaidSurvivesJSON: a stored sentence comes back with every value of
// the kind it was said with (an int comes back as int64), nested sentences
// and lists included; a value of another kind is refused, not lost.
func TestSaidSurvivesJSON(t *testing.T) {
	in := say("outer", "S", "text", "I", int64(3), "D", Dec{V: 0.5, Places: 3, Trim: true}, "G", signed(-0.25, 2),
		"P", pval(0.0123), "Sig", Sig{V: 1234.5, Digits: 4}, "Pct", Pct(12.5),
		"Basis", say("inner", "N", int64(30)), "All", []Said{say("a"), say("b", "X", "y")},
		"List", AndList{"m/small", say("recommend.said.label_run", "Run", int64(7))}, "None", []Said{})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Said
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n in  %#v\n out %#v\n via %s", in, out, b)
	}
	if _, err := json.Marshal(say("x", "F", 1.5)); err == nil {
		t.Error("a bare float64 was stored: it would come back without its format")
	}
	var bad Said
	if err := json.Unmarshal([]byte(`{"code":"x","args":[{"name":"A"}]}`), &bad); err == nil {
		t.Error("a value without a kind was read")
	}
}
