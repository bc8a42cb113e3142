package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBody caps what a request may send. hookd caps `data` at 256 KiB; the
// envelope adds little. Anything larger is refused unread.
const maxBody = 1 << 20

// webhooks serves POST /webhooks in the order that makes a 2xx true:
// verify, store, answer, then wake the worker that applies.
type webhooks struct {
	verifier *Verifier
	schemas  *Schemas
	inbox    *Inbox
	wake     chan<- struct{}
}

func (h *webhooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST events here", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		http.Error(w, "the body is too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		http.Error(w, "the body could not be read", http.StatusBadRequest)
		return
	}

	// 4xx and nothing stored: the request is not an event from hookd.
	// hookd records the answer, so the attempt's excerpt says why.
	webhookID := r.Header.Get("webhook-id")
	if err := h.verifier.Verify(r.Header, body, time.Now()); err != nil {
		log.Printf("rejected %q: %v", webhookID, err)
		http.Error(w, "signature verification failed: "+err.Error(), http.StatusUnauthorized)
		return
	}
	var event struct {
		Type          *string         `json:"type"`
		SchemaVersion int             `json:"schema_version"`
		Data          json.RawMessage `json:"data"`
	}
	if !utf8.Valid(body) || !json.Valid(body) {
		http.Error(w, "the body is not JSON", http.StatusBadRequest)
		return
	}
	if json.Unmarshal(body, &event) != nil || event.Type == nil {
		http.Error(w, "the body is not an event", http.StatusBadRequest)
		return
	}
	// 422 and nothing stored: `data` does not match the published schema
	// of its type and version, so this code was not built for it. hookd
	// retries; the attempt's excerpt says where.
	if problems := h.schemas.Check(*event.Type, event.SchemaVersion, event.Data); len(problems) > 0 {
		log.Printf("refused %q: %v", webhookID, problems)
		message := fmt.Sprintf("data does not match the schema of %s v%d: %s",
			*event.Type, event.SchemaVersion, strings.Join(problems, "; "))
		http.Error(w, message, http.StatusUnprocessableEntity)
		return
	}

	isNew, err := h.inbox.Store(r.Context(), webhookID, *event.Type, body, "webhook")
	if err != nil {
		// Not stored, so not acknowledged: the sender tries again later.
		log.Printf("could not store %q: %v", webhookID, err)
		http.Error(w, "the inbox is unavailable; retry later", http.StatusServiceUnavailable)
		return
	}
	// Stored and synced: now the 2xx is true. The work happens after it.
	// A duplicate (a retry after a lost answer, a replay) is acknowledged
	// the same way and not applied again.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !isNew {
		io.WriteString(w, "duplicate\n")
		return
	}
	io.WriteString(w, "stored\n")
	select {
	case h.wake <- struct{}{}:
	default: // the worker is already due to look
	}
}
