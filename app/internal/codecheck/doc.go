// Package codecheck holds tests that hold the source tree to the rules
// in docs/CONVENTIONS.md that a reviewer would otherwise have to count
// by hand, such as the length of a function. It has no code of its own.
package codecheck
