// Three turns of a conversation through a session: each turn's prompt
// starts with the previous one's, so a provider's prompt cache keeps
// serving it, until the history outgrows the budget and is compacted.
package main

import (
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func at(minute int64) *int64 { v := minute * 60000; return &v }

func main() {
	greedy, err := cupel.NewGreedy()
	if err != nil {
		log.Fatal(err)
	}
	defer greedy.Close()
	chrono, err := cupel.NewChronologicalPlacer()
	if err != nil {
		log.Fatal(err)
	}
	defer chrono.Close()
	pipeline, err := cupel.NewPipeline(cupel.PipelineOptions{Slicer: greedy, Placer: chrono})
	if err != nil {
		log.Fatal(err)
	}
	session, err := cupel.NewSession(pipeline) // its own copy of the pipeline
	pipeline.Close()
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	budget, err := cupel.NewBudget(1000, 1000)
	if err != nil {
		log.Fatal(err)
	}
	defer budget.Close()
	items, err := cupel.NewItems()
	if err != nil {
		log.Fatal(err)
	}
	defer items.Close()

	// Keys name the same message from one turn's list to the next.
	history := []cupel.Item{
		{Tokens: 200, Score: 1, Kind: "SystemPrompt", Content: "You are a build assistant.", Pinned: true,
			Key: 1, Timestamp: at(0)},
		{Tokens: 150, Score: 0.6, Kind: "Message", Content: "user: why does the build fail?", Key: 2, Timestamp: at(1)},
		{Tokens: 250, Score: 0.5, Kind: "Message", Content: "assistant: the linker cannot find -lcupel.",
			Key: 3, Timestamp: at(2)},
	}
	turns := [][]cupel.Item{
		nil,
		{{Tokens: 100, Score: 0.7, Kind: "Message", Content: "user: where does it look?", Key: 4, Timestamp: at(3)}},
		{{Tokens: 300, Score: 0.8, Kind: "Message", Content: "assistant: in target/release; build it first.",
			Key: 5, Timestamp: at(4)}},
	}
	for turn, added := range turns {
		history = append(history, added...)
		items.Clear()
		if err := items.PushItems(history); err != nil {
			log.Fatal(err)
		}
		// This turn's retrieved document changes every turn: volatile, so
		// the session places it last, after the cached prefix.
		doc := cupel.Item{Tokens: 100, Score: 0.9, Kind: "Document", Volatile: true,
			Content: fmt.Sprintf("build log, turn %d", turn+1)}
		if err := items.PushItems([]cupel.Item{doc}); err != nil {
			log.Fatal(err)
		}

		order, err := session.Run(items, budget, nil)
		if err != nil {
			log.Fatal(err)
		}
		action, err := session.LastAction()
		if err != nil {
			log.Fatal(err)
		}
		n, tokens, err := session.StablePrefix()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("turn %d: %-7v %v, stable prefix %d items (%d tokens)\n", turn+1, action, order, n, tokens)
	}
	breakpoints, err := session.Breakpoints()
	if err != nil {
		log.Fatal(err)
	}
	for _, bp := range breakpoints {
		fmt.Printf("cache breakpoint %-6v after %d items (%d tokens)\n", bp.Mark, bp.Items, bp.Tokens)
	}
}
