package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrTooLarge is returned when a value is longer than the database keeps
// (jobs/limits.go, migration 0024) or a figure is out of its bounds
// (migration 0041): the error says which value and its bounds.
var ErrTooLarge = errors.New("a value is longer than the database keeps")

// tooLarge names, for each length and bounds constraint of migrations 0024
// and 0041, what it bounds.
var tooLarge = map[string]string{
	"runs_error_length":                  "a run's error is at most 64 KiB",
	"runs_stopped_by_length":             "a run's stopped_by is at most 256 bytes",
	"runs_mode_length":                   "a run's mode is at most 256 bytes",
	"runs_runtime_log_length":            "a run's runtime log is at most 256 KiB (its tail)",
	"runs_summary_length":                "a run's summary is at most 1 MiB of JSON",
	"runs_gpu_summary_length":            "a run's GPU summary is at most 64 KiB of JSON",
	"results_output_length":              "a result's output is at most 1 MiB",
	"results_error_length":               "a result's error is at most 64 KiB",
	"results_custom_id_length":           "a result's custom_id is at most 1024 bytes",
	"results_short_text_length":          "a result's finish_reason, request_id, error_class and phase are at most 256 bytes each",
	"results_itl_gaps_length":            "a result has at most 1,048,576 inter-token gaps",
	"run_events_kind_length":             "a run event's kind is at most 64 bytes",
	"run_events_message_length":          "a run event's message is at most 4 KiB",
	"agents_host_length":                 "an agent's host is at most 256 bytes",
	"agents_version_length":              "an agent's version is at most 256 bytes",
	"agents_runtimes_length":             "an agent has at most 16 runtimes, 1 KiB of names together",
	"agents_declared_runtimes_length":    "an agent declares at most 16 runtimes, 1 KiB of names together",
	"agents_declared_profile_length":     "an agent's declared hardware profile is at most 256 bytes",
	"agents_capabilities_length":         "an agent's capabilities are at most 64 KiB of JSON",
	"hardware_profiles_slug_length":      "a hardware profile's slug is at most 256 bytes",
	"hardware_profiles_gpu_name_length":  "a hardware profile's GPU name is at most 256 bytes",
	"ruckus_river_job_args_length":       "a job's args are at most 1 MiB of JSON",
	"ruckus_river_job_metadata_length":   "a job's metadata is at most 256 KiB of JSON",
	"ruckus_river_job_errors_length":     "a job's errors are at most 1 MiB of JSON",
	"ruckus_river_queue_metadata_length": "a queue's metadata is at most 64 KiB of JSON",
	"runs_node_summary_length":           "a run's node summary is at most 64 KiB of JSON",
	"run_samples_node_bounds":            "a sample's CPU shares are within 0–100 % and its memory within 0–2^60 bytes",
	"run_samples_gpu_bounds":             "a sample's GPU utilisation is within 0–100 %, its power, memory, energy and runtime figures within their bounds",
	"results_timings_bounds":             "a result's times (ttft_ms, e2e_ms, tpot_ms, itl_*_ms) are finite, from 0 to 10^10 ms, and its sent_at a finite time",
	"results_counts_bounds":              "a result's token counts, content events and inter-token gaps are not negative, and each event carries at least one token",
	"runs_rates_bounds":                  "a run's measured seconds, throughput, requests/s, ETA and load time are finite and not negative",
}

// tooLargeErr is ErrTooLarge with what was too long, for a check
// violation of one of migrations 0024 and 0041 constraints; nil otherwise.
func tooLargeErr(pgErr *pgconn.PgError) error {
	if pgErr.Code != "23514" {
		return nil
	}
	what, ok := tooLarge[pgErr.ConstraintName]
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrTooLarge, what)
}
