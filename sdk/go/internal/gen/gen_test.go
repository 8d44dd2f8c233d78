package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// doc is a small document with one case of every mapping rule.
const doc = `{
  "paths": {
    "/things": {
      "get": {"operationId": "things.list", "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/PageThing"}}}}}},
      "post": {"operationId": "things.create",
        "parameters": [{"in": "header", "name": "Idempotency-Key", "required": true}],
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
        "responses": {"201": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}
    },
    "/things/{id}": {
      "patch": {"operationId": "things.update",
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThingUpdate"}}}},
        "responses": {"200": {"content": {"application/octet-stream": {"schema": {"type": "string"}}}}}}
    }
  },
  "components": {"schemas": {
    "PageThing": {"type": "object", "properties": {"data": {"type": ["array", "null"], "items": {"$ref": "#/components/schemas/Thing"}}, "nextCursor": {"type": ["string", "null"]}}},
    "Part": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    "Thing": {"type": "object", "required": ["id", "credits", "archivedAt", "part", "tags"], "properties": {
      "id": {"type": "string"},
      "credits": {"type": "number"},
      "archivedAt": {"type": ["string", "null"], "format": "date-time"},
      "part": {"$ref": "#/components/schemas/Part"},
      "previous": {"anyOf": [{"$ref": "#/components/schemas/Part"}, {"type": "null"}]},
      "tags": {"type": ["array", "null"], "items": {"type": "string"}},
      "label": {"type": "string"},
      "count": {"type": "integer"},
      "enabled": {"type": "boolean"},
      "labels": {"type": "object", "additionalProperties": {"type": "string"}},
      "input": {"description": "anything"},
      "error": {"type": "object", "properties": {"code": {"type": "integer"}}, "required": ["code"]}
    }},
    "ThingUpdate": {"type": "object", "properties": {"label": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}
  }}
}`

func TestTheGeneratedTypesSayWhatTheWireMeans(t *testing.T) {
	var d document
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	src, err := generate(&d)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(string(src)), " ")
	for _, c := range []struct{ rule, want string }{
		{"a number is exact", "Credits json.Number `json:\"credits\"`"},
		{"a nullable time is a pointer", "ArchivedAt *time.Time `json:\"archivedAt\"`"},
		{"a required object is a pointer (a $ref cannot say nullable)", "Part *Part `json:\"part\"`"},
		{"anyOf [ref, null] is a nullable ref", "Previous *Part `json:\"previous,omitempty\"`"},
		{"a required slice is a slice", "Tags []string `json:\"tags\"`"},
		{"an optional string is left out when empty", "Label string `json:\"label,omitzero\"`"},
		{"an optional integer is a pointer: 0 is a value", "Count *int64 `json:\"count,omitempty\"`"},
		{"an optional boolean is a pointer: false is a value", "Enabled *bool `json:\"enabled,omitempty\"`"},
		{"a map is a map, left out when nil", "Labels map[string]string `json:\"labels,omitzero\"`"},
		{"untyped JSON is raw", "Input json.RawMessage `json:\"input,omitzero\"`"},
		{"an inline object is a named type", "Error *ThingError `json:\"error,omitempty\"`"},
		{"the inline type is written", "type ThingError struct { Code int64 `json:\"code\"` }"},
		{"a PATCH body's optional string is a pointer: absent keeps", "Label *string `json:\"label,omitempty\"` Tags []string `json:\"tags,omitzero\"`"},
		{"a page is the generic Page", `"things.list": {Method: "GET", Path: "/things", Idem: false, Request: "", Response: "Page[Thing]"}`},
		{"a required Idempotency-Key marks the route", `"things.create": {Method: "POST", Path: "/things", Idem: true, Request: "Thing", Response: "Thing"}`},
		{"bytes are streamed", `"things.update": {Method: "PATCH", Path: "/things/{id}", Idem: false, Request: "ThingUpdate", Response: "stream"}`},
	} {
		if !strings.Contains(out, strings.Join(strings.Fields(c.want), " ")) {
			t.Errorf("%s: no %s in\n%s", c.rule, c.want, src)
		}
	}
	if strings.Contains(out, "type PageThing") {
		t.Error("a Page schema was written as a type of its own")
	}
}
