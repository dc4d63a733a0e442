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
	"encoding/json"
	"strings"
	"time"
)

// maxTokenLen bounds the token TokenExpiry decodes: a ServiceAccount token
// is about a kilobyte; a registration is a Secret anyone with write access
// to the registration namespace can fill with a megabyte.
const maxTokenLen = 16 << 10

// TokenExpiry reads when a bearer token expires from its exp claim, when the
// token is a JWT (as ServiceAccount tokens from the TokenRequest API, which
// `kubectl fleetjob register` mints, are). The signature is not checked: the
// hub reads its own credential, and only the member decides whether it is
// valid. ok is false for an opaque token, a malformed JWT, or a JWT without
// exp (a legacy ServiceAccount token, which never expires).
func TokenExpiry(token string) (expiry time.Time, ok bool) {
	if len(token) > maxTokenLen {
		return time.Time{}, false
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		// Exp is a NumericDate: seconds since the epoch, possibly
		// fractional (RFC 7519, section 2).
		Exp *float64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil || *claims.Exp <= 0 {
		return time.Time{}, false
	}
	return time.Unix(int64(*claims.Exp), 0).UTC(), true
}
