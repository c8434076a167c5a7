// Items that shrink instead of vanish: a tool output goes in as its
// placeholder, a long document cut to the tokens left.
package main

import (
	"fmt"
	"log"
	"strings"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func main() {
	tok, err := cupel.NewTokenizer(cupel.O200kBase)
	if err != nil {
		log.Fatal(err)
	}
	defer tok.Close()
	var doc strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&doc, "Line %d: the quick brown fox jumps over the lazy dog.\n", i)
	}

	items, err := cupel.NewItems()
	if err != nil {
		log.Fatal(err)
	}
	defer items.Close()
	err = items.PushItems([]cupel.Item{
		{Tokens: 40, Score: 0.9, Kind: "Message", Content: "What failed in the last build?"},
		// 9000 tokens never fit; its placeholder (variant 1) keeps a tenth
		// of its score in 12 tokens.
		{Tokens: 9000, Score: 0.8, Kind: "ToolOutput", Content: "(the build log)",
			Variants: []cupel.Variant{{Tokens: 12, Value: 0.1, Content: "[output cleared: 9,000 tokens]"}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The document: cut to what is left, keeping its head (50 tokens at least).
	if err := items.PushText(tok, doc.String(), 0.6, "Document"); err != nil {
		log.Fatal(err)
	}
	if err := items.SetTruncatable(2, cupel.KeepHead, 50); err != nil {
		log.Fatal(err)
	}

	budget, _ := cupel.NewBudget(1000, 1000)
	defer budget.Close()
	greedy, _ := cupel.NewGreedy()
	defer greedy.Close()
	pipeline, err := cupel.NewPipeline(cupel.PipelineOptions{Slicer: greedy})
	if err != nil {
		log.Fatal(err)
	}
	defer pipeline.Close()
	_, err = pipeline.Run(items, budget, nil)
	fmt.Println("without a tokenizer:", err)

	if err := pipeline.SetTokenizer(tok); err != nil {
		log.Fatal(err)
	}
	report, _ := cupel.NewReport()
	defer report.Close()
	if _, err := pipeline.Run(items, budget, report); err != nil {
		log.Fatal(err)
	}
	included, err := report.Included()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range included {
		text, err := d.Text(items) // what to send: the variant's, or the content cut
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("item %d %-9v variant %d, %3d tokens, cut [%d, %d): %d bytes %.36q\n",
			d.Index, d.Reason, d.Variant, d.AddedTokens, d.HeadEnd, d.TailStart, len(text), text)
	}
	fmt.Println(report.SelectedTokens(), "tokens selected")
}
