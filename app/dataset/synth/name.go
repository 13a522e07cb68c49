package synth

import "fmt"

// Format is the format a generated dataset is stored under.
const Format = "synthetic"

// DefaultName names a generated dataset after its spec.
func DefaultName(s Spec) string {
	switch s.Kind {
	case KindSharedPrefix:
		return fmt.Sprintf("synthetic shared-prefix %d×%d seed %d", s.Prefixes, s.SuffixesPerPrefix, s.Seed)
	case KindMultiTurn:
		return fmt.Sprintf("synthetic multi-turn %d conversations seed %d", s.Count, s.Seed)
	case KindTrace:
		if s.Trace != "" {
			return "synthetic trace replay"
		}
		return fmt.Sprintf("synthetic trace %d at %g/s seed %d", s.Count, s.Rate, s.Seed)
	}
	return fmt.Sprintf("synthetic %d items seed %d", s.Count, s.Seed)
}
