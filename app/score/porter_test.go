package score

import "testing"

// Examples from Porter's paper, step by step.
func TestPorterStem(t *testing.T) {
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
		"conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan", "falling": "fall",
		"hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file", "happy": "happi",
		"relational": "relat", "conditional": "condit", "rational": "ration", "valenci": "valenc", "hesitanci": "hesit",
		"digitizer": "digit", "conformabli": "conform", "radicalli": "radic", "differentli": "differ", "vileli": "vile",
		"analogousli": "analog", "vietnamization": "vietnam", "predication": "predic", "operator": "oper",
		"feudalism": "feudal", "decisiveness": "decis", "hopefulness": "hope", "callousness": "callous",
		"formaliti": "formal", "sensitiviti": "sensit", "sensibiliti": "sensibl",
		"triplicate": "triplic", "formative": "form", "formalize": "formal", "electriciti": "electr", "electrical": "electr",
		"hopeful": "hope", "goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer",
		"airliner": "airlin", "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
		"replacement": "replac", "adjustment": "adjust", "dependent": "depend", "adoption": "adopt", "homologou": "homolog",
		"communism": "commun", "activate": "activ", "angulariti": "angular", "homologous": "homolog", "effective": "effect",
		"bowdlerize": "bowdler", "probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
		"generalizations": "gener", "oscillators": "oscil",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// With stemming, "running dogs" and "the dog runs" share "run" and "dog":
// rouge1 F1 = 2·(1·2/3)/(1+2/3) = 0.8; without, no token is shared
// ("dogs" ≠ "dog", "running" ≠ "runs"): 0.
func TestRougeStemming(t *testing.T) {
	stem, _ := ByName("rouge1-stem")
	plain, _ := ByName("rouge1")
	if got := stem("running dogs", []string{"the dog runs"}); got < 0.7999 || got > 0.8001 {
		t.Errorf("stemmed rouge1 %v, want 0.8", got)
	}
	if got := plain("running dogs", []string{"the dog runs"}); got != 0 {
		t.Errorf("plain rouge1 %v, want 0", got)
	}
}
