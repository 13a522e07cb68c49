package home

import (
	"fmt"
	"strings"
	"time"
)

func greeting(name string) string {
	if name == "" {
		return ""
	}
	return ", " + name
}

func joined(s []string) string { return strings.Join(s, ", ") }

func ago(d time.Duration) string {
	switch {
	case d < 2*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}
