package cupel_test

import (
	"fmt"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

// The one-call path: the pinned system prompt stays, the tool call goes
// with its result, the oldest turn goes first.
func ExampleSelect() {
	messages := []cupel.Message{
		{Text: "You are terse.", Kind: "SystemPrompt", Pinned: true},
		{Text: "user: what is 2 + 2? And what is the capital of France?"},
		{Text: "assistant: calling the calculator", ToolCallID: "c1"},
		{Text: "tool: 4", Kind: "ToolOutput", ToolCallID: "c1"},
		{Text: "user: thanks"},
	}
	kept, err := cupel.Select(messages, cupel.SelectOptions{MaxTokens: 20, Policy: "Chat"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range kept {
		fmt.Println(m.Text)
	}
	// Output:
	// You are terse.
	// assistant: calling the calculator
	// tool: 4
	// user: thanks
}

// Tracing the stages of a run through a callback.
func ExamplePipeline_SetTrace() {
	pipeline, err := cupel.Preset("Chat")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pipeline.Close()
	err = pipeline.SetTrace(cupel.TraceStages, func(e cupel.TraceEvent) {
		fmt.Println(e.Name, e.ItemCountIn, e.ItemCountOut)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	messages := []cupel.Message{{Text: "hello"}, {Text: "world"}, {Text: "hello"}}
	if _, err := cupel.Select(messages, cupel.SelectOptions{MaxTokens: 10, Pipeline: pipeline}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// cupel.stage.classify 3 3
	// cupel.stage.score 3 3
	// cupel.stage.deduplicate 3 2
	// cupel.stage.slice 2 2
	// cupel.stage.place 2 2
	// cupel.pipeline 3 2
}
