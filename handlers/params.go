package handlers

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/dataset"

	"github.com/ruckus/ruckus/app/i18n"
)

// Every id and cursor read from a path or a query goes through the parsers
// below, so each is bounded by its column's type before it reaches SQL:
// row ids are bigint (1 … 2⁶³−1), item indices and index cursors integer
// (0 … 2³¹−1). A value out of bounds is the client's mistake, answered
// with a message naming the parameter, never a database error (a 500).

// maxItemIdx is the largest item index: dataset_items.idx and results.idx
// are PostgreSQL integers.
const maxItemIdx = math.MaxInt32

// badParam is a path or query value that is not what its parameter
// takes: its message names the parameter and what it takes (want, a
// catalogue message), in English for the API and in the reader's language
// on a page (i18n.ErrorText, valid.FromError).
func badParam(name, value string, want i18n.Message) error {
	v := value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return i18n.NewError("param.must_be", "Name", name, "Want", want, "Got", fmt.Sprintf("%q", strings.ToValidUTF8(v, "?")))
}

// parseUint reads a decimal of ASCII digits only (no sign, no spaces, at
// most 19 digits: strconv would also take "+5" and "0x1F" with base 0).
func parseUint(raw string) (uint64, bool) {
	if raw == "" || len(raw) > 19 {
		return 0, false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	return n, err == nil
}

// parseID reads a row id: a whole number from 1 to 2⁶³−1 (bigint).
func parseID(name, raw string) (int64, error) {
	n, ok := parseUint(raw)
	if !ok || n < 1 || n > math.MaxInt64 {
		return 0, badParam(name, raw, i18n.M("param.whole_from", "Min", 1, "Max", int64(math.MaxInt64)))
	}
	return int64(n), nil
}

// parseIdx reads an item index, or a cursor that is one: a whole number
// from 0 to 2³¹−1 (integer).
func parseIdx(name, raw string) (int, error) {
	n, ok := parseUint(raw)
	if !ok || n > maxItemIdx {
		return 0, badParam(name, raw, i18n.M("param.whole_from", "Min", 0, "Max", maxItemIdx))
	}
	return int(n), nil
}

// parseFinite reads a number that is neither NaN nor infinite (strconv
// takes "NaN", "Inf" and "1e999" alike), which JSON cannot carry and every
// range check written as "x < lo || x > hi" lets through.
func parseFinite(name, raw string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, badParam(name, raw, i18n.M("param.finite"))
	}
	return v, nil
}

// maxQueryText bounds a free-text query parameter (a search, a filter).
const maxQueryText = 1000

// checkQueryText refuses a query value PostgreSQL text cannot hold (NUL,
// invalid UTF-8) or that is longer than maxQueryText.
func checkQueryText(name, raw string) error {
	switch {
	case len(raw) > maxQueryText:
		return badParam(name, raw, i18n.M("param.at_most_chars", "Max", maxQueryText))
	case !dataset.IsText(raw):
		return badParam(name, raw, i18n.M("param.text"))
	}
	return nil
}

// idParam reads path parameter name as a row id. A value that cannot be
// an id is answered 404 (no row has it), naming what was looked for and
// the parameter; what is "run", "dataset" and so on.
func idParam(c *fiber.Ctx, name, what string) (int64, error) {
	id, err := parseID(name, c.Params(name))
	if err != nil {
		return 0, noSuch(what, err)
	}
	return id, nil
}

// idxParam reads path parameter name as an item index, answering 404 like
// idParam.
func idxParam(c *fiber.Ctx, name, what string) (int, error) {
	idx, err := parseIdx(name, c.Params(name))
	if err != nil {
		return 0, noSuch(what, err)
	}
	return idx, nil
}

// maxSlug bounds a hardware profile's slug in a path (agents name their
// profiles like "a100-80gb-x2").
const maxSlug = 100

// slugParam reads path parameter name as a hardware profile's slug,
// answering 404 like idParam when no profile could have it.
func slugParam(c *fiber.Ctx, name string) (string, error) {
	raw := c.Params(name)
	if len(raw) > maxSlug {
		return "", noSuch("hardware profile", badParam(name, raw, i18n.M("param.at_most_chars", "Max", maxSlug)))
	}
	if err := checkQueryText(name, raw); err != nil {
		return "", noSuch("hardware profile", err)
	}
	return strings.Clone(raw), nil
}
