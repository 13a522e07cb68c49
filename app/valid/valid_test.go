package valid_test

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/valid"
)

// goType matches a Go type name such as bench.Manifest; no message may
// carry one.
var goType = regexp.MustCompile(`[a-z]+\.[A-Z][A-Za-z]+`)

func checkShown(t *testing.T, errs valid.Errors) {
	t.Helper()
	for _, fe := range errs {
		if goType.MatchString(fe.Message) || strings.Contains(fe.Message, "type ") || fe.Message == "" {
			t.Errorf("message %q at %q names a Go type or says nothing", fe.Message, fe.Path)
		}
	}
}

// TestCustomRules: each registered rule passes what it should, refuses
// what it should, and says so in words at the field's path.
func TestCustomRules(t *testing.T) {
	t.Parallel()
	v := valid.Default()
	for _, tc := range []struct {
		rule string
		ok   []any
		bad  []any
		msg  string
	}{
		{"notblank", []any{"a", " a "}, []any{"", "  \t"}, "is required"},
		{"text", []any{"", "héllo", "a b"}, []any{"a\x00b", "a\xffb"}, "UTF-8 text without NUL"},
		{"finite", []any{0.0, -1.5, 1e300}, []any{math.NaN(), math.Inf(1), math.Inf(-1)}, "must be a finite number"},
		{"model_name", []any{"m", "Qwen/Qwen2.5-7B-Instruct", "llama3:8b"}, []any{"", "--trust-remote-code", "a b", "a/b/c", strings.Repeat("x", 300)}, "model"},
		{"hardware", []any{"cpu", "h100-80gb-x1", strings.Repeat("h", 64)}, []any{"", strings.Repeat("h", 65), "gpu\x00"}, "hardware profile"},
		{"postgres_url", []any{"postgres://u@h/db", "postgresql://h:5432/db"}, []any{"", "mysql://h/db", "h:5432"}, "PostgreSQL URL"},
		{"listen_addr", []any{":8080", "127.0.0.1:80", "[::1]:9000", ":0"}, []any{"8080", "host", ":99999", ":x"}, "host:port"},
		{"ip_list", []any{"10.0.0.0/8", "127.0.0.1, ::1", "10.0.0.1,"}, []any{"ten", "10.0.0.0/8, nope", "300.1.1.1"}, "CIDR"},
		{"http_url", []any{"http://h", "https://api.example.com/v1"}, []any{"", "ftp://h", "http://", "https://u:p@h/", "/v1"}, "http:// or https://"},
	} {
		for _, x := range tc.ok {
			if errs := v.Var("f", x, tc.rule); errs != nil {
				t.Errorf("%s(%q): refused: %v", tc.rule, x, errs)
			}
		}
		for _, x := range tc.bad {
			errs := v.Var("f", x, tc.rule)
			if len(errs) != 1 || errs[0].Path != "f" || !strings.Contains(errs[0].Message, tc.msg) {
				t.Errorf("%s(%q): errors %v, want one at f saying %q", tc.rule, x, errs, tc.msg)
			}
			checkShown(t, errs)
		}
	}
}

func TestRegisterChoice(t *testing.T) {
	t.Parallel()
	v := valid.New("json").RegisterChoice("runtime", []string{"sim", "vllm"})
	type target struct {
		Runtime string `json:"runtime" validate:"runtime"`
	}
	if errs := v.Struct(target{Runtime: "vllm"}); errs != nil {
		t.Fatalf("vllm refused: %v", errs)
	}
	errs := v.Struct(target{Runtime: "magic"})
	if len(errs) != 1 || errs[0].Path != "runtime" || errs[0].Message != `must be one of sim, vllm (got "magic")` {
		t.Fatalf("errors %v", errs)
	}
}

type inner struct {
	Concurrency int      `json:"concurrency" validate:"min=1,max=4096"`
	Stop        []string `json:"stop" validate:"max=2,dive,required,text"`
	Rate        *float64 `json:"rate,omitempty" validate:"omitnil,finite,gt=0"`
}

type outer struct {
	Name     string  `json:"name" validate:"notblank,max=10"`
	Password string  `json:"password" validate:"min=8"`
	Inner    inner   `json:"load"`
	Targets  []inner `json:"targets" validate:"dive"`
	Hint     int     `json:"hint" validate:"max=3" msg:"pick a hint from 0 to 3"`
	Skipped  string  `json:"-" yaml:"other" validate:"max=1"`
}

// TestStructPathsAndMessages: paths use the JSON names with indices, a
// msg tag replaces the rule's message, a secret is never echoed.
func TestStructPathsAndMessages(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	o := outer{
		Name:     "",
		Password: "hunter2",
		Inner:    inner{Concurrency: 0, Stop: []string{"a", "", "c"}},
		Targets:  []inner{{Concurrency: 1}, {Concurrency: 5000, Stop: []string{""}, Rate: &nan}},
		Hint:     9,
		Skipped:  "xx",
	}
	got := valid.Default().Struct(o).Map()
	want := map[string]string{
		"name":                   "is required",
		"password":               "must be at least 8 characters long",
		"load.concurrency":       "must be at least 1 (got 0)",
		"load.stop":              "must have at most 2 items",
		"targets[1].concurrency": "must be at most 4096 (got 5000)",
		"targets[1].stop[0]":     "is required",
		"targets[1].rate":        "must be a finite number (got NaN)",
		"hint":                   "pick a hint from 0 to 3",
		"other":                  "must be at most 1 character long",
	}
	for p, m := range want {
		if got[p] != m {
			t.Errorf("%s: %q, want %q", p, got[p], m)
		}
	}
	if len(got) != len(want) {
		t.Errorf("errors %v, want %v", got, want)
	}
	for _, m := range got {
		if strings.Contains(m, "hunter2") {
			t.Errorf("a password was echoed: %q", m)
		}
	}
}

func TestErrorsHelpers(t *testing.T) {
	t.Parallel()
	errs := valid.Errors{{Path: "model", Message: "bad"}, {Path: "", Message: "whole"}, {Path: "[2]", Message: "third"}}
	if got := errs.Prefix("scorer_options.judge"); got[0].Path != "scorer_options.judge.model" || got[1].Path != "scorer_options.judge" || got[2].Path != "scorer_options.judge[2]" {
		t.Fatalf("prefixed: %v", got)
	}
	if s := errs.Error(); s != "model: bad; whole; [2]: third" {
		t.Fatalf("Error() = %q", s)
	}
}

// TestMapKeysAreQuotedInPaths: a map's key is quoted in the path, an index
// is not, and a key's own rule (keys … endkeys) names it too.
func TestMapKeysAreQuotedInPaths(t *testing.T) {
	t.Parallel()
	type sim struct {
		Accuracy map[string]float64 `json:"accuracy" validate:"dive,keys,model_name,endkeys,finite,lte=1"`
		Shares   []float64          `json:"shares" validate:"dive,lte=1"`
	}
	got := valid.Default().Struct(sim{Accuracy: map[string]float64{"acme/b": 1.5, "bad name!": 0.5}, Shares: []float64{0, 2}}).Map()
	for _, p := range []string{`accuracy["acme/b"]`, `accuracy["bad name!"]`, "shares[1]"} {
		if got[p] == "" {
			t.Errorf("no error at %s in %v", p, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("errors %v, want 3", got)
	}
}

// TestAnonymousStructs: a body declared in place has its paths and its
// msg tags too.
func TestAnonymousStructs(t *testing.T) {
	t.Parallel()
	price := -2.0
	body := struct {
		Price *float64 `json:"price_per_hour" validate:"omitnil,min=0" msg:"USD per hour"`
	}{&price}
	errs := valid.Default().Struct(&body)
	if len(errs) != 1 || errs[0].Path != "price_per_hour" || errs[0].Message != "USD per hour" {
		t.Fatalf("errors %v", errs)
	}
}
