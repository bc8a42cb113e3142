package main

// What applying an event means. Replace the handlers here with your own;
// keep the shape: each effect writes through the transaction it is given
// (the one that marks the inbox row), and is keyed so that applying it twice
// changes nothing.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"regexp"
)

// Event is the envelope hookd sends; data stays raw until a handler reads it.
type Event struct {
	EventID string          `json:"event_id"`
	Type    string          `json:"type"`
	Subject *Subject        `json:"subject"`
	Data    json.RawMessage `json:"data"`
}

type Subject struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Version *int64 `json:"version"`
}

// testTypes are hookd's own test and conformance-check events: acknowledged,
// stored (so a repeated id is still a duplicate), and given to no business
// handler. Routed on the signed type, never on the webhook-check header,
// which is not signed.
var testTypes = map[string]bool{"webhook.test": true, "webhook.check": true}

// stateTypes carry a snapshot of a subject's state. Applying an older
// snapshot after a newer one would move the state backwards.
var stateTypes = map[string]bool{
	"customer.created":        true,
	"customer.status_changed": true,
	"api_key.created":         true,
	"api_key.status_changed":  true,
	"balance.updated":         true,
}

// factHandlers book money facts, each once per its own source id.
var factHandlers = map[string]func(context.Context, *sql.Tx, Event) error{
	"usage.finalized":          book("usage", "usage_id", "final_cost"),
	"credit.adjustment_posted": book("credit", "adjustment_id", "amount"),
}

// applyEvent routes one stored event; it returns the inbox status it ends
// in, or the error that makes it failed.
func applyEvent(ctx context.Context, tx *sql.Tx, body []byte) (string, error) {
	var event Event
	if err := json.Unmarshal(body, &event); err != nil {
		return "", fmt.Errorf("the stored body does not parse: %w", err)
	}
	if testTypes[event.Type] {
		return "test", nil
	}
	if stateTypes[event.Type] {
		return applyState(ctx, tx, event)
	}
	if handle, ok := factHandlers[event.Type]; ok {
		return "applied", handle(ctx, tx, event)
	}
	// A type added to the catalog after this code was written: acknowledged
	// and kept in the inbox, so you can apply it once you have a handler.
	return "ignored", nil
}

// ----- state: keep the newest version of each subject -----

func applyState(ctx context.Context, tx *sql.Tx, event Event) (string, error) {
	s := event.Subject
	if s == nil || s.Type == "" || s.ID == "" {
		log.Printf("state event %s has no subject: nothing to update", event.EventID)
		return "applied", nil
	}
	var current sql.NullInt64
	err := tx.QueryRowContext(ctx,
		`SELECT version FROM subjects WHERE subject_type = ? AND subject_id = ?`, s.Type, s.ID,
	).Scan(&current)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	if s.Version != nil && current.Valid && current.Int64 >= *s.Version {
		return "stale", nil
	}
	// Without a version there is no order to keep: the last one applied
	// wins. If that matters for a subject, read its current state from the
	// Partner API.
	_, err = tx.ExecContext(ctx,
		`INSERT INTO subjects (subject_type, subject_id, version, event_id, event_type, data, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (subject_type, subject_id) DO UPDATE SET
		   version = COALESCE(excluded.version, subjects.version), event_id = excluded.event_id,
		   event_type = excluded.event_type, data = excluded.data, updated_at = excluded.updated_at`,
		s.Type, s.ID, s.Version, event.EventID, event.Type, string(event.Data), nowMs())
	if err != nil {
		return "", err
	}
	return "applied", nil
}

// ----- facts: book each once, keyed on its own source id -----

// book makes a handler that books a money fact once per source id.
//
// The inbox already drops a repeated event id; the source id also holds when
// the same fact reaches you another way (the feed, an export, a support
// fix). Facts are never stale: an older adjustment still happened.
func book(kind, sourceField, amountField string) func(context.Context, *sql.Tx, Event) error {
	return func(ctx context.Context, tx *sql.Tx, event Event) error {
		var data map[string]json.RawMessage
		if err := json.Unmarshal(event.Data, &data); err != nil {
			return fmt.Errorf("%s data: %w", event.Type, err)
		}
		sourceID := text(data[sourceField])
		// Older schema versions may carry the source id only as the subject.
		if sourceID == "" && event.Subject != nil {
			sourceID = event.Subject.ID
		}
		if sourceID == "" {
			return fmt.Errorf("%s without %s or a subject id", event.Type, sourceField)
		}
		customer, currency := text(data["customer_id"]), text(data["currency"])
		if customer == "" || currency == "" {
			return fmt.Errorf("%s without customer_id or currency", event.Type)
		}
		amount, err := decimal(data[amountField])
		if err != nil {
			return fmt.Errorf("%s %s: %w", event.Type, amountField, err)
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO ledger (kind, source_id, customer_id, currency, amount, event_id)
			 VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, source_id) DO NOTHING`,
			kind, sourceID, customer, currency, amount, event.EventID)
		return err
	}
}

// text is a JSON string's value, or "" for anything else.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

var decimalText = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// decimal is an amount as the decimal text it arrived as: hookd sends a
// string ("1.274800"); a JSON number is kept as its literal. Never a float,
// which would round it.
func decimal(raw json.RawMessage) (string, error) {
	s := text(raw)
	if s == "" {
		s = string(raw)
	}
	if !decimalText.MatchString(s) {
		return "", fmt.Errorf("%.40s is not a decimal", s)
	}
	return s, nil
}
