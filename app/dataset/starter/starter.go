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
}

// All lists the starter datasets in the order they are seeded.
var All = []Dataset{
	{Name: "Starter: encyclopedia summaries", File: "summarization.jsonl"},
	{Name: "Starter: chat prompts", File: "chat.jsonl"},
	{Name: "Starter: creative writing", File: "creative.jsonl"},
	{Name: "Starter: safety (harmful and benign requests)", File: "safety.jsonl"},
}

// Open returns the embedded file of a starter dataset.
func Open(d Dataset) ([]byte, error) { return files.ReadFile(d.File) }
