package account

func invalid(errs map[string]string, field string) string {
	_, bad := errs[field]
	return boolAttr(bad)
}

// boolAttr renders aria-invalid: "true" when bad, nothing otherwise.
func boolAttr(bad bool) string {
	if bad {
		return "true"
	}
	return ""
}
