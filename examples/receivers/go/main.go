// A webhook receiver for hookd: verify, store durably, answer, then apply.
//
//	WEBHOOK_SECRETS=whsec_… INBOX_DB=inbox.db PORT=8000 ./receiver
//
// POST /webhooks takes the events; GET /healthz answers 200. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
)

type config struct {
	secrets []string
	addr    string
	db      string
	// The directory of hookd's catalog files `data` is validated against.
	catalog string
}

func configFromEnv() (config, error) {
	// During a rotation overlap the receiver holds both secrets.
	secrets := strings.FieldsFunc(os.Getenv("WEBHOOK_SECRETS"), func(r rune) bool {
		return r == ',' || unicode.IsSpace(r)
	})
	if len(secrets) == 0 {
		return config{}, errors.New("set WEBHOOK_SECRETS to the endpoint's whsec_ secret (during a rotation: both, space-separated)")
	}
	port := getenv("PORT", "8000")
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return config{}, fmt.Errorf("PORT=%q is not a port number", port)
	}
	return config{
		secrets: secrets,
		addr:    net.JoinHostPort(getenv("HOST", "127.0.0.1"), port),
		db:      getenv("INBOX_DB", "inbox.db"),
		catalog: getenv("CATALOG_DIR", "../../../config/catalog"),
	}, nil
}

func getenv(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	cfg, err := configFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := NewVerifier(cfg.secrets)
	if err != nil {
		log.Fatalf("WEBHOOK_SECRETS: %v", err)
	}
	schemas, err := LoadSchemas(cfg.catalog)
	if err != nil {
		log.Fatalf("CATALOG_DIR: %v", err)
	}
	if err := run(cfg, verifier, schemas); err != nil {
		log.Fatal(err)
	}
}

// run serves until SIGINT or SIGTERM. What is stored and not yet applied
// stays pending in the inbox and is applied at the next start.
func run(cfg config, verifier *Verifier, schemas *Schemas) error {
	inbox, err := OpenInbox(cfg.db)
	if err != nil {
		return fmt.Errorf("opening the inbox %s: %w", cfg.db, err)
	}
	defer inbox.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	wake := make(chan struct{}, 1)
	worked := make(chan struct{})
	go func() {
		inbox.Work(ctx, wake)
		close(worked)
	}()

	mux := http.NewServeMux()
	mux.Handle("/webhooks", &webhooks{verifier: verifier, schemas: schemas, inbox: inbox, wake: wake})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	server := &http.Server{
		Handler: mux,
		// A client that stops sending is cut off instead of holding a
		// connection.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	// Listening only now, once the inbox is ready: nothing is accepted that
	// could not be stored.
	listener, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	log.Printf("receiving on http://%s/webhooks, inbox %s", listener.Addr(), cfg.db)
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Print("shutting down")
	// Requests in flight finish (each answers within the busy timeout). The
	// worker has stopped: an event it was applying was rolled back and is
	// still pending.
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = server.Shutdown(shutdown)
	<-worked
	return err
}
