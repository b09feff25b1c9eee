// Acquire+release pairs/s through one Go client process, for `npm run bench:clients`.
//
// Usage: go-pairs <host:port> <seconds> <in-flight>
// Prints one JSON line: {"pairs": N, "seconds": S}. `in-flight` goroutines share one KeyedClient,
// each taking and releasing its own key in a loop.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	baton "github.com/baton-locks/baton/clients/go"
)

func main() {
	address := os.Args[1]
	seconds, _ := strconv.ParseFloat(os.Args[2], 64)
	inFlight, _ := strconv.Atoi(os.Args[3])
	client, err := baton.NewKeyedClient(baton.Options{Addresses: []string{address}, NoIdentity: true})
	if err != nil {
		fail(err)
	}
	defer client.Close()
	ctx := context.Background()
	pair := func(key string) error {
		grant, err := client.Acquire(ctx, key, baton.AcquireOptions{Lease: 30 * time.Second})
		if err != nil {
			return err
		}
		return grant.Release(ctx)
	}
	// One warm-up pair per goroutine before the clock starts (connects, first grants).
	for i := 0; i < inFlight; i++ {
		if err := pair(fmt.Sprintf("bench/go/%d/%d", os.Getpid(), i)); err != nil {
			fail(err)
		}
	}
	var pairs int64
	var stop atomic.Bool
	var firstErr atomic.Value
	var wg sync.WaitGroup
	began := time.Now()
	for i := 0; i < inFlight; i++ {
		wg.Add(1)
		go func(key string) {
			defer wg.Done()
			for !stop.Load() {
				if err := pair(key); err != nil {
					firstErr.Store(err.Error())
					stop.Store(true)
					return
				}
				atomic.AddInt64(&pairs, 1)
			}
		}(fmt.Sprintf("bench/go/%d/%d", os.Getpid(), i))
	}
	time.Sleep(time.Duration(seconds * float64(time.Second)))
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(began).Seconds()
	if e := firstErr.Load(); e != nil {
		fail(fmt.Errorf("%v", e))
	}
	out, _ := json.Marshal(map[string]any{"pairs": pairs, "seconds": elapsed})
	fmt.Println(string(out))
}

func fail(err error) {
	out, _ := json.Marshal(map[string]string{"error": err.Error()})
	fmt.Println(string(out))
	os.Exit(1)
}
