package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// tolerance is how far the webhook-timestamp may be from this machine's
// clock, either way. A captured request replayed later is refused.
const tolerance = 5 * time.Minute

// Verifier checks Standard Webhooks signatures (https://www.standardwebhooks.com)
// against one or more secrets: during a rotation overlap the receiver holds
// the old and the new one, and an event signed with either verifies.
type Verifier struct {
	keys [][]byte
}

// NewVerifier decodes each whsec_ secret into its HMAC key.
func NewVerifier(secrets []string) (*Verifier, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no secret given")
	}
	v := &Verifier{}
	for _, s := range secrets {
		if !strings.HasPrefix(s, "whsec_") {
			return nil, errors.New("each secret starts with whsec_")
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil || len(key) == 0 {
			return nil, errors.New("a secret is not whsec_ followed by base64")
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

// Verify returns nil when the request's timestamp is within 5 minutes of now
// and any `v1,` entry of its webhook-signature header is the HMAC-SHA256 of
// "id.timestamp.body" under any of the keys. Each comparison takes constant
// time (hmac.Equal), so the answer's timing says nothing about how close a
// forged signature came.
func (v *Verifier) Verify(h http.Header, body []byte, now time.Time) error {
	id := h.Get("webhook-id")
	timestamp := h.Get("webhook-timestamp")
	signature := h.Get("webhook-signature")
	if id == "" || timestamp == "" || signature == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("webhook-timestamp is not a number of seconds")
	}
	sent := time.Unix(seconds, 0)
	if now.Sub(sent) > tolerance {
		return fmt.Errorf("webhook-timestamp is more than %.0f minutes old", tolerance.Minutes())
	}
	if sent.Sub(now) > tolerance {
		return fmt.Errorf("webhook-timestamp is more than %.0f minutes ahead", tolerance.Minutes())
	}

	// The signed content is the exact bytes received: never a re-encoding
	// of parsed JSON.
	expected := make([][]byte, len(v.keys))
	for i, key := range v.keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + timestamp + "."))
		mac.Write(body)
		expected[i] = mac.Sum(nil)
	}
	// Entries of another version (v1a, v2) or that do not decode are
	// skipped: a sender may add schemes this receiver does not know.
	for _, entry := range strings.Fields(signature) {
		if !strings.HasPrefix(entry, "v1,") {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(entry, "v1,"))
		if err != nil {
			continue
		}
		for _, want := range expected {
			if hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return errors.New("no v1 signature matched")
}
