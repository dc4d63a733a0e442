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

package registration

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// jwt is a token with claims as its payload and a signature nobody checks.
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte("signature"))
}

func TestTokenExpiry(t *testing.T) {
	cases := map[string]struct {
		token      string
		wantExpiry time.Time
		wantOK     bool
	}{
		"ServiceAccount token from the TokenRequest API": {
			token:      jwt(`{"aud":["https://kubernetes.default.svc"],"exp":1798761600,"iat":1767225600,"sub":"system:serviceaccount:fleetjob-hub:for-fleetjob-system"}`),
			wantExpiry: time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC),
			wantOK:     true,
		},
		"fractional NumericDate": {
			token:      jwt(`{"exp":1798761600.75}`),
			wantExpiry: time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC),
			wantOK:     true,
		},
		"padded payload": {
			token:      "a." + base64.URLEncoding.EncodeToString([]byte(`{"exp": 1798761600}`)) + ".c",
			wantExpiry: time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC),
			wantOK:     true,
		},
		"legacy ServiceAccount token: no exp, never expires": {token: jwt(`{"iss":"kubernetes/serviceaccount","sub":"system:serviceaccount:x:y"}`)},
		"opaque token":           {token: "0123456789abcdef"},
		"empty":                  {token: ""},
		"payload not base64":     {token: "a.!!!.c"},
		"payload not JSON":       {token: "a." + base64.RawURLEncoding.EncodeToString([]byte("not json")) + ".c"},
		"exp not a number":       {token: jwt(`{"exp":"tomorrow"}`)},
		"exp zero":               {token: jwt(`{"exp":0}`)},
		"two parts":              {token: "a.b"},
		"larger than any token":  {token: jwt(`{"exp":1798761600,"pad":"` + strings.Repeat("x", maxTokenLen) + `"}`)},
		"encrypted JWE, 5 parts": {token: "a.b.c.d.e"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gotExpiry, gotOK := TokenExpiry(tc.token)
			if gotOK != tc.wantOK {
				t.Fatalf("TokenExpiry ok = %v, want %v", gotOK, tc.wantOK)
			}
			if diff := cmp.Diff(tc.wantExpiry, gotExpiry); diff != "" {
				t.Errorf("TokenExpiry expiry (-want +got):\n%s", diff)
			}
		})
	}
}
