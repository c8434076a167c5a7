// The presets: each one's scorers and weights, slicer and placer, read
// from the policy document it writes.
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"strings"

	cupel "github.com/libcupel/libcupel/bindings/go"
)

func main() {
	for _, name := range cupel.PresetNames() {
		pipeline, err := cupel.Preset(name) // case-insensitive: "chat" works too
		if err != nil {
			log.Fatal(err)
		}
		text, err := pipeline.JSON()
		pipeline.Close()
		if err != nil {
			log.Fatal(err)
		}
		var policy struct {
			Scorers []struct {
				Type   string
				Weight float64
			}
			SlicerType, PlacerType string
		}
		if err := json.Unmarshal([]byte(text), &policy); err != nil {
			log.Fatal(err)
		}
		var scorers []string
		for _, s := range policy.Scorers {
			scorers = append(scorers, fmt.Sprintf("%s %g", s.Type, s.Weight))
		}
		fmt.Printf("%-11s %-33s %-8s %s\n", name, strings.Join(scorers, ", "), policy.SlicerType, policy.PlacerType)
	}
	_, err := cupel.Preset("Nope")
	fmt.Println(err)
}
