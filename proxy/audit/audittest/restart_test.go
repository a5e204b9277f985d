package audittest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A restarted server drops every client connection, is down for the while
// asked, and comes back on the same DSN with the data written before.
func TestARestartedServerKeepsItsDataAndItsDSN(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := StartServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	conn, err := pgx.Connect(ctx, srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE owners (id text PRIMARY KEY, owner text); INSERT INTO owners VALUES ('s1', 'alice')`); err != nil {
		t.Fatal(err)
	}
	const down = 300 * time.Millisecond
	t0 := time.Now()
	if err := srv.Restart(ctx, down); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took < down {
		t.Errorf("Restart returned after %v, before the %v down", took, down)
	}
	if err := conn.Ping(ctx); err == nil {
		t.Error("a connection opened before the restart still answers: the server did not restart")
	}
	again, err := pgx.Connect(ctx, srv.DSN)
	if err != nil {
		t.Fatalf("the DSN after the restart: %v", err)
	}
	defer again.Close(context.Background())
	var owner string
	if err := again.QueryRow(ctx, `SELECT owner FROM owners WHERE id = 's1'`).Scan(&owner); err != nil || owner != "alice" {
		t.Errorf("the row written before the restart: %q, %v", owner, err)
	}
}
