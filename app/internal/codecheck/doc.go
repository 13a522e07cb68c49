// Package codecheck holds tests that hold the source tree to the rules
// in docs/conventions.md that a reviewer would otherwise have to count
// by hand: the length of a function or templ component
// (docs/conventions.md#the-80-line-rule), the direction of imports
// (docs/packages.md#layers) and the one writer of datasets
// (docs/datasets.md#one-upload-path). It has no code of its own.
package codecheck
