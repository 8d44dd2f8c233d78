package superbrain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// conforms checks a JSON value against the schema keywords this package
// uses for structure (type, properties, required, additionalProperties,
// items, const): enough to prove that real outputs and the published
// schemas agree on every field name and kind.
func conforms(schema map[string]any, v any, path string) error {
	if c, ok := schema["const"]; ok && !reflect.DeepEqual(c, v) {
		return fmt.Errorf("%s: %v is not the constant %v", path, v, c)
	}
	if typ, ok := schema["type"]; ok {
		var types []string
		switch tt := typ.(type) {
		case string:
			types = []string{tt}
		case []any:
			for _, x := range tt {
				types = append(types, x.(string))
			}
		}
		if !slices.Contains(types, jsonType(v)) && !(jsonType(v) == "integer" && slices.Contains(types, "number")) {
			return fmt.Errorf("%s: %s is not %v", path, jsonType(v), types)
		}
	}
	switch vv := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		for _, r := range asStrings(schema["required"]) {
			if _, ok := vv[r]; !ok {
				return fmt.Errorf("%s: required %q missing", path, r)
			}
		}
		for k, x := range vv {
			sub, known := props[k].(map[string]any)
			if !known {
				if schema["additionalProperties"] == false {
					return fmt.Errorf("%s: %q is not in the schema", path, k)
				}
				sub, _ = schema["additionalProperties"].(map[string]any)
			}
			if err := conforms(sub, x, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, x := range vv {
			if err := conforms(items, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

func asStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

func decodeSchema(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSchemasCoverEveryOperationAndMatchTheInputTypes(t *testing.T) {
	all := Schemas()
	for op, in := range map[string]any{OpWrite: writeInput{}, OpSearch: searchInput{}, OpList: listInput{}, OpDelete: deleteInput{}} {
		s, ok := all[op]
		if !ok {
			t.Fatalf("no schema for %s", op)
		}
		input := decodeSchema(t, s.Input)
		decodeSchema(t, s.Output)
		var fields []string
		for f := range reflect.TypeOf(in).Fields() {
			fields = append(fields, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		var props []string
		for p := range input["properties"].(map[string]any) {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) || input["additionalProperties"] != false {
			t.Errorf("%s: schema properties %v, decoder fields %v", op, props, fields)
		}
	}
	if len(all) != len(prices) {
		t.Errorf("%d schemas for %d operations", len(all), len(prices))
	}
}

func TestOutputsConformToTheirSchemas(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		schemas := Schemas()
		check := func(op, input string) json.RawMessage {
			res, err := h.invoke(alice, op, input)
			if err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			var v any
			if err := json.Unmarshal(res.Output, &v); err != nil {
				t.Fatal(err)
			}
			if err := conforms(decodeSchema(t, schemas[op].Output), v, op); err != nil {
				t.Errorf("output %s: %v", res.Output, err)
			}
			return res.Output
		}
		h.write(alice, "first note")
		var w writeOutput
		json.Unmarshal(check(OpWrite, `{"text":"second note","metadata":{"k":"v"}}`), &w)
		check(OpSearch, `{"query":"note"}`)
		check(OpSearch, `{"query":"nothing"}`)
		check(OpList, `{"limit":1}`) // with a nextCursor
		check(OpList, `{}`)          // with a null nextCursor
		check(OpDelete, `{"memoryId":"`+w.ID+`"}`)
	})
}

func TestValidInputsConformToTheInputSchemas(t *testing.T) {
	schemas := Schemas()
	for op, input := range map[string]string{
		OpWrite:  `{"text":"x","metadata":{"a":"b"}}`,
		OpSearch: `{"query":"x","limit":5}`,
		OpList:   `{"limit":5,"cursor":"abc"}`,
		OpDelete: `{"memoryId":"mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"}`,
	} {
		var v any
		json.Unmarshal([]byte(input), &v)
		if err := conforms(decodeSchema(t, schemas[op].Input), v, op); err != nil {
			t.Errorf("%s: %v", op, err)
		}
	}
}
