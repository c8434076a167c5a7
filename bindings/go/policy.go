package cupel

/*
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// As in cupel.go: the message is copied in the failing C call.
static cupel_status keep7(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", 1023);
		err[1023] = 0;
	}
	return st;
}
static cupel_status go_pipeline_from_json(const char *json, size_t len, cupel_pipeline **out, char *err) {
	return keep7(cupel_pipeline_from_json(json, len, out), err);
}
static cupel_status go_pipeline_to_json(const cupel_pipeline *p, char *buf, size_t cap, size_t *len, char *err) {
	return keep7(cupel_pipeline_to_json(p, buf, cap, len), err);
}
static cupel_status go_budget_from_json(const char *json, size_t len, cupel_budget **out, char *err) {
	return keep7(cupel_budget_from_json(json, len, out), err);
}
static cupel_status go_budget_to_json(const cupel_budget *b, char *buf, size_t cap, size_t *len, char *err) {
	return keep7(cupel_budget_to_json(b, buf, cap, len), err);
}
static cupel_status go_pipeline_preset(const char *name, cupel_pipeline **out, char *err) {
	return keep7(cupel_pipeline_preset(name, out), err);
}
static cupel_status go_report_analytics(const cupel_report *r, const cupel_items *it, double *util, size_t *kinds,
                                        double *coverage, char *err) {
	cupel_status st = cupel_report_budget_utilization(r, util);
	if (st == CUPEL_OK && it) st = cupel_report_kind_diversity(r, it, kinds);
	if (st == CUPEL_OK && it) st = cupel_report_timestamp_coverage(r, it, coverage);
	return keep7(st, err);
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ---- policies as JSON ----------------------------------------------------------------

// PipelineFromJSON reads a policy document into a new pipeline: the policy
// format of the .NET implementation of Cupel (a file written for a .NET
// host works unchanged) with libcupel's extensions, as docs/policies.md
// and schema/policy.schema.json describe. Keys are camelCase and
// case-sensitive, enum values case-insensitive, unknown keys ignored, and
// a key absent or null takes its default.
//
// json is the document's bytes (os.ReadFile's, a json.RawMessage, or
// []byte(text)). A nil slice is ErrNullPointer ("json is nil"); an empty
// one, the literal null, malformed JSON (with line and column), text that
// is not UTF-8 and every broken rule are ErrInvalidArgument, the message
// giving the JSON path and the rule exactly as the library writes it:
// "json $.scorers[1].weight: must be positive and finite (got -0.5)".
//
// Close the pipeline when done, as any other.
func PipelineFromJSON(json []byte) (*Pipeline, error) {
	if json == nil {
		return nil, nilError("json")
	}
	var e errBuf
	p := &Pipeline{}
	st := C.go_pipeline_from_json(bytesPtr(json), C.size_t(len(json)), &p.p, e.ptr())
	runtime.KeepAlive(json)
	if err := e.checkRaw(st); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(p, (*Pipeline).Close)
	return p, nil
}

// JSON writes the pipeline as a policy document: every setting, keys in
// alphabetical order, such that PipelineFromJSON of it gives a pipeline
// that selects exactly as this one. A pipeline that cannot be written
// without loss fails with ErrUnsupported (a slicer nested otherwise than
// count quotas around quotas around greedy, knapsack or stream; a tokenizer
// loaded from a vocabulary file). The trace (SetTrace) is not part of it.
func (p *Pipeline) JSON() (string, error) {
	if err := p.need("pipeline"); err != nil {
		return "", err
	}
	defer runtime.KeepAlive(p)
	return readText(func(buf *C.char, capacity C.size_t, n *C.size_t, e *errBuf) C.cupel_status {
		return C.go_pipeline_to_json(p.p, buf, capacity, n, e.ptr())
	})
}

// tokenizerName is the name of the pipeline's built-in tokenizer
// (O200kBase, Cl100kBase); "" when it has none or one from a vocabulary
// file.
func (p *Pipeline) tokenizerName() string {
	name := C.cupel_pipeline_tokenizer_name(p.p)
	runtime.KeepAlive(p)
	if name == nil {
		return ""
	}
	return C.GoString(name)
}

// MarshalJSON is JSON as a json.Marshaler: a *Pipeline inside a struct is
// written by encoding/json as its policy document. (To read one back from
// a larger document, decode that field as a json.RawMessage and hand it
// to PipelineFromJSON.)
func (p *Pipeline) MarshalJSON() ([]byte, error) {
	text, err := p.JSON()
	if err != nil {
		return nil, err
	}
	return []byte(text), nil
}

// BudgetFromJSON reads a budget document: {"maxTokens", "targetTokens"}
// (both required), "outputReserve", "reservedSlots" ({kind: tokens}) and
// "estimationSafetyMarginPercent", validated as NewBudget and its setters
// validate. Errors as PipelineFromJSON's ("json $.targetTokens: ...").
func BudgetFromJSON(json []byte) (*Budget, error) {
	if json == nil {
		return nil, nilError("json")
	}
	var e errBuf
	b := &Budget{}
	st := C.go_budget_from_json(bytesPtr(json), C.size_t(len(json)), &b.p, e.ptr())
	runtime.KeepAlive(json)
	if err := e.checkRaw(st); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(b, (*Budget).Close)
	return b, nil
}

// JSON writes the budget as a budget document with every field (reserved
// kinds lower-cased, as they are compared); BudgetFromJSON reads it back.
func (b *Budget) JSON() (string, error) {
	if err := b.need("budget"); err != nil {
		return "", err
	}
	defer runtime.KeepAlive(b)
	return readText(func(buf *C.char, capacity C.size_t, n *C.size_t, e *errBuf) C.cupel_status {
		return C.go_budget_to_json(b.p, buf, capacity, n, e.ptr())
	})
}

// MarshalJSON is JSON as a json.Marshaler.
func (b *Budget) MarshalJSON() ([]byte, error) {
	text, err := b.JSON()
	if err != nil {
		return nil, err
	}
	return []byte(text), nil
}

// ---- presets ---------------------------------------------------------------------------

// Preset builds a preset pipeline by name, matched ASCII
// case-insensitively: the .NET presets "Chat", "CodeReview", "Rag",
// "DocumentQa", "ToolUse", "LongRunning", "Debugging" (their scorers and
// weights, slicer, placer and bucket size; deduplication on, overflow
// throw) and libcupel's "AgentLoop" (docs/policies.md gives the table and
// AgentLoop's reasons). An unknown name is ErrInvalidArgument, its message
// listing the presets.
func Preset(name string) (*Pipeline, error) {
	m := cStrings{}
	defer m.free()
	n, err := m.arg("name", name)
	if err != nil {
		return nil, err
	}
	var e errBuf
	p := &Pipeline{}
	if err := e.checkRaw(C.go_pipeline_preset(n, &p.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(p, (*Pipeline).Close)
	return p, nil
}

// PresetNames are the names Preset knows, in the library's order.
func PresetNames() []string {
	n := int(C.cupel_preset_count())
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		if s := C.cupel_preset_name(C.size_t(i)); s != nil {
			out = append(out, C.GoString(s))
		}
	}
	return out
}

// ---- analytics ---------------------------------------------------------------------------

// BudgetUtilization is the run's included tokens (as they go into the
// context) over its budget's max tokens, 0 when the max is 0 or nothing
// was run (the .NET and Rust implementations give NaN there).
func (r *Report) BudgetUtilization() (float64, error) {
	a, err := r.figures(nil, false)
	return a.BudgetUtilization, err
}

// KindDiversity is the number of distinct kinds among the included items,
// compared as kinds are (ASCII case-insensitively). items is the list the
// report was made from.
func (r *Report) KindDiversity(items *Items) (int, error) {
	a, err := r.figures(items, true)
	return a.KindDiversity, err
}

// TimestampCoverage is the share of included items that have a timestamp,
// in [0, 1]; 0 when none is included. items is the list the report was
// made from.
func (r *Report) TimestampCoverage(items *Items) (float64, error) {
	a, err := r.figures(items, true)
	return a.TimestampCoverage, err
}

// figures reads the three figures of the analytics (withItems false: the
// utilization only, which needs no items).
func (r *Report) figures(items *Items, withItems bool) (Analytics, error) {
	if err := r.need("report"); err != nil {
		return Analytics{}, err
	}
	if withItems {
		if err := items.need("items"); err != nil {
			return Analytics{}, err
		}
	}
	var util, coverage C.double
	var kinds C.size_t
	var e errBuf
	err := e.check(C.go_report_analytics(r.p, items.ptr(), &util, &kinds, &coverage, e.ptr()))
	runtime.KeepAlive(r)
	runtime.KeepAlive(items)
	if err != nil {
		return Analytics{}, err
	}
	return Analytics{BudgetUtilization: float64(util), KindDiversity: int(kinds),
		TimestampCoverage: float64(coverage)}, nil
}

// ---- helpers -----------------------------------------------------------------------------

// noBytes is where an empty text points: the library takes a NULL text
// for a missing one (ErrNullPointer) whatever its length.
var noBytes [1]byte

// bytesPtr is the address of b's first byte, never nil (the library reads
// len(b) bytes from it).
func bytesPtr(b []byte) *C.char {
	if len(b) == 0 {
		return (*C.char)(unsafe.Pointer(&noBytes[0]))
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// readText calls a writer of the C ABI's buffer rules (buf NULL with
// capacity 0 asks for the length; CUPEL_ERROR_BUFFER_TOO_SMALL gives it)
// and returns the text. A writer whose text grows between calls (a report
// with timings) is called again with the larger length.
func readText(write func(buf *C.char, capacity C.size_t, n *C.size_t, e *errBuf) C.cupel_status) (string, error) {
	var e errBuf
	var n C.size_t
	st := write(nil, 0, &n, &e)
	for {
		if st != C.CUPEL_ERROR_BUFFER_TOO_SMALL {
			if err := e.check(st); err != nil {
				return "", err
			}
		}
		buf := make([]byte, int(n)+1)
		st = write((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n, &e)
		if st == C.CUPEL_OK {
			return string(buf[:int(n)]), nil
		}
		if st != C.CUPEL_ERROR_BUFFER_TOO_SMALL || int(n) < len(buf) {
			return "", e.check(st)
		}
	}
}

// checkRaw is check without renaming: the message as the library wrote
// it. The JSON readers' messages name JSON paths ($.quotas[0].kind), which
// are the document's names, never Go's.
func (b *errBuf) checkRaw(st C.cupel_status) error {
	if st == C.CUPEL_OK {
		return nil
	}
	return &Error{Status: Status(st), Message: C.GoString(b.ptr())}
}
