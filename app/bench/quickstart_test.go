package bench

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeQuickStart(t *testing.T) {
	for _, tc := range []struct {
		in        string
		model     Ref
		dataset   Ref
		name      string
		errorPath string
	}{
		{in: `{"model_id":"allenai/OLMo-2-1124-7B-Instruct","dataset_id":"batch_5k"}`, model: Ref{Name: "allenai/OLMo-2-1124-7B-Instruct"}, dataset: Ref{Name: "batch_5k"}},
		{in: `{"model_id":3,"dataset_id":9223372036854775807,"name":"n"}`, model: Ref{ID: 3}, dataset: Ref{ID: 9223372036854775807}, name: "n"},
		{in: `{"model_id":3e0,"dataset_id":1}`, model: Ref{ID: 3}, dataset: Ref{ID: 1}},
		{in: `{"model_id":9223372036854775808,"dataset_id":1}`, errorPath: "model_id"},
		{in: `{"model_id":0,"dataset_id":1}`, errorPath: "model_id"},
		{in: `{"model_id":null,"dataset_id":1}`, errorPath: "model_id"},
		{in: `{"model_id":true,"dataset_id":1}`, errorPath: "model_id"},
		{in: `{"model_id":"m","dataset_id":"   "}`, errorPath: "dataset_id"},
		{in: `{"model_id":"m","dataset_id":"` + strings.Repeat("d", 201) + `"}`, errorPath: "dataset_id"},
		{in: `{"model_id":"m","dataset_id":1,"name":"` + strings.Repeat("é", 101) + `"}`, errorPath: "name"},
		{in: `{"model_id":"m","dataset_id":1}{}`, errorPath: ""},
		{in: `{"model_id":"m","dataset_id":1,"targets":[]}`, errorPath: "targets"},
	} {
		qs, err := DecodeQuickStart(strings.NewReader(tc.in))
		if tc.errorPath != "" || strings.HasSuffix(tc.in, "{}") {
			var errs Errors
			if !errors.As(err, &errs) || errs[0].Path != tc.errorPath || errs[0].Message == "" {
				t.Errorf("%s: %v, want an error at %q", tc.in, err, tc.errorPath)
			}
			continue
		}
		if err != nil || qs.Model != tc.model || qs.Dataset != tc.dataset || qs.Name != tc.name {
			t.Errorf("%s: %+v %v", tc.in, qs, err)
		}
	}
	if !IsQuickStart([]byte(` {"model_id": 1}`)) || IsQuickStart([]byte("name: x\nmodel_id: 1\n")) || IsQuickStart([]byte(`{"name":"x","targets":[]}`)) {
		t.Error("IsQuickStart tells a quick start from a manifest wrongly")
	}
}

// FuzzDecodeQuickStart: whatever the body, DecodeQuickStart refuses it
// with messages naming fields, or returns a model and a dataset each with
// an id from 1 or a name of 1 to 200 bytes of UTF-8 without NUL, and a
// name within the same bounds.
func FuzzDecodeQuickStart(f *testing.F) {
	for _, s := range []string{`{"model_id":"a/b","dataset_id":1}`, `{"model_id":1.5,"dataset_id":-1}`, `{"model_id":"\u0000","dataset_id":"\ud800"}`,
		`{"model_id":1e300,"dataset_id":1}`, `{"model_id":"m","dataset_id":1,"name":"x"}`, `{"model_id":{},"dataset_id":[]}`, `{`, ``, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := DecodeQuickStart(strings.NewReader(in))
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("%q: an error that is not field errors: %v", in, err)
			}
			for _, fe := range errs {
				if fe.Message == "" || strings.Contains(fe.Message, "bench.") || strings.Contains(fe.Message, "reflect") {
					t.Fatalf("%q: message %q at %q", in, fe.Message, fe.Path)
				}
			}
			return
		}
		for _, r := range []Ref{qs.Model, qs.Dataset} {
			if r.ID < 1 && (strings.TrimSpace(r.Name) == "" || len(r.Name) > 200 || !utf8.ValidString(r.Name) || strings.ContainsRune(r.Name, 0)) {
				t.Fatalf("%q: accepted ref %+v", in, r)
			}
		}
		if len(qs.Name) > 200 || !utf8.ValidString(qs.Name) || strings.ContainsRune(qs.Name, 0) {
			t.Fatalf("%q: accepted name %q", in, qs.Name)
		}
	})
}
