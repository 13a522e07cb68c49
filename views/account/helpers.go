package account

// boolAttr renders aria-invalid: "true" when bad, nothing otherwise.
func boolAttr(bad bool) string {
	if bad {
		return "true"
	}
	return ""
}
