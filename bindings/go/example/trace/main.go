// Tracing a pipeline: a callback receives each stage's span, each
// exclusion and, at the pipeline's end, its own span (with start times and
// durations, to build real spans from).
package main

import (
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func main() {
	pipeline, err := cupel.Preset("Chat")
	if err != nil {
		log.Fatal(err)
	}
	defer pipeline.Close() // lets go of the callback
	err = pipeline.SetTrace(cupel.TraceExclusions, func(e cupel.TraceEvent) {
		switch e.Kind {
		case cupel.TraceStage:
			fmt.Printf("%-24s %d in, %d out\n", e.Name, e.ItemCountIn, e.ItemCountOut)
		case cupel.TraceExclusion:
			fmt.Printf("  %s: item %d (%s, %d tokens) %s\n", e.Name, e.Item, e.ItemKind, e.Tokens, e.ReasonName)
		case cupel.TracePipeline:
			fmt.Printf("%-24s %d of %d items, max %d tokens\n", e.Name, e.ItemCountOut, e.ItemCountIn, e.MaxTokens)
		}
	})
	if err != nil {
		log.Fatal(err)
	}

	messages := []cupel.Message{
		{Text: "You are terse.", Kind: "SystemPrompt", Pinned: true},
		{Text: "user: hello"},
		{Text: "user: hello"},
		{Text: "assistant: hi, how can I help with your order today?"},
		{Text: "user: where is my parcel?"},
	}
	kept, err := cupel.Select(messages, cupel.SelectOptions{MaxTokens: 20, Pipeline: pipeline})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(kept), "messages kept")

	// A panic in the callback never unwinds through C: the run returns it.
	if err := pipeline.SetTrace(cupel.TraceStages, func(cupel.TraceEvent) { panic("exporter down") }); err != nil {
		log.Fatal(err)
	}
	_, err = cupel.Select(messages, cupel.SelectOptions{MaxTokens: 20, Pipeline: pipeline})
	fmt.Println(err)
}
