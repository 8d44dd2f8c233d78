package superbrain

import (
	"encoding/json"
	"maps"
)

// OperationSchema is the JSON Schema (2020-12, the dialect of OpenAPI 3.1)
// of one operation's input and output. Each schema is self-contained (no
// $ref), so it can be published in GET /capabilities or embedded in the
// OpenAPI document as is.
type OperationSchema struct {
	Input  json.RawMessage
	Output json.RawMessage
}

// Schemas returns the schemas of every operation, keyed by operation id.
// The bounds are the constants the service validates with, so the
// published contract and the code cannot disagree on a number. The
// service still validates every input itself: the schema is the contract,
// not the guard.
func Schemas() map[string]OperationSchema { return maps.Clone(schemas) }

var schemas = map[string]OperationSchema{
	OpWrite: {
		Input: mustJSON(object(props{
			"text":     nonBlank("The memory's text.", maxTextChars),
			"metadata": metadataSchema("Up to 20 string pairs stored with the memory and returned with it."),
		}, "text")),
		Output: mustJSON(object(props{
			"memoryId":  memoryIDSchema(),
			"createdAt": dateTime(),
		}, "memoryId", "createdAt")),
	},
	OpSearch: {
		Input: mustJSON(object(props{
			"query": nonBlank("Words to look for; ranked by BM25 over the caller's memories.", maxQueryChars),
			"limit": integer("Most results to return.", maxSearchHits, defaultSearchHits),
		}, "query")),
		Output: mustJSON(object(props{
			"results": array(memorySchema(true), "Best first; equal scores newest first."),
		}, "results")),
	},
	OpList: {
		Input: mustJSON(object(props{
			"limit":  integer("Most memories to return.", maxListLimit, defaultListLimit),
			"cursor": map[string]any{"type": "string", "description": "nextCursor of the previous page."},
		})),
		Output: mustJSON(object(props{
			"data":       array(memorySchema(false), "Newest first."),
			"nextCursor": map[string]any{"type": []string{"string", "null"}, "description": "Pass as cursor for the next page; null on the last."},
		}, "data", "nextCursor")),
	},
	OpDelete: {
		Input: mustJSON(object(props{
			"memoryId": memoryIDSchema(),
		}, "memoryId")),
		Output: mustJSON(object(props{
			"memoryId": memoryIDSchema(),
			"deleted":  map[string]any{"const": true},
		}, "memoryId", "deleted")),
	},
}

type props map[string]any

func object(p props, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": p, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func array(items map[string]any, description string) map[string]any {
	return map[string]any{"type": "array", "items": items, "description": description}
}

func nonBlank(description string, maxChars int) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": maxChars, "pattern": `\S`, "description": description}
}

func integer(description string, maxValue, def int) map[string]any {
	return map[string]any{"type": "integer", "minimum": 1, "maximum": maxValue, "default": def, "description": description}
}

func dateTime() map[string]any { return map[string]any{"type": "string", "format": "date-time"} }

func memoryIDSchema() map[string]any {
	return map[string]any{"type": "string", "pattern": "^mem_[0-9A-HJKMNP-TV-Z]{26}$"}
}

func metadataSchema(description string) map[string]any {
	return map[string]any{
		"type": "object", "maxProperties": maxMetadataPairs, "description": description,
		"propertyNames":        map[string]any{"minLength": 1, "maxLength": maxMetaKeyChars},
		"additionalProperties": map[string]any{"type": "string", "maxLength": maxMetaValueChars},
	}
}

// memorySchema is a memory, or a search hit when scored.
func memorySchema(scored bool) map[string]any {
	p := props{
		"memoryId":  memoryIDSchema(),
		"text":      map[string]any{"type": "string"},
		"metadata":  metadataSchema("The memory's metadata."),
		"createdAt": dateTime(),
	}
	required := []string{"memoryId", "text", "metadata", "createdAt"}
	if scored {
		p["score"] = map[string]any{"type": "number", "exclusiveMinimum": 0, "description": "BM25 relevance; higher is better."}
		required = append(required, "score")
	}
	return object(p, required...)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("superbrain: schema does not encode: " + err.Error())
	}
	return b
}
