// Cross-binding check driver for the Go binding: reads the cases
// tests/common/cross.rs writes and prints one result line per case.
package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

type toks []string

func (t *toks) pop() string { s := (*t)[0]; *t = (*t)[1:]; return s }
func (t *toks) f() float64  { v, _ := strconv.ParseFloat(t.pop(), 64); return v }
func (t *toks) i() int64    { v, _ := strconv.ParseInt(t.pop(), 10, 64); return v }

func scorer(t *toks) *cupel.Scorer {
	var s *cupel.Scorer
	var err error
	switch name := t.pop(); name {
	case "recency":
		s, err = cupel.NewRecencyScorer()
	case "priority":
		s, err = cupel.NewPriorityScorer()
	case "frequency":
		s, err = cupel.NewFrequencyScorer()
	case "reflexive":
		s, err = cupel.NewReflexiveScorer()
	case "given":
		s, err = cupel.NewGivenScorer()
	case "kind", "tag":
		n := t.i()
		var w map[string]float64
		if n >= 0 {
			w = map[string]float64{}
			for k := int64(0); k < n; k++ {
				key := t.pop()
				w[key] = t.f()
			}
		}
		if name == "kind" {
			s, err = cupel.NewKindScorer(w)
		} else {
			s, err = cupel.NewTagScorer(w)
		}
	case "composite":
		n := t.i()
		var parts []cupel.WeightedScorer
		for k := int64(0); k < n; k++ {
			w := t.f()
			parts = append(parts, cupel.WeightedScorer{Scorer: scorer(t), Weight: w})
		}
		s, err = cupel.NewCompositeScorer(parts)
		for _, p := range parts {
			p.Scorer.Close()
		}
	case "scaled":
		inner := scorer(t)
		s, err = cupel.NewScaledScorer(inner)
		inner.Close()
	case "trust":
		s, err = cupel.NewMetadataTrustScorer(t.f())
	case "key":
		k, v := t.pop(), t.pop()
		s, err = cupel.NewMetadataKeyScorer(k, v, t.f())
	default: // decay
		curve, duration, null, ref := t.i(), t.f(), t.f(), t.i()
		n := t.i()
		var w []cupel.DecayWindow
		for k := int64(0); k < n; k++ {
			a := t.f()
			w = append(w, cupel.DecayWindow{MaxAgeSecs: a, Score: t.f()})
		}
		s, err = cupel.NewDecayScorer(cupel.DecayCurve(curve), duration, w, ref, null)
	}
	if err != nil {
		log.Fatal(err)
	}
	return s
}

func counts(t *toks) []cupel.CountQuota {
	n := t.i()
	var e []cupel.CountQuota
	for k := int64(0); k < n; k++ {
		kind := t.pop()
		r := t.i()
		e = append(e, cupel.CountQuota{Kind: kind, Require: uint32(r), Cap: uint32(t.i())})
	}
	return e
}

func slicer(t *toks) *cupel.Slicer {
	g, _ := cupel.NewGreedy()
	var s *cupel.Slicer
	var err error
	switch t.pop() {
	case "greedy":
		s, err = cupel.NewGreedy()
	case "knapsack":
		s, err = cupel.NewKnapsack(t.i())
	case "quota":
		n := t.i()
		var q []cupel.Quota
		for k := int64(0); k < n; k++ {
			kind := t.pop()
			r := t.f()
			q = append(q, cupel.Quota{Kind: kind, RequirePercent: r, CapPercent: t.f()})
		}
		s, err = cupel.NewQuota(g, q)
	case "countquota":
		s, err = cupel.NewCountQuota(g, counts(t), cupel.Degrade)
	default:
		b := t.i()
		s, err = cupel.NewCountConstrainedKnapsack(b, counts(t), cupel.Degrade)
	}
	g.Close()
	if err != nil {
		log.Fatal(err)
	}
	return s
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	in := bufio.NewScanner(f)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() toks { in.Scan(); return strings.Fields(in.Text()) }
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		if in.Text() != "case" {
			continue
		}
		b := next()[1:]
		st := next()[1:]
		sc := scorer(&st)
		sl := next()[1:]
		slc := slicer(&sl)
		n, _ := strconv.Atoi(next()[1])
		var list []cupel.Item
		for i := 0; i < n; i++ {
			t := next()
			it := cupel.Item{Tokens: t.i(), Kind: t.pop(), Pinned: t.pop() == "1"}
			g, _ := strconv.ParseUint(t.pop(), 10, 64)
			it.Group = g
			if v := t.pop(); v != "-" {
				x, _ := strconv.ParseInt(v, 10, 64)
				it.Timestamp = &x
			}
			if v := t.pop(); v != "-" {
				x, _ := strconv.ParseInt(v, 10, 64)
				it.Priority = &x
			}
			if v := t.pop(); v != "-" {
				x, _ := strconv.ParseFloat(v, 64)
				it.Hint = &x
			}
			for k := t.i(); k > 0; k-- {
				it.Tags = append(it.Tags, t.pop())
			}
			it.Metadata = map[string]string{}
			for k := t.i(); k > 0; k-- {
				key := t.pop()
				it.Metadata[key] = t.pop()
			}
			c, _ := hex.DecodeString(t.pop())
			it.Content = string(c)
			list = append(list, it)
		}
		next() // end
		items, _ := cupel.NewItems()
		if err := items.PushItems(list); err != nil {
			log.Fatal(err)
		}
		max, _ := strconv.ParseInt(b[0], 10, 64)
		target, _ := strconv.ParseInt(b[1], 10, 64)
		reserve, _ := strconv.ParseInt(b[2], 10, 64)
		budget, _ := cupel.NewBudget(max, target)
		if err := budget.SetOutputReserve(reserve); err != nil {
			log.Fatal(err)
		}
		var placer *cupel.Placer
		if b[5] == "u" {
			placer, _ = cupel.NewUShapedPlacer()
		} else {
			placer, _ = cupel.NewChronologicalPlacer()
		}
		overflow, _ := strconv.Atoi(b[4])
		p, err := cupel.NewPipeline(cupel.PipelineOptions{Scorer: sc, Slicer: slc, Placer: placer,
			NoDeduplication: b[3] != "1", Overflow: cupel.Overflow(overflow)})
		if err != nil {
			log.Fatal(err)
		}
		r, _ := cupel.NewReport()
		placed, err := p.Run(items, budget, r)
		var ce *cupel.Error
		if errors.As(err, &ce) {
			fmt.Fprintf(out, "error %d\n", int(ce.Status))
		} else {
			fmt.Fprint(out, "P")
			for _, i := range placed {
				fmt.Fprintf(out, " %d", i)
			}
			inc, _ := r.Included()
			exc, _ := r.Excluded()
			fmt.Fprint(out, "|I")
			for _, d := range inc {
				fmt.Fprintf(out, " %d:%d", d.Index, int(d.Reason))
			}
			fmt.Fprint(out, "|E")
			for _, d := range exc {
				fmt.Fprintf(out, " %d:%d", d.Index, int(d.Reason))
			}
			fmt.Fprintln(out)
		}
		for _, c := range []interface{ Close() }{r, p, placer, budget, items, sc, slc} {
			c.Close()
		}
	}
}
