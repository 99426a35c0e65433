// Package callattempt holds the groups of intervals between call attempts: how long to wait before
// calling a lead again. An order names one group; at most one group is the default that new
// orders get when they name none.
package callattempt

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
)

// Group is a stored call-attempt interval group.
type Group struct {
	ID                   int64
	Title                string
	Intervals            []int64 // minutes
	IsDefault            bool
	ResetAttemptsEnabled bool
}

// Bounds of a group; they keep a group something a dialer can follow.
const (
	maxTitleLen = 255
	// maxIntervals and maxIntervalMinutes (one year) bound what a dialer schedules.
	maxIntervals       = 100
	maxIntervalMinutes = 525600
)

// CreateRequest is the body of the create operation. Every field is optional.Value so that a
// missing required field and a null one are reported alike and a wrong type names the field.
type CreateRequest struct {
	Title                optional.Value[string]  `json:"title"`
	Intervals            optional.Value[[]int64] `json:"intervals"`
	IsDefault            optional.Value[bool]    `json:"isDefault"`
	ResetAttemptsEnabled optional.Value[bool]    `json:"resetAttemptsEnabled"`
}

// Validate checks the body and returns the group to create. isDefault and resetAttemptsEnabled
// default to false; sent as null they are false too, since "no value" means the default here.
func (r CreateRequest) Validate() (Group, error) {
	fe := apperr.FieldErrors{}
	g := Group{
		IsDefault:            r.IsDefault.Or(false),
		ResetAttemptsEnabled: r.ResetAttemptsEnabled.Or(false),
	}
	g.Title = strings.TrimSpace(r.Title.V)
	switch {
	case !r.Title.Present():
		fe.Add("title", "is required")
	case g.Title == "":
		fe.Add("title", "must not be empty")
	case utf8.RuneCountInString(g.Title) > maxTitleLen:
		fe.Addf("title", "must be at most %d characters", maxTitleLen)
	}
	switch {
	case !r.Intervals.Present():
		fe.Add("intervals", "is required")
	case len(r.Intervals.V) == 0:
		fe.Add("intervals", "must not be empty")
	case len(r.Intervals.V) > maxIntervals:
		fe.Addf("intervals", "must have at most %d elements", maxIntervals)
	default:
		for i, m := range r.Intervals.V {
			if m < 1 || m > maxIntervalMinutes {
				fe.Addf(indexed("intervals", i), "must be an integer of minutes from 1 to %d", maxIntervalMinutes)
			}
		}
		g.Intervals = r.Intervals.V
	}
	if err := fe.Err(); err != nil {
		return Group{}, err
	}
	return g, nil
}

func indexed(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}
