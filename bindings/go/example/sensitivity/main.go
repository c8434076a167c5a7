// Policy sensitivity: which candidates would another policy keep or drop?
// Two presets on the same items and budget, and the items whose fate
// differs (matched by position: the two "see above" notes are two items).
package main

import (
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func at(minute int64) *int64  { v := minute * 60000; return &v }
func hint(v float64) *float64 { return &v }

func main() {
	items, err := cupel.NewItems()
	if err != nil {
		log.Fatal(err)
	}
	defer items.Close()
	err = items.PushItems([]cupel.Item{
		{Tokens: 300, Kind: "Document", Content: "design doc", Timestamp: at(1), Hint: hint(0.9)},
		{Tokens: 120, Kind: "Message", Content: "see above", Timestamp: at(2), Hint: hint(0.2)},
		{Tokens: 250, Kind: "Document", Content: "API reference", Timestamp: at(3), Hint: hint(0.8)},
		{Tokens: 120, Kind: "Message", Content: "see above", Timestamp: at(4), Hint: hint(0.1)},
		{Tokens: 200, Kind: "Message", Content: "latest question", Timestamp: at(5), Hint: hint(0.5)},
	})
	if err != nil {
		log.Fatal(err)
	}
	budget, err := cupel.NewBudget(700, 700)
	if err != nil {
		log.Fatal(err)
	}
	defer budget.Close()
	chat, err := cupel.Preset("Chat")
	if err != nil {
		log.Fatal(err)
	}
	defer chat.Close()
	rag, err := cupel.Preset("Rag")
	if err != nil {
		log.Fatal(err)
	}
	defer rag.Close()

	result, err := cupel.Sensitivity([]cupel.SensitivityVariant{{Label: "chat", Pipeline: chat},
		{Label: "rag", Pipeline: rag}}, items, budget)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range result.Variants {
		fmt.Printf("%-4s includes %d items, %.0f%% of the budget\n", v.Label, len(v.Report.Included),
			100*v.Report.Analytics.BudgetUtilization)
	}
	for _, d := range result.Diffs {
		fmt.Printf("item %d %-18q chat: %-8s rag: %s\n", d.Index, d.Content, d.Status("chat"), d.Status("rag"))
	}
}
