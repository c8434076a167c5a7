// The C demo's pipeline (examples/demo.c) in Go, on the same bundled data:
// 0.6 x the retriever's score + 0.25 x recency + 0.15 x kind weight,
// deduplication, GreedySlice, chronological placement, max 8192 tokens
// with 1024 kept for the answer and a 4096 target; tool calls and their
// outputs in keep-together groups. Prints the same "placed:" line.
//
//	go run ./demo ../../examples/data/rag_candidates.csv
package main

import (
	"encoding/csv"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func main() {
	path := "../../examples/data/rag_candidates.csv"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	var list []cupel.Item
	for _, r := range rows[1:] { // kind,tokens,score,timestamp,pinned,group,title
		tokens, _ := strconv.ParseInt(r[1], 10, 64)
		score, _ := strconv.ParseFloat(r[2], 64)
		group, _ := strconv.ParseUint(r[5], 10, 64)
		it := cupel.Item{Tokens: tokens, Score: score, Kind: r[0], Content: r[6], Pinned: r[4] == "1", Group: group}
		if r[3] != "" {
			ts, _ := strconv.ParseInt(r[3], 10, 64)
			it.Timestamp = &ts
		}
		list = append(list, it)
	}
	items, err := cupel.NewItems()
	check(err)
	defer items.Close()
	check(items.PushItems(list))
	given, err := cupel.NewGivenScorer()
	check(err)
	recency, err := cupel.NewRecencyScorer()
	check(err)
	kind, err := cupel.NewKindScorer(nil)
	check(err)
	blend, err := cupel.NewCompositeScorer([]cupel.WeightedScorer{{Scorer: given, Weight: 0.6}, {Scorer: recency, Weight: 0.25}, {Scorer: kind, Weight: 0.15}})
	check(err)
	greedy, err := cupel.NewGreedy()
	check(err)
	chrono, err := cupel.NewChronologicalPlacer()
	check(err)
	pipeline, err := cupel.NewPipeline(cupel.PipelineOptions{Scorer: blend, Slicer: greedy, Placer: chrono})
	check(err)
	defer pipeline.Close()
	budget, err := cupel.NewBudget(8192, 4096)
	check(err)
	check(budget.SetOutputReserve(1024))
	report, err := cupel.NewReport()
	check(err)
	defer report.Close()
	placed, err := pipeline.Run(items, budget, report)
	check(err)
	s := make([]string, len(placed))
	for i, p := range placed {
		s[i] = strconv.Itoa(p)
	}
	fmt.Println("placed: " + strings.Join(s, " "))
	excluded, err := report.Excluded()
	check(err)
	fmt.Printf("%d of %d items; %d left out\n", len(placed), len(list), len(excluded))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
