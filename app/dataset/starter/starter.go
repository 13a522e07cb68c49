// Package starter embeds the starter datasets Ruckus writes itself, seeded
// by `make run` so a newcomer can launch a benchmark at once.
package starter

import "embed"

//go:embed *.jsonl
var files embed.FS

// Dataset is one starter dataset.
type Dataset struct {
	Name string
	File string
	// Scorer is the dataset's default scorer when the one its shape
	// suggests would mislead: a model's summary is never word for word
	// the reference, so exact match scores every real model about 0
	// where ROUGE-L gives the partial credit summaries are judged by.
	Scorer string
}

// All lists the starter datasets in the order they are seeded.
var All = []Dataset{
	{Name: "Starter: encyclopedia summaries", File: "summarization.jsonl", Scorer: "rougeL"},
	{Name: "Starter: chat prompts", File: "chat.jsonl"},
	{Name: "Starter: creative writing", File: "creative.jsonl"},
	{Name: "Starter: safety (harmful and benign requests)", File: "safety.jsonl"},
}

// Open returns the embedded file of a starter dataset.
func Open(d Dataset) ([]byte, error) { return files.ReadFile(d.File) }
