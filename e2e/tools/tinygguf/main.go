// Command tinygguf writes a tiny llama-architecture GGUF with random
// weights from a fixed seed, through Ollama's own GGUF writer, so that the
// end-to-end tests have a real model for a real runtime without downloading
// one. The model answers gibberish; what it exercises is real: tokenizing,
// prefill and decode in llama.cpp, streaming, usage accounting, batching.
//
//	tinygguf -o tiny.gguf [-seed 1]
//
// The same seed always gives the same file, byte for byte.
//
// Key names and tensor names follow llama.cpp's llama architecture
// (LLM_ARCH_LLAMA): Ollama runs llama GGUFs with its llama.cpp runner, which
// loads them with llama.cpp's loader. The tokenizer is SentencePiece-style
// ("llama"): <unk>, <s>, </s>, the 256 byte tokens <0x00>…<0xFF> that
// llama.cpp falls back to, then text pieces.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ollama/ollama/fs/ggml"
)

// Shape of the model: small enough to load in well under a second and to
// generate hundreds of tokens per second on one CPU core, large enough to
// have every part of a llama block (grouped-query attention, RoPE, SwiGLU).
const (
	vocabSize   = 512
	embd        = 64
	layers      = 2
	heads       = 4
	kvHeads     = 2
	headDim     = embd / heads
	ffn         = 128
	contextLen  = 2048
	rmsEpsilon  = 1e-5
	ropeFreq    = 10000
	firstPiece  = 3 + 256 // after <unk>, <s>, </s> and the byte tokens
	outputScale = 0.5     // spreads the logits: a few pieces clearly win
)

// llama.cpp's token types (llama_token_type).
const (
	tokenNormal  = 1
	tokenUnknown = 2
	tokenControl = 3
	tokenByte    = 6
)

func main() {
	out := flag.String("o", "tiny.gguf", "file to write")
	seed := flag.Uint64("seed", 1, "random seed for the weights")
	flag.Parse()
	if err := write(*out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "tinygguf:", err)
		os.Exit(1)
	}
}

// write writes the model to a temporary file beside path and renames it,
// so that a reader never sees half a file.
func write(path string, seed uint64) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tinygguf-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	kv, ts := model(seed)
	if err := ggml.WriteGGUF(tmp, kv, ts); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := errors.Join(tmp.Chmod(0o644), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// model builds the metadata and the tensors.
func model(seed uint64) (ggml.KV, []*ggml.Tensor) {
	return metadata(), tensors(seed)
}

// metadata is the llama architecture's hyperparameters and the tokenizer.
func metadata() ggml.KV {
	tokens, scores, types := vocabulary()
	return ggml.KV{
		"general.architecture": "llama",
		"general.name":         "ruckus-tiny",
		"general.file_type":    uint32(0), // all F32
		"general.alignment":    uint32(32),

		"llama.vocab_size":                       uint32(vocabSize),
		"llama.context_length":                   uint32(contextLen),
		"llama.embedding_length":                 uint32(embd),
		"llama.block_count":                      uint32(layers),
		"llama.feed_forward_length":              uint32(ffn),
		"llama.attention.head_count":             uint32(heads),
		"llama.attention.head_count_kv":          uint32(kvHeads),
		"llama.attention.layer_norm_rms_epsilon": float32(rmsEpsilon),
		"llama.rope.dimension_count":             uint32(headDim),
		"llama.rope.freq_base":                   float32(ropeFreq),

		"tokenizer.ggml.model":            "llama",
		"tokenizer.ggml.tokens":           tokens,
		"tokenizer.ggml.scores":           scores,
		"tokenizer.ggml.token_type":       types,
		"tokenizer.ggml.unknown_token_id": uint32(0),
		"tokenizer.ggml.bos_token_id":     uint32(1),
		"tokenizer.ggml.eos_token_id":     uint32(2),
		"tokenizer.ggml.add_bos_token":    true,
		"tokenizer.ggml.add_eos_token":    false,
		"tokenizer.ggml.add_space_prefix": true,
		"tokenizer.ggml.padding_token_id": uint32(0),
	}
}

// tensors is the weights, F32, drawn from seed.
func tensors(seed uint64) []*ggml.Tensor {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	normal := func(std float64) func(int) float32 {
		return func(int) float32 { return float32(rng.NormFloat64() * std) }
	}
	ones := func(int) float32 { return 1 }
	// GGUF shapes are ggml's: the first dimension is the row length.
	tensor := func(name string, fill func(int) float32, shape ...uint64) *ggml.Tensor {
		n := uint64(1)
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = fill(i)
		}
		return &ggml.Tensor{Name: name, Kind: uint32(ggml.TensorTypeF32), Shape: shape, WriterTo: f32(data)}
	}
	proj := 1 / math.Sqrt(embd)
	ts := []*ggml.Tensor{tensor("token_embd.weight", normal(1), embd, vocabSize)}
	for i := range layers {
		blk := func(s string) string { return fmt.Sprintf("blk.%d.%s.weight", i, s) }
		ts = append(ts,
			tensor(blk("attn_norm"), ones, embd),
			tensor(blk("attn_q"), normal(proj), embd, heads*headDim),
			tensor(blk("attn_k"), normal(proj), embd, kvHeads*headDim),
			tensor(blk("attn_v"), normal(proj), embd, kvHeads*headDim),
			tensor(blk("attn_output"), normal(proj), heads*headDim, embd),
			tensor(blk("ffn_norm"), ones, embd),
			tensor(blk("ffn_gate"), normal(proj), embd, ffn),
			tensor(blk("ffn_up"), normal(proj), embd, ffn),
			tensor(blk("ffn_down"), normal(1/math.Sqrt(ffn)), ffn, embd),
		)
	}
	// The output rows of the control and byte tokens are zero, so their
	// logit is 0 while the pieces' spread well above it: the model keeps
	// writing text pieces until max_tokens (never </s>, never a lone byte
	// that would be invalid UTF-8 or a NUL).
	outNormal := normal(outputScale)
	ts = append(ts,
		tensor("output_norm.weight", ones, embd),
		tensor("output.weight", func(i int) float32 {
			if i/embd < firstPiece {
				return 0
			}
			return outNormal(i)
		}, embd, vocabSize),
	)
	return ts
}

// vocabulary is <unk>, <s>, </s>, the byte tokens, then pieces — letters,
// digits, punctuation, frequent English letter pairs and words, with and
// without the word-start mark ▁ — scored so that longer pieces win.
func vocabulary() (tokens []string, scores []float32, types []int32) {
	add := func(tok string, score float32, typ int32) {
		tokens = append(tokens, tok)
		scores = append(scores, score)
		types = append(types, typ)
	}
	add("<unk>", 0, tokenUnknown)
	add("<s>", 0, tokenControl)
	add("</s>", 0, tokenControl)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), 0, tokenByte)
	}
	var pieces []string
	seen := map[string]bool{}
	piece := func(p string) {
		if !seen[p] && len(pieces) < vocabSize-firstPiece {
			seen[p] = true
			pieces = append(pieces, p)
		}
	}
	const mark = "▁"
	piece(mark)
	for _, c := range "abcdefghijklmnopqrstuvwxyz" {
		piece(string(c))
		piece(mark + string(c))
	}
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"()-" {
		piece(string(c))
	}
	for _, p := range strings.Fields("th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce") {
		piece(p)
		piece(mark + p)
	}
	for _, w := range strings.Fields(`the of and to in is was for that on as with by he it at from his an were are which this
		be or has had first one their its new after but who not they have her she two been other when there all during
		into school time may years more most only over city some world would where later up such used many can state
		about national out known university united then made what how many number answer question plus minus equals sum`) {
		piece(mark + w)
		if len(pieces) == vocabSize-firstPiece {
			break
		}
	}
	for i := 0; len(pieces) < vocabSize-firstPiece; i++ {
		piece(fmt.Sprintf("%s%d", mark, i))
	}
	// SentencePiece merges the pair whose result scores highest: longer
	// pieces first, then earlier ones.
	for i, p := range pieces {
		add(p, float32(len([]rune(p)))*10-float32(i)/1000, tokenNormal)
	}
	if len(tokens) != vocabSize || len(slices.Compact(slices.Sorted(slices.Values(tokens)))) != vocabSize {
		panic(fmt.Sprintf("tinygguf: vocabulary of %d tokens, want %d distinct", len(tokens), vocabSize))
	}
	return tokens, scores, types
}

// f32 writes float32s in little-endian order, as GGUF stores them.
type f32 []float32

func (d f32) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, 4*len(d))
	for i, v := range d {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	n, err := w.Write(buf)
	return int64(n), err
}
