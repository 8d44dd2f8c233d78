// Package stackemu brings the synthesized CloudFormation template up on a
// laptop, whole and driven by the template alone: its storage through the
// emulator's CloudFormation (a private moto, or the emulator AWS_ENDPOINT_URL
// names), its roles and their policies in IAM, every function under AWS's
// runtime interface emulator with the environment the template gives it and
// its role's credentials (moto enforcing IAM once setup is done), an HTTP
// front routing by the template's API Gateway routes, and the event sources
// that connect them: SQS event source mappings, EventBridge schedules, the
// DynamoDB stream mapping and the log subscriptions.
//
// It emulates what the template says, not what the code means: a route,
// queue, schedule or grant the template lacks does not exist here either.
package stackemu

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Template is a CloudFormation template as cdk synth writes it.
type Template struct {
	Resources map[string]Resource `json:"Resources"`
}

// Resource is one template resource.
type Resource struct {
	Type       string                     `json:"Type"`
	Properties map[string]json.RawMessage `json:"Properties"`
	Metadata   map[string]any             `json:"Metadata"`
}

// LoadTemplate reads a template file.
func LoadTemplate(path string) (*Template, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Template
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("stackemu: %s: %w", path, err)
	}
	return &t, nil
}

// ofType lists the logical ids of one resource type, sorted.
func (t *Template) ofType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// prop decodes one property of a resource into v; false if absent.
func (t *Template) prop(id, name string, v any) (bool, error) {
	raw, ok := t.Resources[id].Properties[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("stackemu: %s.%s: %w", id, name, err)
	}
	return true, nil
}

// resolver turns intrinsic functions into values for the created resources.
type resolver struct {
	ref    func(id string) (string, error)
	getAtt func(id, attr string) (string, error)
	pseudo map[string]string // AWS::Region, AWS::AccountId, ...
}

// resolve evaluates a property value that must come out a string.
func (r *resolver) resolve(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	return r.value(v)
}

func (r *resolver) value(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		return strings.TrimSuffix(fmt.Sprintf("%f", x), ".000000"), nil
	case bool:
		return fmt.Sprint(x), nil
	case map[string]any:
		if len(x) != 1 {
			break
		}
		for fn, arg := range x {
			return r.intrinsic(fn, arg)
		}
	}
	return "", fmt.Errorf("stackemu: cannot resolve %v", v)
}

var subVar = regexp.MustCompile(`\$\{([^}]+)\}`)

func (r *resolver) intrinsic(fn string, arg any) (string, error) {
	switch fn {
	case "Ref":
		id, _ := arg.(string)
		if p, ok := r.pseudo[id]; ok {
			return p, nil
		}
		return r.ref(id)
	case "Fn::GetAtt":
		parts, _ := arg.([]any)
		if len(parts) != 2 {
			return "", fmt.Errorf("stackemu: Fn::GetAtt %v", arg)
		}
		id, _ := parts[0].(string)
		attr, _ := parts[1].(string)
		return r.getAtt(id, attr)
	case "Fn::Join":
		parts, _ := arg.([]any)
		if len(parts) != 2 {
			return "", fmt.Errorf("stackemu: Fn::Join %v", arg)
		}
		sep, _ := parts[0].(string)
		items, _ := parts[1].([]any)
		out := make([]string, len(items))
		for i, it := range items {
			s, err := r.value(it)
			if err != nil {
				return "", err
			}
			out[i] = s
		}
		return strings.Join(out, sep), nil
	case "Fn::Sub":
		s, ok := arg.(string)
		if !ok {
			return "", fmt.Errorf("stackemu: Fn::Sub with variables is not supported: %v", arg)
		}
		var err error
		out := subVar.ReplaceAllStringFunc(s, func(m string) string {
			name := m[2 : len(m)-1]
			var v string
			var e error
			if id, attr, ok := strings.Cut(name, "."); ok {
				v, e = r.getAtt(id, attr)
			} else {
				v, e = r.intrinsic("Ref", name)
			}
			if e != nil && err == nil {
				err = e
			}
			return v
		})
		return out, err
	}
	return "", fmt.Errorf("stackemu: intrinsic %s is not supported", fn)
}
