// A run's figures: how much of the budget it used, how many kinds it kept,
// how many kept items have a timestamp, and each quota's use.
package main

import (
	"fmt"
	"log"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func at(minute int64) *int64 { v := minute * 60000; return &v }

func main() {
	pipeline, err := cupel.PipelineFromJSON([]byte(`{
	  "scorers": [{"type": "given", "weight": 1}],
	  "countQuotas": [{"kind": "Document", "cap": 1}, {"kind": "Message", "require": 1, "cap": 2}]
	}`))
	if err != nil {
		log.Fatal(err)
	}
	defer pipeline.Close()
	items, err := cupel.NewItems()
	if err != nil {
		log.Fatal(err)
	}
	defer items.Close()
	err = items.PushItems([]cupel.Item{
		{Tokens: 200, Score: 0.9, Kind: "Document", Content: "spec", Timestamp: at(1)},
		{Tokens: 300, Score: 0.8, Kind: "Document", Content: "changelog"},
		{Tokens: 150, Score: 0.7, Kind: "Message", Content: "question", Timestamp: at(2)},
		{Tokens: 100, Score: 0.4, Kind: "ToolOutput", Content: "grep output"},
	})
	if err != nil {
		log.Fatal(err)
	}
	budget, err := cupel.NewBudget(600, 500)
	if err != nil {
		log.Fatal(err)
	}
	defer budget.Close()
	report, err := cupel.NewReport()
	if err != nil {
		log.Fatal(err)
	}
	defer report.Close()
	placed, err := pipeline.Run(items, budget, report)
	if err != nil {
		log.Fatal(err)
	}

	a, err := report.Analytics(items)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("placed", placed)
	fmt.Printf("budget utilization %.3f, %d kinds, timestamp coverage %.2f\n",
		a.BudgetUtilization, a.KindDiversity, a.TimestampCoverage)
	for _, q := range a.Quotas {
		fmt.Printf("quota %s (%s): require %g, cap %g, actual %g, utilization %.2f\n",
			q.Kind, q.Mode, q.Require, q.Cap, q.Actual, q.Utilization)
	}
}
