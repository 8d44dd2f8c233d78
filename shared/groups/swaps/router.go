// Package swaps is universal token swaps: a quote from a route aggregator,
// executed from a managed wallet or prepared for the caller's own. This file
// is the port to an aggregator (a Router) and its vocabulary; adapters live
// in subpackages named for the service they speak (lifi).
//
// A Router only proposes: nothing it returns is signed or sent here, and an
// adapter checks every route against the request it answers before handing
// it on, so a wrong or hostile router cannot redirect funds, change the
// amount spent or obtain an allowance larger than the swap needs.
package swaps

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Token is one token a router can swap. The zero address is the chain's
// native coin.
type Token struct {
	ChainID  uint64
	Address  common.Address
	Symbol   string
	Name     string
	Decimals uint8
}

// QuoteRequest asks for a route spending exactly FromAmount (base units) of
// FromToken from FromAddress, delivering ToToken to the same address.
type QuoteRequest struct {
	FromChainID, ToChainID uint64
	FromToken, ToToken     common.Address
	FromAmount             *big.Int
	FromAddress            common.Address
	SlippageBps            uint32 // 1 bps = 0.01%; at most 10000
}

// Step types.
const (
	StepSwap     = "swap"     // an exchange on one chain
	StepCross    = "cross"    // a bridge between chains
	StepProtocol = "protocol" // the router's own bookkeeping, e.g. collecting a fee
)

// Step is one hop of a route.
type Step struct {
	Type                   string // StepSwap, StepCross or StepProtocol
	Tool                   string // the exchange or bridge, as the router names it
	FromChainID, ToChainID uint64
	FromToken, ToToken     common.Address
	FromAmount, ToAmount   *big.Int
}

// Approval is the exact allowance the route needs; never more.
type Approval struct {
	Token, Spender common.Address
	Amount         *big.Int
}

// TxRequest is the unsigned transaction that performs the route.
type TxRequest struct {
	ChainID  uint64
	From, To common.Address
	Data     []byte
	Value    *big.Int
	Gas      uint64 // the router's gas limit; 0 when it gave none
}

// Fee is one cost of a route, in the token it is paid in.
type Fee struct {
	Name   string
	Token  common.Address
	Amount *big.Int
}

// Route is a router's answer to a QuoteRequest, already checked against it.
type Route struct {
	Router                 string // the Router's Name
	ExternalID             string // the router's own id of the quote
	FromChainID, ToChainID uint64
	FromToken, ToToken     common.Address
	FromAmount, ToAmount   *big.Int
	ToAmountMin            *big.Int // what the transaction itself guarantees, or it reverts
	Steps                  []Step
	Approval               *Approval // nil for a native input
	Transaction            TxRequest
	Fees                   []Fee
	Deadline               time.Time // send the transaction before this or quote again
}

// Route statuses.
const (
	StatusNotFound = "not_found"
	StatusPending  = "pending"
	StatusDone     = "done"
	StatusFailed   = "failed"
)

// Leg is one side of a route as it happened on chain.
type Leg struct {
	ChainID uint64
	TxHash  common.Hash
	Token   common.Address
	Amount  *big.Int // nil while unknown
}

// Status is where a sent route stands.
type Status struct {
	Status string // StatusNotFound, StatusPending, StatusDone or StatusFailed
	// Substatus is lower snake case: completed, partial, refunded,
	// wait_source_confirmations, slippage_exceeded, invalid, … or "".
	Substatus string
	Sending   *Leg // nil until the router has seen the sending transaction
	Receiving *Leg // nil until something was delivered
}

// Router is the port to a swap route aggregator.
type Router interface {
	// Name identifies the router in routes ("lifi").
	Name() string
	// Tokens lists at most MaxTokens tokens the router swaps on chainID.
	Tokens(ctx context.Context, chainID uint64) ([]Token, error)
	// Quote returns a route matching q: spending exactly q.FromAmount from
	// q.FromAddress on q.FromChainID and delivering to q.FromAddress. It
	// returns ErrNoRoute, ErrUnavailable (ErrRouteMismatch among them) or a
	// *RateLimitedError.
	Quote(ctx context.Context, q QuoteRequest) (*Route, error)
	// Status reports route r as sent in the transaction txHash on
	// r.FromChainID. Same errors as Quote, except ErrNoRoute.
	Status(ctx context.Context, r *Route, txHash common.Hash) (*Status, error)
}

// MaxTokens bounds a token list.
const MaxTokens = 1000

var (
	// ErrNoRoute is no route for the pair or the amount (422 to the client).
	ErrNoRoute = errors.New("swaps: no route")
	// ErrUnavailable is a router that is down, slow, failing or answering
	// what cannot be used (503).
	ErrUnavailable = errors.New("swaps: router unavailable")
	// ErrRouteMismatch is a router's answer that does not match what was
	// asked: another sender, chain, amount, token or recipient. It is an
	// ErrUnavailable: the router cannot be used for this request.
	ErrRouteMismatch = fmt.Errorf("%w: route does not match the request", ErrUnavailable)
	// ErrRateLimited matches every *RateLimitedError under errors.Is.
	ErrRateLimited = errors.New("swaps: router rate limited")
)

// RateLimitedError is a router refusing for now (429 to the client, with
// Retry-After).
type RateLimitedError struct {
	Router     string
	RetryAfter time.Duration // ≥ 1 s
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("swaps: %s rate limited, retry after %s", e.Router, e.RetryAfter)
}

// Is makes errors.Is(err, ErrRateLimited) hold.
func (e *RateLimitedError) Is(target error) bool { return target == ErrRateLimited }
