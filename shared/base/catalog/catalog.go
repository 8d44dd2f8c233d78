// Package catalog is the server-owned registry of managed services: their
// operations, prices and availability. Selectors, pricing and invocation all
// read it; prices never come from clients. Each group declares its own
// services (api.Group.Services); the table every process reads is generated
// from those declarations into zz_services.go (docs/structure.md), since a
// Lambda links only its own group.
package catalog

import "sort"

// MicroPerCredit: credits are kept as integer micro-credits everywhere.
const MicroPerCredit = 1_000_000

// CreditsPerUSD is what one US dollar of top-up buys.
const CreditsPerUSD = 100

// Operation is one capability of a service.
type Operation struct {
	ID      string `json:"operationId"`
	Summary string `json:"summary"`
	// PriceMicro is the maximum charge in micro-credits; the exact charge is
	// what the service reports, never more than this.
	PriceMicro int64 `json:"-"`
	// Invocable operations are reached through POST /services/{id}/invoke
	// (and runs when Durable); the others are dedicated routes.
	Invocable bool `json:"invocable"`
	Durable   bool `json:"durable"`
	Approval  bool `json:"requiresApproval"`
	// Rates price a metered operation per unit it consumes (databases: rows
	// read and written); its charge is Charge's, never above PriceMicro.
	Rates []Rate `json:"-"`
}

// Rate is the price of one unit of a metered operation.
type Rate struct {
	Unit       string // e.g. row_read, row_written
	PriceMicro int64  // micro-credits per unit
}

// Charge is the exact charge of a metered operation that consumed units
// (by Rate.Unit): the sum of units × rate, capped at PriceMicro, the most
// the operation holds and ever charges.
func (o Operation) Charge(units map[string]int64) int64 {
	var total int64
	for _, r := range o.Rates {
		n := units[r.Unit]
		if n > 0 && r.PriceMicro > 0 && n > (o.PriceMicro-total)/r.PriceMicro {
			return o.PriceMicro
		}
		total += n * r.PriceMicro
	}
	return min(total, o.PriceMicro)
}

// Service is one managed service.
type Service struct {
	ID          string      `json:"serviceId"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Available   bool        `json:"available"`
	Operations  []Operation `json:"operations"`
}

// Op looks an operation up.
func (s Service) Op(id string) (Operation, bool) {
	for _, o := range s.Operations {
		if o.ID == id {
			return o, true
		}
	}
	return Operation{}, false
}

// Units of metered operations.
const (
	UnitRowRead    = "row_read"
	UnitRowWritten = "row_written"
)

// Credits is c credits in micro-credits, as a declaration spells a price.
func Credits(c float64) int64 { return int64(c * MicroPerCredit) }

// PlatformAPI is the service id of the API itself (its x402 top-up is
// priced in the catalogue); every deployment serves it.
const PlatformAPI = "platform-api"

// Services returns every service, in a stable order.
func Services() []Service { return services }

// IDs returns the service ids, sorted.
func IDs() []string {
	out := make([]string, len(services))
	for i, s := range services {
		out[i] = s.ID
	}
	sort.Strings(out)
	return out
}

// Lookup finds a service.
func Lookup(id string) (Service, bool) {
	for _, s := range services {
		if s.ID == id {
			return s, true
		}
	}
	return Service{}, false
}

// PricingServices are the values GET /pricing accepts for ?service=.
var PricingServices = []string{"platform-api", "managed-wallets", "managed-trading", "universal-swaps", "managed-agents", "managed-workflows"}

// PriceMicro is an operation's price in micro-credits (0 for one the
// catalogue does not price).
func PriceMicro(service, operation string) int64 {
	svc, _ := Lookup(service)
	op, _ := svc.Op(operation)
	return op.PriceMicro
}
