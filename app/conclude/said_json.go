package conclude

import (
	"encoding/json"
	"fmt"
)

// A Said is stored as JSON when a sentence outlives its request (a run's
// regression flags): each value keeps its kind, so the stored sentence is
// worded again, in any reader's language, exactly as it was said.
//
//	{"code":"…","args":[{"name":"N","int":30},{"name":"Basis","said":{…}},…]}
type saidJSON struct {
	Code string    `json:"code"`
	Args []argJSON `json:"args,omitempty"`
}

type argJSON struct {
	Name   string             `json:"name"`
	Str    *string            `json:"str,omitempty"`
	Int    *int64             `json:"int,omitempty"`
	Dec    *Dec               `json:"dec,omitempty"`
	Signed *Signed            `json:"signed,omitempty"`
	P      *float64           `json:"p,omitempty"`
	Sig    *Sig               `json:"sig,omitempty"`
	Pct    *float64           `json:"pct,omitempty"`
	Said   *Said              `json:"said,omitempty"`
	Saids  *[]Said            `json:"saids,omitempty"`
	And    *[]json.RawMessage `json:"and,omitempty"` // values of an AndList, each an argJSON without a name
}

// MarshalJSON writes s with its values' kinds.
func (s Said) MarshalJSON() ([]byte, error) {
	out := saidJSON{Code: s.Code}
	for i := 0; i+1 < len(s.Args); i += 2 {
		name, _ := s.Args[i].(string)
		a, err := encodeArg(s.Args[i+1])
		if err != nil {
			return nil, fmt.Errorf("said %s, %s: %w", s.Code, name, err)
		}
		a.Name = name
		out.Args = append(out.Args, a)
	}
	return json.Marshal(out)
}

func encodeArg(v any) (argJSON, error) {
	var a argJSON
	switch x := v.(type) {
	case string:
		a.Str = &x
	case int:
		n := int64(x)
		a.Int = &n
	case int64:
		a.Int = &x
	case Dec:
		a.Dec = &x
	case Signed:
		a.Signed = &x
	case P:
		f := float64(x)
		a.P = &f
	case Sig:
		a.Sig = &x
	case Pct:
		f := float64(x)
		a.Pct = &f
	case Said:
		a.Said = &x
	case []Said:
		if x == nil {
			x = []Said{}
		}
		a.Saids = &x
	case AndList:
		list := make([]json.RawMessage, len(x))
		for i, item := range x {
			e, err := encodeArg(item)
			if err != nil {
				return a, err
			}
			if list[i], err = json.Marshal(e); err != nil {
				return a, err
			}
		}
		a.And = &list
	default:
		return a, fmt.Errorf("a value of kind %T cannot be stored", v)
	}
	return a, nil
}

// UnmarshalJSON reads a Said that MarshalJSON wrote.
func (s *Said) UnmarshalJSON(b []byte) error {
	var in struct {
		Code string            `json:"code"`
		Args []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = Said{Code: in.Code}
	for _, raw := range in.Args {
		name, v, err := decodeArg(raw)
		if err != nil {
			return fmt.Errorf("said %s: %w", in.Code, err)
		}
		s.Args = append(s.Args, name, v)
	}
	return nil
}

func decodeArg(raw json.RawMessage) (string, any, error) {
	var a argJSON
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", nil, err
	}
	switch {
	case a.Str != nil:
		return a.Name, *a.Str, nil
	case a.Int != nil:
		return a.Name, *a.Int, nil
	case a.Dec != nil:
		return a.Name, *a.Dec, nil
	case a.Signed != nil:
		return a.Name, *a.Signed, nil
	case a.P != nil:
		return a.Name, P(*a.P), nil
	case a.Sig != nil:
		return a.Name, *a.Sig, nil
	case a.Pct != nil:
		return a.Name, Pct(*a.Pct), nil
	case a.Said != nil:
		return a.Name, *a.Said, nil
	case a.Saids != nil:
		return a.Name, *a.Saids, nil
	case a.And != nil:
		list := make(AndList, len(*a.And))
		for i, r := range *a.And {
			_, v, err := decodeArg(r)
			if err != nil {
				return "", nil, err
			}
			list[i] = v
		}
		return a.Name, list, nil
	}
	return "", nil, fmt.Errorf("value %s of %s has no kind", raw, a.Name)
}
