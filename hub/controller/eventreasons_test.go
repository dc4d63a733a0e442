/*
Copyright 2026 The fleetjob Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventReasonsAreConstants: every event the hub records takes its
// reason from api/v1alpha1, where users find the reasons they match on in
// alerts and scripts; a string literal in a note or an Eventf call is a
// reason nobody documented. It reads the source of every hub package.
func TestEventReasonsAreConstants(t *testing.T) {
	fset := token.NewFileSet()
	var literals []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit := literalReason(n); lit != nil {
				literals = append(literals, fset.Position(lit.Pos()).String()+": "+lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(literals) > 0 {
		t.Errorf("event reasons written as literals (declare them in api/v1alpha1/reasons.go):\n%s", strings.Join(literals, "\n"))
	}
}

// literalReason is the reason of an event that n records, when it is a
// string literal: the second field of a note, or the fourth argument of an
// events.EventRecorder's Eventf (regarding, related, type, reason, ...).
func literalReason(n ast.Node) *ast.BasicLit {
	var reason ast.Expr
	switch n := n.(type) {
	case *ast.CompositeLit:
		if id, ok := n.Type.(*ast.Ident); ok && id.Name == "note" && len(n.Elts) == 3 {
			reason = n.Elts[1]
		}
	case *ast.CallExpr:
		if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Eventf" && len(n.Args) > 3 {
			reason = n.Args[3]
		}
	}
	lit, ok := reason.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil
	}
	return lit
}
