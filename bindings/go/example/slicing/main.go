// Chooses which retrieved snippets fit a 1000-token prompt budget, slicer
// by slicer.
package main

import (
	"errors"
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func main() {
	items, err := cupel.NewItems()
	if err != nil {
		log.Fatal(err)
	}
	defer items.Close()
	// tokens, relevance score and kind of each candidate
	err = items.PushMany(
		[]int64{120, 400, 350, 80, 300, 60},
		[]float64{0.95, 0.80, 0.75, 0.60, 0.40, 0.30},
		[]string{"SystemPrompt", "Document", "Document", "Message", "ToolOutput", "Message"},
	)
	if err != nil {
		log.Fatal(err)
	}
	budget, err := cupel.NewBudget(1000, 1000)
	if err != nil {
		log.Fatal(err)
	}
	defer budget.Close()

	knapsack, err := cupel.NewKnapsack(10)
	if err != nil {
		log.Fatal(err)
	}
	defer knapsack.Close()
	report, err := cupel.NewReport()
	if err != nil {
		log.Fatal(err)
	}
	defer report.Close()
	chosen, err := cupel.Slice(knapsack, items, budget, 0, report)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("knapsack chose", chosen, "using", report.SelectedTokens(), "tokens")

	// Any item reads back with every attribute (absent ones are nil or "").
	item, err := items.Get(3)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("item 3: %d tokens, score %.2f, kind %s, timestamp %v\n",
		item.Tokens, item.Score, item.Kind, item.Timestamp)

	// With 1500 tokens: at least one message, at most one document.
	roomy, err := cupel.NewBudget(1500, 1500)
	if err != nil {
		log.Fatal(err)
	}
	defer roomy.Close()
	greedy, _ := cupel.NewGreedy()
	defer greedy.Close()
	counted, err := cupel.NewCountQuota(greedy, []cupel.CountQuota{
		{Kind: "Message", Require: 1, Cap: 10},
		{Kind: "Document", Require: 0, Cap: 1},
	}, cupel.Degrade)
	if err != nil {
		log.Fatal(err)
	}
	defer counted.Close()
	chosen, err = cupel.Slice(counted, items, roomy, 0, report)
	if err != nil {
		log.Fatal(err)
	}
	excluded, _ := report.CapExcluded()
	fmt.Println("count quota chose", chosen, "and capped out", excluded)

	// Errors carry the status and a message naming the bad argument.
	_, err = cupel.NewBudget(100, 200)
	fmt.Println("invalid argument:", errors.Is(err, cupel.ErrInvalidArgument))
	fmt.Println(err)
}
