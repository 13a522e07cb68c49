package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// JudgeIdentity is what an LLM judge's quality depends on besides the
// scorer's name: the judge model, the mode (single or pairwise), the
// rubric and its prompt template, and the rating scale.
type JudgeIdentity struct {
	Model    string
	Mode     string
	Rubric   string
	Template string
	ScaleMin int
	ScaleMax int
}

// ScorerIdentity is the key under which a run's quality is comparable
// with another's (docs/concepts.md#comparability-and-noise): the
// scorer's name followed by its options as canonical JSON (keys sorted,
// no insignificant space, no HTML escaping), e.g. `rougeL` or
// `regex{"pattern":"#### (\\d+)"}`. Options that are absent, null or {}
// add nothing. For the LLM judge, j (when not nil) stands for the options:
// `judge{"mode":"single","model":"…","rubric":"correctness","scale":"1-10","template":"sha256:…"}`,
// the template by the first 12 hex digits of its SHA-256 so the key stays
// readable. An unscored run (scorer "") has the identity "".
//
// Two runs' qualities may be ranked or tested against each other only
// when their identities are equal; the same inputs always give the same
// key.
func ScorerIdentity(scorer string, options json.RawMessage, j *JudgeIdentity) string {
	if scorer == "" {
		return ""
	}
	if j != nil {
		sum := sha256.Sum256([]byte(j.Template))
		m := map[string]any{"mode": j.Mode, "model": j.Model, "rubric": j.Rubric,
			"scale": fmt.Sprintf("%d-%d", j.ScaleMin, j.ScaleMax), "template": "sha256:" + hex.EncodeToString(sum[:6])}
		return scorer + canonicalJSON(m)
	}
	trimmed := bytes.TrimSpace(options)
	if len(trimmed) == 0 {
		return scorer
	}
	d := json.NewDecoder(bytes.NewReader(trimmed))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		// Not JSON (never stored so): the bytes as they are, compacted
		// where possible, still tell identities apart.
		var b bytes.Buffer
		if json.Compact(&b, trimmed) != nil {
			return scorer + string(trimmed)
		}
		return scorer + b.String()
	}
	if m, ok := v.(map[string]any); v == nil || ok && len(m) == 0 {
		return scorer
	}
	return scorer + canonicalJSON(v)
}

// FewShotKey is what a run's few-shot setting adds to its comparability
// keys: "" for k = 0 (the dataset's own prompts), else " 5-shot seed=1234".
// BaseScorerKey is scorer identity key without its few-shot part: the
// scorer a k-shot run and a 0-shot run share (the variants view sets
// them side by side, k being what it compares).
func BaseScorerKey(key string) string {
	if m := fewShotSuffix.FindStringIndex(key); m != nil {
		return key[:m[0]]
	}
	return key
}

// fewShotSuffix is what FewShotKey appends.
var fewShotSuffix = regexp.MustCompile(` [0-9]+-shot (seed=-?[0-9]+|[a-z0-9-]+)$`)

// FewShotKey is the few-shot part of a run's keys: " 5-shot seed=1234"
// for drawn examples, " 8-shot gsm8k-cot" for a fixed set, "" for none.
func FewShotKey(k int, seed int64, exemplars string) string {
	switch {
	case k <= 0:
		return ""
	case exemplars != "":
		return fmt.Sprintf(" %d-shot %s", k, exemplars)
	}
	return fmt.Sprintf(" %d-shot seed=%d", k, seed)
}

// canonicalJSON encodes v with its object keys sorted (encoding/json
// sorts map keys) and without HTML escaping.
func canonicalJSON(v any) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// JudgeKey is what a judge scorer identity ("judge{…}") names: the
// judge's mode, model, rubric and scale ("1-10").
type JudgeKey struct{ Mode, Model, Rubric, Scale string }

// ParseJudgeKey reads a judge scorer identity; ok is false for any other
// identity, and Model is empty for a judge identity that does not name its
// judge. Pages word it in the reader's language (layout.DescribeScorer).
func ParseJudgeKey(key string) (j JudgeKey, ok bool) {
	rest, ok := strings.CutPrefix(key, "judge{")
	if !ok {
		return j, false
	}
	if json.Unmarshal([]byte("{"+rest), &j) != nil {
		return JudgeKey{}, true
	}
	return j, true
}
