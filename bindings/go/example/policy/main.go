// A context policy kept as data: read from the host's settings file (the
// .NET Cupel policy format, plus libcupel's keys), used for the one-call
// path, and written back with every setting.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

const settings = `{
  "policy": {
    "name": "support-bot",
    "scorers": [
      {"type": "recency", "weight": 2},
      {"type": "kind", "weight": 1,
       "kindWeights": {"SystemPrompt": 1, "Document": 0.7, "Message": 0.3}}
    ],
    "quotas": [{"kind": "Document", "maxPercent": 40}],
    "tokenizer": "o200k_base"
  },
  "budget": {"maxTokens": 80, "targetTokens": 60, "outputReserve": 20}
}`

func main() {
	var doc struct{ Policy, Budget json.RawMessage }
	if err := json.Unmarshal([]byte(settings), &doc); err != nil {
		log.Fatal(err)
	}
	pipeline, err := cupel.PipelineFromJSON(doc.Policy)
	if err != nil {
		log.Fatal(err)
	}
	defer pipeline.Close()
	budget, err := cupel.BudgetFromJSON(doc.Budget)
	if err != nil {
		log.Fatal(err)
	}
	defer budget.Close()

	messages := []cupel.Message{
		{Text: "You answer questions about the Acme router.", Kind: "SystemPrompt", Pinned: true},
		{Text: "Manual, chapter 2: resetting the router to its factory settings.", Kind: "Document"},
		{Text: "Manual, chapter 5: updating the firmware over the web interface.", Kind: "Document"},
		{Text: "user: my router keeps dropping the connection"},
		{Text: "assistant: which firmware version does it run?"},
		{Text: "user: 2.1, and the lights blink orange"},
	}
	kept, err := cupel.Select(messages, cupel.SelectOptions{Budget: budget, Pipeline: pipeline})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range kept {
		fmt.Println(m.Text)
	}

	// Written back: every setting, keys in alphabetical order.
	text, err := pipeline.JSON()
	if err != nil {
		log.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(text)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(compact.String())

	// A broken rule names its JSON path.
	_, err = cupel.PipelineFromJSON([]byte(`{"scorers": [{"type": "recency", "weight": -0.5}]}`))
	fmt.Println(err)
}
