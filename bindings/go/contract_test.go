package cupel_test

// The binding contract (tests/contract/contract.txt) run through the Go
// binding's public API: every row whose `where` names go.
//
//	go test -run TestContract -v
//
// The table's path: $CUPEL_CONTRACT, else the repository's
// tests/contract/contract.txt (from this package's directory, where go
// test runs). Prints "contract go: N passed, M failed" and a line per
// failure; the test fails when a row fails (an op or expect it cannot run
// counts as a failure) or the table cannot be read.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

// lang is this runner's language in the table's `where` column.
const lang = "go"

// errorClass is this runner's mapping of the table's error categories to
// Go's error sentinels, spelled as the table's @map line spells them; the
// runner refuses to run when the table's @map go line says otherwise.
var errorClass = map[string]string{
	"null":    "cupel.ErrNullPointer",
	"type":    "-",
	"integer": "-",
	"value":   "cupel.ErrInvalidArgument",
	"range":   "cupel.ErrInvalidArgument",
	"closed":  "cupel.ErrClosed",
}

// sentinels are the errors the @map names, by name.
var sentinels = map[string]error{
	"cupel.ErrNullPointer":     cupel.ErrNullPointer,
	"cupel.ErrInvalidArgument": cupel.ErrInvalidArgument,
	"cupel.ErrClosed":          cupel.ErrClosed,
}

// aliases: where the Go API names an argument otherwise than the table's
// snake_case name in camelCase ("op arg" -> the name its messages use).
var aliases = map[string]string{
	"items.push_many score":            "scores",         // PushMany(tokens, scores, kinds): scores[11]
	"items.push_many kind":             "kinds",          // kinds[11]
	"scorer.composite children":        "Scorer",         // parts[2].Scorer
	"scorer.composite weights":         "Weight",         // parts[2].Weight
	"scorer.kind kind":                 "weights",        // NewKindScorer(weights map[string]float64): its keys
	"scorer.kind weight":               "weights",        // and values: weights["Message"]
	"slicer.quota kind":                "Kind",           // quotas[0].Kind
	"slicer.quota require_percent":     "RequirePercent", // Quota.RequirePercent
	"slicer.quota cap_percent":         "CapPercent",
	"slicer.count_quota kind":          "Kind", // entries[0].Kind
	"slicer.count_quota require_count": "Require",
	"slicer.count_quota cap_count":     "Cap",
	"pipeline.new scorer":              "Scorer", // PipelineOptions fields: opts.Slicer
	"pipeline.new slicer":              "Slicer",
	"pipeline.new placer":              "Placer",
	"policy_sensitivity count":         "variants",       // Sensitivity(variants, ...): len(variants) < 2
	"select max_tokens":                "opts.MaxTokens", // Select(messages, SelectOptions{MaxTokens, ...})
	"select policy":                    "opts.Policy",
}

// rawSentinels are the C library's sentinel numbers: a message may show one
// only when the row's value is that number.
var rawSentinels = []string{"18446744073709551615", "9223372036854775808", "9223372036854775807", "4294967295"}

type row struct {
	id, op, arg, value, expect, where string
	line                              int
}

// names says whether the row's `where` names this language.
func (r row) names() bool {
	switch r.where {
	case "all", "handles":
		return true
	case "dyn":
		return false
	}
	for _, l := range strings.Split(r.where, ",") {
		if l == lang {
			return true
		}
	}
	return false
}

// goName is the argument's name in the Go API's messages.
func (r row) goName() string {
	if a, ok := aliases[r.op+" "+r.arg]; ok {
		return a
	}
	parts := strings.Split(r.arg, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// position is the index or array position an error message must give, or "".
func (r row) position() string {
	switch {
	case r.value == "end":
		return "3"
	case r.op == "items.push_many":
		return "11"
	case r.op == "scorer.composite" && (r.arg == "children" || r.arg == "weights"),
		r.op == "placer.place" && (r.arg == "indices" || r.arg == "scores"):
		return "2"
	case r.op == "tokenizer.count_many" && r.arg == "texts":
		return "1"
	case strings.HasPrefix(r.value, "-") && len(r.value) > 1 && r.value[1] >= '0' && r.value[1] <= '9' &&
		(strings.Contains(r.arg, "index") || r.arg == "indices"):
		return r.value
	}
	return ""
}

// ---- the fixture ------------------------------------------------------------------

type fixture struct {
	items         *cupel.Items
	budget        *cupel.Budget
	greedy        *cupel.Slicer
	recency       *cupel.Scorer
	priority      *cupel.Scorer
	kind          *cupel.Scorer
	chronological *cupel.Placer
	pipeline      *cupel.Pipeline
	stream        *cupel.Stream
	tokenizer     *cupel.Tokenizer
	session       *cupel.Session // over pipeline, made before any op closes a handle
	// want is what the items must read back as after a failed call: the
	// fixture's items, with what an op itself set up before its call
	// (pipeline.run_cut makes item 1 truncatable).
	want []cupel.Item
}

// sentence is the table's SENTENCE: 47 bytes, 12 o200k_base tokens.
const sentence = "Hello, world! This is libcupel counting tokens."

var fixtureItems = []cupel.Item{
	{Tokens: 100, Score: 0.9, Kind: "Message", Content: "alpha", Timestamp: ptr(int64(1000))},
	{Tokens: 200, Score: 0.5, Kind: "Document", Content: "beta", Timestamp: ptr(int64(2000))},
	{Tokens: 50, Score: 0.1, Kind: "ToolOutput", Content: "gamma", Timestamp: ptr(int64(3000))},
}

func ptr[T any](v T) *T { return &v }

func newFixture() (*fixture, error) {
	f := &fixture{want: append([]cupel.Item(nil), fixtureItems...)}
	var err error
	steps := []func(){
		func() { f.items, err = cupel.NewItems() },
		func() { err = f.items.PushItems(fixtureItems) },
		func() { f.budget, err = cupel.NewBudget(300, 250) },
		func() { f.greedy, err = cupel.NewGreedy() },
		func() { f.recency, err = cupel.NewRecencyScorer() },
		func() { f.priority, err = cupel.NewPriorityScorer() },
		func() { f.kind, err = cupel.NewKindScorer(nil) },
		func() { f.chronological, err = cupel.NewChronologicalPlacer() },
		func() {
			f.pipeline, err = cupel.NewPipeline(cupel.PipelineOptions{Scorer: f.recency, Slicer: f.greedy,
				Placer: f.chronological})
		},
		func() { f.session, err = cupel.NewSession(f.pipeline) },
		func() { f.stream, err = cupel.NewStream(100, 0) },
		func() { f.tokenizer, err = cupel.NewTokenizer(cupel.O200kBase) },
	}
	for _, step := range steps {
		if step(); err != nil {
			f.close()
			return nil, err
		}
	}
	return f, nil
}

func (f *fixture) close() {
	f.tokenizer.Close()
	f.stream.Close()
	f.session.Close()
	f.pipeline.Close()
	f.chronological.Close()
	f.kind.Close()
	f.priority.Close()
	f.recency.Close()
	f.greedy.Close()
	f.budget.Close()
	f.items.Close()
}

// unchanged is "" when the fixture's items read back exactly as made (a
// failed call changed nothing), else what differs.
func (f *fixture) unchanged() string {
	if n := f.items.Len(); n != len(f.want) {
		return fmt.Sprintf("the items changed: %d items", n)
	}
	for i, want := range f.want {
		got, err := f.items.Get(i)
		if err != nil {
			return fmt.Sprintf("item %d cannot be read back: %v", i, err)
		}
		want.Source = "Chat"
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("item %d changed: %+v", i, got)
		}
	}
	return ""
}

// ---- one row's arguments -------------------------------------------------------------

// args hands an op its arguments: the default, or the row's value for the
// row's argument. A value Go cannot express for that argument is a
// failure of the row (errCannot), never a silent default.
type args struct {
	r    row
	used bool // the op has the row's argument
	err  error
}

var errCannot = errors.New("cannot express")

func (a *args) fail(format string, v ...interface{}) {
	if a.err == nil {
		a.err = fmt.Errorf("%w: "+format, append([]interface{}{errCannot}, v...)...)
	}
}

// mine says whether name is the row's argument (and notes that the op has it).
func (a *args) mine(name string) bool {
	if a.r.arg != name {
		return false
	}
	a.used = true
	return true
}

func (a *args) i64(name string, dflt int64) int64 {
	if !a.mine(name) {
		return dflt
	}
	if a.r.value == "end" {
		return int64(len(fixtureItems))
	}
	v, err := strconv.ParseInt(a.r.value, 10, 64)
	if err != nil {
		a.fail("%s %s is not an int64", name, a.r.value)
	}
	return v
}

func (a *args) index(name string, dflt int) int {
	return int(a.i64(name, int64(dflt)))
}

func (a *args) u64(name string, dflt uint64) uint64 {
	if !a.mine(name) {
		return dflt
	}
	v, err := strconv.ParseUint(a.r.value, 10, 64)
	if err != nil {
		a.fail("%s %s is not a uint64", name, a.r.value)
	}
	return v
}

func (a *args) u32(name string, dflt uint32) uint32 {
	if !a.mine(name) {
		return dflt
	}
	v, err := strconv.ParseUint(a.r.value, 10, 32)
	if err != nil {
		a.fail("%s %s is not a uint32", name, a.r.value)
	}
	return uint32(v)
}

func (a *args) f64(name string, dflt float64) float64 {
	if !a.mine(name) {
		return dflt
	}
	switch a.r.value {
	case "nan":
		return math.NaN()
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	}
	v, err := strconv.ParseFloat(a.r.value, 64)
	if err != nil {
		a.fail("%s %s is not a float64", name, a.r.value)
	}
	return v
}

func (a *args) boolean(name string, dflt bool) bool {
	if !a.mine(name) {
		return dflt
	}
	switch a.r.value {
	case "true":
		return true
	case "false":
		return false
	}
	a.fail("%s %s is not a bool", name, a.r.value)
	return dflt
}

// str: "..." with \xHH escapes, or bad-utf8 (the bytes FF FE). A Go
// string cannot be nil: `null` is a value Go cannot express (the compiler
// refuses it), a failure of the row.
func (a *args) str(name, dflt string) string {
	if !a.mine(name) {
		return dflt
	}
	v := a.r.value
	if v == "bad-utf8" {
		return "\xff\xfe"
	}
	if v == "null" {
		a.fail("%s null: a Go string cannot be nil (the row belongs to the languages whose strings can be null)", name)
		return dflt
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		a.fail("%s %s is not a Go string", name, v)
		return dflt
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		if v[i] == '\\' && i+3 < len(v)-1 && v[i+1] == 'x' {
			if n, err := strconv.ParseUint(v[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// jsonTexts are the table's named JSON texts (VALUES).
var jsonTexts = map[string]string{
	"policy-null":       `null`,
	"policy-malformed":  `{"scorers":`,
	"policy-bad-weight": `{"scorers":[{"type":"recency","weight":-1}]}`,
	"policy-bad-type":   `{"scorers":[{"type":"nope","weight":1}]}`,
	"budget-bad":        `{"maxTokens":100,"targetTokens":250}`,
	"budget-missing":    `{"targetTokens":1}`,
}

// json is a JSON text argument as Go's JSON functions take it, []byte: a
// named text, a string, bad-utf8, or nil for `null` (a nil slice).
func (a *args) json(name, dflt string) []byte {
	if !a.mine(name) {
		return []byte(dflt)
	}
	if a.r.value == "null" {
		return nil
	}
	if t, ok := jsonTexts[a.r.value]; ok {
		return []byte(t)
	}
	a.used = false // str notes it again
	return []byte(a.str(name, dflt))
}

// level: stages, exclusions or full as cupel.TraceStages, TraceExclusions,
// TraceFull; another number as a TraceLevel of that value.
func (a *args) level(name string, dflt cupel.TraceLevel) cupel.TraceLevel {
	if !a.mine(name) {
		return dflt
	}
	switch a.r.value {
	case "stages":
		return cupel.TraceStages
	case "exclusions":
		return cupel.TraceExclusions
	case "full":
		return cupel.TraceFull
	}
	v, err := strconv.ParseInt(a.r.value, 10, 32)
	if err != nil {
		a.fail("%s %s is not a cupel.TraceLevel", name, a.r.value)
	}
	return cupel.TraceLevel(v)
}

// keep: head, tail or both_ends as cupel.KeepHead, KeepTail, KeepBothEnds;
// another number as a Keep of that value.
func (a *args) keep(name string, dflt cupel.Keep) cupel.Keep {
	if !a.mine(name) {
		return dflt
	}
	switch a.r.value {
	case "head":
		return cupel.KeepHead
	case "tail":
		return cupel.KeepTail
	case "both_ends":
		return cupel.KeepBothEnds
	}
	v, err := strconv.ParseInt(a.r.value, 10, 32)
	if err != nil {
		a.fail("%s %s is not a cupel.Keep", name, a.r.value)
	}
	return cupel.Keep(v)
}

// handle is h, nil for `null`, or h closed before the call for `closed`.
func handle[T any, P interface {
	*T
	Close()
}](a *args, name string, h P) P {
	if !a.mine(name) {
		return h
	}
	switch a.r.value {
	case "null":
		return nil
	case "closed":
		h.Close()
		return h
	}
	a.fail("%s %s is not a %T handle", name, a.r.value, h)
	return h
}

// ---- the ops ---------------------------------------------------------------------------

// outcome is what the call returned: its error, its result as the table
// writes results ("[2]", "150", "none", "BudgetExceeded"), and for
// items.get whether the attributes read back right.
type outcome struct {
	err    error
	result string
	check  string // an ok call's own check that failed
}

func indices(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// call runs the row's op through the binding's public API; ok is false for
// an op this runner does not know.
func call(f *fixture, a *args) (o outcome, ok bool) {
	switch a.r.op {
	case "items.push":
		items := handle(a, "items", f.items)
		o.err = items.Push(a.i64("tokens", 10), a.f64("score", 0.5), a.str("kind", "Message"))
	case "items.push_many":
		items := handle(a, "items", f.items)
		tokens, scores, kinds := make([]int64, 12), make([]float64, 12), make([]string, 12)
		for i := range tokens {
			tokens[i], scores[i], kinds[i] = 7, 0.5, "Message"
		}
		tokens[11], scores[11], kinds[11] = a.i64("tokens", 7), a.f64("score", 0.5), a.str("kind", "Message")
		o.err = items.PushMany(tokens, scores, kinds)
	case "items.set_content":
		o.err = handle(a, "items", f.items).SetContent(a.index("index", 0), a.str("content", "hello"))
	case "items.set_timestamp":
		o.err = handle(a, "items", f.items).SetTimestamp(a.index("index", 0), a.i64("unix_millis", 5))
	case "items.set_priority":
		o.err = handle(a, "items", f.items).SetPriority(a.index("index", 0), a.i64("priority", 1))
	case "items.set_pinned":
		o.err = handle(a, "items", f.items).SetPinned(a.index("index", 0), a.boolean("pinned", true))
	case "items.set_group":
		o.err = handle(a, "items", f.items).SetGroup(a.index("index", 0), a.u64("group", 7))
	case "items.add_tag":
		o.err = handle(a, "items", f.items).AddTag(a.index("index", 0), a.str("tag", "t"))
	case "items.set_metadata":
		items := handle(a, "items", f.items)
		o.err = items.SetMetadata(a.index("index", 0), a.str("key", "k"), a.str("value", "v"))
	case "items.get":
		items := handle(a, "items", f.items)
		index := a.index("index", 1)
		var got cupel.Item
		if got, o.err = items.Get(index); o.err == nil {
			o.check = checkItem(got, index)
		}
	case "items.close":
		items := handle(a, "items", f.items)
		items.Close()
	case "budget.new":
		var b *cupel.Budget
		b, o.err = cupel.NewBudget(a.i64("max_tokens", 1000), a.i64("target_tokens", 800))
		b.Close()
	case "budget.set_output_reserve":
		o.err = handle(a, "budget", f.budget).SetOutputReserve(a.i64("output_reserve", 10))
	case "budget.set_safety_margin":
		o.err = handle(a, "budget", f.budget).SetSafetyMargin(a.f64("percent", 5))
	case "budget.reserve":
		o.err = handle(a, "budget", f.budget).Reserve(a.str("kind", "Message"), a.i64("tokens", 10))
	case "slicer.knapsack":
		var s *cupel.Slicer
		s, o.err = cupel.NewKnapsack(a.i64("bucket_size", 100))
		s.Close()
	case "slicer.quota":
		inner := handle(a, "inner", f.greedy)
		q := cupel.Quota{Kind: a.str("kind", "Message"), RequirePercent: a.f64("require_percent", 10),
			CapPercent: a.f64("cap_percent", 50)}
		var s *cupel.Slicer
		s, o.err = cupel.NewQuota(inner, []cupel.Quota{q})
		s.Close()
	case "slicer.count_quota":
		inner := handle(a, "inner", f.greedy)
		q := cupel.CountQuota{Kind: a.str("kind", "Message"), Require: a.u32("require_count", 1),
			Cap: a.u32("cap_count", 2)}
		var s *cupel.Slicer
		s, o.err = cupel.NewCountQuota(inner, []cupel.CountQuota{q}, cupel.Degrade)
		s.Close()
	case "scorer.kind":
		var s *cupel.Scorer
		s, o.err = cupel.NewKindScorer(map[string]float64{a.str("kind", "Message"): a.f64("weight", 1)})
		s.Close()
	case "scorer.composite":
		last := handle(a, "children", f.kind)
		parts := []cupel.WeightedScorer{{Scorer: f.recency, Weight: 1}, {Scorer: f.priority, Weight: 1},
			{Scorer: last, Weight: a.f64("weights", 1)}}
		var s *cupel.Scorer
		s, o.err = cupel.NewCompositeScorer(parts)
		s.Close()
	case "scorer.scaled":
		var s *cupel.Scorer
		s, o.err = cupel.NewScaledScorer(handle(a, "inner", f.recency))
		s.Close()
	case "scorer.metadata_key":
		var s *cupel.Scorer
		s, o.err = cupel.NewMetadataKeyScorer(a.str("key", "k"), a.str("value", "v"), a.f64("boost", 2))
		s.Close()
	case "placer.place":
		placer, items := handle(a, "placer", f.chronological), handle(a, "items", f.items)
		ix := []int{0, 1, a.index("indices", 2)}
		sc := []float64{0.5, 0.5, a.f64("scores", 0.5)}
		var placed []int
		if placed, o.err = placer.Place(items, ix, sc); o.err == nil {
			o.result = indices(placed)
		}
	case "pipeline.new":
		opts := cupel.PipelineOptions{Scorer: handle(a, "scorer", f.recency), Slicer: handle(a, "slicer", f.greedy),
			Placer: handle(a, "placer", f.chronological)}
		var p *cupel.Pipeline
		p, o.err = cupel.NewPipeline(opts)
		p.Close()
	case "pipeline.run":
		p, items, budget := handle(a, "pipeline", f.pipeline), handle(a, "items", f.items), handle(a, "budget", f.budget)
		var placed []int
		if placed, o.err = p.Run(items, budget, nil); o.err == nil {
			o.result = indices(placed)
		}
	case "slice":
		s, items, budget := handle(a, "slicer", f.greedy), handle(a, "items", f.items), handle(a, "budget", f.budget)
		var got []int
		if got, o.err = cupel.Slice(s, items, budget, a.i64("pinned_tokens", 0), nil); o.err == nil {
			o.result = indices(got)
		}
	case "marginal_items":
		s, items, budget := handle(a, "slicer", f.greedy), handle(a, "items", f.items), handle(a, "budget", f.budget)
		var got []int
		got, o.err = cupel.MarginalItems(s, items, budget, a.i64("pinned_tokens", 0), a.i64("slack_tokens", 150))
		if o.err == nil {
			o.result = indices(got)
		}
	case "find_min_budget":
		s, items := handle(a, "slicer", f.greedy), handle(a, "items", f.items)
		tokens, found, err := cupel.FindMinBudget(s, items, a.i64("pinned_tokens", 0), a.index("target_index", 2),
			a.i64("search_ceiling", 1000))
		o.err, o.result = err, "none"
		if found {
			o.result = strconv.FormatInt(tokens, 10)
		}
	case "stream.push":
		_, o.err = handle(a, "stream", f.stream).Push(a.i64("tokens", 10), a.f64("score", 0.5))
	case "reason.name":
		code := a.i64("code", 0)
		o.result = cupel.Reason(code).String()
	case "tokenizer.new":
		var t *cupel.Tokenizer
		t, o.err = cupel.NewTokenizer(a.str("name", cupel.O200kBase))
		t.Close()
	case "tokenizer.count":
		var n int64
		if n, o.err = handle(a, "tokenizer", f.tokenizer).Count(a.str("text", sentence)); o.err == nil {
			o.result = strconv.FormatInt(n, 10)
		}
	case "tokenizer.count_many":
		t := handle(a, "tokenizer", f.tokenizer)
		var counts []int64
		if counts, o.err = t.CountMany([]string{sentence, a.str("texts", "hello world")}); o.err == nil {
			o.result = numbers(counts...)
		}
	case "tokenizer.truncate":
		t, text := handle(a, "tokenizer", f.tokenizer), a.str("text", sentence)
		var cut cupel.Truncation
		cut, o.err = t.Truncate(text, a.i64("max_tokens", 4), a.keep("keep", cupel.KeepHead))
		if o.err == nil {
			o.result = numbers(int64(cut.HeadEnd), int64(cut.TailStart), cut.Tokens)
			o.check = checkCut(t, text, cut)
		}
	case "items.push_text":
		items, t, text := handle(a, "items", f.items), handle(a, "tokenizer", f.tokenizer), a.str("text", "hello world")
		if o.err = items.PushText(t, text, a.f64("score", 0.5), a.str("kind", "Message")); o.err == nil {
			o.check = checkPushed(f.items, text)
		}
	case "items.add_variant":
		items := handle(a, "items", f.items)
		index := a.index("index", 0)
		v := cupel.Variant{Tokens: a.i64("tokens", 5), Value: a.f64("value", 0.5), Content: a.str("content", "[cleared]")}
		if o.err = items.AddVariant(index, v.Tokens, v.Value, v.Content); o.err == nil {
			o.check = checkVariants(f.items, index, v)
		}
	case "items.set_truncatable":
		items := handle(a, "items", f.items)
		index := a.index("index", 1)
		t := cupel.Truncatable{Keep: a.keep("keep", cupel.KeepHead), MinTokens: a.i64("min_tokens", 1)}
		if o.err = items.SetTruncatable(index, t.Keep, t.MinTokens); o.err == nil {
			o.check = checkTruncatable(f.items, index, t)
		}
	case "pipeline.set_tokenizer":
		p, t := handle(a, "pipeline", f.pipeline), handle(a, "tokenizer", f.tokenizer)
		o.err = p.SetTokenizer(t)
	case "pipeline.run_cut":
		// Before the run (and before a `closed` value closes a handle):
		// item 1 truncatable, keeping its head, at least 1 token.
		if o.err = f.items.SetTruncatable(1, cupel.KeepHead, 1); o.err != nil {
			break
		}
		f.want[1].Truncatable = &cupel.Truncatable{Keep: cupel.KeepHead, MinTokens: 1}
		p, items, budget := handle(a, "pipeline", f.pipeline), handle(a, "items", f.items), handle(a, "budget", f.budget)
		if o.err = p.SetTokenizer(handle(a, "tokenizer", f.tokenizer)); o.err != nil {
			break
		}
		var placed []int
		if placed, o.err = p.Run(items, budget, nil); o.err == nil {
			o.result = strconv.Itoa(len(placed))
		}
	case "items.set_key":
		items := handle(a, "items", f.items)
		index, key := a.index("index", 0), a.u64("key", 7)
		if o.err = items.SetKey(index, key); o.err == nil {
			f.want[index].Key = key
			o.check = checkIdentity(f.items, index, key, false)
		}
	case "items.set_volatile":
		items := handle(a, "items", f.items)
		index, v := a.index("index", 0), a.boolean("is_volatile", true)
		if o.err = items.SetVolatile(index, v); o.err == nil {
			f.want[index].Volatile = v
			o.check = checkIdentity(f.items, index, 0, v)
		}
	case "session.new":
		var s *cupel.Session
		s, o.err = cupel.NewSession(handle(a, "pipeline", f.pipeline))
		s.Close()
	case "session.set_slack":
		s, fraction := handle(a, "session", f.session), a.f64("fraction", 0.3)
		if o.err = s.SetSlack(fraction); o.err == nil {
			if got, err := s.Slack(); err != nil || got != fraction {
				o.check = fmt.Sprintf("the slack (%v, %v)", got, err)
			}
		}
	case "session.run":
		// `pipeline` closed: the pipeline the session was made from, closed
		// after NewSession and before the run.
		handle(a, "pipeline", f.pipeline)
		s, items, budget := handle(a, "session", f.session), handle(a, "items", f.items), handle(a, "budget", f.budget)
		var placed []int
		if placed, o.err = s.Run(items, budget, nil); o.err == nil {
			o.result = strconv.Itoa(len(placed))
		}
	case "session.run_keyed":
		// Before the run: the items keyed 1, 2 and `key` (3).
		keys := []uint64{1, 2, a.u64("key", 3)}
		if o.err = f.items.SetKeys(0, keys); o.err != nil {
			break
		}
		for i, k := range keys {
			f.want[i].Key = k
		}
		var placed []int
		if placed, o.err = f.session.Run(f.items, f.budget, nil); o.err == nil {
			o.result = strconv.Itoa(len(placed))
		}
	case "session.run_twice":
		// The same items twice: the second run's stable prefix is the whole
		// output, as [items, tokens].
		s, items, budget := handle(a, "session", f.session), handle(a, "items", f.items), handle(a, "budget", f.budget)
		if _, o.err = s.Run(items, budget, nil); o.err != nil {
			break
		}
		var placed []int
		if placed, o.err = s.Run(items, budget, nil); o.err != nil {
			break
		}
		n, tokens, err := s.StablePrefix()
		if o.err = err; err == nil {
			o.result = numbers(int64(n), tokens)
			if action, err := s.LastAction(); err != nil || action != cupel.ActionAppend || n != len(placed) {
				o.check = fmt.Sprintf("the second run (action %v, %v; stable %d of %d items)", action, err, n,
					len(placed))
			}
		}
	case "pipeline.from_json":
		var p *cupel.Pipeline
		if p, o.err = cupel.PipelineFromJSON(a.json("json", policyJSON)); o.err == nil {
			defer p.Close()
			o.result, o.err = includedCount(p, f.items, f.budget)
		}
	case "pipeline.to_json":
		p := handle(a, "pipeline", f.pipeline)
		var text string
		if text, o.err = p.JSON(); o.err == nil {
			o.check = jsonRoundTrip(text, func(b []byte) (string, error) {
				q, err := cupel.PipelineFromJSON(b)
				if err != nil {
					return "", err
				}
				defer q.Close()
				return q.JSON()
			})
		}
	case "budget.from_json":
		var b *cupel.Budget
		if b, o.err = cupel.BudgetFromJSON(a.json("json", budgetJSON)); o.err == nil {
			defer b.Close()
			o.result, o.err = includedCount(f.pipeline, f.items, b)
		}
	case "budget.to_json":
		b := handle(a, "budget", f.budget)
		var text string
		if text, o.err = b.JSON(); o.err == nil {
			o.check = jsonRoundTrip(text, func(t []byte) (string, error) {
				c, err := cupel.BudgetFromJSON(t)
				if err != nil {
					return "", err
				}
				defer c.Close()
				return c.JSON()
			})
		}
	case "pipeline.preset":
		var p *cupel.Pipeline
		if p, o.err = cupel.Preset(a.str("name", "Chat")); o.err == nil {
			defer p.Close()
			o.result, o.err = includedCount(p, f.items, f.budget)
		}
	case "policy_sensitivity":
		// KINDPIPE: scorer.kind's defaults (kind "Message", weight 1),
		// greedy, chronological.
		kinds, err := cupel.NewKindScorer(map[string]float64{"Message": 1})
		if o.err = err; err != nil {
			break
		}
		defer kinds.Close()
		kindPipe, err := cupel.NewPipeline(cupel.PipelineOptions{Scorer: kinds, Slicer: f.greedy, Placer: f.chronological})
		if o.err = err; err != nil {
			break
		}
		defer kindPipe.Close()
		variants := []cupel.SensitivityVariant{{Label: "a", Pipeline: f.pipeline}, {Label: "b", Pipeline: kindPipe}}
		variants = variants[:a.index("count", 2)]
		items, budget := handle(a, "items", f.items), handle(a, "budget", f.budget)
		var res *cupel.SensitivityResult
		if res, o.err = cupel.Sensitivity(variants, items, budget); o.err == nil {
			o.result = strconv.Itoa(len(res.Diffs))
		}
	case "report.analytics":
		p, items, budget := handle(a, "pipeline", f.pipeline), handle(a, "items", f.items), handle(a, "budget", f.budget)
		report, err := cupel.NewReport()
		if o.err = err; err != nil {
			break
		}
		defer report.Close()
		if _, o.err = p.Run(items, budget, report); o.err != nil {
			break
		}
		var an cupel.Analytics
		if an, o.err = report.Analytics(items); o.err == nil {
			o.result = numbers(int64(an.KindDiversity), int64(an.TimestampCoverage))
			if an.TimestampCoverage != float64(int64(an.TimestampCoverage)) {
				o.result = fmt.Sprintf("[%d,%v]", an.KindDiversity, an.TimestampCoverage)
			}
			if math.Abs(an.BudgetUtilization-250.0/300.0) > 1e-9 {
				o.check = fmt.Sprintf("the budget utilization %v", an.BudgetUtilization)
			}
		}
	case "pipeline.set_trace":
		p := handle(a, "pipeline", f.pipeline)
		events := 0
		var fn func(cupel.TraceEvent)
		if !a.mine("callback") {
			fn = func(cupel.TraceEvent) { events++ }
		} else if a.r.value != "null" {
			a.fail("callback %s is not a func(cupel.TraceEvent)", a.r.value)
		}
		if o.err = p.SetTrace(a.level("level", cupel.TraceStages), fn); o.err != nil {
			break
		}
		if _, o.err = f.pipeline.Run(f.items, f.budget, nil); o.err == nil {
			o.result = strconv.Itoa(events)
		}
	case "select":
		var messages []cupel.Message
		if !a.mine("messages") {
			for _, x := range fixtureItems {
				messages = append(messages, cupel.Message{Text: x.Content, Kind: x.Kind,
					Timestamp: time.UnixMilli(*x.Timestamp)})
			}
		} else if a.r.value != "null" {
			a.fail("messages %s is not a []cupel.Message", a.r.value)
		}
		opts := cupel.SelectOptions{MaxTokens: a.i64("max_tokens", 2), Policy: a.str("policy", "Chat")}
		var kept []cupel.Message
		if kept, o.err = cupel.Select(messages, opts); o.err == nil {
			o.result = strconv.Itoa(len(kept))
		}
	default:
		return o, false
	}
	return o, true
}

// policyJSON and budgetJSON are the table's POLICY and BUDGET.
const (
	policyJSON = `{"scorers":[{"type":"recency","weight":1}],"slicerType":"greedy","placerType":"chronological"}`
	budgetJSON = `{"maxTokens":300,"targetTokens":250}`
)

// includedCount is the number of items p includes on items and budget.
func includedCount(p *cupel.Pipeline, items *cupel.Items, budget *cupel.Budget) (string, error) {
	placed, err := p.Run(items, budget, nil)
	return strconv.Itoa(len(placed)), err
}

// jsonRoundTrip is "" when text read back and written again (again) is
// text, else what differs.
func jsonRoundTrip(text string, again func([]byte) (string, error)) string {
	got, err := again([]byte(text))
	if err != nil || got != text {
		return fmt.Sprintf("the round trip (%q, %v)", got, err)
	}
	return ""
}

// checkIdentity is "" when item index reads back with key and volatile
// (through Items.Key, Items.Volatile and Items.Get).
func checkIdentity(items *cupel.Items, index int, key uint64, volatile bool) string {
	k, err := items.Key(index)
	if err != nil || k != key {
		return fmt.Sprintf("the key (%d, %v)", k, err)
	}
	v, err := items.Volatile(index)
	if err != nil || v != volatile {
		return fmt.Sprintf("the volatile flag (%v, %v)", v, err)
	}
	if item, err := items.Get(index); err != nil || item.Key != key || item.Volatile != volatile {
		return fmt.Sprintf("the item's Key and Volatile (%+v, %v)", item, err)
	}
	return ""
}

// checkVariants is "" when item index reads back with the one variant v
// (through Items.Variants and Items.Get).
func checkVariants(items *cupel.Items, index int, v cupel.Variant) string {
	got, err := items.Variants(index)
	if err != nil || !reflect.DeepEqual(got, []cupel.Variant{v}) {
		return fmt.Sprintf("the variants (%+v, %v)", got, err)
	}
	if item, err := items.Get(index); err != nil || !reflect.DeepEqual(item.Variants, got) {
		return fmt.Sprintf("the item's Variants (%+v, %v)", item.Variants, err)
	}
	return ""
}

// checkTruncatable is "" when item index reads back truncatable as t
// (through Items.Truncatable and Items.Get).
func checkTruncatable(items *cupel.Items, index int, t cupel.Truncatable) string {
	got, err := items.Truncatable(index)
	if err != nil || got == nil || *got != t {
		return fmt.Sprintf("the truncation (%+v, %v)", got, err)
	}
	if item, err := items.Get(index); err != nil || item.Truncatable == nil || *item.Truncatable != t {
		return fmt.Sprintf("the item's Truncatable (%+v, %v)", item.Truncatable, err)
	}
	return ""
}

// numbers is the table's way of writing several numbers: [12,1].
func numbers(v ...int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// checkCut is "" when cut is consistent with text: Head, Tail and Text are
// the text's bytes at the offsets, and the pieces count what Tokens says.
func checkCut(t *cupel.Tokenizer, text string, cut cupel.Truncation) string {
	if cut.Head != text[:cut.HeadEnd] || cut.Tail != text[cut.TailStart:] || cut.Text != cut.Head+cut.Tail {
		return fmt.Sprintf("the kept text %q", cut.Text)
	}
	counts, err := t.CountMany([]string{cut.Head, cut.Tail})
	if err != nil || counts[0]+counts[1] != cut.Tokens {
		return fmt.Sprintf("the tokens (%d for %q and %q)", cut.Tokens, cut.Head, cut.Tail)
	}
	return ""
}

// checkPushed is "" when the list holds the fixture's 3 items and a 4th
// read back with 2 tokens and content text.
func checkPushed(items *cupel.Items, text string) string {
	if n := items.Len(); n != len(fixtureItems)+1 {
		return fmt.Sprintf("the list (%d items)", n)
	}
	got, err := items.Get(len(fixtureItems))
	if err != nil || got.Tokens != 2 || got.Content != text {
		return fmt.Sprintf("the pushed item (%+v, %v)", got, err)
	}
	return ""
}

// checkItem is "" when got is fixture item index as made, else what differs.
func checkItem(got cupel.Item, index int) string {
	if index < 0 || index >= len(fixtureItems) {
		return fmt.Sprintf("item %d read back although out of range", index)
	}
	want := fixtureItems[index]
	switch {
	case got.Tokens != want.Tokens:
		return "tokens"
	case got.Score != want.Score:
		return "score"
	case got.Kind != want.Kind:
		return "kind"
	case got.Content != want.Content:
		return "content"
	case got.Timestamp == nil || *got.Timestamp != *want.Timestamp:
		return "timestamp"
	}
	return ""
}

// ---- running a row ---------------------------------------------------------------

// hasWord says whether msg holds word with no letter, digit or '_' on either side.
func hasWord(msg, word string) bool {
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for at := 0; ; {
		i := strings.Index(msg[at:], word)
		if i < 0 {
			return false
		}
		i += at
		end := i + len(word)
		if (i == 0 || !isWord(msg[i-1])) && (end == len(msg) || !isWord(msg[end])) {
			return true
		}
		at = i + 1
	}
}

// closedWords: a `closed` row's message holds one of them (any case).
var closedWords = []string{"closed", "disposed", "freed", "moved"}

// saysClosed says whether msg says that the handle was closed.
func saysClosed(msg string) bool {
	lower := strings.ToLower(msg)
	for _, w := range closedWords {
		if hasWord(lower, w) {
			return true
		}
	}
	return false
}

// run is "" when the row passes, else why it fails.
func run(r row) (why string) {
	defer func() {
		if p := recover(); p != nil {
			why = fmt.Sprintf("panicked: %v", p)
		}
	}()
	f, err := newFixture()
	if err != nil {
		return fmt.Sprintf("fixture: %v", err)
	}
	defer f.close()
	a := &args{r: r}
	o, known := call(f, a)
	switch {
	case !known:
		return fmt.Sprintf("unknown op %s", r.op)
	case a.err != nil:
		return a.err.Error()
	case !a.used && r.arg != "-":
		return fmt.Sprintf("op %s has no argument %s", r.op, r.arg)
	}

	if r.expect == "ok" || strings.HasPrefix(r.expect, "ok=") {
		switch {
		case o.err != nil:
			return fmt.Sprintf("expected ok, got %v", o.err)
		case o.check != "":
			return fmt.Sprintf("ok, but %s read back wrong", o.check)
		case strings.HasPrefix(r.expect, "ok=") && o.result != r.expect[3:]:
			return fmt.Sprintf("expected %s, got %s", r.expect[3:], o.result)
		}
		return ""
	}

	class, known := errorClass[r.expect]
	if !known || class == "-" {
		return fmt.Sprintf("expect %s cannot be checked in Go (@map: %q)", r.expect, class)
	}
	want := sentinels[class]
	if o.err == nil {
		return fmt.Sprintf("expected %s, got success", class)
	}
	if !errors.Is(o.err, want) {
		return fmt.Sprintf("expected %s, got %v", class, o.err)
	}
	for name, other := range sentinels {
		if other != want && errors.Is(o.err, other) {
			return fmt.Sprintf("expected %s only, but the error is also %s: %v", class, name, o.err)
		}
	}
	var e *cupel.Error
	if !errors.As(o.err, &e) {
		return fmt.Sprintf("the error is a %T, not a *cupel.Error: %v", o.err, o.err)
	}
	msg := e.Message
	if name := r.goName(); !strings.Contains(msg, name) {
		return fmt.Sprintf("message %q does not name %s", msg, name)
	}
	if pos := r.position(); pos != "" && !hasWord(msg, pos) {
		return fmt.Sprintf("message %q does not give position %s", msg, pos)
	}
	for _, s := range rawSentinels {
		if strings.Contains(msg, s) && !strings.Contains(r.value, s) {
			return fmt.Sprintf("message %q shows the sentinel %s", msg, s)
		}
	}
	if r.expect == "closed" && !saysClosed(msg) {
		return fmt.Sprintf("message %q does not say the handle was closed (%s)", msg, strings.Join(closedWords, "/"))
	}
	if r.value == "closed" && r.arg == "items" {
		return "" // the fixture's items are the closed handle: nothing to count
	}
	if diff := f.unchanged(); diff != "" {
		return fmt.Sprintf("after %v: %s", o.err, diff)
	}
	return ""
}

// ---- the table -----------------------------------------------------------------------

func tablePath() string {
	if p := os.Getenv("CUPEL_CONTRACT"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "tests", "contract", "contract.txt")
}

// readTable is the rows and this language's @map line of the table at path.
func readTable(path string) ([]row, map[string]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var rows []row
	var mapping map[string]string
	var categories []string
	seen := map[string]bool{}
	for n, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "# @map"):
			categories = f[3:] // "# @map lang null type ..."
		case strings.HasPrefix(line, "@map"):
			if len(f) < 2 || f[1] != lang {
				continue
			}
			if len(categories) == 0 || len(f) != len(categories)+2 {
				return nil, nil, fmt.Errorf("%s:%d: @map %s does not match the `# @map lang ...` header", path, n+1, lang)
			}
			mapping = map[string]string{}
			for i, c := range categories {
				mapping[c] = f[i+2]
			}
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			if len(f) != 6 {
				return nil, nil, fmt.Errorf("%s:%d: not a row of six fields: %s", path, n+1, line)
			}
			if seen[f[0]] {
				return nil, nil, fmt.Errorf("%s:%d: the id %s is used twice", path, n+1, f[0])
			}
			seen[f[0]] = true
			rows = append(rows, row{id: f[0], op: f[1], arg: f[2], value: f[3], expect: f[4], where: f[5], line: n + 1})
		}
	}
	if mapping == nil {
		return nil, nil, fmt.Errorf("%s: no @map line for %s", path, lang)
	}
	return rows, mapping, nil
}

func TestContract(t *testing.T) {
	path := tablePath()
	rows, mapping, err := readTable(path)
	if err != nil {
		t.Fatalf("contract go: %v", err)
	}
	if !reflect.DeepEqual(mapping, errorClass) {
		t.Fatalf("contract go: the table's @map go line %v is not this runner's %v", mapping, errorClass)
	}
	passed, failed := 0, 0
	for _, r := range rows {
		if !r.names() {
			continue
		}
		if why := run(r); why != "" {
			failed++
			fmt.Printf("FAILED %s (contract.txt:%d): %s\n", r.id, r.line, why)
			t.Errorf("%s: %s", r.id, why)
		} else {
			passed++
		}
	}
	fmt.Printf("contract %s: %d passed, %d failed\n", lang, passed, failed)
}
