package handlers

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/valid"
)

// newValidator is the validator of every form and API body: the
// manifest's rules (runtimes, scorers, model names, hardware slugs) and
// the quantisations a model may be registered with.
func newValidator() *valid.Validator {
	return bench.NewRules().RegisterRule("quantization", "valid.quantization", conclude.KnownQuantization)
}

// fieldErrors422 answers 422 with the errors in the API's shape:
// {"errors": [{"path", "message"}]}.
func fieldErrors422(c *fiber.Ctx, errs valid.Errors) error {
	return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: errs})
}
