package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckAgainstTheBundledCatalog(t *testing.T) {
	schemas, err := LoadSchemas("../../../config/catalog")
	if err != nil {
		t.Fatal(err)
	}
	valid := `{"customer_id":"cus_204","currency":"USD","final_cost":"1.00","usage_id":"u1"}`
	if problems := schemas.Check("usage.finalized", 1, json.RawMessage(valid)); problems != nil {
		t.Fatalf("valid data refused: %v", problems)
	}
	invalid := `{"customer_id":"cus_204","currency":"USD","final_cost":1.0,"usage_id":"u1","prompt":"x"}`
	problems := strings.Join(schemas.Check("usage.finalized", 1, json.RawMessage(invalid)), "; ")
	if !strings.Contains(problems, "/final_cost") || !strings.Contains(problems, "/prompt") {
		t.Fatalf("both problems are named: %s", problems)
	}
	if problems := schemas.Check("made.up", 1, json.RawMessage(`{"any":1}`)); problems != nil {
		t.Fatalf("a type without a schema passes: %v", problems)
	}
	if problems := schemas.Check("usage.finalized", 9, json.RawMessage(valid)); problems == nil {
		t.Fatal("an unknown version is refused")
	}
}
