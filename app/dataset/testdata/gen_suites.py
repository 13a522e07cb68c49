#!/usr/bin/python3
"""Expected prompts for the standard-suite fixtures (suites_expected.json).

Run with Debian's python3-jinja2 (3.1.2):

    /usr/bin/python3 app/dataset/testdata/gen_suites.py

Each prompt is rendered with jinja2 from the doc_to_text of
EleutherAI/lm-evaluation-harness's task configs, assembled the way lm-eval
assembles few-shot contexts: description + for each example
doc_to_text + target_delimiter + target + fewshot_delimiter ("\n\n"), then
the item's doc_to_text.

- MMLU: lm_eval/tasks/mmlu/default/_default_template_yaml's doc_to_text; the
  description "The following are multiple choice questions (with answers)
  about {subject with _ as spaces}.\n\n" (as _generate_configs.py writes it).
- ARC, HellaSwag and TruthfulQA MC1 are asked generatively with the same
  lettered template (Ruckus's choice, documented in app/dataset/suites.go);
  HellaSwag's query and endings go through lm_eval/tasks/hellaswag/utils.py's
  preprocess, written out below.
- MBPP: lm_eval/tasks/mbpp/mbpp.yaml's doc_to_text with every test listed,
  the few-shot target "{code}\n[DONE]" and target delimiter "".

Examples for k shots: the first k+1 items of the item's group (MMLU: its
subject; the other suites: the whole file) in file order without the item
itself when the item is among them, else the first k.
"""
import json
import os
import re

from jinja2 import Environment

here = os.path.dirname(os.path.abspath(__file__))
env = Environment(keep_trailing_newline=True)

MMLU = env.from_string("{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. {{choices[3]}}\nAnswer:")
LETTERED = env.from_string("{{question.strip()}}{% for c in choices %}\n{{ 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[loop.index0] }}. {{c}}{% endfor %}\nAnswer:")
HELLASWAG = env.from_string("{{query}}{% for c in choices %}\n{{ 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[loop.index0] }}. {{c}}{% endfor %}\nAnswer:")
MBPP = env.from_string("You are an expert Python programmer, and here is your task: {{text}} Your code should pass these tests:\n\n{{test_list | join('\n')}}\n[BEGIN]\n")


def preprocess(text):
    # lm_eval/tasks/hellaswag/utils.py
    text = text.strip()
    text = text.replace(" [title]", ". ")
    text = re.sub("\\[.*?\\]", "", text)
    text = text.replace("  ", " ")
    return text


def load(name):
    with open(os.path.join(here, name)) as f:
        return [json.loads(l) for l in f if l.strip()]


def mmlu(d):
    return dict(category=d["subject"], text=MMLU.render(**d), target=" " + "ABCD"[d["answer"]],
                head="The following are multiple choice questions (with answers) about " + " ".join(d["subject"].split("_")) + ".\n\n")


def arc(d):
    if isinstance(d["question"], dict):
        stem = d["question"]["stem"]
        texts = [c["text"] for c in d["question"]["choices"]]
        labels = [c["label"] for c in d["question"]["choices"]]
    else:
        stem, texts, labels = d["question"], d["choices"]["text"], d["choices"]["label"]
    i = labels.index(d["answerKey"])
    return dict(category="", text=LETTERED.render(question=stem, choices=texts), target=" " + "ABCDEFGH"[i], head="")


def hellaswag(d):
    ctx = d["ctx_a"] + " " + d["ctx_b"].capitalize()
    query = preprocess(d["activity_label"] + ": " + ctx)
    choices = [preprocess(e) for e in d["endings"]]
    return dict(category=d["activity_label"], text=HELLASWAG.render(query=query, choices=choices),
                target=" " + "ABCD"[int(d["label"])], head="")


def truthfulqa(d):
    t = d["mc1_targets"]
    return dict(category="", text=LETTERED.render(question=d["question"], choices=t["choices"]),
                target=" " + "ABCDEFGHIJKLM"[t["labels"].index(1)], head="")


def mbpp(d):
    return dict(category="", text=MBPP.render(**d), target=d["code"] + "\n[DONE]", head="")


out = {}
for name, fn in [("mmlu.jsonl", mmlu), ("arc.jsonl", arc), ("arc_hf.jsonl", arc), ("hellaswag.jsonl", hellaswag),
                 ("truthfulqa.jsonl", truthfulqa), ("mbpp.jsonl", mbpp)]:
    docs = [fn(d) for d in load(name)]
    for k in (0, 2):
        prompts = []
        for i, d in enumerate(docs):
            # MMLU's examples come from the item's subject, the others' from the whole file.
            same = [j for j, e in enumerate(docs) if fn is not mmlu or e["category"] == d["category"]]
            first = same[:k + 1]
            ex = [j for j in first if j != i][:k]
            ctx = d["head"] + "".join(docs[j]["text"] + docs[j]["target"] + "\n\n" for j in ex) + d["text"]
            prompts.append({"prompt": ctx, "answer": d["target"].strip() if fn is not mbpp else "", "category": d["category"]})
        out["%s/%d" % (name, k)] = prompts

with open(os.path.join(here, "suites_expected.json"), "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
