package awsenv

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// CallCounter counts SDK round trips per operation ("DynamoDB.GetItem"). It
// counts attempts, not calls: a retried call costs, and is billed, twice.
// The benchmark reads it to report storage round trips per request.
type CallCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func NewCallCounter() *CallCounter { return &CallCounter{counts: map[string]int{}} }

// Snapshot returns the counts so far.
func (c *CallCounter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Total returns the number of round trips so far.
func (c *CallCounter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Reset zeroes every count.
func (c *CallCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
}

func (c *CallCounter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[op]++
}

// APIOption installs the counter at the end of the Finalize step, after the
// retry middleware, where every attempt passes once.
func (c *CallCounter) APIOption() func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("awsenvCallCounter",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				c.add(opName(ctx))
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
}

func opName(ctx context.Context) string {
	return awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx)
}
