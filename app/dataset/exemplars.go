package dataset

import "github.com/ruckus/ruckus/app/i18n"

// Fixed exemplars: a few-shot prompt whose solved examples are always the
// same published ones, not drawn from the dataset (chain-of-thought
// prompting). The sets are lm-evaluation-harness's, word for word.

// Exemplar is one solved example of a fixed set.
type Exemplar struct {
	Question, Target string
}

// ExemplarSet is a task's fixed examples and how its prompts are written:
// each example "{Prefix}{question}{Infix}" then the target delimiter " "
// and its target, examples separated by "\n\n" (lm-eval's defaults), then
// the item's "{Prefix}{question}{Infix}"; Stop is its generation stops.
type ExemplarSet struct {
	Name          string
	Prefix, Infix string
	Examples      []Exemplar
	Stop          []string
}

// ExemplarSets lists the sets a manifest may name (fewshot.exemplars).
func ExemplarSets() []ExemplarSet {
	return []ExemplarSet{gsm8kCoT()}
}

// Exemplars is the set called name.
func Exemplars(name string) (ExemplarSet, bool) {
	for _, s := range ExemplarSets() {
		if s.Name == name {
			return s, true
		}
	}
	return ExemplarSet{}, false
}

// gsm8kCoT is lm-eval's gsm8k_cot (tasks/gsm8k/gsm8k-cot.yaml, version
// 3.0): doc_to_text "Q: {{question}}\nA:", the 8 chain-of-thought
// exemplars of Wei et al. (2022) as its fewshot_config.samples, taken
// first_n, and its stops.
func gsm8kCoT() ExemplarSet {
	return ExemplarSet{Name: "gsm8k-cot", Prefix: "Q: ", Infix: "\nA:", Stop: []string{"Q:", "</s>", "<|im_end|>"}, Examples: []Exemplar{
		{Question: "There are 15 trees in the grove. Grove workers will plant trees in the grove today. After they are done, there will be 21 trees. How many trees did the grove workers plant today?",
			Target: "There are 15 trees originally. Then there were 21 trees after some more were planted. So there must have been 21 - 15 = 6. The answer is 6."},
		{Question: "If there are 3 cars in the parking lot and 2 more cars arrive, how many cars are in the parking lot?",
			Target: "There are originally 3 cars. 2 more cars arrive. 3 + 2 = 5. The answer is 5."},
		{Question: "Leah had 32 chocolates and her sister had 42. If they ate 35, how many pieces do they have left in total?",
			Target: "Originally, Leah had 32 chocolates. Her sister had 42. So in total they had 32 + 42 = 74. After eating 35, they had 74 - 35 = 39. The answer is 39."},
		{Question: "Jason had 20 lollipops. He gave Denny some lollipops. Now Jason has 12 lollipops. How many lollipops did Jason give to Denny?",
			Target: "Jason started with 20 lollipops. Then he had 12 after giving some to Denny. So he gave Denny 20 - 12 = 8. The answer is 8."},
		{Question: "Shawn has five toys. For Christmas, he got two toys each from his mom and dad. How many toys does he have now?",
			Target: "Shawn started with 5 toys. If he got 2 toys each from his mom and dad, then that is 4 more toys. 5 + 4 = 9. The answer is 9."},
		{Question: "There were nine computers in the server room. Five more computers were installed each day, from monday to thursday. How many computers are now in the server room?",
			Target: "There were originally 9 computers. For each of 4 days, 5 more computers were added. So 5 * 4 = 20 computers were added. 9 + 20 is 29. The answer is 29."},
		{Question: "Michael had 58 golf balls. On tuesday, he lost 23 golf balls. On wednesday, he lost 2 more. How many golf balls did he have at the end of wednesday?",
			Target: "Michael started with 58 golf balls. After losing 23 on tuesday, he had 58 - 23 = 35. After losing 2 more, he had 35 - 2 = 33 golf balls. The answer is 33."},
		{Question: "Olivia has $23. She bought five bagels for $3 each. How much money does she have left?",
			Target: "Olivia had 23 dollars. 5 bagels for 3 dollars each will be 5 x 3 = 15 dollars. So she has 23 - 15 dollars left. 23 - 15 is 8. The answer is 8."},
	}}
}

// ExemplarRequest builds an item's request with the first k examples of
// set before its question (the item's Shot.Question), as lm-eval's
// fewshot_context writes them; sent as one chat message with the set's
// stops (docs/quality.md#few-shot-on-gsm8k-and-on-any-prompt-with-a-reference).
func ExemplarRequest(set ExemplarSet, item Shot, k int) []byte {
	examples := make([]Shot, 0, k)
	for _, e := range set.Examples[:min(k, len(set.Examples))] {
		examples = append(examples, Shot{Query: set.Prefix + e.Question + set.Infix, Answer: " " + e.Target})
	}
	return FewShotRequest(Shot{Query: set.Prefix + item.Question + set.Infix, Stop: set.Stop}, examples)
}

// withExemplars gives the item just parsed its request with the upload's
// fixed examples; a file whose items keep no bare question is refused.
func (p *Parser) withExemplars(it Item) (Item, bool) {
	if p.lastShot == nil || p.lastShot.Question == "" {
		p.fileError(i18n.M("dataset_err.exemplars_need_question", "A", p.exemplars.Name, "B", p.format))
		p.done = true
		return Item{}, false
	}
	it.Request = ExemplarRequest(*p.exemplars, *p.lastShot, len(p.exemplars.Examples))
	return it, true
}
