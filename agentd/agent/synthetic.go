package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// itemSampling is the sampling for one item: see openai.ItemSampling.
func itemSampling(request []byte, s jobs.Sampling) jobs.Sampling {
	return openai.ItemSampling(request, s)
}

// conversations is what a run needs of its synthetic items: the previous
// turn of every multi-turn item (for the load generator's order), the
// arrival times of a trace, and the answers given so far, which later turns
// carry as assistant messages.
type conversations struct {
	prev     map[int]int
	arrivals map[int]time.Duration

	mu       sync.Mutex
	messages map[int][]json.RawMessage // a turn's own messages
	answers  map[int]string            // a turn's answer, once it succeeded
}

// planItems reads the synthetic metadata of a run's items.
func planItems(items []store.PendingItem) *conversations {
	c := &conversations{prev: map[int]int{}, arrivals: map[int]time.Duration{}, messages: map[int][]json.RawMessage{}, answers: map[int]string{}}
	last := map[string]int{} // conversation → its latest turn seen
	for _, it := range items {
		var item struct {
			Body struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"body"`
			Synthetic *synth.Meta `json:"synthetic"`
		}
		if json.Unmarshal(it.Request, &item) != nil || item.Synthetic == nil {
			continue
		}
		m := item.Synthetic
		if m.ArrivalS != nil && *m.ArrivalS >= 0 && *m.ArrivalS <= synth.MaxTraceSeconds {
			c.arrivals[it.Idx] = time.Duration(*m.ArrivalS * float64(time.Second))
		}
		if m.Conversation == "" {
			continue
		}
		c.messages[it.Idx] = item.Body.Messages
		if p, ok := last[m.Conversation]; ok && m.Turn > 0 {
			c.prev[it.Idx] = p
		}
		last[m.Conversation] = it.Idx
	}
	return c
}

// request puts a turn's history before its own messages: every earlier
// turn's messages, each followed by the answer the model gave it (a turn
// that failed adds no answer). Other items go as they are.
func (c *conversations) request(idx int, request []byte) []byte {
	p, ok := c.prev[idx]
	if !ok {
		return request
	}
	var chain []int
	for ; ok; p, ok = c.prev[p] {
		chain = append(chain, p)
	}
	var history []json.RawMessage
	c.mu.Lock()
	for i := len(chain) - 1; i >= 0; i-- {
		history = append(history, c.messages[chain[i]]...)
		if a, ok := c.answers[chain[i]]; ok {
			msg, _ := json.Marshal(map[string]string{"role": "assistant", "content": a})
			history = append(history, msg)
		}
	}
	c.mu.Unlock()
	var item map[string]json.RawMessage
	var body map[string]json.RawMessage
	if json.Unmarshal(request, &item) != nil || json.Unmarshal(item["body"], &body) != nil {
		return request
	}
	body["messages"], _ = json.Marshal(append(history, c.messages[idx]...))
	item["body"], _ = json.Marshal(body)
	out, err := json.Marshal(item)
	if err != nil {
		return request
	}
	return out
}

// answered keeps a turn's answer for the turns after it; called before the
// load generator releases the next turn.
func (c *conversations) answered(idx int, res jobs.Result) {
	if _, ok := c.messages[idx]; !ok || res.Status != jobs.StatusOK {
		return
	}
	c.mu.Lock()
	c.answers[idx] = res.Output
	c.mu.Unlock()
}

// planConversations plans the run's synthetic items. A resumed run whose
// conversations began in an earlier segment reads those turns and the
// answers they got, so that its later turns carry the whole history.
func (w *runWorker) planConversations(ctx context.Context, runID int64, claim store.ClaimedRun, items []store.PendingItem) (*conversations, error) {
	c := planItems(items)
	if claim.Completed == 0 || len(c.messages) == 0 {
		return c, nil
	}
	done, err := w.st.AnsweredItems(ctx, runID, claim.DatasetID, claim.Total)
	if err != nil {
		return nil, fmt.Errorf("the earlier turns of the run's conversations: %w", err)
	}
	all := make([]store.PendingItem, 0, len(done)+len(items))
	for _, d := range done {
		all = append(all, d.PendingItem)
	}
	all = append(all, items...)
	slices.SortFunc(all, func(a, b store.PendingItem) int { return a.Idx - b.Idx })
	c = planItems(all)
	for _, d := range done {
		if d.OK {
			c.answered(d.Idx, jobs.Result{Status: jobs.StatusOK, Output: d.Output})
		}
	}
	return c, nil
}
