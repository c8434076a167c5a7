// Trims a conversation to a token budget in one call: the pinned system
// prompt stays, a tool call stays with its result (or both go), and the
// oldest turns go first.
package main

import (
	"errors"
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func main() {
	messages := []cupel.Message{
		{Text: "You are a careful assistant. Answer in one sentence.", Kind: "SystemPrompt", Pinned: true},
		{Text: "user: what is the weather in Paris and in Rome today, and what time is it there?"},
		{Text: "assistant: calling the weather tool", ToolCallID: "call_1"},
		{Text: "tool: Paris 18C, light rain, wind from the west at 20 km/h", Kind: "ToolOutput", ToolCallID: "call_1"},
		{Text: "assistant: calling the clock and the weather tool", ToolCallIDs: []string{"call_2", "call_3"}},
		{Text: "tool: Rome 24C, sunny", Kind: "ToolOutput", ToolCallID: "call_2"},
		{Text: "tool: 14:05 in Paris and in Rome", Kind: "ToolOutput", ToolCallID: "call_3"},
		{Text: "user: and tomorrow?"},
	}
	// A preset name (cupel.PresetNames()), a policy document's text or a
	// *cupel.Pipeline; MaxTokens or a *cupel.Budget.
	kept, err := cupel.Select(messages, cupel.SelectOptions{MaxTokens: 60, Policy: "AgentLoop"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range kept {
		fmt.Println(m.Text)
	}

	// Errors name the message and its field.
	messages[3].Text = ""
	_, err = cupel.Select(messages, cupel.SelectOptions{MaxTokens: 60, Policy: "AgentLoop"})
	fmt.Println(errors.Is(err, cupel.ErrInvalidArgument), err)
}
