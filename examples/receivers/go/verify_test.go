package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks reference vector, shared by the official libraries' tests.
const (
	refSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	refID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	refTimestamp = 1614265330
	refBody      = `{"test": 2432232314}`
	refSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	// A well-formed v1 signature that belongs to nothing here.
	unrelated = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
	// Another valid secret.
	otherSecret = "whsec_YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY="
)

func headers(id string, timestamp int64, signature string) http.Header {
	h := http.Header{}
	for name, value := range map[string]string{
		"webhook-id":        id,
		"webhook-timestamp": strconv.FormatInt(timestamp, 10),
		"webhook-signature": signature,
	} {
		if value != "" {
			h.Set(name, value)
		}
	}
	return h
}

func verifier(t *testing.T, secrets ...string) *Verifier {
	t.Helper()
	v, err := NewVerifier(secrets)
	if err != nil {
		t.Fatalf("NewVerifier(%q): %v", secrets, err)
	}
	return v
}

func TestVerify(t *testing.T) {
	sent := time.Unix(refTimestamp, 0)
	cases := []struct {
		name      string
		secrets   []string
		signature string
		body      string
		now       time.Time
		ok        bool
	}{
		{"the reference signature", []string{refSecret}, refSignature, refBody, sent, true},
		{"any of several entries", []string{refSecret}, "v1a,abc " + unrelated + " " + refSignature, refBody, sent, true},
		{"the old or the new secret", []string{otherSecret, refSecret}, refSignature, refBody, sent, true},
		{"4 minutes late", []string{refSecret}, refSignature, refBody, sent.Add(4 * time.Minute), true},
		{"4 minutes early", []string{refSecret}, refSignature, refBody, sent.Add(-4 * time.Minute), true},
		{"another secret", []string{otherSecret}, refSignature, refBody, sent, false},
		{"a changed body", []string{refSecret}, refSignature, strings.Replace(refBody, "2", "3", 1), sent, false},
		{"only an unrelated signature", []string{refSecret}, unrelated, refBody, sent, false},
		{"only another scheme", []string{refSecret}, "v2," + strings.TrimPrefix(refSignature, "v1,"), refBody, sent, false},
		{"a truncated signature", []string{refSecret}, refSignature[:20], refBody, sent, false},
		{"malformed entries only", []string{refSecret}, "v1,not*base64 v1, garbage", refBody, sent, false},
		{"6 minutes late", []string{refSecret}, refSignature, refBody, sent.Add(6 * time.Minute), false},
		{"6 minutes early", []string{refSecret}, refSignature, refBody, sent.Add(-6 * time.Minute), false},
		{"no signature", []string{refSecret}, "", refBody, sent, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := verifier(t, c.secrets...).Verify(headers(refID, refTimestamp, c.signature), []byte(c.body), c.now)
			if c.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !c.ok && err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestVerifyRefusesATimestampThatIsNotANumber(t *testing.T) {
	h := headers(refID, refTimestamp, refSignature)
	h.Set("webhook-timestamp", "1614265330.0")
	if err := verifier(t, refSecret).Verify(h, []byte(refBody), time.Unix(refTimestamp, 0)); err == nil {
		t.Error("accepted")
	}
}

func TestNewVerifierRefusesWhatIsNotASecret(t *testing.T) {
	for _, secrets := range [][]string{nil, {"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, {"whsec_"}, {"whsec_not*base64"}} {
		if _, err := NewVerifier(secrets); err == nil {
			t.Errorf("NewVerifier(%q) accepted", secrets)
		}
	}
}
