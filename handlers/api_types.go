package handlers

import "github.com/ruckus/ruckus/app/valid"

// The API's answers that the OpenAPI description (openapi.yaml) names,
// typed so that the JSON follows the description's schema.

// apiError is #/components/schemas/Error: a failure, said for a person.
type apiError struct {
	Error string `json:"error"`
}

// apiPathErrors is #/components/schemas/PathErrors: field errors, each
// naming its field by its path in the body.
type apiPathErrors struct {
	Errors valid.Errors `json:"errors"`
}

// apiChanged is #/components/responses/Changed: how many runs changed.
type apiChanged struct {
	Changed int `json:"changed"`
}

// apiModelSaved is #/components/responses/ModelSaved.
type apiModelSaved struct {
	ModelID int64  `json:"model_id"`
	Name    string `json:"name"`
}

// apiModelRetired is #/components/responses/ModelRetired.
type apiModelRetired struct {
	ModelID int64 `json:"model_id"`
	Retired bool  `json:"retired"`
}

// apiAgentChanged is #/components/responses/AgentChanged.
type apiAgentChanged struct {
	AgentID int64  `json:"agent_id"`
	Action  string `json:"action"`
}
