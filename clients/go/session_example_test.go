package baton_test

import (
	"context"
	"errors"
	"log"
	"time"

	baton "github.com/baton-locks/baton/clients/go"
)

// Hold a session lock while a job runs; the job's context is cancelled the moment ownership
// can no longer be confirmed.
func ExampleSessionClient_Hold() {
	client, err := baton.NewSessionClient(baton.Options{
		Addresses: []string{"10.0.0.1:7071", "10.0.0.2:7071", "10.0.0.3:7071"},
		Resumable: true, // keep the claim across a handoff or failover of the active node
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	claim, err := client.Hold(context.Background(), "jobs/nightly", baton.HoldOptions{Lease: 10 * time.Second, Wait: time.Minute})
	if errors.Is(err, baton.ErrTimeout) {
		log.Print("someone else is running the nightly job")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer claim.Release()

	work := claim.Context(context.Background())
	runNightlyJob(work, claim.Token()) // pass the fencing token with every write
	if err := claim.Err(); errors.Is(err, baton.ErrLost) {
		log.Printf("stopped: the lock was lost: %v", err) // e.g. errors.Is(err, baton.ErrForceReleased)
	}
}

func runNightlyJob(ctx context.Context, token uint64) {}
