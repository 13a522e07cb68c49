package admin

func invalid(errs map[string]string, field string) string {
	if _, bad := errs[field]; bad {
		return "true"
	}
	return ""
}
