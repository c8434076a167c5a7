package cupel

// Report analytics and policy sensitivity in Go's terms: the figures as a
// struct, the report JSON and the sensitivity JSON parsed with
// encoding/json into typed structs.

import (
	"encoding/json"
	"fmt"
)

// Analytics are a run's figures (Report.Analytics; the report JSON's
// "analytics" object).
type Analytics struct {
	// BudgetUtilization: the included tokens over the budget's max tokens
	// (0 when the max is 0 or nothing was run).
	BudgetUtilization float64 `json:"budgetUtilization"`
	// KindDiversity: distinct kinds among the included items
	// (case-insensitively).
	KindDiversity int `json:"kindDiversity"`
	// TimestampCoverage: the share of included items with a timestamp (0
	// when none is included).
	TimestampCoverage float64 `json:"timestampCoverage"`
	// Quotas: when the slicer had quotas, one row per constraint,
	// outermost decorator first; nil otherwise.
	Quotas []QuotaUtilization `json:"quotas,omitempty"`
}

// QuotaUtilization is one quota constraint of a run (Analytics.Quotas).
type QuotaUtilization struct {
	Kind string `json:"kind"`
	// Mode: "percentage" (Require, Cap and Actual are percent of the
	// effective target) or "count" (they are items).
	Mode    string  `json:"mode"`
	Require float64 `json:"require"`
	Cap     float64 `json:"cap"`
	// Actual is what the included unpinned items of Kind took.
	Actual float64 `json:"actual"`
	// Utilization is Actual / Cap clamped to [0, 1] (0 when Cap is 0).
	Utilization float64 `json:"utilization"`
}

// Analytics are the run's figures: BudgetUtilization, KindDiversity and
// TimestampCoverage as the methods of those names give them, and the quota
// rows of the report JSON. items is the list the report was made from.
func (r *Report) Analytics(items *Items) (Analytics, error) {
	a, err := r.figures(items, true)
	if err != nil {
		return Analytics{}, err
	}
	text, err := r.JSON(items)
	if err != nil {
		return Analytics{}, err
	}
	var doc struct {
		Analytics struct {
			Quotas []QuotaUtilization `json:"quotas"`
		} `json:"analytics"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return Analytics{}, &Error{Status: StatusInternal, Message: "the report JSON does not parse: " + err.Error()}
	}
	a.Quotas = doc.Analytics.Quotas
	return a, nil
}

// Selection is the report JSON (Report.JSON, and each variant of a
// Sensitivity) parsed: the specification's SelectionReport, with the
// library's analytics and, after a session run, its session object.
type Selection struct {
	Events                []SelectionEvent `json:"events"`
	Included              []SelectionEntry `json:"included"` // in placed order
	Excluded              []SelectionEntry `json:"excluded"` // score descending
	TotalCandidates       int              `json:"total_candidates"`
	TotalTokensConsidered int64            `json:"total_tokens_considered"`
	Analytics             Analytics        `json:"analytics"`
	// Session is a session run's object ("action", "stablePrefixItems",
	// "stablePrefixTokens", "breakpoints"), as JSON; nil otherwise.
	Session json.RawMessage `json:"session,omitempty"`
}

// SelectionEvent is one stage's timing.
type SelectionEvent struct {
	Stage      string  `json:"stage"`
	DurationMs float64 `json:"duration_ms"`
	ItemCount  int     `json:"item_count"`
}

// SelectionEntry is one item's fate in the report JSON.
type SelectionEntry struct {
	Item   SelectionItem   `json:"item"`
	Score  float64         `json:"score"`
	Reason SelectionReason `json:"reason"`
}

// SelectionItem is an item as the report JSON writes it (the fields it
// has; Content "" when it has none).
type SelectionItem struct {
	Content             string            `json:"content,omitempty"`
	Tokens              int64             `json:"tokens"`
	Kind                string            `json:"kind"`
	Source              string            `json:"source"`
	Priority            *int64            `json:"priority,omitempty"`
	Tags                []string          `json:"tags,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	Timestamp           string            `json:"timestamp,omitempty"` // RFC 3339, UTC
	FutureRelevanceHint *float64          `json:"futureRelevanceHint,omitempty"`
	Pinned              bool              `json:"pinned,omitempty"`
	Group               uint64            `json:"group,omitempty"`
}

// SelectionReason is an entry's reason with the fields of that reason.
type SelectionReason struct {
	Reason              string  `json:"reason"` // "Scored", "BudgetExceeded", ...
	ItemTokens          int64   `json:"item_tokens,omitempty"`
	AvailableTokens     int64   `json:"available_tokens,omitempty"`
	DeduplicatedAgainst *string `json:"deduplicated_against,omitempty"`
	Tokens              int64   `json:"tokens,omitempty"`
	DisplacedBy         *string `json:"displaced_by,omitempty"`
	Kind                string  `json:"kind,omitempty"`
	GroupTokens         int64   `json:"group_tokens,omitempty"`
	Variant             int     `json:"variant,omitempty"`
	TokensAdded         int64   `json:"tokens_added,omitempty"`
	Cut                 *struct {
		HeadEnd   int `json:"head_end"`
		TailStart int `json:"tail_start"`
	} `json:"cut,omitempty"`
}

// Selection is the report JSON (JSON) parsed. items is the run's list.
func (r *Report) Selection(items *Items) (*Selection, error) {
	text, err := r.JSON(items)
	if err != nil {
		return nil, err
	}
	var s Selection
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return nil, &Error{Status: StatusInternal, Message: "the report JSON does not parse: " + err.Error()}
	}
	return &s, nil
}

// ---- policy sensitivity ----------------------------------------------------------------

// SensitivityVariant is one labelled pipeline of a Sensitivity comparison.
type SensitivityVariant struct {
	Label    string
	Pipeline *Pipeline
}

// SensitivityResult is a Sensitivity comparison: each variant's run, and
// the items whose fate differs between them.
type SensitivityResult struct {
	Variants []SensitivityRun  `json:"variants"`
	Diffs    []SensitivityDiff `json:"diffs"`
}

// SensitivityRun is one variant's run: its label, its report parsed and
// the report's JSON as the library wrote it.
type SensitivityRun struct {
	Label      string
	Report     Selection
	ReportJSON json.RawMessage
}

// UnmarshalJSON reads {"label", "report"}: the report both parsed and raw.
func (v *SensitivityRun) UnmarshalJSON(b []byte) error {
	var raw struct {
		Label  string          `json:"label"`
		Report json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	v.Label, v.ReportJSON = raw.Label, raw.Report
	return json.Unmarshal(raw.Report, &v.Report)
}

// MarshalJSON writes {"label", "report"} as the library does.
func (v SensitivityRun) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Label  string          `json:"label"`
		Report json.RawMessage `json:"report"`
	}{v.Label, v.ReportJSON})
}

// SensitivityDiff is an item included by at least one variant and
// excluded by another: its push index, its content ("" when it has none)
// and its status under every variant, in the variants' order.
type SensitivityDiff struct {
	Index    int                 `json:"index"`
	Content  string              `json:"content,omitempty"`
	Statuses []SensitivityStatus `json:"statuses"`
}

// SensitivityStatus is an item's status under one variant: "Included" or
// "Excluded".
type SensitivityStatus struct {
	Label  string `json:"label"`
	Status string `json:"status"`
}

// Status is the item's status under the variant labelled label ("" when
// no variant has that label).
func (d SensitivityDiff) Status(label string) string {
	for _, s := range d.Statuses {
		if s.Label == label {
			return s.Status
		}
	}
	return ""
}

// Sensitivity runs every variant's pipeline on the same items and budget
// and compares: the result has each run's report, and the diffs, every
// item included by one variant and excluded by another, by push index in
// push order. Items are matched by index, never by content: two items
// with the same text are two items (the .NET and Rust peers match by
// content and would merge them).
//
// variants needs at least two entries, each with an open Pipeline and a
// label without NUL bytes (ErrInvalidArgument; a nil pipeline is
// ErrNullPointer, a closed one ErrClosed, naming variants[i].Pipeline). A
// variant whose run fails fails the call, its message naming the variant
// ("variants[1] (\"strict\") failed: ..."). Traced pipelines (SetTrace)
// trace their runs.
func Sensitivity(variants []SensitivityVariant, items *Items, budget *Budget) (*SensitivityResult, error) {
	if err := firstError(items.need("items"), budget.need("budget")); err != nil {
		return nil, err
	}
	if len(variants) < 2 {
		return nil, argError("variants holds %d; a sensitivity comparison needs at least two", len(variants))
	}
	for i, v := range variants {
		if err := v.Pipeline.need(fmt.Sprintf("variants[%d].Pipeline", i)); err != nil {
			return nil, err
		}
		if err := validText(fmt.Sprintf("variants[%d].Label", i), v.Label, false); err != nil {
			return nil, err
		}
	}
	text, err := runSensitivity(variants, items, budget)
	if err != nil {
		return nil, err
	}
	var out SensitivityResult
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, &Error{Status: StatusInternal, Message: "the sensitivity JSON does not parse: " + err.Error()}
	}
	return &out, nil
}
