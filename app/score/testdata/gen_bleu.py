#!/usr/bin/env python3
"""Writes sacrebleu_bleu.json: BLEU vectors from sacreBLEU itself.

Run with sacreBLEU 2.x importable (PYTHONPATH pointing at its source tree,
or the package installed):

    PYTHONPATH=/path/to/sacrebleu python3 gen_bleu.py > sacrebleu_bleu.json

The committed file was made with no sacreBLEU package at hand (Debian 12
has none): from sacreBLEU's own modules for BLEU as its repository holds
them (metrics/bleu.py, metrics/base.py, metrics/helpers.py, utils.py's
my_log and sum_of_lists, tokenizers/tokenizer_base.py, tokenizer_13a.py,
tokenizer_re.py), which give sacreBLEU's own test expectations here:
48.530827 for the README corpus (test_bleu.py), 8.493 and 0.0 for
test_sentence_bleu.py's two sentences, 0.0 for empty hypotheses.

Sentence scores are sacrebleu.sentence_bleu's defaults (BLEU with
smooth_method='exp', effective_order=True, tokenize='13a',
lowercase=False); corpus scores are sacrebleu.corpus_bleu's (the same with
effective_order=False). Scores are on sacreBLEU's 0-100 scale.
"""
import json
import random
import sys

from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

tok = Tokenizer13a()

TOKENIZER = [
    "Hello, world!",
    "The U.S.A. is big.",
    "It costs $1,000.50 or 3.5% less.",
    "pages 10-20 and 3-4, not a-b nor -5 or 5-",
    "1.-2 1,-2 a.1 1.a .5 5. ,5 5,",
    "&quot;quoted&quot; &amp; &lt;tag&gt; &amp;quot; &amp;lt; &apos;",
    "don't can't o'clock 'quoted'",
    "line one-\nline two\nline three",
    "a <skipped> b <skip<skipped>ped>",
    "tabs\tand\u00a0nbsp\u2003em\u3000ideo\x1cfs\x1dgs\x1ers\x1fus",
    "Ünïcödé façade — “smart quotes” ‘single’ … ellipsis",
    "日本語のテキスト。句読点、あり！",
    "العربية، نص؟",
    "emoji 👍🏽 and ZWJ 👨‍👩‍👧 done.",
    "url https://example.com/a?b=c&d=e#f and mail a@b.co",
    "math: 2+2=4; x^2 {y} [z] (w) <v> |u| ~t~ `s` @r #q *p _o \\n /m",
    "   leading and trailing   ",
    "",
    " ",
    "...",
    "a..b,,c",
    "1...2",
    "--- -- - 1--2 1 - 2",
    "Mr. Smith's 2nd-floor flat, No. 12-B.",
    "x\r\ny\rz",
    "végétarien.Élan,Ärger",
    "١٢٣-٤٥٦ ٣.٥",
]

SENTENCE = [
    ("The dog bit the man.", ["The dog bit the man."]),
    ("The dog bit the man.", ["The dog had bit the man."]),
    ("It wasn't surprising.", ["It was not unexpected.", "No one was surprised."]),
    ("The man had just bitten him.", ["The man bit him first.", "The man had bitten the dog."]),
    # sacreBLEU's test_sentence_bleu.py (#98): 8.493 with exp smoothing
    ("Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;",
     ["producţia de zahăr brut se exprimă în zahăr alb;"]),
    # sacreBLEU's test_sentence_bleu.py (#141): no match at all
    ("this is a cat", ["okay thanks"]),
    ("am I am a character sequence", ["I am a symbol string sequence a a"]),
    ("test", ["a test"]),
    ("a test", ["a test"]),
    ("a little test", ["a test"]),
    ("the", ["the cat sat on the mat"]),
    ("the cat", ["the cat sat on the mat"]),
    ("the cat sat", ["the cat sat on the mat"]),
    ("the cat sat on the mat", ["the cat sat on the mat"]),
    ("the cat sat on the mat today in the sun", ["the cat sat on the mat"]),
    ("the the the the the the the", ["the cat is on the mat"]),
    ("", ["a reference"]),
    ("", ["a reference", ""]),
    ("a hypothesis", ["", "a hypothesis here"]),
    ("same length", ["one", "one two three", "a b"]),
    ("a b c d", ["a b c", "a b c d e"]),
    ("a b c d", ["a b c d e", "a b c"]),
    ("The CAT", ["the cat"]),
    ("&quot;Hi&quot;, she said.", ['"Hi", she said.']),
    ("Pages 10-20.", ["pages 10 - 20 ."]),
    ("3.14 is pi", ["3.14 is pi."]),
    ("Ünïcödé façade", ["ünïcödé façade"]),
    ("日本語 の テキスト", ["日本語 の テキスト"]),
    ("trailing spaces   ", ["trailing spaces"]),
    ("x", ["x"]),
    ("x y", ["y x"]),
    ("one two three four five six", ["one two three four five six seven eight nine ten"]),
]

SENTENCE_ERRORS = [
    ("a hypothesis", [""]),
    ("", [""]),
]

_refs = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
_hyps = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]

# Each corpus: hypotheses and, per hypothesis, its references.
CORPUS = [
    (_hyps, [list(x) for x in zip(*_refs)]),         # sacreBLEU's README: 48.530827
    (["", "", ""], [list(x) for x in zip(*_refs)]),  # empty hypotheses count: 0
    (["the cat", "a dog ran", "x"], [["the cat sat"], ["a dog ran away", "the dog ran"], ["x"]]),
    (["hello"], [["hello"]]),
    (["a b c d e f", "g"], [["a b c d e f"], ["h"]]),
]

ALPHABET = list("abcAB  12-.,'\"&;<>!?/\t\n") + ["&quot;", "&amp;", "<skipped>", "é", "日", "\u00a0", "\x1c", "3.5", "-\n"]


def rand_text(rng, n):
    return "".join(rng.choice(ALPHABET) for _ in range(n))


def stats(score):
    return {"score": score.score, "counts": list(score.counts), "totals": list(score.totals),
            "sys_len": score.sys_len, "ref_len": score.ref_len}


def main():
    rng = random.Random(20261124)
    out = {"source": "sacreBLEU 2.x (sacrebleu/metrics/bleu.py, tokenizers/tokenizer_13a.py, tokenizer_re.py)",
           "tokenizer": [], "sentence": [], "sentence_errors": [], "corpus": []}
    texts = TOKENIZER + [rand_text(rng, rng.randint(0, 40)) for _ in range(300)]
    idempotent = True
    for t in texts:
        once = tok(t)
        if tok(once) != once:
            idempotent = False
        out["tokenizer"].append({"input": t, "tokens": once})
    out["tokenizer_idempotent_on_these"] = idempotent

    sent = BLEU(smooth_method="exp", effective_order=True)
    cases = list(SENTENCE)
    words = ["the", "cat", "a", "dog", "sat", "ran", ".", ",", "on", "mat", "1-2", "&quot;"]
    for _ in range(200):
        hyp = " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        refs = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(rng.randint(1, 3))]
        cases.append((hyp, refs))
    for hyp, refs in cases:
        out["sentence"].append({"hyp": hyp, "refs": refs, **stats(sent.sentence_score(hyp, refs))})
    for hyp, refs in SENTENCE_ERRORS:
        try:
            sent.sentence_score(hyp, refs)
            raise SystemExit("expected sacreBLEU to refuse %r" % (refs,))
        except RuntimeError as e:
            out["sentence_errors"].append({"hyp": hyp, "refs": refs, "error": str(e)})

    corp = BLEU()
    for hyps, refs in CORPUS:
        width = max(len(r) for r in refs)
        streams = [[r[k] if k < len(r) else "" for r in refs] for k in range(width)]
        out["corpus"].append({"hyps": hyps, "refs": refs, **stats(corp.corpus_score(hyps, streams))})
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
