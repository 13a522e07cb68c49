// Package synth generates synthetic benchmark datasets: prompts of a chosen
// token length, answers asked for at a chosen length, shared-prefix
// workloads for prefix-cache studies, arrival traces and multi-turn
// conversations — the traffic people size deployments with (GuideLLM's
// synthetic data, vLLM bench's random and prefix-repetition datasets and
// its trace replay).
//
// A Spec is validated (every field bounded, errors naming the field) and
// then expanded into items deterministically: the same Spec, seed included,
// always gives byte-identical items, so a generated dataset can be
// regenerated and compared across runs and machines.
//
// Prompts are built without the model's tokenizer, from space-prefixed
// common English words that byte-level BPE (GPT-2, Llama 3, Qwen, Mistral's
// newer vocabularies) and SentencePiece vocabularies (Llama 2, Mistral 7B)
// keep as one token each, so a prompt of n words is about n tokens on
// those tokenizers. Each item records the lengths it asked for (Meta), so
// results can be set beside the runtime's own usage counts.
package synth
