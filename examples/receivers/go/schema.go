package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Schemas holds the published JSON Schema of `data` for each event type and
// version: hookd's catalog, as `GET /v1/event-types` serves it and as
// `config/catalog/<type>.json` in hookd's source holds it. Check covers the
// keywords the catalog uses (type, required, properties,
// additionalProperties, enum, pattern, minLength, maxLength, minimum,
// items); in your own receiver prefer a complete validator such as
// github.com/santhosh-tekuri/jsonschema.
type Schemas struct {
	byType map[string]map[int]map[string]any
}

// LoadSchemas reads every catalog file of dir.
func LoadSchemas(dir string) (*Schemas, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no catalog files (*.json) in %s", dir)
	}
	s := &Schemas{byType: map[string]map[int]map[string]any{}}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var definition struct {
			Type     string `json:"type"`
			Versions []struct {
				Version int            `json:"version"`
				Schema  map[string]any `json:"schema"`
			} `json:"versions"`
		}
		if err := json.Unmarshal(text, &definition); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		s.byType[definition.Type] = map[int]map[string]any{}
		for _, v := range definition.Versions {
			s.byType[definition.Type][v.Version] = v.Schema
		}
	}
	return s, nil
}

// Check returns why `data` does not match the schema of eventType at
// version, or nil. A type without a schema passes: it is stored and
// `ignored`, to apply once the code knows it.
func (s *Schemas) Check(eventType string, version int, data json.RawMessage) []string {
	versions, known := s.byType[eventType]
	if !known {
		return nil
	}
	schema, known := versions[version]
	if !known {
		return []string{fmt.Sprintf("%s v%d is not a version this receiver knows; pin the endpoint", eventType, version)}
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var value any
	if err := decoder.Decode(&value); err != nil {
		return []string{"/: data is not JSON"}
	}
	return check(schema, value, "")
}

func check(schema map[string]any, value any, at string) []string {
	where := at
	if where == "" {
		where = "/"
	}
	if types, ok := schema["type"]; ok && !hasType(types, value) {
		return []string{fmt.Sprintf("%s: is not of type %v", where, types)}
	}
	var found []string
	if allowed, ok := schema["enum"].([]any); ok && !contains(allowed, value) {
		found = append(found, fmt.Sprintf("%s: is not one of %v", where, allowed))
	}
	if text, ok := value.(string); ok {
		length := float64(utf8.RuneCountInString(text))
		if n, ok := schema["minLength"].(float64); ok && length < n {
			found = append(found, fmt.Sprintf("%s: is shorter than %v", where, n))
		}
		if n, ok := schema["maxLength"].(float64); ok && length > n {
			found = append(found, fmt.Sprintf("%s: is longer than %v", where, n))
		}
		if pattern, ok := schema["pattern"].(string); ok {
			if re, err := regexp.Compile(pattern); err != nil || !re.MatchString(text) {
				found = append(found, fmt.Sprintf("%s: does not match %s", where, pattern))
			}
		}
	}
	if number, ok := value.(json.Number); ok {
		if n, ok := schema["minimum"].(float64); ok {
			if f, err := number.Float64(); err == nil && f < n {
				found = append(found, fmt.Sprintf("%s: is less than %v", where, n))
			}
		}
	}
	if object, ok := value.(map[string]any); ok {
		properties, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for _, name := range required {
			if _, present := object[name.(string)]; !present {
				found = append(found, fmt.Sprintf("%s: `%s` is required", where, name))
			}
		}
		for name, item := range object {
			pointer := at + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
			if sub, declared := properties[name].(map[string]any); declared {
				found = append(found, check(sub, item, pointer)...)
			} else if open, isBool := schema["additionalProperties"].(bool); isBool && !open {
				found = append(found, pointer+": is not a field of this schema")
			}
		}
	}
	if items, ok := value.([]any); ok {
		if sub, ok := schema["items"].(map[string]any); ok {
			for i, item := range items {
				found = append(found, check(sub, item, fmt.Sprintf("%s/%d", at, i))...)
			}
		}
	}
	return found
}

func hasType(types any, value any) bool {
	names, ok := types.([]any)
	if !ok {
		names = []any{types}
	}
	for _, name := range names {
		switch name {
		case "object":
			_, ok = value.(map[string]any)
		case "array":
			_, ok = value.([]any)
		case "string":
			_, ok = value.(string)
		case "boolean":
			_, ok = value.(bool)
		case "null":
			ok = value == nil
		case "number":
			_, ok = value.(json.Number)
		case "integer":
			number, isNumber := value.(json.Number)
			_, err := number.Int64()
			ok = isNumber && err == nil
		default:
			ok = false
		}
		if ok {
			return true
		}
	}
	return false
}

func contains(values []any, value any) bool {
	for _, v := range values {
		if reflect.DeepEqual(v, value) {
			return true
		}
	}
	return false
}
