package i18n

import (
	"context"
	"time"
)

// dateLayouts are each language's date and date-with-time layouts: ISO
// order in English (unambiguous across the English-speaking world), the
// day-first dotted form in German.
var dateLayouts = map[string][2]string{
	"en": {"2006-01-02", "2006-01-02 15:04"},
	"de": {"02.01.2006", "02.01.2006 15:04"},
}

// Date formats t's calendar day in the language's form, in UTC.
func (l *Localizer) Date(t time.Time) string { return t.UTC().Format(dateLayouts[l.lang.Code][0]) }

// DateTime formats t to the minute in the language's form, in UTC.
func (l *Localizer) DateTime(t time.Time) string {
	return t.UTC().Format(dateLayouts[l.lang.Code][1])
}

// Date formats t's day in the request's language.
func Date(ctx context.Context, t time.Time) string { return From(ctx).Date(t) }

// DateTime formats t to the minute in the request's language.
func DateTime(ctx context.Context, t time.Time) string { return From(ctx).DateTime(t) }
