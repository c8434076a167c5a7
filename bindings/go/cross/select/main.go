// The one-call path's cross-binding driver (tests/select_agreement.rs) for
// the Go binding: reads the cases' JSON file, calls cupel.SelectIndices on
// each and prints "case K: i j ..." (the kept messages' indices, in prompt
// order) or "case K: error" (the message on stderr).
//
//	go run ./cross/select cases.json
//
// A case: max_tokens, messages (key as decimal text), and optionally policy
// and tokenizer. Go strings cannot be null: a null group, call id or kind
// is "", as is an absent policy.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

type message struct {
	Text        string    `json:"text"`
	Kind        *string   `json:"kind"`
	Pinned      *bool     `json:"pinned"`
	Group       *string   `json:"group"`
	ToolCallID  *string   `json:"tool_call_id"`
	ToolCallIDs []*string `json:"tool_call_ids"`
	Key         *string   `json:"key"`
	Timestamp   *int64    `json:"timestamp"`
	Priority    *int64    `json:"priority"`
	Relevance   *float64  `json:"relevance"`
	Score       *float64  `json:"score"`
}

type selectCase struct {
	MaxTokens int64     `json:"max_tokens"`
	Policy    *string   `json:"policy"`
	Tokenizer *string   `json:"tokenizer"`
	Messages  []message `json:"messages"`
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	var file struct {
		Cases []selectCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		log.Fatal(err)
	}
	for k, c := range file.Cases {
		messages := make([]cupel.Message, len(c.Messages))
		for i, m := range c.Messages {
			cm := cupel.Message{Text: m.Text, Kind: str(m.Kind), Group: str(m.Group), ToolCallID: str(m.ToolCallID),
				Priority: m.Priority, Relevance: m.Relevance, Score: m.Score}
			if m.Pinned != nil {
				cm.Pinned = *m.Pinned
			}
			for _, id := range m.ToolCallIDs {
				cm.ToolCallIDs = append(cm.ToolCallIDs, str(id))
			}
			if m.Key != nil {
				if cm.Key, err = strconv.ParseUint(*m.Key, 10, 64); err != nil {
					log.Fatal(err)
				}
			}
			if m.Timestamp != nil {
				cm.Timestamp = time.UnixMilli(*m.Timestamp)
			}
			messages[i] = cm
		}
		kept, err := cupel.SelectIndices(messages, cupel.SelectOptions{MaxTokens: c.MaxTokens,
			Policy: str(c.Policy), Tokenizer: str(c.Tokenizer)})
		var cerr *cupel.Error
		switch {
		case errors.As(err, &cerr):
			fmt.Printf("case %d: error\n", k)
			fmt.Fprintf(os.Stderr, "case %d: %v\n", k, err)
			continue
		case err != nil:
			log.Fatal(err)
		}
		var line strings.Builder
		fmt.Fprintf(&line, "case %d:", k)
		for _, i := range kept {
			fmt.Fprintf(&line, " %d", i)
		}
		fmt.Println(line.String())
	}
}
