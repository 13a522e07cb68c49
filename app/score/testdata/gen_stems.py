#!/usr/bin/python3
"""Stem vectors for app/score's Porter stemmer, made by NLTK itself.

Run from the repository root, with Debian 12's python3 and python3-nltk 3.8
(apt-get install -y --no-install-recommends python3-nltk):

    /usr/bin/python3 app/score/testdata/gen_stems.py ../shared/datasets \\
        > app/score/testdata/nltk_porter.tsv

It writes one "word<TAB>stem" line per distinct word, sorted, where stem is
nltk.stem.porter.PorterStemmer().stem(word) in its default NLTK_EXTENSIONS
mode, the stemmer rouge-score's use_stemmer=True uses. The words are

  - every distinct token, as rouge-score's tokenizer makes them (lower
    case, runs of [a-z0-9]), of every string (keys and values) in the
    JSONL files under the given directory (*.jsonl, *.jsonl.gz: GSM8K's
    test split and HumanEval), and
  - the hard cases below: NLTK's irregular forms, its step-1a/1b/1c
    extensions (-ies, -ied, -ying, y after a consonant), step-2 rules
    (-ational, -alli, -bli, -fulli, -logi, ...), -ement/-ment/-ent, -ly,
    double consonants, words of one to four letters, and a grid of roots
    and suffixes.

Words of every length are included, though rouge-score stems only tokens
longer than three characters: Stem must equal NLTK on all of them.
"""

import gzip
import json
import os
import re
import sys

from nltk.stem.porter import PorterStemmer

TOKEN = re.compile(r"[a-z0-9]+")

HARD = """
sky skies dying lying tying news innings inning outings outing cannings canning
howe proceed exceed succeed proceeding exceeding succeeded proceeds exceeds
dies lies ties pies flies cries tries spies skis studies ponies parties
carries babies bodies copies replies supplies applies worries hurries
died lied tied spied cried tried fried dried studied carried copied worried
applied replied supplied hurried married buried varied denied relied
flying crying trying buying playing saying staying studying copying worrying
applying replying supplying hurrying marrying burying varying denying relying
dyeing eyeing toying enjoying annoying destroying employing obeying paying
happy sky spy fly try dry cry by my toy enjoy say day boy key buy guy why
happily quickly really finally generally usually actually easily heavily
probably possibly simply gently fully hopefully carefully beautifully
radically logically basically specifically dramatically typically totally
differently independently frequently apparently consequently evidently
analogously anonymously previously seriously variously obviously
vilely namely solely barely rarely completely definitely entirely
conformably reasonably notably comfortably considerably sensibly possibly
replacement agreement settlement statement movement achievement management
element cement vehement implement supplement complement measurement payment
adjustment department government equipment treatment argument enjoyment
dependent different independent excellent student parent present percent
relational conditional rational operational international educational
sensational national notional optional traditional additional emotional
valenci hesitanci digitizer conformabli radicalli differentli vileli
analogousli vietnamization predication operator feudalism decisiveness
hopefulness callousness formaliti sensitiviti sensibiliti triplicate
formative formalize electriciti electrical hopeful goodness revival
allowance inference airliner gyroscopic adjustable defensible irritant
adoption homologou communism activate angulariti homologous effective
bowdlerize probate rate cease controll roll generalizations oscillators
caresses ponies ties caress cats feed agreed plastered bled motoring sing
conflated troubled sized hopping tanned falling hissing fizzed failing
filing happy
archaeology geology theology philology biology ecology analogy apology
geologi theologi archaeologi biologi ecologi
hopefulli carefulli fulli
abli ably bli able table capable enable stable visible sensible terrible
generalli alli ally rally totalli
ational tional ization ation ator ization organization realization
civilization optimization specialization authorization
multiplication calculation population information education situation
operation question section function position condition solution addition
subtraction division fraction expression equation mention attention
explosion confusion decision revision discussion impression permission
running swimming stopping getting sitting putting cutting hitting
hopped stopped dropped planned shipped skipped trimmed
filled called killed spelled tossed missed passed buzzed fizzed jazzed
hoping taping dining riding writing making taking baking having giving
rated dated mated hated bated sated fated gated
troubling doubling bubbling cabled enabled disabled
sized prized realized organized baptized criticized
gaining raining failing sailing nailing boiling cooling pooling
sowing bowing mowing towing boxing fixing mixing waxing
owing ow ox aw ax ay
eed need feed seed deed weed breed creed speed freed greed
agreed disagreed guaranteed decreed refereed
ed ing ies ied sses ss s y ly
a an as at be by do go he if in is it me my no of on or so to up us we
am ax ox id
the and for are but not you all any can had her was one our out day get
has him his how man new now old see two way who boy did its let put say
she too use ten six
four five nine zero half hour week year cost each many much more most
sixty forty fifty twenty thirty ninety eighty seventy hundred thousand
dollars cents apples oranges eggs pounds ounces miles minutes hours
doubled tripled halved added subtracted multiplied divided remaining
total totals totaled totalled traveling travelling traveled travelled
canceling cancelling labeled labelled modeling modelling
numbers integer integers strings string returns returned returning
elements element sorted sorting sorts lists listed listing
possibilities abilities responsibilities qualities quantities
activities opportunities communities cities citi
series species means mess less loss boss class glass grass
bus gas yes this his was has is us its
sensitivity sensitive sensitiveness positiveness conclusiveness
fulness usefulness carefulness helpfulness
ousness nervousness seriousness consciousness
aliti reality formality totality equality quality
iviti activity passivity
biliti ability stability probability
icate duplicate indicate communicate
ative native relative creative
alize normalize finalize realize
iciti electricity simplicity publicity
ical technical logical typical physical
yy yyy yyyy yyyyy syzygy toy toys toyed toying boys buys
quay quays sayings player players layer prayer
eying preying praying straying spraying
eyes eye eyed dye dyed dyes rye
a1b2 h2o 100s 1990s 4th 3rd 2nd 1st abc123 x86 utf8 md5sum
"""

# Roots and suffixes crossed into a grid of made-up and real words, so that
# every rule sees stems of measure 0, 1 and 2 and of each ending class.
ROOTS = """
b tr ee tree y by ivy oat oaten orrer privat troubl hop fil fail
cond relat rat val hesit digit conform radic differ vil analog vietnam
predic oper feud decis hope call formal sensit sensib tripl electr good
reviv allow infer airlin gyroscop adjust defens irrit replac depend adopt
homolog commun activ angular effect bowdler prob cont geo theo archaeo
bi sp fl st cr happ enj pl
""".split()

SUFFIXES = """
s es ies ied ed ing y ly ely ably ibly ally ully
ational tional enci anci izer abli bli alli entli eli ousli ization ation
ator alism iveness fulness ousness aliti iviti biliti fulli logi
icate ative alize iciti ical ful ness
al ance ence er ic able ible ant ement ment ent ion sion tion ou ism ate
iti ous ive ize e ll
""".split()


def words_in(value):
    """Every string under a decoded JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from words_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from words_in(v)


def dataset_tokens(root):
    tokens = set()
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            if name.endswith(".jsonl.gz"):
                f = gzip.open(path, "rt", encoding="utf-8")
            elif name.endswith(".jsonl"):
                f = open(path, encoding="utf-8")
            else:
                continue
            with f:
                for line in f:
                    if line.strip():
                        for s in words_in(json.loads(line)):
                            # rouge-score's tokenize: lower(), then [a-z0-9]+
                            tokens.update(TOKEN.findall(s.lower()))
    return tokens


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_stems.py DATASETS_DIR > nltk_porter.tsv")
    words = dataset_tokens(sys.argv[1])
    n_data = len(words)
    hard = set(HARD.split())
    hard.update(r + s for r in ROOTS for s in SUFFIXES)
    words |= hard
    stemmer = PorterStemmer()  # default mode: NLTK_EXTENSIONS
    assert stemmer.mode == PorterStemmer.NLTK_EXTENSIONS
    out = sys.stdout
    for w in sorted(words):
        assert TOKEN.fullmatch(w), w
        out.write("%s\t%s\n" % (w, stemmer.stem(w)))
    print(
        "%d words: %d from the datasets, %d hard cases (%d of them not in the datasets)"
        % (len(words), n_data, len(hard), len(words) - n_data),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
