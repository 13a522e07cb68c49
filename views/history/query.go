package history

import "net/url"

// query is the form as a query string with key set to value (and no
// page cursor).
func query(f Form, key, value string) string {
	v := url.Values{}
	for k, x := range map[string]string{"model": f.Model, "runtime": f.Runtime, "hardware": f.Hardware, "from": f.From,
		"to": f.To, "sort": f.Sort, "metric": f.Metric, "limit": f.Limit} {
		if x != "" {
			v.Set(k, x)
		}
	}
	if value == "" {
		v.Del(key)
	} else {
		v.Set(key, value)
	}
	return v.Encode()
}
