// Counts and cuts text in tokens, then chooses from texts by their counts.
package main

import (
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func main() {
	tok, err := cupel.NewTokenizer(cupel.O200kBase) // built in: no download
	if err != nil {
		log.Fatal(err)
	}
	defer tok.Close()

	text := "Hello, world! This is libcupel counting tokens."
	n, err := tok.Count(text)
	if err != nil {
		log.Fatal(err)
	}
	counts, err := tok.CountMany([]string{"hello world", "日本語のテキスト"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "tokens;", counts)

	// Keep both ends in 5 tokens. The offsets are byte offsets into text.
	cut, err := tok.Truncate(text, 5, cupel.KeepBothEnds)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q = text[:%d] + text[%d:], %d tokens\n", cut.Text, cut.HeadEnd, cut.TailStart, cut.Tokens)
	cut, err = tok.Truncate("日本語のテキスト", 2, cupel.KeepHead)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q ends at byte %d, %d tokens\n", cut.Text, cut.HeadEnd, cut.Tokens)

	// Items straight from text: tokens are the counts, contents the texts.
	items, err := cupel.NewItems()
	if err != nil {
		log.Fatal(err)
	}
	defer items.Close()
	if err := items.PushText(tok, "You are a helpful assistant.", 0.9, "SystemPrompt"); err != nil {
		log.Fatal(err)
	}
	err = items.PushTexts(tok,
		[]string{"The meeting moved to Thursday at 10:00.", "Lunch was good.", text},
		[]float64{0.8, 0.1, 0.5}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < items.Len(); i++ {
		item, _ := items.Get(i)
		fmt.Printf("item %d: %2d tokens %q\n", i, item.Tokens, item.Content)
	}
	budget, _ := cupel.NewBudget(30, 30)
	defer budget.Close()
	greedy, _ := cupel.NewGreedy()
	defer greedy.Close()
	chosen, err := cupel.Slice(greedy, items, budget, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("chosen in 30 tokens:", chosen)
}
