// Package auth holds the security primitives: password hashing, API token
// minting, CSRF tokens, and the gorilla/sessions store backed by the
// sessions table.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// Passwords hashes and checks passwords with bcrypt at a set cost.
type Passwords struct {
	Cost int
	// dummy is compared against when the account does not exist, so a
	// wrong email costs as much time as a wrong password.
	dummy []byte
}

// NewPasswords returns a hasher at cost (bcrypt's 4..31).
func NewPasswords(cost int) (*Passwords, error) {
	d, err := bcrypt.GenerateFromPassword([]byte("not a real password"), cost)
	if err != nil {
		return nil, fmt.Errorf("bcrypt cost %d: %w", cost, err)
	}
	return &Passwords{Cost: cost, dummy: d}, nil
}

// ErrPasswordLength is returned for passwords outside 8..72 bytes (bcrypt
// reads no more than 72).
var ErrPasswordLength = errors.New("the password must be 8 to 72 characters long")

// CheckPolicy tells whether a new password is acceptable.
func CheckPolicy(password string) error {
	if len(password) < 8 || len(password) > 72 {
		return ErrPasswordLength
	}
	return nil
}

// Hash returns the bcrypt hash of password.
func (p *Passwords) Hash(password string) (string, error) {
	if err := CheckPolicy(password); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), p.Cost)
	return string(h), err
}

// Match reports whether password matches hash. An empty hash (no such
// user) is compared against a dummy so timing does not tell.
func (p *Passwords) Match(hash, password string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword(p.dummy, []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// RandomString returns n random bytes as lower-case base32.
func RandomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(b32.EncodeToString(b))
}

// TokenPrefix starts every API token, so a leaked one is easy to spot.
const TokenPrefix = "rk_"

// NewAPIToken mints a token. The caller stores hash and prefix, shows the
// token once and forgets it.
func NewAPIToken() (token, prefix string, hash []byte) {
	token = TokenPrefix + RandomString(32)
	return token, token[:len(TokenPrefix)+6], HashToken(token)
}

// HashToken is the stored form of a token or session id. Tokens carry 256
// random bits, so a fast hash suffices: there is nothing to brute-force.
func HashToken(token string) []byte {
	s := sha256.Sum256([]byte(token))
	return s[:]
}

// GeneratePassword returns a random password for bootstrap and resets.
func GeneratePassword() string { return RandomString(15) }

// Equal compares two secrets in constant time.
func Equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
