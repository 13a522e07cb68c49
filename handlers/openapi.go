package handlers

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/views/apidocs"
)

// openAPIYAML is the OpenAPI 3.1 description of every /api/v1 route,
// written by hand beside the handlers; openapi_test.go holds it to the
// route table and to the real responses of the handler tests.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIPath is where the API's description is served.
const OpenAPIPath = "/api/v1/openapi.json"

// OpenAPIYAMLPath is where the description is served as written, for the
// tools that read YAML (code generators, linters).
const OpenAPIYAMLPath = "/api/v1/openapi.yaml"

// OpenAPIDocument is the API's description as JSON, keys in the order the
// YAML gives them (so the docs viewer lists operations as written).
func OpenAPIDocument() ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := yamlToJSON(&buf, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return buf.Bytes(), nil
}

// yamlToJSON writes a YAML node as JSON, keeping mappings' key order.
func yamlToJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: one document expected", n.Line)
		}
		return yamlToJSON(buf, n.Content[0])
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
			}
			key, _ := json.Marshal(k.Value)
			buf.Write(key)
			buf.WriteByte(':')
			if err := yamlToJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := yamlToJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			buf.WriteString("null")
		case "!!bool":
			b, err := strconv.ParseBool(n.Value)
			if err != nil {
				return fmt.Errorf("line %d: %q is not a boolean", n.Line, n.Value)
			}
			buf.WriteString(strconv.FormatBool(b))
		case "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return fmt.Errorf("line %d: %w", n.Line, err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("line %d: %w", n.Line, err)
			}
			buf.Write(b)
		default:
			b, _ := json.Marshal(n.Value)
			buf.Write(b)
		}
	case yaml.AliasNode:
		return yamlToJSON(buf, n.Alias)
	default:
		return fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	return nil
}

// serveOpenAPI answers the API's description (anyone may read it: it says
// what the API takes and answers, nothing about anyone's data).
func (s *server) serveOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.Send(s.openAPI)
}

// serveOpenAPIYAML answers the description as written (anyone, as the
// JSON).
func (s *server) serveOpenAPIYAML(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/yaml; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.Send(openAPIYAML)
}

// showAPIDocs is the API's reference, read from the description by the
// vendored Swagger UI.
func (s *server) showAPIDocs(c *fiber.Ctx) error {
	return render(c, fiber.StatusOK, apidocs.Page(apidocs.Data{
		SpecURL:   OpenAPIPath,
		Version:   s.Version,
		StyleURL:  s.Assets.URL("swagger-ui.css"),
		BundleURL: s.Assets.URL("swagger-ui-bundle.js"),
		InitURL:   s.Assets.URL("api-docs.js"),
	}))
}
