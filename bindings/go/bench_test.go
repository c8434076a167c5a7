package cupel

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkPipeline: push the items of $CUPEL_BENCH_DATA (bindings/bench/gen.py)
// with PushItems and run Composite(Recency, Kind) + deduplication + Greedy +
// Chronological, as bindings/bench/bench_c.c does in C. Run by bindings/bench/run.sh.
func BenchmarkPipeline(b *testing.B) {
	path := os.Getenv("CUPEL_BENCH_DATA")
	if path == "" {
		b.Skip("CUPEL_BENCH_DATA not set (bindings/bench/run.sh sets it)")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	var list []Item
	in := bufio.NewScanner(f)
	for in.Scan() {
		t := strings.Fields(in.Text())
		tok, _ := strconv.ParseInt(t[0], 10, 64)
		score, _ := strconv.ParseFloat(t[1], 64)
		ts, _ := strconv.ParseInt(t[3], 10, 64)
		list = append(list, Item{Tokens: tok, Score: score, Kind: t[2], Timestamp: &ts, Pinned: t[4] == "1", Content: t[5]})
	}
	f.Close()
	recency := must(NewRecencyScorer())
	kind := must(NewKindScorer(nil))
	blend := must(NewCompositeScorer([]WeightedScorer{{Scorer: recency, Weight: 1}, {Scorer: kind, Weight: 1}}))
	greedy := must(NewGreedy())
	chrono := must(NewChronologicalPlacer())
	p := must(NewPipeline(PipelineOptions{Scorer: blend, Slicer: greedy, Placer: chrono, Overflow: OverflowProceed}))
	budget, err := NewBudget(200000, 128000)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		items := must(NewItems())
		if err := items.PushItems(list); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Run(items, budget, nil); err != nil {
			b.Fatal(err)
		}
		items.Close()
	}
}
