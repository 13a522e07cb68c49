package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/store"
)

// badUpload has a line that is no JSON (line 2) and a prompt that is a
// number (line 3).
const badUpload = "{\"prompt\":\"fine\"}\nnot json\n{\"prompt\":42}\n"

// TestUploadErrorsInTheReadersLanguage: a German reader sees a bad
// upload's errors in German, line and field kept; the API answers the
// same upload in English whatever the client's language.
func TestUploadErrorsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.getIn("/datasets", "de-DE,de;q=0.9")
	action, _ := page.doc.Find(`form[data-testid="upload-form"]`).Attr("action")

	body, ct := multipartBody(t, "bad.jsonl", []byte(badUpload), map[string]string{"_csrf": c.csrf, "name": "Bad"})
	req := httptest.NewRequest(http.MethodPost, action, body)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept-Language", "de-DE,de;q=0.9")
	res := c.do(req)
	if res.status != 422 {
		t.Fatalf("bad upload: %d %.300s", res.status, res.body)
	}
	type row struct{ line, field, problem string }
	var rows []row
	res.doc.Find(`[data-testid="upload-error"]`).Each(func(_ int, s *goquery.Selection) {
		td := s.Find("td")
		rows = append(rows, row{strings.TrimSpace(td.Eq(0).Text()), strings.TrimSpace(td.Eq(1).Text()), strings.TrimSpace(td.Eq(2).Text())})
	})
	if len(rows) != 2 {
		t.Fatalf("rows = %v, want two", rows)
	}
	if rows[1] != (row{"3", "prompt", "prompt muss ein Text sein, nicht eine Zahl"}) {
		t.Errorf("line 3 in German = %+v", rows[1])
	}
	if rows[0].line != "2" || !strings.HasPrefix(rows[0].problem, "ungültiges JSON bei Byte ") {
		t.Errorf("line 2 in German = %+v", rows[0])
	}

	// The same upload through the API, asked in German, answers English.
	tok := e.token(ada)
	body, ct = multipartBody(t, "bad.jsonl", []byte(badUpload), map[string]string{"name": "Bad"})
	req = httptest.NewRequest(http.MethodPost, "/api/v1/datasets", body)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept-Language", "de-DE,de;q=0.9")
	r, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	raw, _ := io.ReadAll(r.Body)
	var out struct {
		Errors []struct {
			Line    int    `json:"line"`
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || r.StatusCode != 422 || len(out.Errors) != 2 {
		t.Fatalf("API: %d %s", r.StatusCode, raw)
	}
	if e3 := out.Errors[1]; e3.Line != 3 || e3.Field != "prompt" || e3.Message != "prompt must be a string, not a number" {
		t.Errorf("API line 3 = %+v, want the English text", e3)
	}
	if !strings.HasPrefix(out.Errors[0].Message, "invalid JSON at byte ") {
		t.Errorf("API line 2 = %+v", out.Errors[0])
	}
}

// TestFormErrorsInTheReadersLanguage: a form whose fields name catalogue
// keys in their msg tags (the new password's) shows them in German.
func TestFormErrorsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.getIn("/settings", "de")
	form := url.Values{"_csrf": {c.csrf}, "current": {"correct horse"}, "new": {"short"}, "confirm": {"other"}}
	req := httptest.NewRequest(http.MethodPost, "/settings/password", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", "de")
	res := c.do(req)
	if res.status != 422 {
		t.Fatalf("short password: %d %.300s", res.status, res.body)
	}
	for _, want := range []string{"Das neue Passwort muss 8 bis 72 Zeichen lang sein.", "Die beiden neuen Passwörter stimmen nicht überein."} {
		if !strings.Contains(res.body, want) {
			t.Errorf("the page lacks %q: %.800s", want, res.body)
		}
	}
}
